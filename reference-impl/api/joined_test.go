package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestJoinedCommitDeliversEveryAckedWrite: under --event-commit joined and grouped, 8 writers put
// 30 files each at once into one dedicated tenant, and every 5th write of each also overwrites one
// shared file; under each guard every acked write has exactly one event row, every row reaches the
// tenant's subscriber in seq order (none skipped), every file is there, and the shared file's acked
// revisions are 1..n, each once (grouped: a group never holds a path twice, and its revisions are
// read back in its own transaction). Grouped must have committed writes together. The held-back
// late commit of each guard in joined mode, with late-commit-skip as its negative control, is
// TestLateCommitIsNotSkipped.
func TestJoinedCommitDeliversEveryAckedWrite(t *testing.T) {
	for _, commit := range []string{api.EventCommitJoined, api.EventCommitGrouped} {
		for _, guard := range []string{"lock", "horizon"} {
			t.Run(commit+"/"+guard, func(t *testing.T) { joinedDeliversEveryAckedWrite(t, commit, guard) })
		}
	}
}

func joinedDeliversEveryAckedWrite(t *testing.T, commit, guard string) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	p := e.pod("p", func(c *api.Config) {
		c.EventCommit = commit
		c.Guard = store.Guards[guard]
	})
	tenant, k := p.provision(t, "ded")
	sub := p.subscribe(t, k, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	const writers, each, sharedEvery = 8, 30, 5
	const shared = writers * each / sharedEvery
	var wg sync.WaitGroup
	var acked sync.Map
	var n atomic.Int64
	var mu sync.Mutex
	var revs []int64 // the shared file's acked revisions
	put := func(path string) (map[string]any, bool) {
		code, m, err := p.try("PUT", "/v1/fs"+path, k, strings.NewReader(path), nil)
		if err != nil || code != 200 {
			t.Errorf("write %s: %d %v %v", path, code, m, err)
			return nil, false
		}
		n.Add(1)
		return m, true
	}
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				path := fmt.Sprintf("/w%d/%d", w, i)
				if _, ok := put(path); !ok {
					return
				}
				acked.Store(path, true)
				if i%sharedEvery == 0 {
					m, ok := put("/shared")
					if !ok {
						return
					}
					rev, _ := m["revision"].(float64)
					mu.Lock()
					revs = append(revs, int64(rev))
					mu.Unlock()
				}
			}
		}()
	}
	mustWithin(t, 2*time.Minute, "the writers", wg.Wait)
	const total = writers*each + shared
	if n.Load() != total {
		t.Fatalf("%d of %d writes acked", n.Load(), total)
	}
	slices.Sort(revs)
	for i, r := range revs {
		if r != int64(i+1) {
			t.Fatalf("acked revisions of /shared %v, want 1..%d each once", revs, shared)
		}
	}
	seen := map[int64]string{} // seq -> path
	delivered := map[string]bool{}
	var last int64
	sub.until(t, 30*time.Second, func(f frame) bool {
		if f.Type == "file_changed" {
			if f.Seq <= last {
				t.Errorf("seq %d (%s) after %d: out of order", f.Seq, f.Path, last)
			}
			last = f.Seq
			seen[f.Seq] = f.Path
			delivered[f.Path] = true
		}
		return len(seen) == total
	})
	acked.Range(func(k, _ any) bool {
		if !delivered[k.(string)] {
			t.Errorf("acked write %s never delivered", k)
		}
		return true
	})
	// Every row of the tenant reached the subscriber (no skip), one per acked write.
	direct, err := store.OpenDB(testCtx(t), dsnDirect(e, "ded"))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	rows, err := direct.QueryContext(testCtx(t), `SELECT seq, path FROM fs_events WHERE tenant_id = ?`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	nrows := 0
	for rows.Next() {
		var seq int64
		var path string
		if err := rows.Scan(&seq, &path); err != nil {
			t.Fatal(err)
		}
		nrows++
		if seen[seq] != path {
			t.Errorf("row seq %d (%s) delivered as %q: skipped", seq, path, seen[seq])
		}
	}
	var files int
	if err := direct.QueryRowContext(testCtx(t), `SELECT COUNT(*) FROM files WHERE tenant_id = ?`, tenant).Scan(&files); err != nil {
		t.Fatal(err)
	}
	if nrows != total || files != writers*each+1 {
		t.Fatalf("%d event rows and %d files for %d acked writes of %d files", nrows, files, total, writers*each+1)
	}
	if commit == api.EventCommitGrouped {
		if groups := counter(t, p, "eventlogd_write_group_size", nil); groups == 0 || groups >= total {
			t.Fatalf("%v write groups for %d writes: none committed together", groups, total)
		}
	}
}

