package verifier

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes JUnit XML with one testcase per verdict check (spec rules and thresholds), a
// broken one being a failure carrying its measured value and witnesses, then one always-passing
// testcase per reported-only property (classname seqgate.report) with its numbers in system-out. An
// inconclusive run adds a skipped "conclusive" testcase saying why.
func WriteJUnit(w io.Writer, s *Summary) error {
	suite := junitSuite{Name: "seqgate verify " + s.Run.RunID}
	for _, c := range s.Checks {
		tc := junitCase{Name: c.Name, Classname: "seqgate.verify"}
		if !c.Passed && c.NotJudged != "" {
			tc.Skipped = &junitSkipped{Message: fmt.Sprintf("%s: measured %.6g, want %s; not judged: %s", c.Name, c.Measured, c.Limit, c.NotJudged)}
			suite.Skipped++
		} else if !c.Passed {
			var body strings.Builder
			for _, wt := range s.Witnesses[c.Name] {
				j, _ := json.Marshal(wt)
				body.Write(j)
				body.WriteByte('\n')
			}
			tc.Failure = &junitFailure{Message: fmt.Sprintf("%s: measured %.6g, want %s", c.Name, c.Measured, c.Limit), Body: body.String()}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, tc)
	}
	for _, in := range reportOnly(s) {
		suite.Cases = append(suite.Cases, junitCase{Name: in[0], Classname: "seqgate.report", SystemOut: in[1]})
	}
	if s.Verdict == VerdictInconclusive {
		suite.Cases = append(suite.Cases, junitCase{Name: "conclusive", Classname: "seqgate.verify",
			Skipped: &junitSkipped{Message: strings.Join(s.InconclusiveBecause, "; ")}})
		suite.Skipped++
	}
	suite.Tests = len(suite.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{suite}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// reportOnly lists the properties that are reported but gate nothing unless a threshold says so.
func reportOnly(s *Summary) [][2]string {
	q := func(x Quantiles) string {
		return fmt.Sprintf("count %d, p50 %g ms, p90 %g ms, p99 %g ms, p99.9 %g ms, max %g ms", x.Count, x.P50, x.P90, x.P99, x.P999, x.Max)
	}
	p := s.Projection
	return [][2]string{
		{"confidence", fmt.Sprintf("loss_upper_95 %g with acked %d (budget %g; provable from acked %d with no loss)", s.LossUpper95, s.Acked, s.Budget, s.MinAckedForBudget)},
		{"recovered", fmt.Sprintf("recovered %d", s.Recovered)},
		{"reset_covered", fmt.Sprintf("reset_covered %d", s.ResetCovered)},
		{"spurious_resets", fmt.Sprintf("spurious_resets %d", s.SpuriousResets)},
		{"duplicates", fmt.Sprintf("duplicates %d", s.Duplicates)},
		{"unexpected", fmt.Sprintf("unexpected %d", s.Unexpected)},
		{"seq_mismatch", fmt.Sprintf("seq_mismatch %d", s.SeqMismatch)},
		{"unresolved", fmt.Sprintf("unresolved %d", s.Unresolved)},
		{"load", fmt.Sprintf("mutations %d, drops %d, dropped_fraction %g", s.Mutations, s.Drops, s.DroppedFraction)},
		{"audit", auditLine(s.Audit)},
		{"recovery", recoveryLine(s)},
		{"latency", q(s.LatencyMs) + fmt.Sprintf(", delivered before ack %d", s.DeliveredBeforeAck)},
		{"issue_latency", q(s.IssueLatencyMs)},
		{"reorder", fmt.Sprintf("overtaken %d, max %g ms", s.Reorder.Overtaken, s.Reorder.MaxMs)},
		{"reconnects", fmt.Sprintf("total %d, opens %d, max %d opens/s", s.Reconnects.Total, s.Reconnects.Opens, s.Reconnects.MaxPerS)},
		{"projection", fmt.Sprintf("%g crashes/yr x %g unflushed/crash / %g events/yr = %g", p.CrashesPerYear, p.UnflushedPerCrash, p.AnnualEvents, p.Fraction)},
	}
}

func auditLine(a Audit) string {
	out := fmt.Sprintf("required %v, attempts %d, ok %v, tenants %d, rows %d", a.Required, a.Attempts, a.OK, a.Tenants, a.Rows)
	if a.Error != "" {
		out += ", error " + a.Error
	}
	return out
}

func recoveryLine(s *Summary) string {
	if len(s.Faults) == 0 {
		return "no faults"
	}
	parts := make([]string, 0, len(s.Faults))
	for _, f := range s.Faults {
		p := fmt.Sprintf("%s (%s on %s) from %g ms", f.ID, f.Kind, f.Target, f.StartMs)
		if f.StopMs != nil {
			p += fmt.Sprintf(" to %g ms", *f.StopMs)
		} else {
			p += ", never stopped"
		}
		if f.RecoveryMs != nil {
			p += fmt.Sprintf(", recovery %g ms", *f.RecoveryMs)
			if !f.Recovered {
				p += " (not recovered by the end)"
			}
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}
