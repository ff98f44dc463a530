package api_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// breakAfterMutation returns a hook that stops the proxy between the next mutation's commit and
// its event insert, once per arm.
func breakAfterMutation(e *env, pool string, armed *atomic.Bool) func(string) {
	return func(string) {
		if armed.Swap(false) {
			e.proxies[pool].Stop()
		}
	}
}

func fsEventsCount(t *testing.T, e *env, pool, path string) int {
	t.Helper()
	sdb, err := store.OpenDB(testCtx(t), e.pools[0].DSN[:0]+dsnDirect(e, pool))
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var n int
	if err := sdb.QueryRow(`SELECT COUNT(*) FROM fs_events WHERE path = ?`, path).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// dsnDirect is pool's DSN without the proxy (the audit path).
func dsnDirect(e *env, pool string) string { return db.DSN(e.prefix + pool) }

func TestInsertFailureBufferedFlushedDeliveredCrossPod(t *testing.T) {
	cases := []struct {
		name      string
		defect    defect.Name
		delivered bool // without a further write
		durable   bool
	}{
		{"correct", "", true, true},
		{"no-second-wake", defect.NoSecondWake, false, true},
		{"drop-on-insert-failure", defect.DropOnInsertFailure, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
			var armed atomic.Bool
			a := e.pod("a", func(cfg *api.Config) {
				cfg.AfterMutation = breakAfterMutation(e, "ded", &armed)
				cfg.Buffer.BackoffMin = 50 * time.Millisecond
				cfg.Buffer.BackoffMax = 200 * time.Millisecond
				cfg.EventInsertTimeout = time.Second
				if c.defect != "" {
					cfg.Defects = defect.Set{c.defect: true}
				}
			})
			b := e.pod("b", nil)
			tenant, k := a.provision(t, "ded")
			a.write(t, k, "/before", "0")
			sub := b.subscribe(t, k, 0).start()
			sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })

			armed.Store(true)
			a.write(t, k, "/buffered", "1") // mutation succeeds although its event insert fails
			if got := counter(t, a, "eventlogd_event_insert_results_total", map[string]string{"path": "hot", "result": "error"}); got != 1 {
				t.Fatalf("hot insert errors = %v, want 1", got)
			}
			if c.defect != defect.DropOnInsertFailure {
				if d := counter(t, a, "drive9_sse_event_retry_buffer_depth", nil); d != 1 {
					t.Fatalf("buffer depth = %v, want 1", d)
				}
			}
			if err := e.proxies["ded"].Start(); err != nil {
				t.Fatal(err)
			}
			if c.durable {
				wait.For(t, 20*time.Second, "flush", func() bool {
					return counter(t, a, "drive9_sse_event_retry_flush_total", map[string]string{"result": "ok"}) == 1
				})
				if n := counter(t, a, "eventlogd_event_retry_buffer_residency_seconds", nil); n != 1 {
					t.Fatalf("residency observations = %v, want 1", n)
				}
			}
			if c.delivered {
				got, ok := sub.until(t, 20*time.Second, func(f frame) bool { return f.Path == "/buffered" })
				if !ok {
					t.Fatalf("buffered event never reached pod b's subscriber: %+v", got)
				}
			} else {
				// Negative control: nothing wakes pod b, so the event does not arrive on its own; the
				// next write's wake (the control) reaches pod b within the same window.
				const window = 3 * time.Second
				sub.never(t, window, c.name+": /buffered delivered without a second wake", func(f frame) bool { return f.Path == "/buffered" })
				a.write(t, k, "/after", "2")
				got, ok := sub.until(t, window, func(f frame) bool { return f.Path == "/after" })
				if !ok {
					t.Fatalf("%s: control: /after did not reach pod b within %v (%+v)", c.name, window, got)
				}
				saw := false
				for _, f := range got {
					saw = saw || f.Path == "/buffered"
				}
				if saw != c.durable {
					t.Fatalf("%s: /buffered delivered with the next write = %v, want %v (%+v)", c.name, saw, c.durable, got)
				}
			}
			if n := fsEventsCount(t, e, "ded", "/buffered"); (n == 1) != c.durable {
				t.Fatalf("fs_events rows for /buffered = %d, durable want %v", n, c.durable)
			}
			_ = tenant
		})
	}
}

