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
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes JUnit XML with one testcase per verdict check (spec rules and thresholds); a
// broken check is a failure carrying its measured value and witnesses. An inconclusive run adds a
// skipped "conclusive" testcase saying why.
func WriteJUnit(w io.Writer, s *Summary) error {
	suite := junitSuite{Name: "seqgate verify " + s.Run.RunID}
	for _, c := range s.Checks {
		tc := junitCase{Name: c.Name, Classname: "seqgate.verify"}
		if !c.Passed {
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
	if s.Verdict == VerdictInconclusive {
		suite.Cases = append(suite.Cases, junitCase{Name: "conclusive", Classname: "seqgate.verify",
			Skipped: &junitSkipped{Message: strings.Join(s.Warnings, "; ")}})
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
