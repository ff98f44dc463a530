package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/threshold"
)

// Check names of the spec's verdict rules, as they appear in failed_checks and JUnit.
const (
	CheckLossBudget  = "loss_budget"
	CheckSilent      = "silent"
	CheckSkipped     = "skipped"
	CheckLeaks       = "leaks"
	CheckUndelivered = "undelivered"
	CheckColdWakeups = "cold_wakeups"
)

// EndReasonInterrupted is the end record's reason for a run stopped before it finished (seqgate run
// writes it on Ctrl-C); such a ledger verifies but is inconclusive, like one with no end record.
const EndReasonInterrupted = "interrupted"

// decide applies the spec's verdict rules and the thresholds. A ledger without an end record, or with
// an empty W, is inconclusive, except that a leak still fails: a leak is proven by its one delivery,
// whatever is missing after it (a threshold on a partial run proves nothing).
func decide(s *Summary, ix *index, th threshold.List) {
	add := func(name string, measured float64, limit string, ok bool) {
		s.Checks = append(s.Checks, Check{Name: name, Passed: ok, Measured: measured, Limit: limit})
		if !ok {
			s.FailedChecks = append(s.FailedChecks, name)
			s.Failures = append(s.Failures, Failure{Check: name, Measured: measured, Limit: limit})
		}
	}
	add(CheckLossBudget, s.EventLossFraction, fmt.Sprintf("<= %g", s.Budget), s.EventLossFraction <= s.Budget)
	add(CheckSilent, float64(s.LostByReason[ReasonSilent]), "== 0", s.LostByReason[ReasonSilent] == 0)
	add(CheckSkipped, float64(s.Skipped), "== 0", s.Skipped == 0)
	add(CheckLeaks, float64(s.Leaks), "== 0", s.Leaks == 0)
	add(CheckUndelivered, float64(s.Undelivered), "== 0", s.Undelivered == 0)
	add(CheckColdWakeups, float64(s.ColdWakeups), "== 0", s.ColdWakeups == 0)
	hardFail := s.Leaks > 0
	if len(th) > 0 {
		doc := summaryDoc(s)
		for _, t := range th {
			v := measureThreshold(doc, t)
			ok := t.Holds(v)
			add(t.Name(), v, t.Op+" "+t.Num, ok)
		}
	}
	switch {
	case hardFail:
		s.Verdict = VerdictFail
	case !ix.ended || ix.interrupted || s.Acked == 0:
		s.Verdict = VerdictInconclusive
		if !ix.ended {
			s.Warnings = append(s.Warnings, "inconclusive: the ledger has no end record (the run did not finish)")
		}
		if ix.interrupted {
			s.Warnings = append(s.Warnings, "inconclusive: the end record says the run was interrupted (not drained, not fully audited)")
		}
		if s.Acked == 0 {
			s.Warnings = append(s.Warnings, "inconclusive: W is empty (no acked event-producing mutation)")
		}
	case len(s.FailedChecks) > 0:
		s.Verdict = VerdictFail
	default:
		s.Verdict = VerdictPass
	}
}

// ExitCode maps a verdict to the exit code of seqgate verify and run: 0 pass, 1 fail, 2 inconclusive.
// (3, unusable input, is for errors, not summaries.)
func ExitCode(s *Summary) int {
	switch s.Verdict {
	case VerdictPass:
		return 0
	case VerdictFail:
		return 1
	}
	return 2
}