func TestFlushReResolvesClosedStoreAndDropsGoneTenant(t *testing.T) {
	for _, gone := range []bool{false, true} {
		t.Run(map[bool]string{false: "reopened", true: "tenant_gone"}[gone], func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
			var armed atomic.Bool
			a := e.pod("a", func(cfg *api.Config) {
				cfg.AfterMutation = breakAfterMutation(e, "ded", &armed)
				cfg.Buffer.BackoffMin = 50 * time.Millisecond
				cfg.Buffer.BackoffMax = 100 * time.Millisecond
			})
			tenant, k := a.provision(t, "ded")
			sub := a.subscribe(t, k, 0).start()
			sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
			armed.Store(true)
			a.write(t, k, "/buffered", "1")
			if gone {
				if err := a.srv.Meta().DeleteTenant(testCtx(t), tenant); err != nil {
					t.Fatal(err)
				}
			}
			a.srv.Pools().ClosePool("ded") // the pool idle-closed the backend the cache points at
			if err := e.proxies["ded"].Start(); err != nil {
				t.Fatal(err)
			}
			if gone {
				wait.For(t, 20*time.Second, "tenant_gone drop", func() bool {
					return counter(t, a, "drive9_sse_event_retry_dropped_total", map[string]string{"tenant_id": tenant, "reason": "tenant_gone"}) == 1
				})
				if d := a.srv.Buffer().Depth(); d != 0 {
					t.Fatalf("depth %d after tenant_gone", d)
				}
				return
			}
			if got, ok := sub.until(t, 20*time.Second, func(f frame) bool { return f.Path == "/buffered" }); !ok {
				t.Fatalf("flush after re-resolution not delivered: %+v", got)
			}
		})
	}
}

func TestGracefulShutdownFlushesOrCountsLeftovers(t *testing.T) {
	for _, healthy := range []bool{true, false} {
		t.Run(map[bool]string{true: "flushed", false: "shutdown_drop"}[healthy], func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
			var armed atomic.Bool
			a := e.pod("a", func(cfg *api.Config) {
				cfg.AfterMutation = breakAfterMutation(e, "ded", &armed)
				cfg.Buffer.BackoffMin = time.Hour // only the shutdown drain may flush
				cfg.ShutdownBudget = 500 * time.Millisecond
				cfg.Buffer.InsertTimeout = 200 * time.Millisecond
			})
			tenant, k := a.provision(t, "ded")
			armed.Store(true)
			a.write(t, k, "/buffered", "1")
			if healthy {
				if err := e.proxies["ded"].Start(); err != nil {
					t.Fatal(err)
				}
			}
			a.close()
			dropped := counter(t, a, "drive9_sse_event_retry_dropped_total", map[string]string{"tenant_id": tenant, "reason": "shutdown"})
			if healthy && (dropped != 0 || fsEventsCount(t, e, "ded", "/buffered") != 1) {
				t.Fatalf("healthy shutdown: dropped %v, want the entry flushed", dropped)
			}
			if !healthy && (dropped != 1 || fsEventsCount(t, e, "ded", "/buffered") != 0) {
				t.Fatalf("shutdown with the DB down: dropped %v, want 1 counted as shutdown", dropped)
			}
			// After Close, the buffer refuses: reason stopped.
			a.srv.Buffer().Enqueue(tenant, store.Event{Path: "/late", Op: "write", CreatedAt: time.Now()})
			if n := counter(t, a, "drive9_sse_event_retry_dropped_total", map[string]string{"tenant_id": tenant, "reason": "stopped"}); n != 1 {
				t.Fatalf("enqueue after stop: stopped drops = %v, want 1", n)
			}
		})
	}
}

