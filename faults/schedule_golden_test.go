package faults_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/scenario"
)

var update = flag.Bool("update", false, "rewrite the golden schedules in testdata/schedules")

// goldenScenarios are the scenarios whose schedules are pinned: every shipped scenario with faults
// (scenarios/*.yaml, scenarios/ci/*.yaml, scenarios/incidents/*.yaml) and testdata/all-kinds.yaml, which gives every kind
// non-default params.
func goldenScenarios(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../scenarios/*.yaml", "../scenarios/ci/*.yaml", "../scenarios/incidents/*.yaml", "testdata/all-kinds.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d scenarios", len(files))
	}
	return files
}

// goldenName maps ../scenarios/ci/pod-crash.yaml and seed 7 to ci/pod-crash.seed-7.json.
func goldenName(file string, seed int64) string {
	rel := strings.TrimPrefix(filepath.ToSlash(file), "../scenarios/")
	rel = strings.TrimPrefix(rel, "testdata/")
	return filepath.Join("testdata", "schedules", fmt.Sprintf("%s.seed-%d.json", strings.TrimSuffix(rel, ".yaml"), seed))
}

// TestScheduleGolden resolves each scenario's schedule as `seqgate run` and `seqgate faults schedule`
// do (tenants tenant_1..tenant_N, pods pod-1..pod-N) with its own seed and two others, writes it with
// SaveSchedule and compares the bytes with the file captured before the faults/ refactor: schedule.json
// must not change by a byte. LoadSchedule followed by SaveSchedule must give the same bytes again (the
// --replay path). Run with -update only when a change to schedule.json is intended.
func TestScheduleGolden(t *testing.T) {
	for _, file := range goldenScenarios(t) {
		sc, err := scenario.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var ts faults.TargetSet
		for i := range sc.Expand() {
			ts.Tenants = append(ts.Tenants, faults.TenantSlot(i+1))
		}
		for i := 1; i <= sc.Pods.Count; i++ {
			ts.Pods = append(ts.Pods, fmt.Sprintf("pod-%d", i))
		}
		for _, seed := range []int64{sc.Seed, 1, 2} {
			golden := goldenName(file, seed)
			t.Run(golden, func(t *testing.T) {
				inst, err := faults.Expand(sc.Faults, sc.Nemesis, seed, sc.Duration.D(), ts)
				if err != nil {
					t.Fatal(err)
				}
				dir := t.TempDir()
				path := filepath.Join(dir, faults.ScheduleFile)
				s := faults.Schedule{Scenario: sc.Name, Seed: seed, RunDuration: sc.Duration.D().String(), Faults: inst}
				if err := faults.SaveSchedule(path, s); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to capture it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("schedule.json differs from %s:\n got: %s\nwant: %s", golden, got, want)
				}
				loaded, err := faults.LoadSchedule(path)
				if err != nil {
					t.Fatal(err)
				}
				again := filepath.Join(dir, "again.json")
				if err := faults.SaveSchedule(again, loaded); err != nil {
					t.Fatal(err)
				}
				if b, err := os.ReadFile(again); err != nil || !bytes.Equal(b, want) {
					t.Fatalf("LoadSchedule+SaveSchedule changed the bytes (%v):\n%s", err, b)
				}
			})
		}
	}
}
