package verifier

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/seqgate/seqgate/internal/printable"
)

// notProvable qualifies a pass (or an inconclusive verdict) whose acked count cannot prove the loss
// budget, in the verdict line itself, so that nobody reads such a PASS as proof of the budget; it
// says how much more load would prove it.
func notProvable(s *Summary) string {
	if s.Verdict == VerdictFail || s.BoundWithinBudget || s.Acked == 0 {
		return ""
	}
	return " (" + ProofShort(s) + ")"
}

// WriteText writes the human summary: the verdict first, then the failed checks with the numbers that
// broke them, the key figures, and the witnesses of every anomaly found.
func WriteText(w io.Writer, s *Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s%s%s (exit %d)  run %s, scenario %s, seed %d, %d records\n",
		strings.ToUpper(s.Verdict), notProvable(s), printable.String(DefectNote(s)), ExitCode(s), printable.String(s.Run.RunID), printable.String(s.Run.Scenario), s.Run.Seed, s.Records)
	if len(s.Failures) > 0 {
		b.WriteString("failed checks:\n")
		for _, f := range s.Failures {
			fmt.Fprintf(&b, "  %s: measured %.6g, want %s%s%s\n", printable.String(f.Check), f.Measured, printable.String(f.Limit), printable.String(breakdown(s, f.Check)), meaningSuffix(f.Check))
		}
	}
	for _, c := range s.Checks {
		if c.Result() == ResultNotJudged {
			fmt.Fprintf(&b, "not judged: %s: measured %.6g, want %s (%s)\n", printable.String(c.Name), c.Measured, printable.String(c.Limit), printable.String(c.NotJudged))
		}
	}
	label := "also missing" // beside a fail
	if s.Verdict == VerdictInconclusive {
		label = "inconclusive because"
	}
	for _, why := range s.InconclusiveBecause {
		fmt.Fprintf(&b, "%s: %s\n", label, printable.String(why))
	}
	writeFaults(&b, s)
	writeTenants(&b, s)
	fmt.Fprintf(&b, "loss: acked %d, lost %d%s, fraction %.3g, upper95 %.3g, budget %g", s.Acked, s.Lost,
		reasons(s.LostByReason), s.EventLossFraction, s.LossUpper95, s.Budget)
	if !s.BoundWithinBudget {
		fmt.Fprintf(&b, " (not provable: needs acked >= %d with no loss)", s.MinAckedForBudget)
	}
	if s.Unresolved > 0 {
		fmt.Fprintf(&b, ", unresolved %d", s.Unresolved)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "load: mutations %d, drops %d, dropped_fraction %.3g; audit: %s\n", s.Mutations, s.Drops, s.DroppedFraction, auditLine(s.Audit))
	fmt.Fprintf(&b, "delivery: skipped %d, undelivered %d, reset-covered %d, spurious resets %d, duplicates %d, unexpected %d, leaks %d, recovered %d, seq mismatch %d\n",
		s.Skipped, s.Undelivered, s.ResetCovered, s.SpuriousResets, s.Duplicates, s.Unexpected, s.Leaks, s.Recovered, s.SeqMismatch)
	if r := s.Resyncs; r.Resets > 0 || r.Listings > 0 {
		fmt.Fprintf(&b, "resyncs: %d resets to list after (%d proven, %d missed, %d unproven), %d listings (%d failed) of %d entries in %.0f ms; events a reset passed: proven %d, missed %d, unproven %d\n",
			r.Resets, r.ResetsProven, r.ResetsMissed, r.ResetsUnproven, r.Listings, r.Failed, r.Entries, r.ListingMs, s.ResyncProven, s.ResyncMissed, s.ResyncUnproven)
	}
	if s.TenantGone > 0 {
		fmt.Fprintf(&b, "deleted tenants: %d expected events their consumers could no longer receive (tenant_gone, not undelivered)\n", s.TenantGone)
	}
	q := s.LatencyMs
	fmt.Fprintf(&b, "latency ms: p50 %g, p90 %g, p99 %g, p99.9 %g, max %g (%d deliveries, %d before ack)\n",
		q.P50, q.P90, q.P99, q.P999, q.Max, q.Count, s.DeliveredBeforeAck)
	writeSlowest(&b, s)
	q = s.IssueLatencyMs
	fmt.Fprintf(&b, "issue latency ms (from intended_t): p50 %g, p99 %g, max %g\n", q.P50, q.P99, q.Max)
	fmt.Fprintf(&b, "reorder: overtaken %d, max %g ms; reconnects: %d, max %d opens/s; cold wakeups %d; resets%s\n",
		s.Reorder.Overtaken, s.Reorder.MaxMs, s.Reconnects.Total, s.Reconnects.MaxPerS, s.ColdWakeups, reasons(s.ResetsByReason))
	if st := s.Structural; st.Expected > 0 && (s.Verdict != VerdictPass || st.Missing > 0) {
		fmt.Fprintf(&b, "structural ops: expected %d, as reset %d, as file_changed %d, both %d, reset-covered %d, missing %d\n",
			st.Expected, st.Reset, st.FileChanged, st.Both, st.ResetCovered, st.Missing)
	}
	if s.Batches > 0 {
		fmt.Fprintf(&b, "batches: %d acked, torn %d (consumer, batch) pairs\n", s.Batches, s.BatchTorn)
	}
	for _, name := range []string{"steady", "fault", "recovery"} {
		if w, ok := s.Windows[name]; ok {
			fmt.Fprintf(&b, "window %s: mutations %d, drops %d, acked %d, lost %d, latency ms p99 %g max %g (%d deliveries)\n",
				name, w.Mutations, w.Drops, w.Acked, w.Lost, w.LatencyMs.P99, w.LatencyMs.Max, w.Deliveries)
		}
	}
	writeMetrics(&b, s)
	p := s.Projection
	fmt.Fprintf(&b, "projection: %g crashes/yr x %.3g unflushed/crash / %.3g events/yr = %.3g%s\n",
		p.CrashesPerYear, p.UnflushedPerCrash, p.AnnualEvents, p.Fraction, projectionDefaults(p))
	writeChecks(&b, s)
	shown, kept := splitWitnesses(s)
	if len(kept) > 0 {
		fmt.Fprintf(&b, "witnesses kept in summary.json, of no failed check: %s\n", strings.Join(kept, ", "))
	}
	if len(shown) > 0 {
		b.WriteString("witnesses:\n")
		for _, check := range shown {
			list := s.Witnesses[check]
			fmt.Fprintf(&b, "  %s (first %d):\n", check, len(list))
			for _, wt := range list {
				j, err := json.Marshal(wt)
				if err != nil {
					return err
				}
				fmt.Fprintf(&b, "    %s\n", j)
			}
		}
	}
	for _, wn := range s.Warnings {
		if !strings.HasPrefix(wn, "inconclusive: ") { // (printed under the verdict)
			fmt.Fprintf(&b, "warning: %s\n", printable.String(wn))
		}
	}
	b.WriteString("judged:\n")
	for _, it := range Provenance(s) {
		fmt.Fprintf(&b, "  %s: %s\n", it.Name, printable.String(it.Value))
	}
	// Every string above may come from the ledger: what the lines above did not escape one by one
	// (tenant, fault and metric names in the sections) cannot carry an escape sequence either.
	_, err := io.WriteString(w, printable.Text(b.String()))
	return err
}

