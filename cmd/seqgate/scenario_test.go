package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScenarioLintAndRunRefuseBadFiles(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nduration: 5s\ntenants: [{count: 1}]\npods: {count: 1}\nload:\n  - {tenants: g1, executor: per-vu-iterations}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		files []string
		code  int
		out   string
	}{
		{"smoke is valid", []string{"../../scenarios/smoke.yaml"}, exitPass, "smoke.yaml: ok (6 tenants, 3 pods"},
		{"bad file", []string{bad}, exitFail, "bad.yaml:6: load[0].executor: unknown executor \"per-vu-iterations\" (allowed: constant-arrival-rate, ramping-arrival-rate)"},
		{"one bad of two", []string{"../../scenarios/smoke.yaml", bad}, exitFail, "1 of 2"},
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, exitFail, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := lint(&out, tc.files)
			code := exitPass
			var xe *exitError
			if errors.As(err, &xe) {
				code = xe.code
				out.WriteString(xe.Error())
			}
			if code != tc.code || !strings.Contains(out.String(), tc.out) {
				t.Errorf("exit %d, output %q; want exit %d and %q", code, out.String(), tc.code, tc.out)
			}
		})
	}
	// run refuses the same file before starting anything, with exit code 3.
	err := runRun(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, bad, runFlags{out: filepath.Join(dir, "run")})
	var xe *exitError
	if !errors.As(err, &xe) || xe.code != exitUnusable || !strings.Contains(err.Error(), "bad.yaml:6") {
		t.Errorf("run of a bad scenario: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
		t.Error("run made a run directory for a scenario it refused")
	}
}
