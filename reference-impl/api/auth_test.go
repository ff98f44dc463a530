package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestRevokedKeyIsBoundedDuringMetaOutage: a deleted tenant's key, cached before the meta DB went
// down, acts for at most TTL + --auth-stale-max; with a large stale bound it still acts over the
// same window, the window in which the bounded case (the control) is refused.
func TestRevokedKeyIsBoundedDuringMetaOutage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		staleMax time.Duration
		wantLive bool
	}{
		{"bounded", 200 * time.Millisecond, false},
		{"negative control: an hour", time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t).withMetaProxy()
			p := e.pod("p", func(c *api.Config) { c.AuthCacheTTL = 50 * time.Millisecond; c.AuthStaleMax = tc.staleMax })
			tenant, k := p.provision(t, "")
			p.write(t, k, "/a", "x")
			if err := p.srv.Meta().DeleteTenant(testCtx(t), tenant); err != nil {
				t.Fatal(err)
			}
			e.metaProxy.Stop()
			defer func() { _ = e.metaProxy.Start() }()
			const window = 3 * time.Second // far past TTL + 200 ms, far inside an hour
			refused := func() bool {
				code, _ := p.do(t, "PUT", "/v1/fs/b", k, strings.NewReader("x"), nil)
				return code != http.StatusOK // with the meta DB down the key is not refused (401) but unservable (503)
			}
			if tc.wantLive {
				wait.Never(t, window, "the deleted key stopped acting during the meta outage", refused)
			} else {
				wait.For(t, window, "the deleted key to stop acting once TTL + stale max passed", refused)
			}
		})
	}
}

// TestDeletedTenantStreamsEnd: the open streams of a deleted tenant end within the stream key
// revalidation period; another tenant's stream on the same pod stays and keeps delivering.
func TestDeletedTenantStreamsEnd(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", func(c *api.Config) {
		c.AuthCacheTTL = 50 * time.Millisecond
		c.Limits.StreamAuthEvery = 50 * time.Millisecond
	})
	gone, kg := p.provision(t, "")
	_, ks := p.provision(t, "")
	sg := p.subscribe(t, kg, 0).start()
	ss := p.subscribe(t, ks, 0).start()
	for _, s := range []*subscriber{sg, ss} {
		if _, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok {
			t.Fatal("no first heartbeat")
		}
	}
	if err := p.srv.Meta().DeleteTenant(testCtx(t), gone); err != nil {
		t.Fatal(err)
	}
	mustWithin(t, 20*time.Second, "the deleted tenant's stream to end", func() { <-sg.done })
	if sg.ctx.Err() != nil {
		t.Fatal("the stream ended from the client side, not the pod's")
	}
	if n := counter(t, p, "eventlogd_streams_closed_by_auth_total", map[string]string{"reason": "key_revoked"}); n != 1 {
		t.Fatalf("streams closed for a revoked key = %v, want 1", n)
	}
	p.write(t, ks, "/still", "x")
	if got, ok := ss.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/still" }); !ok {
		t.Fatalf("the other tenant's stream stopped delivering: %v", got)
	}
}

// TestWrongKeyIsRememberedBriefly: a wrong key's second request is refused without a meta query
// (still 401 with the meta DB down); a wrong key never seen before needs the meta DB (503: the
// negative control, proving the first answer came from memory).
func TestWrongKeyIsRememberedBriefly(t *testing.T) {
	e := newEnv(t).withMetaProxy()
	p := e.pod("p", func(c *api.Config) { c.Limits.AuthNegativeTTL = time.Hour })
	if code, _ := p.do(t, "GET", "/v1/fs/a", "wrong-key", nil, nil); code != 401 {
		t.Fatalf("wrong key: %d", code)
	}
	e.metaProxy.Stop()
	defer func() { _ = e.metaProxy.Start() }()
	if code, _ := p.do(t, "GET", "/v1/fs/a", "wrong-key", nil, nil); code != 401 {
		t.Fatalf("remembered wrong key with the meta DB down: %d, want 401", code)
	}
	if code, _ := p.do(t, "GET", "/v1/fs/a", "another-wrong-key", nil, nil); code != 503 {
		t.Fatalf("unseen wrong key with the meta DB down: %d, want 503", code)
	}
}

// TestStreamsReadThroughTheirOwnHandle: streams read a pool through a handle capped at
// --db-stream-max-open; with that handle's only connection taken, another tenant's writes in the
// same shared pool still succeed.
func TestStreamsReadThroughTheirOwnHandle(t *testing.T) {
	e := newEnv(t, poolDef{id: "shared", role: store.RoleShared})
	p := e.pod("p", func(c *api.Config) { c.DB.StreamMaxOpen = 1 })
	_, ka := p.provision(t, "shared")
	_, kb := p.provision(t, "shared")
	ctx := testCtx(t)
	w, err := p.srv.Pools().Acquire(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	sdb, err := p.srv.Pools().AcquireStream(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if sdb == w || sdb.Stats().MaxOpenConnections != 1 {
		t.Fatalf("stream handle: same as the write handle %v, max open %d (want 1)", sdb == w, sdb.Stats().MaxOpenConnections)
	}
	for range 5 {
		p.subscribe(t, ka, 0).start()
	}
	conn, err := sdb.Conn(ctx) // every stream read now waits for this connection
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := range 20 {
		p.write(t, kb, "/b"+string(rune('a'+i)), "x")
	}
}
