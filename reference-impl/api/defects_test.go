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

// TestSpuriousSeqTooOldDefect: a stream that subscribed to an empty tenant gets the first write as a
// file_changed on the correct build; with the defect it gets reset(seq_too_old) although nothing was
// ever swept (the real drive9 server's quirk that the power matrix models).
func TestSpuriousSeqTooOldDefect(t *testing.T) {
	for _, c := range []struct {
		name   string
		defect bool
	}{{"correct", false}, {"defect", true}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.pod("p1", func(cfg *api.Config) {
				if c.defect {
					cfg.Defects = defect.Set{defect.SpuriousSeqTooOld: true}
				}
			})
			_, k := p.provision(t, "")
			sub := p.subscribe(t, k, 0).start()
			if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok {
				t.Fatalf("no initial heartbeat: %+v", got)
			}
			p.write(t, k, "/first", "x")
			got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "file_changed" || f.Reason == "seq_too_old" })
			if !ok {
				t.Fatalf("no frame for the first write: %+v", got)
			}
			last := got[len(got)-1]
			if spurious := last.Reason == "seq_too_old"; spurious != c.defect {
				t.Fatalf("defect %v: first frame after the write %+v", c.defect, last)
			}
		})
	}
}

// TestSilentFanoutDropDefect: eight tenants write once each through pod p1 within one outbox poll of
// pod p2, whose streams wait on the outbox. The correct build wakes every one of them; with the defect
// p2's poller wakes two per read and drops the others silently, so some streams never get their event.
func TestSilentFanoutDropDefect(t *testing.T) {
	for _, c := range []struct {
		name   string
		defect bool
	}{{"correct", false}, {"defect", true}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			p1 := e.pod("p1", nil)
			p2 := e.pod("p2", func(cfg *api.Config) {
				cfg.OutboxPoll = time.Second // every write below lands in one read
				if c.defect {
					cfg.Defects = defect.Set{defect.SilentFanoutDrop: true}
				}
			})
			var keys []string
			var subs []*subscriber
			for range 8 {
				_, k := p1.provision(t, "")
				keys = append(keys, k)
				s := p2.subscribe(t, k, 0).start()
				if got, ok := s.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" }); !ok {
					t.Fatalf("no initial heartbeat: %+v", got)
				}
				subs = append(subs, s)
			}
			for i, k := range keys {
				p1.write(t, k, fmt.Sprintf("/w%d", i), "x")
			}
			missed := 0
			for i, s := range subs {
				want := fmt.Sprintf("/w%d", i)
				if _, ok := s.until(t, 4*time.Second, func(f frame) bool { return f.Path == want }); !ok {
					missed++
				}
			}
			if (missed > 0) != c.defect {
				t.Fatalf("defect %v: %d of 8 cross-pod streams never got their event", c.defect, missed)
			}
		})
	}
}

// TestUnboundedSweepDefect: ten old rows, a lazy sweep capped at 2 batches of 2 rows. The correct
// build's sweep runs in the background and stops at its cap (4 rows); with the defect the write that
// finds the sweep due deletes every old row in one statement before its response comes back.
func TestUnboundedSweepDefect(t *testing.T) {
	for _, c := range []struct {
		name   string
		defect bool
	}{{"correct", false}, {"defect", true}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
			p := e.pod("p", func(cfg *api.Config) {
				tinySweep(cfg)
				if c.defect {
					cfg.Defects = defect.Set{defect.UnboundedSweep: true}
				}
			})
			tenant, k := p.provision(t, "ded")
			for i := 0; i < 10; i++ { // the first write's sweep finds nothing; the rest are throttled
				p.write(t, k, fmt.Sprintf("/old/%d", i), "x")
			}
			pruned := func() float64 { return counter(t, p, "drive9_fs_events_pruned_total", nil) }
			wait.For(t, 10*time.Second, "the first write's sweep", func() bool { return !p.srv.Sweeper().Busy() })
			waitAged(t, p, tenant, time.Second) // the ten rows age past the retention
			p.write(t, k, "/trigger", "x")
			if c.defect {
				// Read right after the response: the sweep ran inside the write, not beside it.
				if n := pruned(); n != 10 {
					t.Fatalf("defect: %v rows pruned when the triggering write returned, want all 10 in one statement", n)
				}
				return
			}
			wait.For(t, 10*time.Second, "the lazy sweep", func() bool { return pruned() == 4 && !p.srv.Sweeper().Busy() })
			if n := pruned(); n != 4 {
				t.Fatalf("correct: %v rows pruned, want the cap of 2 batches of 2", n)
			}
		})
	}
}
