package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// provLedger is a passing run of one write whose run record's provenance lists defects.
func provLedger(defects string) string {
	return strings.Join([]string{
		`{"k":"run","v":1,"run_id":"r","scenario":"s","seed":4,"start_unix_ns":1,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false}],"pods":["p1"],"target":"eventlogd",` +
			`"provenance":{"seqgate":{"module":"github.com/seqgate/seqgate","version":"(devel)","revision":"feedbeef","go":"go1.26"},"pods":{"path":"/bin/eventlogd","sha256":"ab12cd","version":"eventlogd x"},` +
			`"pod_flags":[],"defects":` + defects + `,"sets":["pods.count=1"],"args":["run","s.yaml"],"scenario_file":"s.yaml","scenario_sha256":"cafe","machine":{"cores":2,"os":"linux","arch":"amd64","load_avg":[1,1,1]}}}`,
		`{"k":"conn","consumer":"c","tenant":"A","conn":"c1","t":1,"phase":"open","pod":"p1","since":0}`,
		`{"k":"mut","mid":"m1","tenant":"A","op":"write","path":"/x/A/m1","intended_t":2,"t":2,"done_t":3,"res":"ok","pod":"p1"}`,
		`{"k":"ev","consumer":"c","tenant":"A","conn":"c1","t":4,"seq":1,"op":"write","path":"/x/A/m1","pod":"p1"}`,
		`{"k":"persisted","tenant":"A","seq":1,"op":"write","path":"/x/A/m1"}`,
		`{"k":"consumer","consumer":"c","tenant":"A","from_t":0,"to_t":5,"first_since":0,"final_cursor":1,"durable":true}`,
		`{"k":"end","t":5,"drained":true,"load_avg":[2,1,1]}`,
	}, "\n") + "\n"
}

// TestDefectNamedInReportAndMarkdown: a run on a defect build names it in report.html's title, verdict
// and header and in summary.md's heading; a clean build names no defect in either.
func TestDefectNamedInReportAndMarkdown(t *testing.T) {
	for _, c := range []struct {
		defects string
		want    bool
	}{{`["late-commit-skip"]`, true}, {`[]`, false}} {
		r, err := ledger.NewReader("p.jsonl", strings.NewReader(provLedger(c.defects)))
		if err != nil {
			t.Fatal(err)
		}
		in, err := BuildFrom(r, "p.jsonl", nil, nil, verifier.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if in.Summary.Verdict != verifier.VerdictPass {
			t.Fatalf("verdict %s: %v", in.Summary.Verdict, in.Summary.InconclusiveBecause)
		}
		var html, md bytes.Buffer
		if err := WriteHTML(&html, in); err != nil {
			t.Fatal(err)
		}
		if err := WriteMarkdown(&md, in.Summary, in.Data, "runs/r/report.html"); err != nil {
			t.Fatal(err)
		}
		h, m := html.String(), md.String()
		if got := strings.Count(h, "late-commit-skip"); (got >= 3) != c.want || (got > 0) != c.want {
			t.Errorf("defects %s: report.html names late-commit-skip %d times", c.defects, got)
		}
		heading, _, _ := strings.Cut(m, "\n")
		if got := strings.Contains(heading, `(defect build: late-commit-skip)`); got != c.want {
			t.Errorf("defects %s: summary.md heading %q", c.defects, heading)
		}
		for _, want := range []string{"ab12cd", "cafe", "feedbeef", "pods.count=1", "2 cores"} {
			if !strings.Contains(h, want) || !strings.Contains(m, want) {
				t.Errorf("defects %s: %q missing from report.html or summary.md", c.defects, want)
			}
		}
		if !strings.Contains(m, "**Checks that ran (") || !strings.Contains(m, "| `leaks` | pass | 0 | `== 0` | a consumer received an event of another tenant") {
			t.Errorf("summary.md does not list the checks with their meaning:\n%s", m)
		}
		if !c.want && !strings.Contains(m, "none (a clean build)") {
			t.Errorf("a clean build's summary.md does not say so:\n%s", m)
		}
	}
}
