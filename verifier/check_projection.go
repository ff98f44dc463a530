package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/ledger"
)

// Projection defaults (docs/ledger-v1.md, the run record's optional fields).
const (
	DefaultCrashesPerPodYear = 12
	DefaultPodsInFleet       = 20
	secondsPerYear           = 31_557_600
)

// projectionCheck projects the annual loss fraction from crashes alone (the design's formula):
// crashes_per_year x unflushed_per_crash / annual_events. It reads the crash-explained losses that the
// loss check wrote, so it must come after it in the list.
type projectionCheck struct {
	ix      *index
	crashes int64
}

func newProjectionCheck(ix *index) *projectionCheck { return &projectionCheck{ix: ix} }

func (c *projectionCheck) Observe(r *ledger.Record) {
	if r.K == ledger.KindPod && r.Phase == "crash" {
		c.crashes++
	}
}

func (c *projectionCheck) Finish(s *Summary) {
	p := Projection{CrashesPerPodYear: DefaultCrashesPerPodYear, PodsInFleet: DefaultPodsInFleet, Defaults: []string{}}
	if v := c.ix.run.CrashesPerPodYear; v != nil {
		p.CrashesPerPodYear = *v
	} else {
		p.Defaults = append(p.Defaults, fmt.Sprintf("crashes_per_pod_year %d", DefaultCrashesPerPodYear))
	}
	if v := c.ix.run.PodsInFleet; v != nil {
		p.PodsInFleet = *v
	} else {
		p.Defaults = append(p.Defaults, fmt.Sprintf("pods_in_fleet %d", DefaultPodsInFleet))
	}
	p.CrashesPerYear = p.CrashesPerPodYear * float64(p.PodsInFleet)
	p.ObservedCrashes = c.crashes
	p.CrashLosses = s.LostByReason[ReasonCrash]
	if c.crashes > 0 {
		p.UnflushedPerCrash = float64(p.CrashLosses) / float64(c.crashes)
	}
	if c.ix.hasMutT {
		p.RunSeconds = float64(c.ix.lastMutT-c.ix.firstMutT) / 1e9
	}
	if p.RunSeconds > 0 {
		p.AckedPerSecond = float64(s.Acked) / p.RunSeconds
		p.AnnualEvents = p.AckedPerSecond * secondsPerYear
	}
	if p.AnnualEvents > 0 {
		p.Fraction = p.CrashesPerYear * p.UnflushedPerCrash / p.AnnualEvents
	}
	s.Projection = p
}

// projectionCheckDesc describes the annual loss projection.
var projectionCheckDesc = descriptor{
	Meaning: "the loss fraction a year of crashes would cause at this run's rate (inputs may be defaults)",
	Name:    "projection", File: "check_projection.go", Path: "projection.fraction", Covers: []string{"projection.*"},
	Value:      func(s *Summary) float64 { return s.Projection.Fraction },
	NeedsAudit: true,
	Report: func(s *Summary) string {
		p := s.Projection
		return fmt.Sprintf("%g crashes/yr x %g unflushed/crash / %g events/yr = %g", p.CrashesPerYear, p.UnflushedPerCrash, p.AnnualEvents, p.Fraction)
	},
	Title:      "projection",
	Doc:        "crashes_per_year = crashes_per_pod_year (12) × pods_in_fleet (20); unflushed_per_crash = crash-explained losses / `crash` records (0 with none); annual_events = acked / (last − first `mut` send time) × 31,557,600 s; fraction = crashes_per_year × unflushed_per_crash / annual_events",
	WitnessDoc: "–",
	build:      func(e *checkEnv) checker { return newProjectionCheck(e.ix) },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *projectionCheck) observedKinds() []string { return []string{ledger.KindPod} }
