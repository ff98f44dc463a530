package verifier

import (
	"fmt"
	"strings"
)

// gate says what a check's number does to the verdict.
type gate int

const (
	// gateReported: numbers are in the summary and gate the verdict only through a threshold.
	gateReported gate = iota
	// gateFails: a number beyond the check's bound fails the verdict (a failed check).
	gateFails
	// gateInconclusive: the check says whether the ledger holds what a pass needs; without it the
	// verdict is inconclusive.
	gateInconclusive
)

// String names the gate as the docs' tables do.
func (g gate) String() string {
	switch g {
	case gateReported:
		return "report-only"
	case gateFails:
		return "fail"
	case gateInconclusive:
		return "inconclusive"
	}
	return fmt.Sprintf("gate(%d)", int(g))
}

// WitnessKey names one list of witnesses in Summary.Witnesses: the checkers keep them under it and
// the report shows them by it.
type WitnessKey string

// The witness lists the checkers keep.
const (
	WitnessLost           WitnessKey = "lost"
	WitnessSilent         WitnessKey = "silent"
	WitnessUnresolved     WitnessKey = "unresolved"
	WitnessRecovered      WitnessKey = "recovered"
	WitnessSkipped        WitnessKey = "skipped"
	WitnessResetCovered   WitnessKey = "reset_covered"
	WitnessUndelivered    WitnessKey = "undelivered"
	WitnessStructural     WitnessKey = "structural"
	WitnessSpurious       WitnessKey = "spurious_resets"
	WitnessDrops          WitnessKey = "drops"
	WitnessDropsByTenant  WitnessKey = "drops_by_tenant"
	WitnessDuplicates     WitnessKey = "duplicates"
	WitnessSeqMismatch    WitnessKey = "seq_mismatch"
	WitnessUnexpected     WitnessKey = "unexpected"
	WitnessLeaks          WitnessKey = "leaks"
	WitnessBatchAtomicity WitnessKey = "batch_atomicity"
	WitnessReorder        WitnessKey = "reorder"
	WitnessReconnects     WitnessKey = "reconnects"
	WitnessColdWakeups    WitnessKey = "cold_wakeups"
	// WitnessTenantGone names tenant_gone's instances in the timeline (it keeps no witnesses).
	WitnessTenantGone WitnessKey = "tenant_gone"
	// WitnessResyncMissed and WitnessResyncUnproven: events a reset passed that the consumer's
	// listing after it did not show, or that no ok listing answered.
	WitnessResyncMissed   WitnessKey = "resync_missed"
	WitnessResyncUnproven WitnessKey = "resync_unproven"
)

// descriptor is what the verdict, the thresholds, JUnit, the report and the docs know about one
// check: one number of the summary and the checker that computes it. Each check_*.go declares its
// descriptors; the list of them is checks (checks.go).
type descriptor struct {
	// Name is the check's name in failed_checks, checks and JUnit.
	Name string
	// Meaning says in one plain line what the check's number means to a reader who has not read the
	// spec: it follows the check in JUnit, summary.md, the terminal and the docs' table.
	Meaning string
	// File is the file of its checker (check_x.go).
	File string
	// Path is the summary path of its number ("" when it has none), Value reads that number, and
	// Covers lists the other summary paths its checker writes (a ".<key>" suffix stands for any key,
	// a ".*" suffix for every field below).
	Path   string
	Value  func(*Summary) float64
	Covers []string
	// Per reads the number in one tenant's (or, with PerConsumer, one consumer's) stats: the text
	// report breaks a failed check down by it. Nil: no breakdown.
	Per         func(*Stats) float64
	PerConsumer bool
	// Witness is the list of its witnesses, one per instance its number counts ("" none).
	Witness WitnessKey
	// Anomaly: the number counts anomalies (0 on a clean run); the timeline plots them.
	Anomaly bool
	// NeedsAudit: the number is computed from the audit (persisted rows); without the audit the
	// run promised it is not judged.
	NeedsAudit bool
	// Gate is what the number does to the verdict. A gateFails check holds its number to Max (nil:
	// it must be 0); Replaceable: a whole-run or windowed threshold on Path replaces that bound.
	Gate        gate
	Max         func(*Summary) float64
	Replaceable bool
	// Unproven, for a gateInconclusive check, says why the verdict cannot pass ("" while it can): decide
	// then lists the check as not judged and the reason in inconclusive_because. Nil: the check's
	// evidence is judged elsewhere in decide (the audit, the metrics).
	Unproven func(*Summary) string
	// Report is its line in JUnit's report-only testcases (nil: none).
	Report func(*Summary) string
	// Title, Doc, FailsDoc and WitnessDoc make its row of the checks table in docs/verify.md:
	// descriptors of one Title share a row (Doc and WitnessDoc from the first that has them);
	// FailsDoc says when a gateFails check fails ("when fraction > budget").
	Title, Doc, FailsDoc, WitnessDoc string

	// build makes its checker (nil: another descriptor of the same checker builds it).
	build func(*checkEnv) checker
}

