package api_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

func TestSeqTooOldAfterSweep(t *testing.T) {
	for _, role := range []string{store.RoleDedicated, store.RoleShared} {
		t.Run(role, func(t *testing.T) {
			p, tenant, k := sweptTenant(t, role, nil)
			cases := []struct {
				since  int64
				first  string // first frame: reset reason or event path
				cursor int64
			}{
				{1, "seq_too_old", 6},
				{4, "seq_too_old", 6},
				{5, "/new", 6}, // everything after 5 is retained
				{0, "initial_sync", 6},
				{7, "server_restart", 6},
			}
			for _, c := range cases {
				s := p.subscribe(t, k, c.since).start()
				got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
				first := got[0].Reason
				if got[0].Type == "file_changed" {
					first = got[0].Path
				}
				if !ok || first != c.first || s.cursor != c.cursor {
					t.Fatalf("since=%d: %+v, want first %s cursor %d", c.since, got, c.first, c.cursor)
				}
				s.close()
			}
			if n := counter(t, p, "drive9_sse_resets_sent_total", map[string]string{"tenant_id": tenant, "reason": "seq_too_old"}); n != 2 {
				t.Fatalf("seq_too_old resets counted %v, want 2", n)
			}
		})
	}
}

// tinySweep makes rows old after a second and caps a lazy sweep, due every 300 ms, at 2 batches of
// 2 rows: a few writes show batching, the cap and the throttle.
func tinySweep(c *api.Config) {
	c.Retention = time.Second
	c.SweepInterval = 300 * time.Millisecond
	c.SweepBatch = 2
	c.SweepMaxBatches = 2
}

func TestLazySweepIsBatchedAndThrottled(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	p := e.pod("p", tinySweep)
	tenant, k := p.provision(t, "ded")
	for i := 0; i < 10; i++ { // the first write's sweep finds nothing; the rest are throttled
		p.write(t, k, fmt.Sprintf("/old/%d", i), "x")
	}
	waitAged(t, p, tenant, time.Second)
	pruned := func() float64 { return counter(t, p, "drive9_fs_events_pruned_total", nil) }
	if pruned() != 0 {
		t.Fatalf("pruned %v before any due sweep", pruned())
	}
	p.write(t, k, "/trigger1", "x") // due: one sweep of at most 2 batches of 2 rows
	wait.For(t, 10*time.Second, "first lazy sweep", func() bool { return pruned() == 4 })
	p.write(t, k, "/throttled", "x")   // within the interval: no sweep
	time.Sleep(350 * time.Millisecond) // the clock is the condition: the 300 ms sweep interval passes
	p.write(t, k, "/trigger2", "x")
	wait.For(t, 10*time.Second, "second lazy sweep", func() bool { return pruned() == 8 })
	if n := counter(t, p, "eventlogd_fs_events_sweeps_total", map[string]string{"kind": "lazy", "result": "ok"}); n != 3 {
		t.Fatalf("lazy sweeps %v, want 3 (first write, trigger1, trigger2)", n)
	}
}

// TestSharedPoolSweepIsClaimedOncePerInterval: pod b does not sweep a shared pool pod a claimed;
// the control is pod b's write to a second shared pool nobody claimed, which it sweeps within the
// same window.
func TestSharedPoolSweepIsClaimedOncePerInterval(t *testing.T) {
	e := newEnv(t, poolDef{id: "shared", role: store.RoleShared}, poolDef{id: "other", role: store.RoleShared})
	mod := func(c *api.Config) { c.Retention = time.Second; c.SharedSweepInterval = time.Hour }
	a := e.pod("a", mod)
	b := e.pod("b", mod)
	_, k1 := a.provision(t, "shared")
	_, k2 := a.provision(t, "shared")
	_, k3 := a.provision(t, "other")
	a.write(t, k1, "/t1", "x") // pod a claims the pool's sweep (nothing to delete yet)
	wait.For(t, 10*time.Second, "pod a's shared sweep", func() bool {
		return counter(t, a, "eventlogd_fs_events_sweeps_total", map[string]string{"kind": "shared"}) == 1
	})
	bSweeps := func() float64 {
		return counter(t, b, "eventlogd_fs_events_sweeps_total", map[string]string{"kind": "shared"})
	}
	const window = 2 * time.Second
	b.write(t, k2, "/t2", "x") // pod b's pre-filter lets it try, the cluster-wide claim refuses
	wait.Never(t, window, "pod b sweeping the shared pool inside pod a's claim interval", func() bool { return bSweeps() != 0 })
	b.write(t, k3, "/t3", "x") // the control: nobody holds this pool's claim
	wait.For(t, window, "pod b's sweep of the unclaimed pool (the control)", func() bool { return bSweeps() == 1 })
}