// TestEventInsertFailpointIsRecoveredOrLostByDefect: the admin failpoint fails hot-path inserts only;
// a correct pod buffers and delivers every event, drop-on-insert-failure loses them. Under both
// --event-commit modes every write is kept (joined: the mutation commits without its event).
func TestEventInsertFailpointIsRecoveredOrLostByDefect(t *testing.T) {
	for _, commit := range api.EventCommitModes {
		for _, drop := range []bool{false, true} {
			t.Run(commit+"/"+map[bool]string{false: "buffered", true: "drop-on-insert-failure"}[drop], func(t *testing.T) {
				failpointCase(t, commit, drop)
			})
		}
	}
}

func failpointCase(t *testing.T, commit string, drop bool) {
	e := newEnv(t)
	p := e.pod("p", func(c *api.Config) {
		c.EventCommit = commit
		c.Buffer.BackoffMin = 20 * time.Millisecond
		if drop {
			c.Defects = defect.Set{defect.DropOnInsertFailure: true}
		}
	})
	tenant, k := p.provision(t, "")
	sub := p.subscribe(t, k, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	if code, _ := p.do(t, "POST", "/v1/admin/failpoint/event-insert?for=1m&tenant="+tenant, "", nil, nil); code != 200 {
		t.Fatalf("arm failpoint: %d", code)
	}
	for i := 0; i < 5; i++ {
		p.write(t, k, fmt.Sprintf("/f/%d", i), "x")
	}
	if code, _ := p.do(t, "POST", "/v1/admin/failpoint/event-insert?for=0s", "", nil, nil); code != 200 {
		t.Fatalf("disarm failpoint: %d", code)
	}
	// From the disarm on, the buffered pod (the control) delivers the five failed events within
	// window; the defect must deliver none of them within the same window.
	const window = 5 * time.Second
	disarmed := time.Now()
	failed := func(f frame) bool { return f.Type == "file_changed" && strings.HasPrefix(f.Path, "/f/") }
	for i := 0; i < 5; i++ {
		if code, _, body := p.raw(t, "GET", fmt.Sprintf("/v1/fs/f/%d", i), k, nil, nil); code != 200 || body != "x" {
			t.Fatalf("file /f/%d written while its event failed: %d %q, want it kept", i, code, body)
		}
	}
	p.write(t, k, "/after", "x")
	countFailed := func() int {
		n := 0
		for _, f := range sub.seen {
			if failed(f) {
				n++
			}
		}
		return n
	}
	if !drop {
		sub.until(t, time.Until(disarmed.Add(window)), func(frame) bool { return countFailed() == 5 })
		if n := countFailed(); n != 5 {
			t.Fatalf("control: delivered %d of the 5 failed events within %v of the disarm", n, window)
		}
		sub.until(t, 20*time.Second, func(f frame) bool { return countType(sub.seen, "file_changed") == 6 })
		if n := countType(sub.seen, "file_changed"); n != 6 {
			t.Fatalf("delivered %d of 6", n)
		}
		return
	}
	if got, hit := sub.until(t, time.Until(disarmed.Add(window)), failed); hit {
		t.Fatalf("defect: a failed event delivered within %v of the disarm: %+v", window, got[len(got)-1])
	}
	sawAfter := func() bool { return slices.ContainsFunc(sub.seen, func(f frame) bool { return f.Path == "/after" }) }
	if !sawAfter() {
		sub.until(t, 20*time.Second, func(f frame) bool { return f.Path == "/after" })
	}
	if n := countType(sub.seen, "file_changed"); n != 1 || !sawAfter() {
		t.Fatalf("defect: delivered %d events (/after among them: %v), want only /after", n, sawAfter())
	}
}

// TestDeletedTenantsBufferedEventsDropAsTenantGone: deleting a tenant drops its
// buffered events as tenant_gone although the flusher's cached store is still open: the event is
// never inserted into the deleted tenant's DB. Negative control: a live tenant's buffered event
// is flushed through the same cached store.
func TestDeletedTenantsBufferedEventsDropAsTenantGone(t *testing.T) {
	for _, deleted := range []bool{true, false} {
		t.Run(map[bool]string{true: "deleted", false: "live (control)"}[deleted], func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
			var armed atomic.Bool
			a := e.pod("a", func(cfg *api.Config) {
				cfg.AfterMutation = breakAfterMutation(e, "ded", &armed)
				cfg.Buffer.BackoffMin = 50 * time.Millisecond
				cfg.Buffer.BackoffMax = 100 * time.Millisecond
			})
			tenant, k := a.provision(t, "ded")
			armed.Store(true)
			a.write(t, k, "/buffered", "1")
			if deleted {
				if code, _ := a.do(t, "DELETE", "/v1/admin/tenants/"+tenant, "", nil, nil); code != 200 {
					t.Fatalf("delete tenant: %d", code)
				}
			}
			if err := e.proxies["ded"].Start(); err != nil {
				t.Fatal(err)
			}
			wait.For(t, 20*time.Second, "the buffer to empty", func() bool { return a.srv.Buffer().Depth() == 0 })
			gone := counter(t, a, "drive9_sse_event_retry_dropped_total", map[string]string{"tenant_id": tenant, "reason": "tenant_gone"})
			rows := fsEventsCount(t, e, "ded", "/buffered")
			if deleted && (gone != 1 || rows != 0) {
				t.Fatalf("deleted tenant: tenant_gone drops %v, rows inserted %d; want 1 and 0", gone, rows)
			}
			if !deleted && (gone != 0 || rows != 1) {
				t.Fatalf("live tenant: tenant_gone drops %v, rows inserted %d; want 0 and 1", gone, rows)
			}
		})
	}
}

