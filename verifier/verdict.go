package verifier

import (
	"fmt"
	"slices"
	"strings"

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
	// CheckStructural fails when an acked structural op missed a durable consumer in both forms
	// (seqgate's addition: check_structural.go).
	CheckStructural = "structural"
	// CheckBatchAtomicity: no consumer saw a batch write in pieces (batch_torn == 0; seed 003).
	CheckBatchAtomicity = "batch_atomicity"
	// CheckDroppedFraction bounds dropped_fraction by DefaultMaxDroppedFraction unless a threshold on
	// dropped_fraction replaces it (additions of 2026-11-30).
	CheckDroppedFraction = "dropped_fraction"
	// CheckResyncMissed: in a run whose consumers resync, every event a reset passed is in the
	// consumer's next listing (resync_missed == 0; check_resync.go).
	CheckResyncMissed = "resync_missed"
	// CheckMetricsExported is seqgate's: every metric family the scenario names, or a threshold
	// bounds, had a sample from some pod; without one the verdict is inconclusive.
	CheckMetricsExported = "metrics_exported"
)

// EndReasonInterrupted is the end record's reason for a run stopped before it finished (seqgate run
// writes it on Ctrl-C); such a ledger verifies but is inconclusive, like one with no end record.
const EndReasonInterrupted = "interrupted"

// decide applies the spec's verdict rules and the thresholds. Fail when any check fails; else
// inconclusive when the ledger lacks what a pass needs (an end record, an acked event, the audit the
// run record promised, a drain); else pass. Fail beats inconclusive (decision of 2026-11-30). Without
// the promised audit, the checks that need it (loss, skips, stalls, and thresholds on their numbers)
// are listed but not judged: the verdict is inconclusive unless a check that needs no audit fails.
func decide(s *Summary, ix *index, th threshold.List) {
	noAudit := s.Audit.Required && !s.Audit.OK
	add := func(name string, measured float64, limit string, ok, needsAudit bool) {
		c := Check{Name: name, Passed: ok, Measured: measured, Limit: limit}
		if !ok && needsAudit && noAudit {
			c.NotJudged = "needs the audit, which did not succeed"
		}
		s.Checks = append(s.Checks, c)
		if !ok && c.NotJudged == "" {
			s.FailedChecks = append(s.FailedChecks, name)
			s.Failures = append(s.Failures, Failure{Check: name, Measured: measured, Limit: limit})
		}
	}
	add(CheckLossBudget, s.EventLossFraction, fmt.Sprintf("<= %g", s.Budget), s.EventLossFraction <= s.Budget, true)
	add(CheckSilent, float64(s.LostByReason[ReasonSilent]), "== 0", s.LostByReason[ReasonSilent] == 0, true)
	add(CheckSkipped, float64(s.Skipped), "== 0", s.Skipped == 0, true)
	add(CheckLeaks, float64(s.Leaks), "== 0", s.Leaks == 0, false)
	add(CheckUndelivered, float64(s.Undelivered), "== 0", s.Undelivered == 0, true)
	add(CheckColdWakeups, float64(s.ColdWakeups), "== 0", s.ColdWakeups == 0, false)
	add(CheckStructural, float64(s.Structural.Missing), "== 0", s.Structural.Missing == 0, true)
	add(CheckBatchAtomicity, float64(s.BatchTorn), "== 0", s.BatchTorn == 0, true)
	add(CheckResyncMissed, float64(s.ResyncMissed), "== 0", s.ResyncMissed == 0, true)
	if !boundsDropped(th) {
		add(CheckDroppedFraction, s.DroppedFraction, fmt.Sprintf("<= %g", DefaultMaxDroppedFraction), s.DroppedFraction <= DefaultMaxDroppedFraction, false)
	}
	if len(th) > 0 {
		doc := summaryDoc(s)
		for _, t := range th {
			v := measureThreshold(doc, t)
			add(t.Name(), v, t.Op+" "+t.Num, t.Holds(v), needsAudit(t.Field))
		}
	}
	why := &s.InconclusiveBecause
	if names, whys := missingMetrics(s, th); len(names) > 0 {
		s.Checks = append(s.Checks, Check{Name: CheckMetricsExported, Measured: float64(len(names)), Limit: "== 0",
			NotJudged: "no sample from any pod: " + strings.Join(names, ", ")})
		for _, w := range whys {
			*why = append(*why, "metrics: "+w)
		}
	}
	if !ix.ended {
		*why = append(*why, "the ledger has no end record (the run did not finish): acked mutations neither persisted nor delivered are unresolved, not lost")
	}
	if ix.interrupted {
		*why = append(*why, "the end record says the run was interrupted (not drained, not fully audited)")
	}
	if s.Acked == 0 {
		*why = append(*why, "W is empty (no acked event-producing mutation)")
	}
	if noAudit {
		msg := fmt.Sprintf("evidence: the run record promises an audit but no audit record has ok=true (%d attempts", s.Audit.Attempts)
		if s.Audit.Error != "" {
			msg += ", last error: " + s.Audit.Error
		}
		*why = append(*why, msg+")")
	}
	if s.ResyncUnproven > 0 {
		*why = append(*why, fmt.Sprintf("resync: %d events a reset passed have no ok listing after it to prove them (resync_unproven)", s.ResyncUnproven))
	}
	if ix.ended && !ix.interrupted && !ix.drained {
		*why = append(*why, "evidence: end.drained is false: a run that could not drain has not shown delivery")
	}
	switch {
	case len(s.FailedChecks) > 0:
		s.Verdict = VerdictFail
	case len(*why) > 0:
		s.Verdict = VerdictInconclusive
	default:
		s.Verdict = VerdictPass
	}
	if s.Verdict == VerdictInconclusive {
		for _, w := range *why {
			s.Warnings = append(s.Warnings, "inconclusive: "+w)
		}
	}
}

