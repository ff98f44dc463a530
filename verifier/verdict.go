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
	// dropped_fraction replaces it.
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
// run record promised, a drain); else pass. Fail beats inconclusive. Without
// the promised audit, the checks that need it (loss, skips, stalls, and thresholds on their numbers)
// are listed but not judged: the verdict is inconclusive unless a check that needs no audit fails.
func decide(s *Summary, ix *index, th threshold.List) {
	noAudit := s.Audit.Required && !s.Audit.OK
	add := func(name string, measured float64, limit string, ok, needsAudit bool) {
		c := Check{Name: name, Passed: ok, Measured: measured, Limit: limit, Meaning: Meaning(name)}
		if !ok && needsAudit && noAudit {
			c.NotJudged = "needs the audit, which did not succeed"
		}
		s.Checks = append(s.Checks, c)
		if !ok && c.NotJudged == "" {
			s.FailedChecks = append(s.FailedChecks, name)
			s.Failures = append(s.Failures, Failure{Check: name, Measured: measured, Limit: limit})
		}
	}
	for _, d := range checks {
		if d.Gate != gateFails || (d.Replaceable && boundedByThreshold(th, d.Path)) {
			continue
		}
		limit, ok := d.limit(s)
		add(d.Name, d.Value(s), limit, ok, d.NeedsAudit)
	}
	if len(th) > 0 {
		doc := summaryDoc(s)
		for _, t := range th {
			v := measureThreshold(doc, t)
			if t.Field == PathBudgetProvable && !t.Holds(v) { // unproven, not failed: inconclusive
				s.Checks = append(s.Checks, Check{Name: t.Name(), Measured: v, Limit: t.Op + " " + t.Num, NotJudged: "the budget is not proven: inconclusive, not a fail", Meaning: Meaning(t.Name())})
				s.InconclusiveBecause = append(s.InconclusiveBecause, ProofShort(s)+" (the scenario requires the budget proven)")
				continue
			}
			add(t.Name(), v, t.Op+" "+t.Num, t.Holds(v), needsAudit(t.Field))
		}
	}
	why := &s.InconclusiveBecause
	if names, whys := missingMetrics(s, th); len(names) > 0 {
		s.Checks = append(s.Checks, Check{Name: CheckMetricsExported, Measured: float64(len(names)), Limit: "== 0", Meaning: Meaning(CheckMetricsExported),
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
	if ix.ended && !ix.interrupted && !ix.drained {
		*why = append(*why, "evidence: end.drained is false: a run that could not drain has not shown delivery")
	}
	for _, d := range checks {
		if d.Gate != gateInconclusive || d.Unproven == nil {
			continue
		}
		if msg := d.Unproven(s); msg != "" {
			s.Checks = append(s.Checks, Check{Name: d.Name, Measured: d.Value(s), Limit: "== 0", NotJudged: msg, Meaning: d.Meaning})
			*why = append(*why, msg)
		}
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

// boundedByThreshold reports whether a threshold bounds path over the whole run or a window: it
// then replaces the bound of a Replaceable check (the spec's default bound of dropped_fraction).
func boundedByThreshold(th threshold.List, path string) bool {
	for _, t := range th {
		if t.Scope == "" && t.Field == path {
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
