package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/dbserver"
)

// TestExternalProvisionAdoptsTheServicePool: an external service that names the pool it put a
// tenant in (eventlogd does) moves the tenant to that pool, so tenant DB faults hit the toxiproxy
// proxy of that name, and with --dsn the tenant's events are read from that pool's database on the
// --dsn server (the eventlogd profile's {pool}) for the drain and the audit. A service that names no
// pool (drive9) leaves the scenario's pool as it was (the control).
func TestExternalProvisionAdoptsTheServicePool(t *testing.T) {
	sc, err := scenario.Parse("ext.yaml", []byte(e2eScenario))
	if err != nil {
		t.Fatal(err)
	}
	scenarioPools := map[string]bool{"tenant_1": true, scenario.SharedPool: true, "tenant_4": true}
	// The --dsn server: every pool database the service could name, each with an fs_events table of
	// the shape the eventlogd profile checks (the columns only matter).
	serverDSN, noServer := "", error(nil)
	if _, noServer = dbserver.FindBinary(); noServer == nil {
		srv, err := dbserver.Start(context.Background(), dbserver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = srv.Stop() }()
		root, err := sql.Open("mysql", srv.DSN(""))
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		cols := []string{}
		for _, c := range append(audit.Columns, "tenant_id") {
			cols = append(cols, c+" VARCHAR(64)")
		}
		for _, db := range []string{"svc_pool", "tenant_1", scenario.SharedPool, "tenant_4"} {
			for _, q := range []string{"CREATE DATABASE " + db, "CREATE TABLE " + db + "." + audit.EventsTable + " (" + strings.Join(cols, ", ") + ")"} {
				if _, err := root.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		serverDSN = srv.UserDSN()
	}
	for _, c := range []struct {
		name, answer string
		dsn          bool
		wantPools    map[string]bool // pools the tenants end up in
	}{
		{"eventlogd names the pool", `"pool":"svc_pool",`, false, map[string]bool{"svc_pool": true}},
		{"drive9 names none", ``, false, scenarioPools},
		{"eventlogd names the pool, with --dsn", `"pool":"svc_pool",`, true, map[string]bool{"svc_pool": true}},
		{"drive9 names none, with --dsn", ``, true, scenarioPools},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				mu.Lock()
				n++
				id := "t" + string(rune('0'+n))
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{`+c.answer+`"tenant_id":"`+id+`","api_key":"k"}`)
			}))
			defer srv.Close()
			tg := &externalTarget{url: srv.URL}
			if c.dsn {
				if noServer != nil {
					t.Skip(noServer)
				}
				tg.dsn = serverDSN
			}
			s := &state{o: Options{Target: srv.URL}, sc: sc, sys: &system{direct: map[string]*sql.DB{}}}
			defer s.sys.close(nil)
			log := slog.New(slog.DiscardHandler)
			if err := tg.up(context.Background(), s, log, s.sys); err != nil {
				t.Fatal(err)
			}
			ts, err := tg.provision(context.Background(), s, log)
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != len(sc.Expand()) {
				t.Fatalf("%d tenants, want %d", len(ts), len(sc.Expand()))
			}
			got := map[string]bool{}
			for _, tn := range ts {
				got[tn.Pool] = true
				if !c.dsn {
					continue
				}
				tb, ok := s.sys.tables[tn.ID]
				if !ok || tb.DB == nil {
					t.Errorf("tenant %s in pool %q: no --dsn handle for it", tn.ID, tn.Pool)
				} else if tb.Database != tn.Pool {
					t.Errorf("tenant %s in pool %q: its events are read from database %q", tn.ID, tn.Pool, tb.Database)
				}
			}
			b, _ := json.Marshal(got)
			for p := range c.wantPools {
				if !got[p] {
					t.Errorf("pools %s, want %v", b, c.wantPools)
				}
			}
			if len(got) != len(c.wantPools) {
				t.Errorf("pools %s, want %v", b, c.wantPools)
			}
		})
	}
}

// TestExternalRefusesABacklog: a backlog is written into a database the harness runs; against
// --target the run refuses it before any request, naming the group (the control: the same scenario
// without a backlog comes up).
func TestExternalRefusesABacklog(t *testing.T) {
	for _, c := range []struct {
		name, backlog, want string
	}{
		{"backlog", "    backlog: {rows: 10, age: 2h}\n", `tenant group "hot": backlog: only with eventlogd pods`},
		{"none", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "name: b\nseed: 1\nduration: 1s\ntenants:\n  - group: hot\n    count: 1\n" + c.backlog +
				"load:\n  - {tenants: hot, executor: constant-arrival-rate, rate: 1}\nconsumers:\n  - count: 1\n"
			sc, err := scenario.Parse("b.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			tg := &externalTarget{url: "http://127.0.0.1:1"}
			s := &state{o: Options{Target: tg.url}, sc: sc, sys: &system{direct: map[string]*sql.DB{}}}
			defer s.sys.close(nil)
			err = tg.up(context.Background(), s, slog.New(slog.DiscardHandler), s.sys)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("no backlog: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}