// TestSharedSweepResetsOnlyTenantsItSwept: in a shared DB seq is table-global, so a pool-wide sweep
// that deleted another tenant's old rows must not send seq_too_old to a tenant that lost nothing.
func TestSharedSweepResetsOnlyTenantsItSwept(t *testing.T) {
	e := newEnv(t, poolDef{id: "shared", role: store.RoleShared})
	p := e.pod("p", func(c *api.Config) { c.Retention = time.Second; c.SharedSweepInterval = time.Hour })
	ty, ky := p.provision(t, "shared")
	_, kx := p.provision(t, "shared")
	for i := 0; i < 3; i++ {
		p.write(t, ky, fmt.Sprintf("/y/%d", i), "x") // seqs 1-3, tenant y
	}
	waitAged(t, p, ty, time.Second)
	p.write(t, kx, "/x", "x") // seq 4, tenant x, recent
	st, err := p.srv.Store(testCtx(t), ty)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := p.srv.Sweeper().SweepNow(testCtx(t), st); err != nil || res.Deleted != 3 {
		t.Fatalf("shared sweep: %+v %v, want y's 3 rows", res, err)
	}
	// x's stream waits for seq 3 (y's swept row: only y's own mark may pass it at once, a gap below
	// another tenant's mark can be a write in flight) at most the horizon wait, then sends /x.
	for _, c := range []struct {
		key, first string
	}{{kx, "/x"}, {ky, "seq_too_old"}} {
		s := p.subscribe(t, c.key, 2).start()
		got, _ := s.until(t, 20*time.Second, func(f frame) bool { return f.Type == "file_changed" || f.Type == "reset" })
		f := got[len(got)-1]
		first := f.Reason
		if f.Type == "file_changed" {
			first = f.Path
		}
		if first != c.first {
			t.Fatalf("since=2: first event %+v, want %s", f, c.first)
		}
		s.close()
	}
}

// TestMaintenanceBackstopSweepsActiveTenants: with the lazy sweep throttled, the maintenance pass
// (the second sweep path) uses the same retention and sweeps the tenant that wrote since its last pass.
func TestMaintenanceBackstopSweepsActiveTenants(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	p := e.pod("p", func(c *api.Config) {
		c.Retention = time.Second
		c.SweepInterval = time.Hour
		c.MaintenanceInterval = 200 * time.Millisecond
	})
	tenant, k := p.provision(t, "ded")
	for i := 0; i < 5; i++ {
		p.write(t, k, fmt.Sprintf("/old/%d", i), "x")
	}
	waitAged(t, p, tenant, time.Second)
	p.write(t, k, "/recent", "x") // marks the tenant active; the lazy sweep is throttled
	wait.For(t, 10*time.Second, "the maintenance sweep", func() bool {
		return counter(t, p, "drive9_fs_events_pruned_total", nil) == 5
	})
	if n := counter(t, p, "eventlogd_fs_events_sweeps_total", map[string]string{"kind": "maintenance", "result": "ok"}); n < 1 {
		t.Fatalf("maintenance sweeps %v", n)
	}
	if n := counter(t, p, "drive9_fs_events_rows", nil); n < 0 {
		t.Fatalf("row estimate %v", n)
	}
}

// sweptTenant provisions a tenant in a pool of role on a pod with a 1 s retention, writes
// /old/0../old/4 (seqs 1-5), lets before look at them (nil: nothing), sweeps all five past the
// retention, and writes /new (seq 6).
func sweptTenant(t *testing.T, role string, before func(p *pod, key string)) (p *pod, tenant, key string) {
	t.Helper()
	e := newEnv(t, poolDef{id: "pool", role: role})
	p = e.pod("p", func(c *api.Config) { c.Retention = time.Second })
	tenant, key = p.provision(t, "pool")
	for i := 0; i < 5; i++ {
		p.write(t, key, fmt.Sprintf("/old/%d", i), "x")
	}
	if before != nil {
		before(p, key)
	}
	waitAged(t, p, tenant, time.Second)
	st, err := p.srv.Store(testCtx(t), tenant)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := p.srv.Sweeper().SweepNow(testCtx(t), st); err != nil || res.Deleted != 5 {
		t.Fatalf("sweep: %+v %v, want 5 deleted", res, err)
	}
	p.write(t, key, "/new", "x") // seq 6
	return p, tenant, key
}

// defectPod starts a pod on a fresh dedicated pool "ded" with defect d switched on when on; mod
// (may be nil) adjusts the rest of its configuration.
func defectPod(t *testing.T, d defect.Name, on bool, mod func(*api.Config)) (*env, *pod) {
	t.Helper()
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	return e, e.pod("p", func(c *api.Config) {
		if mod != nil {
			mod(c)
		}
		if on {
			c.Defects = defect.Set{d: true}
		}
	})
}

// waitAged waits until every event tenant has is older than retention by the sweeper's own test
// (created_at before now - retention), so the sweep that follows finds them all.
func waitAged(t *testing.T, p *pod, tenant string, retention time.Duration) {
	t.Helper()
	ctx := testCtx(t)
	st, err := p.srv.Store(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "tenant "+tenant+"'s events to age past the retention", func() bool {
		var total, recent int
		err := st.DB.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(created_at >= ?), 0) FROM fs_events WHERE tenant_id = ?`,
			time.Now().Add(-retention).UTC(), tenant).Scan(&total, &recent)
		if err != nil {
			t.Fatalf("reading tenant %s's event ages: %v", tenant, err)
		}
		return total > 0 && recent == 0
	})
}
