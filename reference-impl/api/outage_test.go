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

// TestMetaOutageNeverFailsMutationAndHintsCatchUp: with the meta DB unreachable (the key's cache entry
// already expired), a write of a known tenant still succeeds and its event is durable; the outbox hint is retried, so once the meta DB is
// back the other pod's subscriber is woken without any further write.
func TestMetaOutageNeverFailsMutationAndHintsCatchUp(t *testing.T) {
	e := newEnv(t).withMetaProxy()
	a := e.pod("a", func(c *api.Config) { c.AuthCacheTTL = 50 * time.Millisecond })
	b := e.pod("b", nil)
	_, k := a.provision(t, "")
	a.write(t, k, "/warm", "x") // caches the key on pod a
	sub := b.subscribe(t, k, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })

	e.metaProxy.Stop()
	time.Sleep(100 * time.Millisecond) // the clock is the condition: the cached key passes its 50 ms TTL, so the stale entry must serve
	a.write(t, k, "/during-outage", "x")
	wait.For(t, 10*time.Second, "a failed outbox insert", func() bool {
		return counter(t, a, "eventlogd_outbox_inserts_total", map[string]string{"result": "error"}) >= 1
	})
	if err := e.metaProxy.Start(); err != nil {
		t.Fatal(err)
	}
	if got, ok := sub.until(t, 20*time.Second, func(f frame) bool { return f.Path == "/during-outage" }); !ok {
		t.Fatalf("hint never caught up after the meta outage: %+v", got)
	}
}

// TestLivenessPollCoversSignalLoss: the optional liveness poll (off by default) delivers to a pod
// whose poller is stalled; without it the event waits for the next wake.
func TestLivenessPollCoversSignalLoss(t *testing.T) {
	for _, live := range []bool{true, false} {
		t.Run(map[bool]string{true: "liveness-poll", false: "default-off"}[live], func(t *testing.T) {
			e := newEnv(t)
			a := e.pod("a", nil)
			b := e.pod("b", func(c *api.Config) {
				if live {
					c.Stream.LivenessPoll = 100 * time.Millisecond
				}
			})
			_, k := a.provision(t, "")
			sub := b.subscribe(t, k, 0).start()
			sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
			b.srv.Poller().Stall(time.Minute)
			a.write(t, k, "/x", "1")
			// The liveness poll (the control) delivers /x within window; without it nothing may.
			const window = 3 * time.Second
			isX := func(f frame) bool { return f.Path == "/x" }
			if !live {
				sub.never(t, window, "/x delivered during signal loss without a liveness poll", isX)
			} else if got, ok := sub.until(t, window, isX); !ok {
				t.Fatalf("control: the liveness poll did not deliver /x within %v during signal loss (%+v)", window, got)
			}
		})
	}
}

func TestDirectoryRenameMovesChildrenAndOddNames(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", nil)
	_, k := p.provision(t, "")
	put := func(path, body string) {
		if code, m := p.do(t, "PUT", "/v1/fs"+path, k, strings.NewReader(body), nil); code != 200 {
			t.Fatalf("put %s: %d %v", path, code, m)
		}
	}
	post := func(path string, hdr map[string]string, want int) {
		if code, m := p.do(t, "POST", "/v1/fs"+path, k, nil, hdr); code != want {
			t.Fatalf("post %s: %d %v", path, code, m)
		}
	}
	post("/d?mkdir", nil, 200)
	put("/d/x", "1")
	put("/d/sub/y", "2")
	put("/d_%25", "not a child") // LIKE metacharacters must not match /d's children
	post("/e?rename", map[string]string{"X-Dat9-Rename-Source": "/d"}, 200)
	post("/e/sub?rename", map[string]string{"X-Dat9-Rename-Source": "/e"}, 409) // into itself
	get := func(path string) int {
		req, _ := http.NewRequestWithContext(testCtx(t), "GET", p.url+"/v1/fs"+path, nil)
		req.Header.Set("X-API-Key", k)
		resp, err := p.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for path, want := range map[string]int{"/e/x": 200, "/e/sub/y": 200, "/d/x": 404, "/d": 404, "/d_%25": 200} {
		if got := get(path); got != want {
			t.Fatalf("GET %s: %d, want %d", path, got, want)
		}
	}
}

// TestDeletedTenantKeyStopsWorkingAfterRevalidation: a cached key past its TTL is served once more
// while the background revalidation runs; then the deleted tenant's key is refused.
func TestDeletedTenantKeyStopsWorkingAfterRevalidation(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", func(c *api.Config) { c.AuthCacheTTL = 50 * time.Millisecond })
	tenant, k := p.provision(t, "")
	p.write(t, k, "/a", "x")
	if err := p.srv.Meta().DeleteTenant(testCtx(t), tenant); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "the deleted tenant's key to be refused", func() bool {
		code, _ := p.do(t, "PUT", "/v1/fs/b", k, strings.NewReader("x"), nil)
		return code == 401
	})
}

