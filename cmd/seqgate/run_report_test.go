package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/harness/run"
)

// TestRunWritesReport: seqgate run (with --metrics-addr) leaves report.html and summary.md in the
// run directory, showing the run's verdict and its fault.
func TestRunWritesReport(t *testing.T) {
	needDB(t)
	dir := t.TempDir()
	bin := buildEventlogd(t)
	sc := writeTestFile(t, dir, "tiny.yaml", `name: tiny
seed: 2
duration: 4s
drain_timeout: 20s
tenants:
  - {group: hot, count: 1}
pods: {count: 1}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 20}
consumers:
  - {count: 1}
faults:
  - {at: 1s, kind: consumer_disconnect, target: tenant_1}
`)
	runDir := filepath.Join(dir, "run")
	var stdout, stderr bytes.Buffer
	err := runRun(context.Background(), &stdout, &stderr, sc, runFlags{out: runDir, eventlogd: bin, metrics: "127.0.0.1:0", ready: run.DefaultReadyTimeout})
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "live metrics at http://127.0.0.1:") {
		t.Errorf("no live metrics address on stderr:\n%s", stderr.String())
	}
	page, err := os.ReadFile(filepath.Join(runDir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-verdict="pass"`, "consumer_disconnect", `id="plot-latency"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	txt, err := os.ReadFile(filepath.Join(runDir, "summary.txt"))
	if err != nil || !strings.HasPrefix(string(txt), "verdict: PASS") {
		t.Errorf("summary.txt: %v %.80q, want the human summary starting with the verdict", err, txt)
	}
	md, err := os.ReadFile(filepath.Join(runDir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "**PASS**") || !strings.Contains(string(md), "`"+filepath.Join(runDir, "report.html")+"`") {
		t.Errorf("summary.md:\n%s", md)
	}
}
