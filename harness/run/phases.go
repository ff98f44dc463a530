package run

import (
	"context"
	"fmt"
	"log/slog"
)

// A phase is one named step of a run over the shared state. log names the run and the phase.
type phase struct {
	name string
	run  func(ctx context.Context, s *state, log *slog.Logger) error
}

// phases is a run, in order. A new phase is its file and its line here.
var phases = []phase{
	{"up", upPhase},
	{"provision", provisionPhase},
	{"consumers", consumersPhase},
	{"schedule", schedulePhase},
	{"load", loadPhase},
	{"heal", healPhase},
	{"drain", drainPhase},
	{"stop", stopPhase},
	{"audit", auditPhase},
	{"end", endPhase},
}

// runPhases runs the phases in order and stops at the first error, which it logs and returns
// prefixed with the phase's name.
func (s *state) runPhases(ctx context.Context, list []phase) error {
	for _, p := range list {
		log := s.log.With("phase", p.name)
		if err := p.run(ctx, s, log); err != nil {
			log.Error("run failed", "err", err)
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return nil
}

// cleanup undoes everything the phases started, in reverse, whatever happened: it is idempotent
// after a run that went to its end.
func (s *state) cleanup() {
	if s.cons != nil {
		s.cons.halt()
	}
	if s.samp != nil {
		s.samp.halt()
	}
	healAll(s, s.log.With("phase", "heal"))
	if s.sys != nil {
		s.sys.close(s.databases())
	}
	_ = s.closeLedger()
}