// checkEnv is what the checkers are built from: the index, the witnesses, and the checkers another
// one reads (the windows read the latency check's deliveries and the drops check's drops).
type checkEnv struct {
	ix    *index
	w     *witnessSet
	slow  *slowest
	lat   *latencyCheck
	drops *dropsCheck
	win   *windowCheck
	// spurious is the spurious-resets check, whose resets the given-cursor check does not count twice.
	spurious *spuriousCheck
}

// checkersOf builds the checkers in the order of checks: Observe and Finish run in that order, so a
// checker may read what an earlier one wrote (projection reads loss).
func checkersOf(e *checkEnv) []checker {
	var out []checker
	for _, d := range checks {
		if d.build != nil {
			out = append(out, d.build(e))
		}
	}
	return out
}

// limit is the bound of a gateFails check, "== 0" or "<= Max", and whether its number keeps it.
func (d *descriptor) limit(s *Summary) (limit string, ok bool) {
	v := d.Value(s)
	if d.Max == nil {
		return "== 0", v == 0
	}
	m := d.Max(s)
	return fmt.Sprintf("<= %g", m), v <= m
}

// needsAudit reports whether a summary number is computed from the audit (persisted rows): without
// the audit the run promised, a threshold on it is not judged. A number needs it when its path, or
// the top of its path, is that of a check that needs it (structural.both as structural.missing,
// lost_by_reason.crash as lost).
func needsAudit(field string) bool {
	for _, d := range checks {
		if !d.NeedsAudit || d.Path == "" {
			continue
		}
		p, _, _ := strings.Cut(d.Path, ".")
		p = strings.TrimSuffix(p, "_by_reason")
		if field == p || strings.HasPrefix(field, p+".") || strings.HasPrefix(field, p+"_by_reason") {
			return true
		}
	}
	return false
}

// WitnessCount is the summary's total for the witnesses kept under key (so a table can say "first 20
// of 31"), and whether key lists one witness per instance of a number.
func WitnessCount(s *Summary, key WitnessKey) (int64, bool) {
	for _, d := range checks {
		if d.Witness == key && d.Value != nil {
			return int64(d.Value(s)), true
		}
	}
	return 0, false
}

// descriptorOf returns the descriptor of the check named name, or nil.
func descriptorOf(name string) *descriptor {
	for _, d := range checks {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Meaning is the one-line meaning of a check of the summary's checks: a check's own, or for a
// threshold ("threshold:latency_ms.p99@steady<500") the meaning of the check whose number it bounds,
// said as a bound the scenario sets. "" when nothing describes it.
func Meaning(name string) string {
	if d := descriptorOf(name); d != nil {
		return d.Meaning
	}
	if name == CheckMetricsExported {
		return metricsCheck.Meaning
	}
	rest, ok := strings.CutPrefix(name, "threshold:")
	if !ok {
		return ""
	}
	path := rest
	if i := strings.IndexAny(rest, "<>=!"); i >= 0 {
		path = rest[:i]
	}
	field, window, _ := strings.Cut(path, "@")
	in := ""
	if window != "" {
		in = " in the " + window + " window"
	}
	d := descriptorOfPath(field)
	if d == nil || d.Meaning == "" {
		return "a bound the scenario sets on " + field + in
	}
	return "a bound the scenario sets on " + field + in + ": " + d.Meaning
}

// descriptorOfPath is the check whose number, or one of whose covered numbers, is at summary path
// field (per_tenant.<id>. and per_consumer.<id>. prefixes stripped), or nil.
func descriptorOfPath(field string) *descriptor {
	for _, scope := range []string{"per_tenant.", "per_consumer."} {
		if rest, ok := strings.CutPrefix(field, scope); ok {
			if _, f, ok := strings.Cut(rest, "."); ok {
				field = f
			}
		}
	}
	var best *descriptor
	for _, d := range checks {
		if d.Path == field {
			return d
		}
		for _, c := range d.Covers {
			base := strings.TrimSuffix(strings.TrimSuffix(c, ".<key>"), ".*")
			if best == nil && (c == field || (base != c && strings.HasPrefix(field, base+"."))) {
				best = d
			}
		}
		if p, _, ok := strings.Cut(d.Path, "."); best == nil && ok && strings.HasPrefix(field, p+".") {
			best = d
		}
	}
	return best
}
