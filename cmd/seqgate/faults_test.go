package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const scheduleScenario = `name: sched
seed: 9
duration: 2m
tenants:
  - {group: a, count: 3, mode: dedicated}
pods: {count: 2}
faults:
  - {at: 10s, for: 5s, kind: tenant_db_stall, target: random}
nemesis:
  kinds: [pod_pause, tenant_db_latency]
  mean_interval: 10s
  duration: [1s, 3s]
`

func runSeqgate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// TestFaultsSchedule: `seqgate faults schedule` prints the same schedule for the same scenario and
// seed, another one for another seed, and a bad scenario is unusable input (exit 3) naming the line.
func TestFaultsSchedule(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(good, []byte(scheduleScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := runSeqgate(t, "faults", "schedule", good)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := runSeqgate(t, "faults", "schedule", good)
	c, _ := runSeqgate(t, "faults", "schedule", good, "--seed", "10")
	if a != b || a == c {
		t.Fatalf("same seed equal: %v, other seed differs: %v", a == b, a != c)
	}
	for _, want := range []string{`"scenario": "sched"`, `"kind": "tenant_db_stall"`, `"source": "nemesis`, `"slots"`} {
		if !strings.Contains(a, want) {
			t.Errorf("schedule lacks %s:\n%s", want, a)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(scheduleScenario, "target: random", "target: tenant_9", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = runSeqgate(t, "faults", "schedule", bad)
	var xe *exitError
	if !errors.As(err, &xe) || xe.code != exitUnusable || !strings.Contains(err.Error(), "line 8") || !strings.Contains(err.Error(), `unknown tenant "tenant_9"`) {
		t.Fatalf("bad target: %v", err)
	}
}

// TestFaultsList: `seqgate faults` lists every kind; --markdown prints the docs section.
func TestFaultsList(t *testing.T) {
	out, err := runSeqgate(t, "faults")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tenant_db_stall", "meta_db_down", "pod_crash", "outbox_poller_stall", "consumer_disconnect"} {
		if !strings.Contains(out, "\n"+k+"\n") {
			t.Errorf("kind %s missing", k)
		}
	}
	md, err := runSeqgate(t, "faults", "--markdown")
	if err != nil || !strings.Contains(md, "### `tenant_db_stall`") {
		t.Fatalf("markdown: %v", err)
	}
}
