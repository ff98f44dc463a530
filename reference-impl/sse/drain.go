package sse

import (
	"context"
	"time"

	"github.com/seqgate/seqgate/reference-impl/signal"
)

// Phase 2 of a stream: the live drain, woken by the bus (and optionally a liveness poll), with a
// heartbeat while quiet.

// phase2 waits for wakes and drains; quiet tenants cause no reads at all.
func (x *stream) phase2(ctx context.Context, sub *signal.Sub) {
	hb := time.NewTicker(x.cfg.Heartbeat)
	defer hb.Stop()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var live <-chan time.Time
	if x.cfg.LivenessPoll > 0 {
		lt := time.NewTicker(x.cfg.LivenessPoll)
		defer lt.Stop()
		live = lt.C
	}
	backoff := time.Duration(0)
	lastPoll := time.Now()
	if x.held {
		timer.Reset(x.cfg.CatchUpDelay) // phase 1 stopped at a missing seq: no write may come to wake us
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-x.q.done:
			return
		case <-hb.C:
			if !x.heartbeat(ctx) {
				return
			}
			continue
		case <-live:
			if time.Since(lastPoll) < x.cfg.LivenessPoll {
				continue
			}
		case <-sub.C:
		case <-timer.C:
		}
		timer.Stop()
		rearm, ok := x.drain(ctx)
		if !ok {
			return
		}
		switch rearm {
		case rearmNone:
			backoff = 0
			lastPoll = time.Now()
		case rearmCatchUp:
			backoff = 0
			lastPoll = time.Now()
			timer.Reset(x.cfg.CatchUpDelay)
		case rearmError:
			if backoff == 0 {
				backoff = x.cfg.BackoffMin
			} else {
				backoff = min(2*backoff, x.cfg.BackoffMax)
			}
			timer.Reset(backoff)
		}
	}
}

type rearm int

const (
	rearmNone rearm = iota
	rearmCatchUp
	rearmError
)

// drain pulls pages until a short page (disarm) or MaxPagesPerWake full pages (re-arm shortly).
func (x *stream) drain(ctx context.Context) (rearm, bool) {
	for pages := 0; ; {
		r, err := x.page(ctx)
		if err != nil {
			x.log.Warn("sse drain query failed", "tenant_id", x.st.TenantID, "cursor", x.cursor, "err", err)
			x.m.DrainRearms.WithLabelValues("error").Inc()
			return rearmError, true
		}
		if r.tooOld {
			x.setCursor(x.swept)
			return rearmCatchUp, x.reset(ctx, x.swept, ReasonSeqTooOld)
		}
		evs := r.evs
		if x.cfg.SpuriousSeqTooOld && x.cursor == 0 && len(evs) > 0 {
			// Defect: the first rows of a tenant that was empty when the stream started are answered
			// with a resync, as if they had been swept (nothing was).
			x.setCursor(evs[len(evs)-1].Seq)
			return rearmCatchUp, x.reset(ctx, x.cursor, ReasonSeqTooOld)
		}
		if !x.sendEvents(ctx, evs) {
			return rearmNone, false
		}
		if x.held {
			return rearmCatchUp, true // a missing seq: look again shortly, no write may come to wake us
		}
		if !r.more || x.cfg.SinglePageReplay {
			return rearmNone, true
		}
		if pages++; pages >= x.cfg.MaxPagesPerWake {
			x.m.DrainRearms.WithLabelValues("catch_up").Inc()
			return rearmCatchUp, true
		}
	}
}
