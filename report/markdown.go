package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/seqgate/seqgate/verifier"
)

var verdictMark = map[string]string{
	verifier.VerdictPass:         "✅",
	verifier.VerdictFail:         "❌",
	verifier.VerdictInconclusive: "⚠️",
}

// WriteMarkdown writes summary.md: the verdict, the failed checks with their numbers, the key numbers
// and where the report is, fit for a CI job summary or a pull-request comment. d may be nil (then
// the fault schedule is left out); link is the report's path ("" leaves it out).
func WriteMarkdown(w io.Writer, s *verifier.Summary, d *Data, link string) error {
	var b strings.Builder
	name := s.Run.Scenario
	if name == "" {
		name = s.Run.RunID
	}
	fmt.Fprintf(&b, "### %s seqgate: **%s**%s, scenario %s\n\n", verdictMark[s.Verdict], mdText(strings.ToUpper(s.Verdict)), mdText(verifier.DefectNote(s)), mdCode(name, false))
	fmt.Fprintf(&b, "Run %s, seed %d, %s ledger records.\n\n", mdCode(s.Run.RunID, false), s.Run.Seed, fmtInt(s.Records))
	for _, line := range why(s) {
		fmt.Fprintf(&b, "- %s\n", mdText(line))
	}
	b.WriteString("\n")
	if len(s.Failures) > 0 {
		b.WriteString("| failed check | measured | limit |\n|---|---:|---|\n")
		for _, f := range s.Failures {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdText(f.Check), fmtNum(f.Measured), mdCode(f.Limit, true))
		}
		b.WriteString("\n")
	}
	b.WriteString("| acked | lost | loss fraction | 95% bound | budget | skipped | undelivered | leaks | latency p50 / p99 / max |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |\n\n",
		fmtInt(s.Acked), fmtInt(s.Lost), fmtFrac(s.EventLossFraction), fmtFrac(s.LossUpper95), fmtFrac(s.Budget),
		fmtInt(s.Skipped), fmtInt(s.Undelivered), fmtInt(s.Leaks), fmtMs(s.LatencyMs.P50), fmtMs(s.LatencyMs.P99), fmtMs(s.LatencyMs.Max))
	if len(s.LostByReason) > 0 && s.Lost > 0 {
		b.WriteString("Lost by reason:")
		for i, r := range sortedKeys(s.LostByReason) {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s %s", mdText(r), fmtInt(s.LostByReason[r]))
		}
		b.WriteString(".\n\n")
	}
	if d != nil && len(d.Faults) > 0 {
		origin := "s since the run started"
		if l := s.Run.LoadStartMs; l != nil {
			origin = fmt.Sprintf("s since the run started; the load, whose start a scenario's at: counts from, began at %.1f s", *l/1000)
		}
		fmt.Fprintf(&b, "Faults (%d, %s):", len(d.Faults), mdText(origin))
		for i, f := range d.Faults {
			if i == 10 {
				fmt.Fprintf(&b, " and %d more", len(d.Faults)-i)
				break
			}
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s %s %.1f–%.1f s", mdText(f.Kind), mdCode(f.Target, false), secs(f.StartNs), secs(f.StopNs))
		}
		b.WriteString(".\n\n")
	}
	// Every check that ran, one line each, with what it means.
	fmt.Fprintf(&b, "**Checks that ran (%d)**\n\n| check | result | measured | limit | what it means |\n|---|---|---:|---|---|\n", len(s.Checks))
	for _, c := range s.Checks {
		res := c.Result()
		if res == verifier.ResultFail {
			res = "**FAIL**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCode(c.Name, true), res, fmtNum(c.Measured), mdCode(c.Limit, true), mdText(c.Meaning))
	}
	b.WriteString("\n")
	// What was judged: the builds, the pods' binary, flags and defects, the overrides, the scenario and the machine.
	b.WriteString("**What was judged**\n\n| | |\n|---|---|\n")
	for _, it := range verifier.Provenance(s) {
		fmt.Fprintf(&b, "| %s | %s |\n", mdText(it.Name), mdText(it.Value))
	}
	b.WriteString("\n")
	if link != "" {
		// A path, not a link: a relative link breaks where summary.md is pasted (a CI job summary).
		fmt.Fprintf(&b, "Full report: %s in the run directory %s (plots with every fault as a band, witnesses, per-tenant and per-consumer tables; keep the run directory as the job's artifact to open it).\n",
			mdCode(link, false), mdCode(filepath.Dir(link)+"/", false))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtNum(v float64) string {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return fmtInt(int64(v))
	}
	return fmtFrac(v)
}