// missingMetrics says, per family the scenario's metrics: names or a threshold bounds, why it
// cannot be judged when no pod exported a sample of it: a misspelt name, a family the service does
// not have, or a labelled family never used (client libraries export a vector only once a label
// set is used). A threshold on it would measure 0 and pass whatever happened.
func missingMetrics(s *Summary, th threshold.List) (names, whys []string) {
	for _, name := range s.Metrics.Missing {
		names = append(names, name)
		whys = append(whys, fmt.Sprintf("no pod exported a sample of %s, which the scenario's metrics: names (check the name against a pod's /metrics; a labelled family appears only once a label set is used)", name))
	}
	for _, t := range th {
		name, ok := metricFamily(t.Field)
		if !ok || slices.Contains(s.Metrics.Missing, name) {
			continue
		}
		if _, sampled := s.Metrics.Types[name]; !sampled {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
			whys = append(whys, fmt.Sprintf("no pod exported a sample of %s, which threshold %s bounds", name, t.Path))
		}
	}
	return names, whys
}

// metricFamily returns the family a metrics.<agg>.<family> path names.
func metricFamily(field string) (string, bool) {
	for _, agg := range []string{"metrics.max.", "metrics.last.", "metrics.increase."} {
		if name, ok := strings.CutPrefix(field, agg); ok {
			return name, true
		}
	}
	return "", false
}

// boundsDropped reports whether a threshold bounds dropped_fraction of the whole run or of a window:
// it then replaces the spec's default bound.
func boundsDropped(th threshold.List) bool {
	for _, t := range th {
		if t.Scope == "" && t.Field == "dropped_fraction" {
			return true
		}
	}
	return false
}

// needsAudit reports whether a summary number is computed from the audit (persisted rows): without
// the audit the run promised, a threshold on it is not judged.
func needsAudit(field string) bool {
	for _, p := range []string{"lost", "event_loss_fraction", "loss_upper_95", "skipped", "undelivered", "reset_covered",
		"spurious_resets", "seq_mismatch", "unresolved", "projection", "audit", "structural", "batch_torn",
		"resync_proven", "resync_missed", "resync_unproven", "resyncs.resets"} {
		if field == p || strings.HasPrefix(field, p+".") || strings.HasPrefix(field, p+"_by_reason") {
			return true
		}
	}
	return false
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