// breakdown names the tenants or consumers a failed spec check comes from, e.g. " (t1/c1 5, t2/c1 3)".
func breakdown(s *Summary, check string) string {
	d := descriptorOf(check)
	if d == nil || d.Per == nil {
		return ""
	}
	scopes, get := s.PerTenant, d.Per
	if d.PerConsumer {
		scopes = s.PerConsumer
	}
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(scopes)) {
		if v := get(scopes[id]); v != 0 {
			parts = append(parts, fmt.Sprintf("%s %g", id, v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// witnessOrder lists the witness checks of failed checks first (in failure order), then the rest.
func witnessOrder(s *Summary) []string {
	var out []string
	for _, f := range s.FailedChecks {
		if _, ok := s.Witnesses[f]; ok && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	var rest []string
	for k := range s.Witnesses {
		if !slices.Contains(out, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func reasons(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// meaningSuffix is " — meaning" of a check, or "".
func meaningSuffix(check string) string {
	if m := Meaning(check); m != "" {
		return " — " + m
	}
	return ""
}

// writeChecks lists every check that ran, one line each: its result, its bound, what it measured and
// what it means.
func writeChecks(b *strings.Builder, s *Summary) {
	fmt.Fprintf(b, "checks (%d):\n", len(s.Checks))
	for _, c := range s.Checks {
		res := map[string]string{ResultPass: "ok  ", ResultNotJudged: "n/j ", ResultFail: "FAIL"}[c.Result()]
		fmt.Fprintf(b, "  %s %s %s, measured %.6g", res, printable.String(c.Name), printable.String(c.Limit), c.Measured)
		if c.Meaning != "" {
			fmt.Fprintf(b, ": %s", c.Meaning)
		}
		b.WriteString("\n")
	}
}

// splitWitnesses sorts the witness lists into those printed in full (of a failed check, or every
// list when the verdict is not a pass) and those only named with their length: on a pass, witnesses
// of counted anomalies (drops, spurious resets) are kept in summary.json and the report, not printed.
func splitWitnesses(s *Summary) (shown, kept []string) {
	failed := map[WitnessKey]bool{}
	for _, f := range s.FailedChecks {
		d := descriptorOf(f)
		if rest, ok := strings.CutPrefix(f, "threshold:"); ok && d == nil {
			field, _, _ := strings.Cut(rest, "@")
			if i := strings.IndexAny(field, "<>=!"); i >= 0 {
				field = field[:i]
			}
			d = descriptorOfPath(field)
		}
		if d != nil && d.Witness != "" {
			failed[d.Witness] = true
		}
		failed[WitnessKey(f)] = true
	}
	for _, k := range witnessOrder(s) {
		if s.Verdict == VerdictFail && !failed[WitnessKey(k)] {
			kept = append(kept, fmt.Sprintf("%s (%d)", k, len(s.Witnesses[k])))
			continue
		}
		if s.Verdict == VerdictPass {
			kept = append(kept, fmt.Sprintf("%s (%d)", k, len(s.Witnesses[k])))
			continue
		}
		shown = append(shown, k)
	}
	return shown, kept
}

// projectionDefaults says which inputs of the projection are defaults the ledger did not set.
func projectionDefaults(p Projection) string {
	if len(p.Defaults) == 0 {
		return ""
	}
	return " (" + strings.Join(p.Defaults, " and ") + ": defaults, not set by the run record)"
}
