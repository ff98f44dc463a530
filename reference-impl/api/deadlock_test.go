package api_test

import (
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestConcurrentMutationsNeverDeadlockOut drives many concurrent writers with smoke's mix (write,
// mkdir, rename, copy, delete, overwrites of a few hot paths) through two pods at one dedicated
// tenant and at two tenants of one shared pool, and asserts that no mutation answers 5xx and no
// hot-path event insert fails (a deadlock between our own statements must be retried, never
// surfaced as a 503 or pushed to the retry buffer). It runs with the default configuration and
// under --event-commit joined with each guard, where a mutation's row locks are held across its
// event's insert (and, under lock, the sequence row is taken after them).
func TestConcurrentMutationsNeverDeadlockOut(t *testing.T) {
	for _, c := range []struct{ commit, guard string }{{"separate", "horizon"}, {"joined", "horizon"}, {"joined", "lock"}} {
		t.Run(c.commit+"/"+c.guard, func(t *testing.T) {
			concurrentMutations(t, func(cfg *api.Config) {
				cfg.EventCommit = c.commit
				cfg.Guard = store.Guards[c.guard]
			})
		})
	}
}

func concurrentMutations(t *testing.T, mod func(*api.Config)) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated}, poolDef{id: "shared", role: store.RoleShared})
	a := e.pod("a", mod)
	b := e.pod("b", mod)
	_, kd := a.provision(t, "ded")
	_, ks1 := a.provision(t, "shared")
	_, ks2 := b.provision(t, "shared")
	const writers, opsPer = 30, 120
	var mu sync.Mutex
	var fails []string
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		key := []string{kd, ks1, ks2}[w%3]
		p := []*pod{a, b}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < opsPer; i++ {
				own := fmt.Sprintf("/d/w%d-%d", w, i)
				hot := fmt.Sprintf("/d/hot%d", i%3)
				var code int
				var m map[string]any
				var err error
				switch i % 6 {
				case 0, 1:
					code, m, err = p.try("PUT", "/v1/fs"+own, key, strings.NewReader("x"), nil)
				case 2:
					code, m, err = p.try("PUT", "/v1/fs"+hot, key, strings.NewReader("y"), nil)
				case 3:
					code, m, err = p.try("POST", "/v1/fs"+own+"m?mkdir", key, nil, nil)
				case 4:
					code, m, err = p.try("POST", "/v1/fs"+own+"r?rename", key, nil, map[string]string{"X-Dat9-Rename-Source": fmt.Sprintf("/d/w%d-%d", w, i-4)})
				case 5:
					code, m, err = p.try("POST", "/v1/fs"+own+"c?copy", key, nil, map[string]string{"X-Dat9-Copy-Source": hot})
					if i%12 == 11 {
						code, m, err = p.try("DELETE", "/v1/fs"+own+"c", key, nil, nil)
					}
				}
				if err != nil || code >= 500 || (code != 200 && code != 404) {
					mu.Lock()
					fails = append(fails, fmt.Sprintf("%d %v %v", code, m, err))
					mu.Unlock()
				}
			}
		}()
	}
	mustWithin(t, 3*time.Minute, "the concurrent writers to finish", wg.Wait)
	var name string
	var dl int64
	sdb, _ := sql.Open("mysql", db.DSN(""))
	defer sdb.Close()
	_ = sdb.QueryRow("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'").Scan(&name, &dl)
	t.Logf("%d mutations: server Innodb_deadlocks %d, conflict retries %d (pod a) and %d (pod b)", writers*opsPer, dl,
		a.srv.Meta().Retries.Load(), b.srv.Meta().Retries.Load())
	hotErr := counter(t, a, "eventlogd_event_insert_results_total", map[string]string{"path": "hot", "result": "error"}) +
		counter(t, b, "eventlogd_event_insert_results_total", map[string]string{"path": "hot", "result": "error"})
	if len(fails) > 0 || hotErr > 0 {
		t.Fatalf("%d of %d mutations failed, %v hot event inserts failed; first: %v", len(fails), writers*opsPer, hotErr, fails[:min(len(fails), 5)])
	}
}
