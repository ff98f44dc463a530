package api_test

import (
	"testing"
	"time"

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
			a.write(t, kq, "/only", "x") // proves the subscribers are live
			for _, s := range []*subscriber{subA, subB} {
				if got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/only" }); !ok {
					t.Fatalf("subscriber missed the write: %+v", got)
				}
			}
			// Settle: the write's lazy sweep and one maintenance pass over the then-active tenant.
			qctx := testCtx(t)
			waitFor(t, 10*time.Second, "signals", func() bool {
				return a.srv.SignalIdle(qctx) && b.srv.SignalIdle(qctx)
			})
			time.Sleep(300 * time.Millisecond)
			before := e.counts["quiet"].bytes.Load()

			writeMany(t, a, kb, "/busy", 200)
			time.Sleep(time.Second) // 20 heartbeats, 5 poll cycles, 10 maintenance passes
			for _, s := range []*subscriber{subA, subB} {
				if beats := countType(s.collect(100*time.Millisecond), "heartbeat"); beats == 0 {
					t.Fatal("no heartbeats: the subscriber is not live")
				}
			}
			after := e.counts["quiet"].bytes.Load()
			if cold {
				if after == before {
					t.Fatal("cold-db-sweeper defect: the quiet DB saw no traffic (the check has no teeth)")
				}
				return
			}
			if after != before {
				t.Fatalf("the quiet tenant's DB received %d bytes while the tenant was quiet", after-before)
			}
		})
	}
}
