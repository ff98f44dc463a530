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
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
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

// WriteJUnit writes JUnit XML: the suite's properties are the run's provenance (what was judged:
// "verdict", then Provenance's items by name, e.g. "defects"); one testcase per verdict check (spec
// rules and thresholds) with its one-line meaning in system-out, a broken one being a failure whose
// message says the measured value, the bound and the meaning, with the witnesses in its body; then
// one always-passing testcase per reported-only property (classname seqgate.report) with its numbers
// in system-out. An inconclusive run adds a skipped "conclusive" testcase saying why.
func WriteJUnit(w io.Writer, s *Summary) error {
	suite := junitSuite{Name: "seqgate verify " + s.Run.RunID}
	suite.Properties = append(suite.Properties, junitProperty{"verdict", s.Verdict + DefectNote(s)})
	for _, it := range Provenance(s) {
		suite.Properties = append(suite.Properties, junitProperty(it))
	}
	for _, c := range s.Checks {
		tc := junitCase{Name: c.Name, Classname: "seqgate.verify", SystemOut: c.Meaning}
		meaning := ""
		if c.Meaning != "" {
			meaning = " (" + c.Meaning + ")"
		}
		if !c.Passed && c.NotJudged != "" {
			tc.Skipped = &junitSkipped{Message: fmt.Sprintf("%s: measured %.6g, want %s; not judged: %s%s", c.Name, c.Measured, c.Limit, c.NotJudged, meaning)}
			suite.Skipped++
		} else if !c.Passed {
			var body strings.Builder
			for _, wt := range s.Witnesses[c.Name] {
				j, _ := json.Marshal(wt)
				body.Write(j)
				body.WriteByte('\n')
			}
			tc.Failure = &junitFailure{Message: fmt.Sprintf("%s: measured %.6g, want %s%s", c.Name, c.Measured, c.Limit, meaning), Body: body.String()}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, tc)
	}
	for _, in := range reportOnly(s) {
		out := in[1]
		if m := Meaning(in[0]); m != "" {
			out = m + ": " + out
		}
		suite.Cases = append(suite.Cases, junitCase{Name: in[0], Classname: "seqgate.report", SystemOut: out})
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

// reportOnly lists the properties that are reported but gate nothing unless a threshold says so:
// the checks with a Report line, in the order of the list of checks.
func reportOnly(s *Summary) [][2]string {
	var out [][2]string
	for _, d := range checks {
		if d.Report != nil {
			out = append(out, [2]string{d.Name, d.Report(s)})
		}
	}
	return out
}

// quantilesLine is a latency's quantiles in one line.
func quantilesLine(x Quantiles) string {
	return fmt.Sprintf("count %d, p50 %g ms, p90 %g ms, p99 %g ms, p99.9 %g ms, max %g ms", x.Count, x.P50, x.P90, x.P99, x.P999, x.Max)
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
