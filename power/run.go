package power

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/seqgate/seqgate/harness/child"
)

// Arm is one run of a pair: the defect on, or the correct build, for one seed.
type Arm struct {
	Seed    int64              `json:"seed"`
	Defect  string             `json:"defect,omitempty"` // empty: the correct build
	Exit    int                `json:"exit"`
	Verdict string             `json:"verdict"`
	Failed  []string           `json:"failed_checks"`
	Numbers map[string]float64 `json:"numbers"`
	Dir     string             `json:"dir"`
	Error   string             `json:"error,omitempty"`
	// OK is the arm's success: for a defect arm, the expected check failed; for a correct arm, a pass.
	OK bool `json:"ok"`
}

// Row is one defect across its seeds.
type Row struct {
	Defect   string   `json:"defect"`
	Scenario string   `json:"scenario"`
	Expect   []string `json:"expect"`
	Why      string   `json:"why"`
	Defected []Arm    `json:"defect_runs"`
	Correct  []Arm    `json:"correct_runs"`
}

// Result is the whole matrix with its two rates.
type Result struct {
	Seeds          int     `json:"seeds"`
	Rows           []Row   `json:"rows"`
	Detected       int     `json:"detected"`
	DefectRuns     int     `json:"defect_runs"`
	DetectionRate  float64 `json:"detection_rate"`
	FalseAlarms    int     `json:"false_alarms"`
	CorrectRuns    int     `json:"correct_runs"`
	FalseAlarmRate float64 `json:"false_alarm_rate"`
}

// Pass reports whether the gate has its teeth: every defect caught by its expected check on every
// seed, and every correct run passed.
func (r *Result) Pass() bool {
	return r.DefectRuns > 0 && r.Detected == r.DefectRuns && r.FalseAlarms == 0
}

// numbers are the summary values every arm shows (plus the paths of its failed thresholds).
var numbers = []string{"acked", "lost", "lost_by_reason.silent", "skipped", "undelivered", "leaks", "cold_wakeups",
	"spurious_resets", "duplicates", "latency_ms.p99"}

// Run measures the matrix for entries over seeds seeds, writing every run under out. progress gets one
// line per finished run. A run that cannot be started stops the whole measurement (the matrix would
// be incomplete); a run that ends with exit 3 is recorded (for a correct arm it is a false alarm).
func Run(ctx context.Context, m *Matrix, entries []Entry, seeds int, out string, run child.Func, progress io.Writer) (*Result, error) {
	if seeds < 1 {
		return nil, fmt.Errorf("--seeds %d: need at least 1", seeds)
	}
	res := &Result{Seeds: seeds}
	total, done := len(entries)*seeds*2, 0
	for _, e := range entries {
		src, err := os.ReadFile(m.ScenarioPath(e))
		if err != nil {
			return nil, err
		}
		var head struct {
			Seed int64 `yaml:"seed"`
		}
		if err := yaml.Unmarshal(src, &head); err != nil {
			return nil, fmt.Errorf("%s: %w", m.ScenarioPath(e), err)
		}
		row := Row{Defect: e.Defect, Scenario: e.Scenario, Expect: e.Expect, Why: e.Why}
		for i := range seeds {
			seed := head.Seed + int64(i)
			for _, defect := range []string{e.Defect, ""} {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				arm, err := runArm(ctx, src, seed, defect, e, out, run)
				if err != nil {
					return nil, fmt.Errorf("%s seed %d: %w", e.Defect, seed, err)
				}
				done++
				what := "correct build"
				if defect != "" {
					what = "defect on"
				}
				fmt.Fprintf(progress, "power: [%d/%d] %s seed %d, %s: %s%s -> %s\n", done, total, e.Defect, seed, what,
					arm.Verdict, failedList(arm.Failed), okWord(arm))
				if defect != "" {
					row.Defected = append(row.Defected, arm)
					res.DefectRuns++
					if arm.OK {
						res.Detected++
					}
				} else {
					row.Correct = append(row.Correct, arm)
					res.CorrectRuns++
					if !arm.OK {
						res.FalseAlarms++
					}
				}
			}
		}
		res.Rows = append(res.Rows, row)
	}
	if res.DefectRuns > 0 {
		res.DetectionRate = float64(res.Detected) / float64(res.DefectRuns)
	}
	if res.CorrectRuns > 0 {
		res.FalseAlarmRate = float64(res.FalseAlarms) / float64(res.CorrectRuns)
	}
	return res, nil
}

func runArm(ctx context.Context, src []byte, seed int64, defect string, e Entry, out string, run child.Func) (Arm, error) {
	arm := Arm{Seed: seed, Defect: defect}
	label := "correct"
	if defect != "" {
		label = "defect"
	}
	arm.Dir = filepath.Join(out, e.Defect, fmt.Sprintf("seed-%d", seed), label)
	if err := os.MkdirAll(filepath.Dir(arm.Dir), 0o755); err != nil {
		return arm, err
	}
	v, err := Variant(src, seed, defect)
	if err != nil {
		return arm, fmt.Errorf("%s: %w", e.Scenario, err)
	}
	scen := arm.Dir + ".yaml"
	if err := os.WriteFile(scen, v, 0o644); err != nil {
		return arm, err
	}
	cr, err := run(ctx, scen, arm.Dir)
	if err != nil {
		return arm, err
	}
	arm.Exit = cr.Exit
	if err := readSummary(arm.Dir, &arm); err != nil {
		arm.Verdict = "none"
		arm.Error = err.Error()
	}
	if defect != "" {
		arm.OK = Caught(e.Expect, arm.Failed)
	} else {
		arm.OK = arm.Exit == 0 && arm.Verdict == "pass"
	}
	return arm, nil
}

func readSummary(dir string, arm *Arm) error {
	sum, err := child.ReadSummary(dir)
	if sum != nil {
		arm.Verdict, arm.Failed = sum.Verdict, sum.Failed
	}
	if err != nil {
		return err
	}
	arm.Numbers = map[string]float64{}
	paths := numbers
	for _, f := range arm.Failed {
		if p, ok := strings.CutPrefix(f, "threshold:"); ok {
			if i := strings.IndexAny(p, "<>=@"); i > 0 {
				paths = append(paths, p[:i])
			}
		}
	}
	for _, p := range paths {
		if v, ok := sum.Number(p); ok {
			arm.Numbers[p] = v
		}
	}
	return nil
}

func failedList(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return " (" + strings.Join(f, ", ") + ")"
}

func okWord(a Arm) string {
	switch {
	case a.Defect != "" && a.OK:
		return "caught"
	case a.Defect != "":
		return "MISSED"
	case a.OK:
		return "no false alarm"
	}
	return "FALSE ALARM"
}
