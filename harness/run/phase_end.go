package run

import (
	"context"
	"log/slog"
	"time"

	"github.com/seqgate/seqgate/internal/provenance"
	"github.com/seqgate/seqgate/ledger"
)

// endPhase writes each consumer's summary and the end record, closes the ledger and saves result.json.
// end.reason says why a run is incomplete: interrupted (ctx cancelled), a fault error, a drain timeout.
func endPhase(ctx context.Context, s *state, log *slog.Logger) error {
	for _, c := range s.cons.all {
		_ = s.w.Write(c.Summary())
		s.res.Events += c.Events()
		made, failed := c.Resyncs()
		s.res.Resyncs += made
		s.res.ResyncsFailed += failed
		s.res.Listed += c.Listed()
		s.res.Listing += c.ListingTime()
	}
	rec := &ledger.Record{K: ledger.KindEnd, T: s.now(), Drained: s.drained, LoadAvg: provenance.LoadAvg()}
	if !s.clock.at.IsZero() {
		rec.LoadT = s.clock.at.Sub(s.start).Nanoseconds()
	}
	switch {
	case ctx.Err() != nil:
		rec.Reason, s.res.Interrupted = "interrupted", true
	case s.res.FaultErr != nil:
		rec.Reason = "fault error: " + s.res.FaultErr.Error()
	case !s.drained:
		rec.Reason = "drain timeout"
	}
	if err := s.w.Write(rec); err != nil {
		return err
	}
	if err := s.closeLedger(); err != nil {
		return err
	}
	s.res.Wall = time.Since(s.wall)
	if err := s.res.save(); err != nil {
		return err
	}
	log.Info("run finished", "drained", s.drained, "reason", rec.Reason, "ledger", s.res.Ledger, "wall", s.res.Wall.Round(time.Millisecond))
	return nil
}
