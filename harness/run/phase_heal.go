package run

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// healPhase heals every fault still active, so the drain runs fault-free.
func healPhase(_ context.Context, s *state, log *slog.Logger) error {
	healAll(s, log)
	return nil
}

// healAll heals every fault still active (the heal phase, and again in cleanup: idempotent). A
// failure is recorded in the result (the run is not trustworthy), not returned: the run goes on to
// finish its ledger.
func healAll(s *state, log *slog.Logger) {
	if s.faults == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.faults.HealAll(ctx); err != nil {
		s.res.FaultErr = errors.Join(s.res.FaultErr, err)
		log.Error("heal failed", "err", err)
	}
}
