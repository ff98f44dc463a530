package api_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestQuietTenantDBSeesNoQuery counts the bytes every pod sends to a quiet tenant's DB through a
// relay, while two pods hold subscribers for it, heartbeat, poll the outbox, run maintenance and
// serve a busy neighbour. The cold-db-sweeper defect is the negative control.
func TestQuietTenantDBSeesNoQuery(t *testing.T) {
	for _, cold := range []bool{false, true} {
		t.Run(map[bool]string{false: "lazy", true: "cold-db-sweeper"}[cold], func(t *testing.T) {
			e := newEnv(t, poolDef{id: "quiet", role: store.RoleDedicated, count: true}, poolDef{id: "busy", role: store.RoleDedicated})
			mod := func(c *api.Config) {
				c.Stream.Heartbeat = 50 * time.Millisecond
				c.MaintenanceInterval = 100 * time.Millisecond
				c.SweepInterval = 50 * time.Millisecond
				c.OutboxPruneEvery = 100 * time.Millisecond
				if cold {
					c.Defects = defect.Set{defect.ColdDBSweeper: true}
				}
			}
			a := e.pod("a", mod)
			b := e.pod("b", mod)
			_, kq := a.provision(t, "quiet")
			_, kb := a.provision(t, "busy")
			subA := a.subscribe(t, kq, 0).start()
			subB := b.subscribe(t, kq, 0).start()
			for _, s := range []*subscriber{subA, subB} { // open (past reset(initial_sync)) before the write
				s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
			}
			a.write(t, kq, "/only", "x") // proves the subscribers are live
			for _, s := range []*subscriber{subA, subB} {
				if got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/only" }); !ok {
					t.Fatalf("subscriber missed the write: %+v", got)
				}
			}
			// Settle: the write's lazy sweep and one maintenance pass over the then-active tenant.
			qctx := testCtx(t)
			wait.For(t, 10*time.Second, "signals", func() bool {
				return a.srv.SignalIdle(qctx) && b.srv.SignalIdle(qctx)
			})
			// Settled means the quiet DB's byte count stopped moving (a pass over the then-active
			// tenant can come late on a loaded machine); one that never settles fails here.
			// (The cold-db-sweeper defect never lets it settle: it reads the quiet DB on every pass.)
			var before int64
			if cold {
				wait.For(t, 10*time.Second, "the write's lazy sweeps to finish", func() bool {
					return !a.srv.Sweeper().Busy() && !b.srv.Sweeper().Busy()
				})
				before = e.counts["quiet"].bytes.Load()
			} else {
				before = settled(t, &e.counts["quiet"].bytes, 500*time.Millisecond, 15*time.Second)
			}

			writeMany(t, a, kb, "/busy", 200)
			// 20 heartbeats, 5 poll cycles, 10 maintenance passes: the defect's reads (the control)
			// reach the quiet DB within it.
			const window = time.Second
			moved := func() bool { return e.counts["quiet"].bytes.Load() != before }
			if cold {
				wait.For(t, window, "cold-db-sweeper defect: traffic to the quiet DB (else the check has no teeth)", moved)
			} else {
				wait.Never(t, window, "a byte to the quiet tenant's DB while the tenant was quiet", moved)
			}
			for _, s := range []*subscriber{subA, subB} {
				if _, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok {
					t.Fatal("no heartbeats: the subscriber is not live")
				}
			}
		})
	}
}

// settled waits until n has not changed for quiet (at most limit) and returns its value.
func settled(t *testing.T, n *atomic.Int64, quiet, limit time.Duration) int64 {
	t.Helper()
	v, since := n.Load(), time.Now()
	wait.For(t, limit, "the tenant DB's traffic to settle", func() bool {
		if w := n.Load(); w != v {
			v, since = w, time.Now()
		}
		return time.Since(since) >= quiet
	})
	return v
}
