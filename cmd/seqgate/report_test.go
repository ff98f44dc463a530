package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/seqgate/seqgate/harness/scenario"
)

func TestReportCmd(t *testing.T) {
	runDir := t.TempDir()
	ledgerBytes, err := os.ReadFile("../../report/testdata/faults-tour.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "ledger.jsonl.gz"), ledgerBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	var discard bytes.Buffer
	if err := runVerify(&discard, &discard, []string{filepath.Join(runDir, "ledger.jsonl.gz")}, verifyFlags{jsonPath: filepath.Join(runDir, "summary.json"), witnesses: 20}); err != nil {
		t.Fatalf("verify: %v", err)
	}
	emptyDir := t.TempDir()
	out := filepath.Join(t.TempDir(), "r.html")
	cases := []struct {
		name    string
		args    []string
		flags   reportFlags
		code    int
		errHas  string
		page    string
		verdict string
	}{
		{name: "run directory", args: []string{runDir}, page: filepath.Join(runDir, "report.html"), verdict: "pass"},
		{name: "ledger verified in the same pass", args: []string{"../../verifier/testdata/skipped.jsonl"}, flags: reportFlags{out: out, witnesses: 20}, page: out, verdict: "fail"},
		{name: "no ledger in the directory", args: []string{emptyDir}, code: exitUnusable, errHas: emptyDir},
		{name: "a ledger is no summary", args: []string{runDir}, flags: reportFlags{summary: filepath.Join(runDir, "ledger.jsonl.gz")}, code: exitUnusable, errHas: "--summary"},
		{name: "missing ledger", args: []string{filepath.Join(emptyDir, "nope.jsonl")}, code: exitUnusable, errHas: "nope.jsonl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runReport(&stdout, &stderr, tc.args, tc.flags)
			code := exitPass
			var xe *exitError
			if errors.As(err, &xe) {
				code = xe.code
			} else if err != nil {
				t.Fatalf("error without exit code: %v", err)
			}
			if code != tc.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tc.code)
			}
			if tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)) {
				t.Errorf("error %v does not name %q", err, tc.errHas)
			}
			if tc.page == "" {
				return
			}
			html, err := os.ReadFile(tc.page)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(html), `data-verdict="`+tc.verdict+`"`) {
				t.Errorf("%s does not show verdict %s", tc.page, tc.verdict)
			}
			md, err := os.ReadFile(filepath.Join(filepath.Dir(tc.page), "summary.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), strings.ToUpper(tc.verdict)) || !strings.Contains(string(md), "Full report: `"+tc.page+"` in the run directory `"+filepath.Dir(tc.page)+"/`") ||
				strings.Contains(string(md), "](") {
				t.Errorf("summary.md lacks the verdict or the path of %s, or has a relative link:\n%s", tc.page, md)
			}
			if !strings.Contains(stdout.String(), "verdict: "+tc.verdict) {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
}

// TestReportDocsListEveryFlag keeps docs/report.md's flag table true to the command.
func TestReportDocsListEveryFlag(t *testing.T) {
	doc, err := os.ReadFile("../../docs/report.md")
	if err != nil {
		t.Fatal(err)
	}
	newReportCmd().Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && !strings.Contains(string(doc), "`--"+f.Name) {
			t.Errorf("docs/report.md does not document --%s", f.Name)
		}
	})
}

// TestOutboxRetentionFromTheRunDir: the report reads the pods' --outbox-retention from the run
// directory's scenario.yaml, and falls back to eventlogd's default when it sets none.
func TestOutboxRetentionFromTheRunDir(t *testing.T) {
	src, err := os.ReadFile("../../scenarios/smoke.yaml")
	if err != nil {
		t.Fatal(err)
	}
	with, err := scenario.Override(src, []string{"pods.eventlogd.flags.outbox-retention=90s"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		body []byte
		want time.Duration
	}{{"set", with, 90 * time.Second}, {"unset", src, 0}, {"none", nil, 0}} {
		dir := t.TempDir()
		if c.body != nil {
			if err := os.WriteFile(filepath.Join(dir, "scenario.yaml"), c.body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, from := outboxRetention(dir)
		if got != c.want || (c.want != 0) != (from != "") {
			t.Errorf("%s: retention %v from %q, want %v", c.name, got, from, c.want)
		}
	}
}