// TestJoinedEventLockWaitKeepsTheMutation is a real DB error on a joined event insert (not the
// failpoint): under the lock guard a transaction of the test holds the tenant's sequence row, so the
// event's insert inside the write's transaction ends in a lock wait timeout (1205, after 1 s on this
// pool's connections). The write rolls back to its savepoint and commits the file alone (200); the
// event is buffered, flushed once the row is free, and delivered. Negative control:
// drop-on-insert-failure keeps the file and loses the event. Joined, and grouped (whose write, a
// group of one, commits in two multi-statement round trips: store.CommitGroup).
func TestJoinedEventLockWaitKeepsTheMutation(t *testing.T) {
	for _, c := range []struct {
		commit string
		drop   bool
	}{{api.EventCommitJoined, false}, {api.EventCommitJoined, true}, {api.EventCommitGrouped, false}, {api.EventCommitGrouped, true}} {
		drop := c.drop
		t.Run(c.commit+"/"+map[bool]string{false: "buffered", true: "drop-on-insert-failure"}[drop], func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
			e.pools[0].DSN += "&innodb_lock_wait_timeout=1"
			p := e.pod("p", func(cfg *api.Config) {
				cfg.EventCommit = c.commit
				cfg.Guard = store.GuardLock
				cfg.Buffer.BackoffMin = 50 * time.Millisecond
				cfg.Buffer.BackoffMax = 200 * time.Millisecond
				if drop {
					cfg.Defects = defect.Set{defect.DropOnInsertFailure: true}
				}
			})
			tenant, k := p.provision(t, "ded")
			p.write(t, k, "/first", "x") // creates the tenant's sequence row
			sub := p.subscribe(t, k, 0).start()
			sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/first" })
			_, tx := directTx(t, e, "ded")
			if _, err := tx.ExecContext(testCtx(t), `UPDATE fs_event_seq_lock SET n = n + 1 WHERE tenant_id = ?`, tenant); err != nil {
				t.Fatal(err)
			}
			p.write(t, k, "/held", "kept")
			if got := counter(t, p, "eventlogd_event_insert_results_total", map[string]string{"path": "hot", "result": "error"}); got != 1 {
				t.Fatalf("hot insert errors = %v, want 1", got)
			}
			if code, _, body := p.raw(t, "GET", "/v1/fs/held", k, nil, nil); code != 200 || body != "kept" {
				t.Fatalf("GET /held: %d %q, want the file kept", code, body)
			}
			if d := p.srv.Buffer().Depth(); d != map[bool]int{false: 1, true: 0}[drop] {
				t.Fatalf("retry buffer depth %d with drop=%v", d, drop)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if !drop {
				if got, ok := sub.until(t, 20*time.Second, func(f frame) bool { return f.Path == "/held" }); !ok {
					t.Fatalf("the buffered event of /held was never delivered: %+v", got)
				}
				if n := fsEventsCount(t, e, "ded", "/held"); n != 1 {
					t.Fatalf("%d event rows for /held, want 1", n)
				}
				return
			}
			p.write(t, k, "/after", "x")
			got, _ := sub.until(t, 20*time.Second, func(f frame) bool { return f.Path == "/after" })
			for _, f := range got {
				if f.Path == "/held" {
					t.Fatalf("defect: /held delivered: %+v", got)
				}
			}
			if n := fsEventsCount(t, e, "ded", "/held"); n != 0 {
				t.Fatalf("defect: %d event rows for /held, want 0", n)
			}
		})
	}
}

// TestJoinedMutationCommitsWithItsEvent: the tenant DB is cut between a write's statement and its
// event's insert (Config.AfterMutation). Separate: the write committed on its own (200) and its event
// is buffered, then flushed when the DB is back. Joined: nothing had committed, so the write fails
// (503, not acknowledged: no event owed), no file and no event row exist, and nothing is buffered.
func TestJoinedMutationCommitsWithItsEvent(t *testing.T) {
	for _, commit := range api.EventCommitModes {
		t.Run(commit, func(t *testing.T) {
			joined := commit != api.EventCommitSeparate
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
			var armed atomic.Bool
			p := e.pod("p", func(c *api.Config) {
				c.EventCommit = commit
				c.AfterMutation = breakAfterMutation(e, "ded", &armed)
				c.Buffer.BackoffMin = 50 * time.Millisecond
				c.Buffer.BackoffMax = 200 * time.Millisecond
				c.EventInsertTimeout = time.Second
			})
			_, k := p.provision(t, "ded")
			armed.Store(true)
			code, m := p.do(t, "PUT", "/v1/fs/cut", k, strings.NewReader("x"), nil)
			if want := map[bool]int{false: 200, true: 503}[joined]; code != want {
				t.Fatalf("write cut before its event: %d %v, want %d", code, m, want)
			}
			if d, want := p.srv.Buffer().Depth(), map[bool]int{false: 1, true: 0}[joined]; d != want {
				t.Fatalf("retry buffer depth %d, want %d", d, want)
			}
			if err := e.proxies["ded"].Start(); err != nil {
				t.Fatal(err)
			}
			if !joined {
				wait.For(t, 20*time.Second, "the flush", func() bool { return p.srv.Buffer().Depth() == 0 })
			}
			want := map[bool]int{false: 1, true: 0}[joined]
			if n := fsEventsCount(t, e, "ded", "/cut"); n != want {
				t.Fatalf("%d event rows for /cut, want %d", n, want)
			}
			direct, err := store.OpenDB(testCtx(t), dsnDirect(e, "ded"))
			if err != nil {
				t.Fatal(err)
			}
			defer direct.Close()
			var files int
			if err := direct.QueryRowContext(testCtx(t), `SELECT COUNT(*) FROM files WHERE path = '/cut'`).Scan(&files); err != nil {
				t.Fatal(err)
			}
			if files != want {
				t.Fatalf("%d files /cut, want %d", files, want)
			}
			p.write(t, k, "/next", "x") // the pod writes again once the DB is back
		})
	}
}

