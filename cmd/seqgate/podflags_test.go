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

const podFlagsScenario = `name: podflags
duration: 5s
tenants: [{count: 1}]
pods:
  count: 1
  eventlogd:
    defect: DEFECT
    flags:
      FLAG: "VALUE"
`

// TestLintChecksPodFlags: lint asks a real eventlogd which defects and flags it accepts; a misspelt
// defect, a misspelt flag and a bad value are each refused with the line, the field and what is
// allowed, and the correct spelling passes (the control). run refuses the same file before it
// starts anything.
func TestLintChecksPodFlags(t *testing.T) {
	bin := buildEventlogd(t)
	for _, c := range []struct {
		name, defect, flag, value string
		want                      []string // in the output; none: the file is valid
	}{
		{name: "correct", defect: "late-commit-skip", flag: "retry-tenant-cap", value: "3"},
		{name: "misspelt defect", defect: "late-commit-skp", flag: "retry-tenant-cap", value: "3",
			want: []string{":7: pods.eventlogd.defect: \"late-commit-skp\" is not a seeded defect", "did you mean late-commit-skip?", "(allowed: drop-on-insert-failure, "}},
		{name: "misspelt flag", defect: "late-commit-skip", flag: "retry-tenat-cap", value: "3",
			want: []string{":9: pods.eventlogd.flags.retry-tenat-cap: eventlogd refuses --retry-tenat-cap=3: unknown flag; did you mean retry-tenant-cap?", "retry-global-cap, "}},
		{name: "bad value", defect: "late-commit-skip", flag: "sse-heartbeat", value: "often",
			want: []string{":9: pods.eventlogd.flags.sse-heartbeat: eventlogd refuses --sse-heartbeat=often: value \"often\""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.yaml")
			src := strings.NewReplacer("DEFECT", c.defect, "FLAG", c.flag, "VALUE", c.value).Replace(podFlagsScenario)
			os.WriteFile(file, []byte(src), 0o644)
			var out bytes.Buffer
			err := lintWith(context.Background(), &out, []string{file}, bin)
			if len(c.want) == 0 {
				if err != nil || !strings.Contains(out.String(), "s.yaml: ok") {
					t.Fatalf("a correct file: %v\n%s", err, out.String())
				}
				return
			}
			var xe *exitError
			if !errors.As(err, &xe) || xe.code != exitFail {
				t.Fatalf("error %v, want exit %d", err, exitFail)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("lint output lacks %q:\n%s", w, out.String())
				}
			}
			runDir := filepath.Join(t.TempDir(), "run")
			err = runRun(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, file, runFlags{out: runDir, eventlogd: bin})
			if !errors.As(err, &xe) || xe.code != exitUnusable || !strings.Contains(err.Error(), c.want[0]) {
				t.Errorf("run: %v, want exit %d naming %q", err, exitUnusable, c.want[0])
			}
			if _, err := os.Stat(filepath.Join(runDir, "pods")); err == nil {
				t.Errorf("run started pods before refusing the flags")
			}
		})
	}
	t.Run("every shipped scenario", func(t *testing.T) {
		var files []string
		for _, pat := range []string{"../../scenarios/*.yaml", "../../scenarios/*/*.yaml"} {
			m, _ := filepath.Glob(pat)
			for _, f := range m {
				if filepath.Base(f) != "matrix.yaml" { // the power matrix, not a scenario
					files = append(files, f)
				}
			}
		}
		if len(files) < 10 {
			t.Fatalf("%d shipped scenarios found", len(files))
		}
		var out bytes.Buffer
		if err := lintWith(context.Background(), &out, files, bin); err != nil {
			t.Errorf("shipped scenarios: %v\n%s", err, out.String())
		}
	})
	t.Run("no binary", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "s.yaml")
		os.WriteFile(file, []byte(strings.NewReplacer("DEFECT", "late-commit-skip", "FLAG", "retry-tenant-cap", "VALUE", "3").Replace(podFlagsScenario)), 0o644)
		var out bytes.Buffer
		if err := lintWith(context.Background(), &out, []string{file}, filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(out.String(), "cannot check the pod flags") {
			t.Errorf("lint without a binary: %v\n%s", err, out.String())
		}
	})
}