// TestFlushDuringMetaOutageUsesTheCachedStore: the tenant lookup before a flush must not make the
// retry buffer depend on the meta DB: with the meta DB down, a buffered event of a known tenant is
// still flushed (through the cached store) and delivered.
func TestFlushDuringMetaOutageUsesTheCachedStore(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true}).withMetaProxy()
	var armed atomic.Bool
	a := e.pod("a", func(cfg *api.Config) {
		cfg.AfterMutation = breakAfterMutation(e, "ded", &armed)
		cfg.Buffer.BackoffMin = 50 * time.Millisecond
		cfg.Buffer.BackoffMax = 100 * time.Millisecond
	})
	_, k := a.provision(t, "ded")
	sub := a.subscribe(t, k, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	armed.Store(true)
	a.write(t, k, "/buffered", "1")
	e.metaProxy.Stop()
	defer func() { _ = e.metaProxy.Start() }()
	if err := e.proxies["ded"].Start(); err != nil {
		t.Fatal(err)
	}
	if got, ok := sub.until(t, 20*time.Second, func(f frame) bool { return f.Path == "/buffered" }); !ok {
		t.Fatalf("buffered event not flushed while the meta DB is down: %+v", got)
	}
}

// TestGlobalCapEvictsTheFloodingTenantsNotTheVictim: tenants flooding the retry
// buffer past its global cap lose their own entries; the victim's one buffered event (the oldest
// entry in the buffer) stays. Before the fix the global cap evicted the oldest entry of any tenant:
// the victim's.
func TestGlobalCapEvictsTheFloodingTenantsNotTheVictim(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", func(c *api.Config) {
		c.Buffer.GlobalCap = 20
		c.Buffer.BackoffMin = time.Hour // nothing flushes during the test: the cap does the evicting
		c.Buffer.BackoffMax = time.Hour
	})
	victim, kv := p.provision(t, "")
	var flooders []string
	var keys []string
	for i := 0; i < 3; i++ {
		id, k := p.provision(t, "")
		flooders, keys = append(flooders, id), append(keys, k)
	}
	if code, _ := p.do(t, "POST", "/v1/admin/failpoint/event-insert?for=1m", "", nil, nil); code != 200 {
		t.Fatalf("arm failpoint: %d", code)
	}
	p.write(t, kv, "/victim", "x")
	for i := 0; i < 10; i++ {
		for _, k := range keys {
			p.write(t, k, fmt.Sprintf("/flood/%d", i), "x")
		}
	}
	snap := p.srv.Buffer().Snapshot()
	if snap.Tenants[victim] != 1 || len(snap.Drops[victim]) != 0 {
		t.Fatalf("victim: %d buffered, drops %v; want its 1 event kept", snap.Tenants[victim], snap.Drops[victim])
	}
	evicted := 0
	for _, f := range flooders {
		evicted += snap.Drops[f]["global_cap"]
	}
	if snap.Depth != 20 || evicted != 11 {
		t.Fatalf("depth %d, flooders' global_cap drops %d; want 20 and 11 (31 entries, cap 20)", snap.Depth, evicted)
	}
}

