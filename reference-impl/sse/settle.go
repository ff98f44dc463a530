package sse

import (
	"context"
	"time"

	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// settle returns once every seq up to top is visible or given up as a hole (at most HorizonWait
// per gap, as a stream's horizon does), or false when ctx ends or a read keeps failing. A reset
// that moves the cursor to top (initial_sync, server_restart, seq_too_old) tells the client to
// resync; under --event-commit joined a write's file commits with its event, so a seq below top
// still in flight is a file the resync may not see yet, and its event would be below the cursor.
// It reads the PageSize seqs below top: a write in flight holds one of the last seqs taken, and a
// DB has far fewer writes in flight than a page (each holds a connection). Only for
// Config.SettleResets under GuardHorizon (under GuardLock a tenant's seqs commit in order).
func (x *stream) settle(ctx context.Context, top int64) bool {
	if !x.cfg.SettleResets || x.cfg.Guard != store.GuardHorizon || top <= 0 {
		return true
	}
	hz := horizon{settled: max(0, top-int64(x.cfg.PageSize))}
	for failures := 0; hz.settled < top; {
		rctx, cancel := context.WithTimeout(ctx, x.cfg.QueryTimeout)
		p, err := x.st.EventsAfter(rctx, hz.settled, x.cfg.PageSize)
		cancel()
		if err != nil {
			if failures++; failures > 3 {
				x.log.Warn("sse reset: could not settle the seqs below it", "tenant_id", x.st.TenantID, "top", top, "err", err)
				return false // the client reconnects
			}
		} else {
			before := hz.settled
			_, held, gaveUp := hz.advance(p.Rows, p.SweptAny, time.Now(), x.cfg.HorizonWait)
			if gaveUp {
				x.m.HorizonHoles.Inc()
				x.log.Warn("sse reset: gave missing seqs below it up as holes", "tenant_id", x.st.TenantID, "after", before, "through", hz.settled)
			}
			if !held {
				return true // every row up to the last read (top among them) was settled
			}
		}
		if !sleep.For(ctx, x.cfg.CatchUpDelay) {
			return false
		}
	}
	return true
}
