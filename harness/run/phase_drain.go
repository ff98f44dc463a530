package run

import (
	"context"
	"log/slog"
	"time"

	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/harness/consumer"
)

// drainPhase waits until every durable consumer's cursor reaches its tenant's head seq in the DB (or,
// with no DB to ask, until every cursor has been still for 3 s), bounded by the drain timeout. The
// consumers of a tenant a fault deleted are not waited for: their key is refused, their stream ended. An
// interrupted run still drains briefly: the consumers take what is already in flight, so its ledger
// is not full of undelivered events that were merely late.
func drainPhase(ctx context.Context, s *state, log *slog.Logger) error {
	timeout := s.sc.DrainTimeout.D()
	if ctx.Err() != nil {
		ctx, timeout = context.Background(), min(timeout, 3*time.Second)
	}
	log.Info("draining", "timeout", timeout)
	begin := time.Now()
	var lastMove time.Time
	prev := map[*consumer.Consumer]int64{}
	ok := audit.Wait(ctx, timeout, 100*time.Millisecond, func(ctx context.Context) bool {
		if len(s.sys.tables) == 0 {
			moved := false
			for _, c := range s.cons.all {
				if c.Cursor() != prev[c] {
					prev[c], moved = c.Cursor(), true
				}
			}
			if moved || lastMove.IsZero() {
				lastMove = time.Now()
			}
			return time.Since(lastMove) > 3*time.Second
		}
		heads := map[string]int64{}
		for _, t := range s.tenants {
			if s.env.deleted(t.ID) {
				continue
			}
			h, err := s.sys.tables[t.ID].Head(ctx, t.ID)
			if err != nil {
				return false
			}
			heads[t.ID] = h
		}
		for _, c := range s.cons.all {
			if c.Durable() && !s.env.deleted(c.Tenant()) && c.Cursor() < heads[c.Tenant()] {
				return false
			}
		}
		return buffersEmpty(s, begin)
	})
	log.Info("drain finished", "drained", ok, "took", time.Since(begin).Round(time.Millisecond))
	s.drained, s.res.Drained = ok, ok
	return nil
}

// buffersEmpty reports whether every running pod's retry buffer was empty in a scrape taken after
// since: an event still buffered would be inserted after the consumers stopped and look undelivered.
// Pods that do not export the gauge count as empty.
func buffersEmpty(s *state, since time.Time) bool {
	if s.samp.scraper == nil {
		return true
	}
	for _, e := range s.sys.endpoints(true) {
		v, at, ok := s.samp.scraper.Latest(e.Name, "drive9_sse_event_retry_buffer_depth")
		if ok && (at.Before(since) || v != 0) {
			return false
		}
	}
	return true
}