// TestTenantDeletionUnderLoad: tenant X is deleted while it and tenant Y are being written on two
// pods and every X event waits in the retry buffer (the failpoint fails X's hot inserts; the first
// retry is 2 s away). Every X event acknowledged before or after the deletion (its key stays cached
// for a while) drops as tenant_gone and none is inserted; Y is not disturbed (every Y event is
// delivered).
func TestTenantDeletionUnderLoad(t *testing.T) {
	e := newEnv(t)
	mod := func(c *api.Config) {
		c.Buffer.BackoffMin = 2 * time.Second
		c.Buffer.BackoffMax = 2 * time.Second
	}
	a, b := e.pod("a", mod), e.pod("b", mod)
	x, kx := a.provision(t, "")
	_, ky := a.provision(t, "")
	sub := b.subscribe(t, ky, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	for _, p := range []*pod{a, b} {
		if code, _ := p.do(t, "POST", "/v1/admin/failpoint/event-insert?for=1m&tenant="+x, "", nil, nil); code != 200 {
			t.Fatalf("arm failpoint: %d", code)
		}
	}
	var ackedX atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 40; i++ {
			p := []*pod{a, b}[i%2]
			if code, _, err := p.try("PUT", fmt.Sprintf("/v1/fs/x/%d", i), kx, strings.NewReader("x"), nil); err == nil && code == 200 {
				ackedX.Add(1)
			}
			if code, m, err := p.try("PUT", fmt.Sprintf("/v1/fs/y/%d", i), ky, strings.NewReader("y"), nil); err != nil || code != 200 {
				t.Errorf("write y/%d: %d %v %v", i, code, m, err)
			}
			time.Sleep(25 * time.Millisecond) // paces the load
		}
	}()
	wait.For(t, 20*time.Second, "X writes acknowledged before the deletion", func() bool { return ackedX.Load() >= 8 })
	if code, _ := a.do(t, "DELETE", "/v1/admin/tenants/"+x, "", nil, nil); code != 200 {
		t.Fatalf("delete tenant: %d", code)
	}
	<-done
	for _, p := range []*pod{a, b} {
		wait.For(t, 20*time.Second, "the retry buffer to empty", func() bool { return p.srv.Buffer().Depth() == 0 })
	}
	var gone, flushed float64
	for _, p := range []*pod{a, b} {
		gone += counter(t, p, "drive9_sse_event_retry_dropped_total", map[string]string{"tenant_id": x, "reason": "tenant_gone"})
		flushed += counter(t, p, "drive9_sse_event_retry_flush_total", map[string]string{"result": "ok"})
	}
	if int64(gone) != ackedX.Load() || flushed != 0 || ackedX.Load() == 0 {
		t.Fatalf("X: %d acked, %v dropped as tenant_gone, %v flushed into its DB; want all dropped, none flushed", ackedX.Load(), gone, flushed)
	}
	if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/y/39" }); !ok {
		t.Fatalf("tenant Y's last event not delivered (frames %d)", len(got))
	}
}
