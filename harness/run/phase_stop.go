package run

import (
	"context"
	"log/slog"
	"time"
)

// stopPhase stops the consumers and the sampling, takes the last proxy sample and stops the pods. The
// last sample (the cold check compares first and last) is taken before the pods stop: a pod closing
// its idle DB connections on shutdown is not a wakeup.
func stopPhase(_ context.Context, s *state, log *slog.Logger) error {
	s.cons.halt()
	s.samp.halt()
	sampleProxies(s)
	if s.sys.fleet != nil {
		log.Info("stopping pods")
		s.sys.fleet.Stop(10 * time.Second)
	}
	return nil
}
