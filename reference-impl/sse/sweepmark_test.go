package sse

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/signal"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestNeighboursSweepMarkDoesNotPassAWriteInFlight: in a shared DB, a neighbour's retried row born
// older than the retention takes a fresh seq above this tenant's write still in flight and is swept
// at once; its sweep mark then lies above that write. A live stream of this tenant waits for the
// write (its own mark says nothing was swept of it) and delivers it before the next one. Under the
// any-tenant-sweep-mark defect it passes the gap below the neighbour's mark and never sends it.
func TestNeighboursSweepMarkDoesNotPassAWriteInFlight(t *testing.T) {
	for _, tc := range []struct {
		name   string
		defect bool
	}{{"own mark", false}, {"any-tenant-sweep-mark", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			a := tenantStore(t)
			a.TenantID = "a"
			b := &store.TenantStore{DB: a.DB, TenantID: "b"}
			bus := signal.NewBus()
			s := newTestStreamer(Config{Guard: store.GuardHorizon, HorizonWait: 2 * time.Second, AnyTenantSweepMark: tc.defect}, bus)
			first := insert(t, a, "/a/first", time.Now())
			w, _ := serve(t, s, a, first)
			waitFrames(t, w, "the stream-current heartbeat", func(f got) bool { return f.Type == "heartbeat" })

			tx, err := a.DB.BeginTx(ctx, nil) // a's write in flight
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			inflight, err := store.InsertEventTx(ctx, tx, "a", store.Event{Path: "/a/inflight", Op: "write", CreatedAt: time.Now()}, false)
			if err != nil {
				t.Fatal(err)
			}
			retried := insert(t, b, "/b/retried", time.Now().Add(-2*time.Hour)) // b's, born old
			// What a sweep of b leaves: its mark raised to the row, the row deleted. Done by primary
			// key here: the sweep's own range DELETE waits behind a's open insert in this small table.
			if _, err := a.DB.ExecContext(ctx, `INSERT INTO fs_events_sweep_mark (tenant_id, swept_through) VALUES ('b', ?)`, retried); err != nil {
				t.Fatal(err)
			}
			if _, err := a.DB.ExecContext(ctx, `DELETE FROM fs_events WHERE seq = ?`, retried); err != nil {
				t.Fatal(err)
			}
			if _, swept, err := b.Bounds(ctx); err != nil || swept != retried {
				t.Fatalf("b's sweep mark %d (%v), want %d", swept, err, retried)
			}
			next := insert(t, a, "/a/next", time.Now())
			bus.Publish("a")
			var committed atomic.Bool
			go func() { // commit once the stream delivered next, or after 1 s without it
				deadline := time.Now().Add(time.Second)
				for time.Now().Before(deadline) && !delivered(w, next) {
					time.Sleep(5 * time.Millisecond)
				}
				if err := tx.Commit(); err != nil {
					t.Error(err)
				}
				committed.Store(true)
				bus.Publish("a")
			}()
			fs := waitFrames(t, w, "a's next write", func(f got) bool { return f.Type == "file_changed" && f.Seq == next })
			want := fmt.Sprintf("heartbeat(%d) %d %d", first, inflight, next)
			if tc.defect {
				want = fmt.Sprintf("heartbeat(%d) %d", first, next) // the write in flight, passed
			}
			if r := render(fs); r != want {
				t.Fatalf("frames %q, want %q", r, want)
			}
			// Once committed, the write in flight is never sent: a later write (the control) is.
			wait.For(t, 10*time.Second, "the held insert to commit", committed.Load)
			last := insert(t, a, "/a/last", time.Now())
			bus.Publish("a")
			fs = waitFrames(t, w, "a's last write", func(f got) bool { return f.Type == "file_changed" && f.Seq == last })
			if sent := strings.Contains(" "+render(fs)+" ", fmt.Sprintf(" %d ", inflight)); sent == tc.defect {
				t.Fatalf("frames %q: the write in flight (%d) sent = %v, want %v", render(fs), inflight, sent, !tc.defect)
			}
		})
	}
}

func delivered(w *syncWriter, seq int64) bool {
	for _, f := range w.frames() {
		if f.Type == "file_changed" && f.Seq == seq {
			return true
		}
	}
	return false
}
