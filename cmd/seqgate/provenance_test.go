package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/internal/provenance"
)

// TestRunProvenance: a real run with --set pods.eventlogd.defect=late-commit-skip names the defect in
// summary.json, summary.md, report.html, JUnit and the verdict line, with the pods' binary hash and
// the scenario's; the same run without the --set names no defect anywhere.
func TestRunProvenance(t *testing.T) {
	needDB(t)
	dir := t.TempDir()
	bin := buildEventlogd(t)
	elBin, err := provenance.Describe(t.Context(), bin, true)
	if err != nil || !strings.HasPrefix(elBin.Version, "eventlogd github.com/seqgate/seqgate") {
		t.Fatalf("eventlogd --version: %+v %v", elBin, err)
	}
	sc := writeTestFile(t, dir, "tiny.yaml", `name: tiny
seed: 2
duration: 2s
drain_timeout: 20s
tenants:
  - {group: hot, count: 1}
pods: {count: 1}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 20}
consumers:
  - {count: 1}
`)
	for _, c := range []struct {
		name   string
		sets   []string
		defect bool
	}{{"defect", []string{"--set", "pods.eventlogd.defect=late-commit-skip"}, true}, {"clean", nil, false}} {
		t.Run(c.name, func(t *testing.T) {
			runDir := filepath.Join(dir, c.name)
			junit := filepath.Join(dir, c.name+".xml")
			cmd := newRunCmd()
			var stdout, stderr bytes.Buffer
			cmd.SetOut(&stdout)
			cmd.SetErr(&stderr)
			cmd.SetArgs(append([]string{sc, "--out", runDir, "--eventlogd", bin, "--junit", junit}, c.sets...))
			if err := cmd.Execute(); err != nil {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code > exitFail {
					t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), stderr.String())
				}
			}
			verdictLine, _, _ := strings.Cut(stdout.String(), "\n")
			var sum struct {
				Run struct {
					Provenance struct {
						Defects        []string `json:"defects"`
						PodFlags       []string `json:"pod_flags"`
						Sets           []string `json:"sets"`
						Args           []string `json:"args"`
						ScenarioSHA256 string   `json:"scenario_sha256"`
						Pods           struct {
							SHA256  string `json:"sha256"`
							Version string `json:"version"`
						} `json:"pods"`
						Machine struct {
							Cores   int       `json:"cores"`
							LoadAvg []float64 `json:"load_avg"`
						} `json:"machine"`
					} `json:"provenance"`
					LoadAvgEnd []float64 `json:"load_avg_end"`
				} `json:"run"`
			}
			readJSON(t, filepath.Join(runDir, "summary.json"), &sum)
			p := sum.Run.Provenance
			if p.Pods.SHA256 != elBin.SHA256 || p.Pods.Version != elBin.Version || len(p.ScenarioSHA256) != 64 || p.Machine.Cores < 1 ||
				len(p.Machine.LoadAvg) != 3 || len(sum.Run.LoadAvgEnd) != 3 || !slices.Contains(p.Args, "--eventlogd="+bin) {
				t.Errorf("summary.json's provenance: %+v, end load %v", p, sum.Run.LoadAvgEnd)
			}
			if got := slices.Equal(p.Defects, []string{"late-commit-skip"}) && slices.Equal(p.Sets, []string{"pods.eventlogd.defect=late-commit-skip"}) &&
				slices.Contains(p.PodFlags, "--defect=late-commit-skip"); got != c.defect {
				t.Errorf("summary.json: defects %v, sets %v, pod flags %v", p.Defects, p.Sets, p.PodFlags)
			}
			if !c.defect && (len(p.Defects) != 0 || len(p.Sets) != 0) {
				t.Errorf("a clean run's summary.json: defects %v sets %v", p.Defects, p.Sets)
			}
			if got := strings.Contains(verdictLine, "(defect build: late-commit-skip)"); got != c.defect {
				t.Errorf("verdict line %q", verdictLine)
			}
			for _, f := range []string{"summary.md", "report.html", "summary.txt", junit} {
				if !filepath.IsAbs(f) {
					f = filepath.Join(runDir, f)
				}
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Contains(string(b), "late-commit-skip"); got != c.defect {
					t.Errorf("%s names late-commit-skip: %v, want %v", filepath.Base(f), got, c.defect)
				}
				if !strings.Contains(string(b), elBin.SHA256) {
					t.Errorf("%s lacks the pods' binary hash", filepath.Base(f))
				}
			}
		})
	}
}
