package api_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestReplayBudgetHandsOffWithoutGaps: with a per-connection replay budget of 250 events and
// 100-row pages, a 600-event backlog is replayed over several connections, each ending after the
// full page that crossed the budget with a heartbeat at its cursor; the client resumes from its
// cursor and receives every event once, in order. The control (no budget) replays all on one
// connection and keeps it open.
func TestReplayBudgetHandsOffWithoutGaps(t *testing.T) {
	const backlog = 600
	for _, budget := range []int{250, 0} {
		t.Run(fmt.Sprintf("budget-%d", budget), func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
			p := e.pod("p", func(c *api.Config) {
				c.Stream.PageSize = 100
				c.Stream.ReplayBudgetEvents = budget
			})
			tenant, k := p.provision(t, "ded")
			ctx := testCtx(t)
			st, err := p.srv.Store(ctx, tenant)
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			for i := 0; i < backlog+1; i++ {
				seq, err := st.InsertEvent(ctx, store.Event{Path: fmt.Sprintf("/b/%d", i), Op: "write", CreatedAt: time.Now()}, store.GuardLock)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, seq)
			}
			cursor, want := want[0], want[1:] // resume after the first event: a backlog of 600
			var got []int64
			conns := 0
			for len(got) < backlog && conns < 10 {
				conns++
				s := p.subscribe(t, k, cursor).start()
				frames, _ := s.until(t, 20*time.Second, func(f frame) bool {
					return f.Type == "file_changed" && f.Seq == want[len(want)-1]
				})
				for _, f := range frames {
					if f.Type == "file_changed" {
						got = append(got, f.Seq)
					}
					cursor = max(cursor, f.Seq)
				}
				if len(got) < backlog {
					// Not done: this connection must have ended at the budget (not stalled).
					mustWithin(t, 10*time.Second, "the budgeted stream to end", func() {
						for f := range s.frames {
							if f.Type == "file_changed" {
								got = append(got, f.Seq)
							}
							cursor = max(cursor, f.Seq)
						}
					})
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("replayed %d events over %d connections; want the %d backlog seqs once, in order", len(got), conns, backlog)
			}
			handoffs := counter(t, p, "eventlogd_sse_replay_handoffs_total", nil)
			if budget > 0 && (conns != 2 || handoffs != 2) {
				// 600 = 3 full pages (300 >= 250: hand off) + 3 full pages on the second connection,
				// which hands off too (a full page cannot tell that the backlog ends there).
				t.Fatalf("budget %d: %d connections, %v handoffs; want 2 and 2", budget, conns, handoffs)
			}
			if budget == 0 && (conns != 1 || handoffs != 0) {
				t.Fatalf("no budget: %d connections, %v handoffs; want 1 and 0", conns, handoffs)
			}
		})
	}
}