// TestJoinedResetWaitsForAWriteInFlight: under the horizon guard a stream's reset(initial_sync)
// moves its cursor to the head, and a client resyncs its files on it. A seq below the head still in
// flight (here an insert the test holds open, as a joined write's transaction is until its commit)
// would fall below the cursor; under --event-commit joined its file is not committed yet either, so
// the reset waits for it. Under separate a batch write's files commit with their events too, so the
// reset waits there as well. Control: the reset-passes-batch defect sends it at once under separate,
// past the seq in flight.
func TestJoinedResetWaitsForAWriteInFlight(t *testing.T) {
	for _, commit := range append(api.EventCommitModes, "separate+reset-passes-batch") {
		t.Run(commit, func(t *testing.T) {
			joined := commit != "separate+reset-passes-batch" // the reset waits
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
			p := e.pod("p", func(c *api.Config) {
				c.EventCommit = strings.TrimSuffix(commit, "+reset-passes-batch")
				if !joined {
					c.Defects = defect.Set{defect.ResetPassesBatch: true}
				}
				c.Guard = store.GuardHorizon
				c.Stream.HorizonWait = 5 * time.Minute // the held insert commits long before
			})
			tenant, k := p.provision(t, "ded")
			p.write(t, k, "/first", "x")
			_, tx := directTx(t, e, "ded")
			held, err := store.InsertEventTx(testCtx(t), tx, tenant, store.Event{Path: "/late", Op: "write", CreatedAt: time.Now()}, false)
			if err != nil {
				t.Fatal(err)
			}
			p.write(t, k, "/second", "x") // commits above the held seq
			sub := p.subscribe(t, k, 0).start()
			isReset := func(f frame) bool { return f.Type == "reset" }
			const window = 3 * time.Second // the separate commit (the control) sends its reset within it
			if !joined {
				got, ok := sub.until(t, window, isReset)
				if !ok || got[len(got)-1].Seq <= held {
					t.Fatalf("reset-passes-batch: want reset(initial_sync) at once above held seq %d: %+v", held, got)
				}
				return
			}
			sub.never(t, window, fmt.Sprintf("joined: a reset sent while seq %d below it was in flight", held), isReset)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			got, ok := sub.until(t, 10*time.Second, isReset)
			if !ok || got[len(got)-1].Reason != "initial_sync" || got[len(got)-1].Seq <= held {
				t.Fatalf("joined: want reset(initial_sync) above seq %d once it committed: %+v", held, got)
			}
		})
	}
}

// TestGroupPanicAnswersItsWrites: a panic while a write group commits (here in Config.AfterMutation,
// just before the group's round trip) fails that group's write with 503 instead of leaving it
// waiting or killing the pod (the committer is no request: net/http would not recover it); nothing
// of the group is written, and the next write of the tenant commits (a new committer). Control: unarmed, the
// same write is acknowledged.
func TestGroupPanicAnswersItsWrites(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	var armed atomic.Bool
	p := e.pod("p", func(c *api.Config) {
		c.EventCommit = api.EventCommitGrouped
		c.AfterMutation = func(string) {
			if armed.Load() {
				panic("injected")
			}
		}
	})
	_, k := p.provision(t, "ded")
	armed.Store(true)
	if code, m := p.do(t, "PUT", "/v1/fs/boom", k, strings.NewReader("x"), nil); code != http.StatusServiceUnavailable {
		t.Fatalf("write during a panic: %d %v, want 503", code, m)
	}
	if code, _, _ := p.raw(t, "GET", "/v1/fs/boom", k, nil, nil); code != http.StatusNotFound {
		t.Fatalf("GET /boom after the failed group: %d, want 404 (nothing written)", code)
	}
	armed.Store(false)
	p.write(t, k, "/boom", "y")
	if code, _, body := p.raw(t, "GET", "/v1/fs/boom", k, nil, nil); code != 200 || body != "y" {
		t.Fatalf("GET /boom: %d %q, want the control write", code, body)
	}
}
