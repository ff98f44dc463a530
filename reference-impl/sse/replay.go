package sse

import (
	"context"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// Phase 1 of a stream: the resume decision (head hint, bounds, initial reset) and the replay of the
// backlog after since, ending with the stream-current heartbeat.

// headHintTimeout bounds the meta read of a resume: a meta DB that does not answer costs a
// reconnect at most this much before it falls back to the tenant DB.
const headHintTimeout = time.Second

// knownHead returns the tenant's head hint when a resume from since may be answered without a
// tenant-DB query: the hint equals since (a resume at the head), or since is 0 (initial sync from
// the hint) and the hint exists; in both cases this pod must have committed nothing above the hint.
// The hint only ever holds committed seqs, so hint <= head; when it lags (a write committed but its
// hint not yet written), the write's wake is still to come and was subscribed to already:
//   - written on another pod: the hint and the outbox row commit in one meta transaction, so an
//     outbox row carrying seq > hint commits after this read and wakes this pod's poller (outbox
//     rows commit in id order, so the poller never passes it), then this stream (subscribed
//     before the read), whose drain reads the row;
//   - written on this pod: the local head is raised before the local wake; a wake published
//     before the subscription shows up as LocalHead > hint here, so the tenant DB is queried.
//
// So a resume at the head misses nothing, and an initial sync from a lagging hint only delivers
// events just before its reset (never a gap). Every doubt (no hint, a hint other than since, a
// meta error or timeout) queries the tenant DB. A resume at the head gets exactly what a query
// would have given it: no reset (since is neither above the head nor below the sweep mark, which
// never exceeds the head) and the heartbeat.
func (x *stream) knownHead(ctx context.Context, since int64) (seqSample, bool) {
	if x.HeadHint == nil || x.bus.LocalHead(x.st.TenantID) > since {
		return seqSample{}, false
	}
	hctx, cancel := context.WithTimeout(ctx, headHintTimeout)
	defer cancel()
	h, at, ok, err := x.HeadHint(hctx, x.st.TenantID)
	if err != nil {
		x.log.Debug("head hint unavailable; querying the tenant DB", "tenant_id", x.st.TenantID, "err", err)
		return seqSample{}, false
	}
	if !ok || (since != 0 && h != since) || x.bus.LocalHead(x.st.TenantID) > h {
		return seqSample{}, false
	}
	return seqSample{at: at, seq: h}, true
}

// phase1 sends the initial reset or the replay backlog, then the stream-current heartbeat.
func (x *stream) phase1(ctx context.Context, since int64) bool {
	if hint, ok := x.knownHead(ctx, since); ok {
		x.m.ResumesAtHead.Inc()
		// Every drain page carries the sweep mark: if the hint lagged for a whole retention
		// (a long meta outage) and rows above it were swept, the first drain says seq_too_old.
		if h := hint.seq; since == 0 {
			x.setCursor(h)
			return x.settleKnown(ctx, h, hint) && x.reset(ctx, h, ReasonInitialSync) && x.heartbeat(ctx)
		}
		x.setCursor(since)
		return x.heartbeat(ctx)
	}
	x.m.TenantQueries.WithLabelValues("bounds").Inc()
	bctx, cancel := context.WithTimeout(ctx, x.cfg.QueryTimeout)
	head, swept, err := x.st.Bounds(bctx)
	cancel()
	if err != nil {
		x.log.Warn("sse bounds query failed", "tenant_id", x.st.TenantID, "err", err)
		return false // the client reconnects with its cursor
	}
	x.clock.observe(x.st.PoolID, head, time.Now(), x.cfg.HorizonWait)
	top := max(head, swept)
	switch {
	case since == 0:
		x.setCursor(top)
		return x.settle(ctx, top) && x.reset(ctx, top, ReasonInitialSync) && x.heartbeat(ctx)
	case since > top && !x.handedOut(ctx, since):
		x.setCursor(top)
		return x.settle(ctx, top) && x.reset(ctx, top, ReasonServerRestart) && x.heartbeat(ctx)
	case since < swept:
		x.setCursor(top)
		return x.settle(ctx, top) && x.reset(ctx, top, ReasonSeqTooOld) && x.heartbeat(ctx)
	}
	x.setCursor(since) // a sweep between the bounds read above and a page shows in that page's mark
	pages, lastHB, sent, started := 0, time.Now(), 0, time.Now()
	for {
		r, err := x.page(ctx)
		if err != nil {
			// Mid-replay failure: end without the stream-current heartbeat (that would be a lie);
			// the client resumes from the last seq it saw.
			x.log.Warn("sse replay query failed", "tenant_id", x.st.TenantID, "cursor", x.cursor, "err", err)
			return false
		}
		if r.tooOld {
			// The rows above the mark still have to be replayed before the stream is current:
			// go on from the mark (the drain does the same), never straight to the heartbeat.
			x.setCursor(x.swept)
			if !x.reset(ctx, x.swept, ReasonSeqTooOld) {
				return false
			}
			continue
		}
		if !x.sendEvents(ctx, r.evs) {
			return false
		}
		if x.afterPage != nil {
			x.afterPage()
		}
		if !r.more || x.cfg.SinglePageReplay {
			break // a short page, or a missing seq (phase 2 looks again shortly)
		}
		sent += len(r.evs)
		if (x.cfg.ReplayBudgetEvents > 0 && sent >= x.cfg.ReplayBudgetEvents) ||
			(x.cfg.ReplayBudgetTime > 0 && time.Since(started) >= x.cfg.ReplayBudgetTime) {
			// Hand off: the heartbeat carries the cursor, the client resumes from it.
			x.m.ReplayHandoffs.Inc()
			x.heartbeat(ctx)
			return false
		}
		pages++
		if pages%x.cfg.ReplayHeartbeatPages == 0 || time.Since(lastHB) >= x.cfg.ReplayHeartbeatEvery {
			lastHB = time.Now()
			if !x.heartbeat(ctx) {
				return false
			}
		}
	}
	return x.heartbeat(ctx)
}

// handedOut says whether since, above the tenant's head, is a cursor this service may have handed
// out: under GuardHorizon the pull endpoint answers next_since = its horizon, which can be another
// tenant's seq above this tenant's head (every seq up to it was judged), and seed 003's bootstrap
// streams on from it. Such a since is at or below the DB's highest seq (the AUTO_INCREMENT counter
// is shared by the DB's tenants); a since above that is a cursor from another history (a restored or
// moved DB): server_restart. A failed read says no (server_restart: a resync, never a skip).
func (x *stream) handedOut(ctx context.Context, since int64) bool {
	if x.cfg.Guard != store.GuardHorizon || x.cfg.PullHorizonCursor {
		return false
	}
	x.m.TenantQueries.WithLabelValues("seq_head").Inc()
	qctx, cancel := context.WithTimeout(ctx, x.cfg.QueryTimeout)
	defer cancel()
	h, err := x.st.SeqHead(qctx)
	if err != nil {
		x.log.Warn("sse: could not read the DB's highest seq; answering server_restart", "tenant_id", x.st.TenantID, "since", since, "err", err)
		return false
	}
	return since <= h
}
