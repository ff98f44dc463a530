package dashboards

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// promBinary returns the path of a Prometheus binary (promtool, prometheus). Debian's prometheus
// package ships both; .ci/run installs it. Outside CI a machine without it skips these tests.
func promBinary(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := "/usr/bin/" + name; fileExists(p) {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found: apt-get install prometheus", name)
	}
	t.Skipf("%s not found (apt-get install prometheus)", name)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func promtool(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(promBinary(t, "promtool"), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestPromtoolCheckRules(t *testing.T) {
	out, err := promtool(t, "rules", "check", "rules", "eventlogd.rules.yml")
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	// Negative control: a broken expression is rejected.
	dir := t.TempDir()
	b, _ := os.ReadFile("rules/eventlogd.rules.yml")
	bad := strings.Replace(string(b), "sum(rate(eventlogd_event_insert_attempts_total{path=\"hot\"}[5m]))", "sum(rate(eventlogd_event_insert_attempts_total{path=\"hot\"}[5m])", 1)
	if err := os.WriteFile(filepath.Join(dir, "eventlogd.rules.yml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := promtool(t, dir, "check", "rules", "eventlogd.rules.yml"); err == nil {
		t.Fatalf("promtool accepted an unbalanced expression:\n%s", out)
	}
}

func TestPromtoolTestRules(t *testing.T) {
	out, err := promtool(t, "rules", "test", "rules", "eventlogd.test.yml")
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	// Negative control: without its second operand the drop alert misses a drop counter child that
	// appears already non-zero, and the unit tests say so.
	dir := t.TempDir()
	b, _ := os.ReadFile("rules/eventlogd.rules.yml")
	const second = `
            or
          sum by (tenant_id, reason) (drive9_sse_event_retry_dropped_total unless drive9_sse_event_retry_dropped_total offset 5m) > 0`
	if !strings.Contains(string(b), second) {
		t.Fatal("the drop alert's second operand is not where the control expects it")
	}
	tb, _ := os.ReadFile("rules/eventlogd.test.yml")
	_ = os.WriteFile(filepath.Join(dir, "eventlogd.rules.yml"), []byte(strings.Replace(string(b), second, "", 1)), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "eventlogd.test.yml"), tb, 0o644)
	out, err = promtool(t, dir, "test", "rules", "eventlogd.test.yml")
	if err == nil || !strings.Contains(out, "EventlogdRetryBufferDrop") {
		t.Fatalf("control: promtool test rules passed without the new-series operand (%v):\n%s", err, out)
	}
}

// TestEveryAlertIsTestedAndRouted: each alert has a severity a router can use and appears in the
// promtool unit tests.
func TestEveryAlertIsTestedAndRouted(t *testing.T) {
	rf := readRules(t, "rules/eventlogd.rules.yml")
	tests, err := os.ReadFile("rules/eventlogd.test.yml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			if s := r.Labels["severity"]; s != "page" && s != "ticket" {
				t.Errorf("alert %s: severity %q (want page or ticket)", r.Alert, s)
			}
			if !strings.Contains(string(tests), "alertname: "+r.Alert) {
				t.Errorf("alert %s has no promtool test case in rules/eventlogd.test.yml", r.Alert)
			}
		}
	}
	if n < 6 {
		t.Fatalf("%d alerts found", n)
	}
}
