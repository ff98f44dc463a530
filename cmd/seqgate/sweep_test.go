package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseFraction(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		err  bool
	}{
		{"", 0, false}, {"10%", 0.1, false}, {"0.1", 0.1, false}, {" 2.5% ", 0.025, false},
		{"0", 0, true}, {"100%", 0, true}, {"1", 0, true}, {"-5%", 0, true}, {"ten", 0, true}, {"NaN", 0, true},
	} {
		got, err := parseFraction(c.in)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("parseFraction(%q) = %g, %v; want %g (error %v)", c.in, got, err, c.want, c.err)
		}
		if err != nil && !strings.Contains(err.Error(), "--refine") {
			t.Errorf("parseFraction(%q): error %q does not name the flag", c.in, err)
		}
	}
}

// TestSweepRefusesBadConfigBeforeAnyStep: a bad --refine, bound, --run-arg or --set stops the sweep
// with exit 3 before a step runs (the --seqgate binary does not exist, so any step would fail
// differently); a good config reaches the step and fails there.
func TestSweepRefusesBadConfigBeforeAnyStep(t *testing.T) {
	base := sweepFlags{rates: "10,20", axis: "rate", steps: 6, p99Max: 5000, maxDropped: 0.01, maxSlip: 20,
		refineSteps: 6, refineTime: 1e9, seqgate: "/nonexistent/seqgate", out: t.TempDir()}
	for _, c := range []struct {
		name string
		edit func(*sweepFlags)
		want string
	}{
		{"bad refine", func(f *sweepFlags) { f.refine = "200%" }, "--refine"},
		{"bad refine steps", func(f *sweepFlags) { f.refineSteps = 0 }, "--refine-steps"},
		{"run-arg out", func(f *sweepFlags) { f.runArgs = []string{"--out=x"} }, "sweep's --out"},
		{"run-arg set without value", func(f *sweepFlags) { f.runArgs = []string{"--set"} }, "value is missing"},
		{"bad set path", func(f *sweepFlags) { f.sets = []string{"load[7].rate=1"} }, `--set "load[7].rate=1"`},
		{"bad set value", func(f *sweepFlags) { f.sets = []string{"duration=forever"} }, "duration"},
		{"good config reaches the step", func(f *sweepFlags) { f.sets = []string{"pods.count=2"}; f.refine = "10%" }, "step 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := base
			c.edit(&f)
			err := runSweep(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, "../../scenarios/smoke.yaml", f)
			var xe *exitError
			if !errors.As(err, &xe) || xe.code != exitUnusable || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want exit %d naming %q", err, exitUnusable, c.want)
			}
		})
	}
}

// FuzzParseFraction: --refine is off, or a resolution strictly between 0 and 1, or an error naming
// the flag.
func FuzzParseFraction(f *testing.F) {
	for _, s := range []string{"", "10%", "0.1", "1e-3", "100%", "-1", "NaN", "Inf%", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseFraction(s)
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), "--refine") {
				t.Errorf("%q: error %q does not name the flag", s, err)
			}
		case s == "":
			if v != 0 {
				t.Errorf("empty: %g, want 0 (off)", v)
			}
		case !(v > 0 && v < 1):
			t.Errorf("%q: %g, not in (0, 1)", s, v)
		}
	})
}
