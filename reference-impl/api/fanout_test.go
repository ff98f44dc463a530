package api_test

import (
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/signal"
)

// TestFanoutLagClosesNothing (seed 004): pod b's poller is held past signal.LagAfter while pod a
// writes, so b's next read is lagged. The correct build counts the lag and delivers the late wake;
// every stream stays open and gets the next write too. With mass-close-on-lag every one of b's
// streams ends in the same instant (the reconnect storm of seed 004's closer).
func TestFanoutLagClosesNothing(t *testing.T) {
	const streams = 5
	for _, massClose := range []bool{false, true} {
		t.Run(map[bool]string{false: "correct", true: "mass-close-on-lag"}[massClose], func(t *testing.T) {
			e := newEnv(t)
			mod := func(c *api.Config) {
				if massClose {
					c.Defects = defect.Set{defect.MassCloseOnLag: true}
				}
			}
			a := e.pod("a", mod)
			b := e.pod("b", mod)
			_, k := a.provision(t, "")
			subs := make([]*subscriber, streams)
			for i := range subs {
				subs[i] = b.subscribe(t, k, 0).start()
				if _, ok := subs[i].until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok {
					t.Fatalf("stream %d: no heartbeat", i)
				}
			}
			b.srv.Poller().Stall(time.Minute)
			a.write(t, k, "/x", "1")
			time.Sleep(signal.LagAfter + 300*time.Millisecond) // holds the fault: the stall outlasting LagAfter is the condition under test
			b.srv.Poller().Resume()
			wait.For(t, 10*time.Second, "pod b's lagged read", func() bool {
				return counter(t, b, "eventlogd_fanout_lag_total", map[string]string{"reason": "poll_gap"}) >= 1
			})
			if massClose {
				for i, s := range subs {
					if got, ok := s.until(t, 10*time.Second, func(frame) bool { return false }); ok || s.err == nil {
						t.Fatalf("stream %d stayed open under the defect (%d frames, err %v)", i, len(got), s.err)
					}
				}
				if n := counter(t, b, "eventlogd_fanout_lag_closed_streams_total", nil); n != streams {
					t.Fatalf("defect closed %v streams, want %d", n, streams)
				}
				return
			}
			for i, s := range subs {
				if got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/x" }); !ok {
					t.Fatalf("stream %d: the late wake was not delivered: %+v (err %v)", i, got, s.err)
				}
			}
			a.write(t, k, "/y", "2")
			for i, s := range subs {
				if got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/y" }); !ok {
					t.Fatalf("stream %d did not stay open after the lag: %+v (err %v)", i, got, s.err)
				}
			}
			if n := counter(t, b, "eventlogd_fanout_lag_closed_streams_total", nil); n != 0 {
				t.Fatalf("the correct build closed %v streams on lag", n)
			}
		})
	}
}

// TestPrunedWakesAreRecovered: pod s's poller is stalled past the cursor age bound, so pod w's prune
// gate deletes the outbox row of w's write before s ever read it. When s resumes, its cursor is
// below the prune mark: it counts the loss (outbox_pruned) and wakes every local stream to re-read
// from its cursor, so the write arrives with no later write to carry it. The row is shown gone
// before the resume: the recovery is the only way the event can arrive.
func TestPrunedWakesAreRecovered(t *testing.T) {
	e := newEnv(t)
	mod := func(c *api.Config) {
		c.OutboxRetention = 200 * time.Millisecond
		c.OutboxCursorMaxAge = 500 * time.Millisecond
		c.OutboxPruneEvery = 100 * time.Millisecond
	}
	w := e.pod("w", mod)
	s := e.pod("s", mod)
	_, k := w.provision(t, "")
	sub := s.subscribe(t, k, 0).start()
	if _, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok {
		t.Fatal("no heartbeat")
	}
	ctx := testCtx(t)
	meta := s.srv.Meta()
	wait.For(t, 10*time.Second, "pod s's cursor", func() bool {
		_, ok, _ := meta.Cursor(ctx, "s")
		return ok
	})
	s.srv.Poller().Stall(time.Minute)
	from := s.srv.Poller().Cursor()
	w.write(t, k, "/x", "1")
	wait.For(t, 20*time.Second, "the prune to delete the write's outbox row", func() bool {
		mark, err := meta.OutboxPruneMark(ctx)
		var left int
		_ = meta.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM tenant_notify_outbox WHERE id > ?`, from).Scan(&left)
		return err == nil && mark > from && left == 0
	})
	s.srv.Poller().Resume()
	if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/x" }); !ok {
		t.Fatalf("a write whose wake was pruned unread never arrived: %+v", got)
	}
	if n := counter(t, s, "eventlogd_fanout_signal_lost_total", map[string]string{"reason": "outbox_pruned"}); n < 1 {
		t.Fatalf("the pruned wakes were not counted (%v)", n)
	}
	if n := counter(t, s, "eventlogd_fanout_recovery_wakes_total", nil); n < 1 {
		t.Fatalf("no recovery wake counted (%v)", n)
	}
}

// TestHintsLostAtShutdownAreCounted: a pod whose last outbox hint the meta DB refuses at shutdown
// cannot signal it any more; the loss is counted (reason shutdown), never silent. With the meta DB
// up the same shutdown writes the hint and counts nothing.
func TestHintsLostAtShutdownAreCounted(t *testing.T) {
	for _, metaDown := range []bool{false, true} {
		t.Run(map[bool]string{false: "meta up", true: "meta down"}[metaDown], func(t *testing.T) {
			e := newEnv(t).withMetaProxy()
			a := e.pod("a", nil)
			_, k := a.provision(t, "")
			a.write(t, k, "/x", "1") // caches the key: writes go on without the meta DB
			ctx := testCtx(t)
			wait.For(t, 10*time.Second, "the first hint", func() bool { return a.srv.SignalIdle(ctx) })
			if metaDown {
				e.metaProxy.Stop()
			}
			a.write(t, k, "/y", "2")
			mustWithin(t, time.Minute, "the pod to close", a.close)
			got := counter(t, a, "eventlogd_fanout_signal_lost_total", map[string]string{"reason": "shutdown"})
			if want := map[bool]float64{false: 0, true: 1}[metaDown]; got != want {
				t.Fatalf("hints lost at shutdown counted %v, want %v", got, want)
			}
		})
	}
}
