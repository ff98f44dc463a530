package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/seqgate/seqgate/harness/scenario"
)

// TestExternalProvisionAdoptsTheServicePool: an external service that names the pool it put a
// tenant in (eventlogd does) moves the tenant to that pool, so tenant DB faults hit the toxiproxy
// proxy of that name, and the --dsn handle is found under the new pool for the drain and the audit.
// A service that names no pool (drive9) leaves the scenario's pool as it was.
func TestExternalProvisionAdoptsTheServicePool(t *testing.T) {
	sc, err := scenario.Parse("ext.yaml", []byte(e2eScenario))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, answer string
		wantPools    map[string]bool // pools the tenants end up in
	}{
		{"eventlogd names the pool", `"pool":"svc_pool",`, map[string]bool{"svc_pool": true}},
		{"drive9 names none", ``, map[string]bool{"tenant_1": true, scenario.SharedPool: true, "tenant_4": true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				n++
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{`+c.answer+`"tenant_id":"t`+string(rune('0'+n))+`","api_key":"k"}`)
			}))
			defer srv.Close()
			d, err := sql.Open("mysql", "root@tcp(127.0.0.1:1)/x") // never connected: only its identity matters
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			s := &state{sc: sc, sys: &system{url: srv.URL, direct: map[string]*sql.DB{}}}
			for _, name := range s.databases() {
				s.sys.direct[name] = d
			}
			tg := externalTarget{url: srv.URL}
			ts, err := tg.provision(context.Background(), s, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != len(sc.Expand()) {
				t.Fatalf("%d tenants, want %d", len(ts), len(sc.Expand()))
			}
			got := map[string]bool{}
			for _, tn := range ts {
				got[tn.Pool] = true
				if s.sys.direct[tn.Pool] != d {
					t.Errorf("tenant %s in pool %q: no --dsn handle under that pool", tn.ID, tn.Pool)
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