// TestPodStartsDuringTenantDBOutage: a pod (re)started while a tenant DB is unreachable comes up,
// answers that tenant with 503 meanwhile, and serves it once the DB is back.
func TestPodStartsDuringTenantDBOutage(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true}, poolDef{id: "other", role: store.RoleDedicated})
	first := e.pod("first", nil)
	_, k := first.provision(t, "ded")
	first.close()
	e.proxies["ded"].Stop()
	p := e.pod("restarted", nil)
	if code, _ := p.do(t, "PUT", "/v1/fs/a", k, strings.NewReader("x"), nil); code != 503 {
		t.Fatalf("write during the outage: %d, want 503", code)
	}
	if err := e.proxies["ded"].Start(); err != nil {
		t.Fatal(err)
	}
	p.write(t, k, "/a", "x")
}

// TestDrainErrorBackoffRetriesUntilTheDBRecovers: a wake whose read fails is retried with backoff
// (no further wake needed), so a stream stuck on a failing tenant DB resumes once it recovers.
func TestDrainErrorBackoffRetriesUntilTheDBRecovers(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
	p := e.pod("p", nil)
	tenant, k := p.provision(t, "ded")
	sub := p.subscribe(t, k, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	ctx := testCtx(t)
	direct, err := store.OpenDB(ctx, dsnDirect(e, "ded"))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	st := &store.TenantStore{DB: direct, TenantID: tenant}
	if _, err := st.InsertEvent(ctx, store.Event{Path: "/silent", Op: "write", CreatedAt: time.Now()}, store.GuardLock); err != nil {
		t.Fatal(err)
	}
	e.proxies["ded"].Stop()
	if err := p.srv.Meta().InsertNotify(ctx, "another-pod", []string{tenant}); err != nil { // one wake, read fails
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "a failed stream read", func() bool {
		return counter(t, p, "eventlogd_tenant_db_event_queries_total", map[string]string{"op": "events_since"}) >= 3
	})
	if err := e.proxies["ded"].Start(); err != nil {
		t.Fatal(err)
	}
	if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/silent" }); !ok {
		t.Fatalf("the backoff retry never delivered: %+v", got)
	}
}

// TestStalledTenantDBRequestIsBounded: a write to a tenant whose DB stopped answering gets a 503
// after --request-timeout instead of hanging, and writes work again after the stall.
func TestStalledTenantDBRequestIsBounded(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
	p := e.pod("p", func(c *api.Config) { c.RequestTimeout = 300 * time.Millisecond })
	_, k := p.provision(t, "ded")
	p.write(t, k, "/before", "x")
	px := e.proxies["ded"]
	if _, err := px.Toxics.AddToxicJson(strings.NewReader(`{"name":"stall","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`)); err != nil {
		t.Fatal(err)
	}
	if code, m := p.do(t, "PUT", "/v1/fs/during", k, strings.NewReader("x"), nil); code != 503 {
		t.Fatalf("write to a stalled DB: %d %v, want 503", code, m)
	}
	if err := px.Toxics.RemoveToxic(testCtx(t), "stall"); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "writes to work again", func() bool {
		code, _ := p.do(t, "PUT", "/v1/fs/after", k, strings.NewReader("x"), nil)
		return code == 200
	})
}
