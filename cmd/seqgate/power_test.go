package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPowerRefusesSetsItVaries: `seqgate power --set` may not name the seed or the defect (power
// varies both per run): exit 3 naming the override, before any run or output directory. A valid
// override gets past the check (and fails later on the missing matrix, not on the override).
func TestPowerRefusesSetsItVaries(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		set, want string
	}{{"seed=3", `"seed=3"`}, {"pods.eventlogd.defect=late-commit-skip", "pods.eventlogd.defect"}, {"pods.count", "want PATH=VALUE"}, {"pods.count=2", "nope.yaml"}} {
		out := filepath.Join(dir, strings.NewReplacer("=", "_", ".", "_").Replace(c.set))
		err := runPower(t.Context(), &bytes.Buffer{}, &bytes.Buffer{}, powerFlags{matrix: filepath.Join(dir, "nope.yaml"), seeds: 1, out: out, sets: []string{c.set}})
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUnusable || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("--set %s: %v, want exit 3 naming %s", c.set, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("--set %s: output directory made (%v)", c.set, err)
		}
	}
}
