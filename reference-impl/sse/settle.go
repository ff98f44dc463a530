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
// resync; a write whose files commit with its event (every batch write, and every write under
// --event-commit joined or grouped) and whose seq below top is still in flight is a file the
// resync may not see yet, and its event would be below the cursor. Only for Config.SettleResets
// under GuardHorizon (under GuardLock a tenant's seqs commit in order).
//
// The window starts at settleFrom, far enough below top to hold every seq still in flight that a
// stream would wait for, whoever's it is: in a shared pool the seqs just below the head are mostly
// other tenants', and a write of this tenant that took its seq long before them is still settled.
func (x *stream) settle(ctx context.Context, top int64) bool {
	return x.settleKnown(ctx, top, seqSample{})
}

// settleKnown is settle with a sample known from elsewhere (the head hint and the time it was
// written: its seq was committed by then): a hint written at least HorizonWait ago leaves no seq
// below it to settle, so an initial sync of a quiet tenant answered from the hint reads no tenant DB.
func (x *stream) settleKnown(ctx context.Context, top int64, known seqSample) bool {
	if !x.cfg.SettleResets || x.cfg.Guard != store.GuardHorizon || top <= 0 {
		return true
	}
	if !x.cfg.NarrowSettle && known.seq >= top && !known.at.IsZero() && time.Since(known.at) >= x.cfg.HorizonWait {
		return true
	}
	from, ok := x.settleFrom(ctx, top)
	if !ok {
		return false
	}
	hz := horizon{settled: from}
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
			x.saw(x.st, p)
			before := hz.settled
			_, held, gaveUp := hz.advance(p.Rows, x.gone(x.st, p), time.Now(), x.cfg.HorizonWait)
			if gaveUp {
				x.m.HorizonHoles.Inc()
				x.log.Warn("sse reset: gave missing seqs below it up as holes", "tenant_id", x.st.TenantID, "after", before, "through", hz.settled)
			}
			if !held && (hz.settled >= top || len(p.Rows) < x.cfg.PageSize || x.cfg.NarrowSettle) {
				return true // every row up to the last read (top among them) was settled
			}
			if !held {
				continue // a full page below top: read the next one at once
			}
		}
		if !sleep.For(ctx, x.cfg.CatchUpDelay) {
			return false
		}
	}
	return true
}

// settleFrom is where a reset's settle starts. Every seq still in flight that a stream would wait
// for was taken less than HorizonWait ago, so it lies above the highest seq this pod saw visible
// HorizonWait ago (seqClock). A pod without that history (it just opened the pool) starts below the
// newest row created SettleBack before now: a seq is taken within its request, so at most
// SettleBack after its row's created_at, except a retried event's (it keeps its first created_at;
// such a row can end the window early), and never less than PageSize below top. Under the narrow-settle defect it is PageSize below top, whatever is in flight further down.
func (x *stream) settleFrom(ctx context.Context, top int64) (int64, bool) {
	from := max(0, top-int64(x.cfg.PageSize))
	if x.cfg.NarrowSettle {
		return from, true
	}
	now := time.Now()
	if seen, ok := x.clock.before(x.st.PoolID, now, x.cfg.HorizonWait); ok {
		return min(top, seen), true
	}
	rctx, cancel := context.WithTimeout(ctx, x.cfg.QueryTimeout)
	defer cancel()
	x.m.TenantQueries.WithLabelValues("settle_floor").Inc()
	floor, err := x.st.CreatedBefore(rctx, top, now.Add(-x.cfg.HorizonWait-x.cfg.SettleBack))
	if err != nil {
		x.log.Warn("sse reset: could not find where to settle from", "tenant_id", x.st.TenantID, "top", top, "err", err)
		return 0, false
	}
	return min(from, floor), true
}
