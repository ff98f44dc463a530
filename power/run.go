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

// ControlRow is one control across its seeds: correct-build runs only.
type ControlRow struct {
	Control  string `json:"control"`
	Scenario string `json:"scenario"`
	Why      string `json:"why"`
	Runs     []Arm  `json:"runs"`
}

// Result is the whole matrix with its two rates.
type Result struct {
	Seeds int `json:"seeds"`
	// Sets are the scenario overrides every run had (PATH=VALUE, as seqgate run --set).
	Sets []string `json:"sets,omitempty"`
	// DB is the existing server every run used (seqgate power --dsn, its password redacted); empty:
	// each run started its own private server.
	DB             string       `json:"db,omitempty"`
	Rows           []Row        `json:"rows"`
	Controls       []ControlRow `json:"controls,omitempty"`
	Detected       int          `json:"detected"`
	DefectRuns     int          `json:"defect_runs"`
	DetectionRate  float64      `json:"detection_rate"`
	FalseAlarms    int          `json:"false_alarms"`
	CorrectRuns    int          `json:"correct_runs"`
	FalseAlarmRate float64      `json:"false_alarm_rate"`
}

// Pass reports whether the gate has its teeth: every defect caught by its expected check on every
// seed, and every correct run (a defect's or a control's) passed.
func (r *Result) Pass() bool {
	return r.DefectRuns+r.CorrectRuns > 0 && r.Detected == r.DefectRuns && r.FalseAlarms == 0
}

// numbers are the summary values every arm shows (plus the paths of its failed thresholds).
var numbers = []string{"acked", "lost", "lost_by_reason.silent", "skipped", "undelivered", "leaks", "cold_wakeups",
	"spurious_resets", "duplicates", "latency_ms.p99"}

// Options say what Run measures, how it runs one scenario and where it writes.
type Options struct {
	Matrix    *Matrix    // the defect matrix the selection comes from (its scenarios are read from its directory)
	Selection Selection  // the defects and controls to measure
	Seeds     int        // seeds per arm, at least 1 (a control with its own seeds runs those)
	Sets      []string   // key=value overrides applied to every run's scenario (--set)
	DB        string     // the existing server the runs use, for the result (Run passes it on); "" private
	Out       string     // the directory every run is written under
	Run       child.Func // runs one scenario file into its directory (a `seqgate run` child)
	Progress  io.Writer  // one line per finished run
}

// Run measures o.Selection over o.Seeds seeds, writing every run under o.Out. A run that cannot be
// started stops the whole measurement (the matrix would be incomplete); a run that ends with exit 3
// is recorded (for a correct arm it is a false alarm).
func Run(ctx context.Context, o Options) (*Result, error) {
	m, sel, seeds, progress := o.Matrix, o.Selection, o.Seeds, o.Progress
	if seeds < 1 {
		return nil, fmt.Errorf("--seeds %d: need at least 1", seeds)
	}
	res := &Result{Seeds: seeds, Sets: o.Sets, DB: o.DB} // sets are checked by Variant before the first run
	total, done := Runs(sel, seeds), 0
	step := func(name string, seed int64, arm Arm) {
		done++
		what := "correct build"
		if arm.Defect != "" {
			what = "defect on"
		}
		fmt.Fprintf(progress, "power: [%d/%d] %s seed %d, %s: %s%s -> %s\n", done, total, name, seed, what,
			arm.Verdict, failedList(arm.Failed), okWord(arm))
		switch {
		case arm.Defect != "":
			res.DefectRuns++
			if arm.OK {
				res.Detected++
			}
		default:
			res.CorrectRuns++
			if !arm.OK {
				res.FalseAlarms++
			}
		}
	}
	for _, e := range sel.Defects {
		src, first, err := readScenario(m, e.Scenario)
		if err != nil {
			return nil, err
		}
		row := Row{Defect: e.Defect, Scenario: e.Scenario, Expect: e.Expect, Why: e.Why}
		for i := range seeds {
			seed := first + int64(i)
			for _, defect := range []string{e.Defect, ""} {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				arm, err := runArm(ctx, armSpec{src: src, scenario: e.Scenario, name: e.Defect, seed: seed, defect: defect}, o)
				if err != nil {
					return nil, fmt.Errorf("%s seed %d: %w", e.Defect, seed, err)
				}
				if defect != "" {
					arm.OK = Caught(e.Expect, arm.Failed)
					row.Defected = append(row.Defected, arm)
				} else {
					row.Correct = append(row.Correct, arm)
				}
				step(e.Defect, seed, arm)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	for _, c := range sel.Controls {
		src, first, err := readScenario(m, c.Scenario)
		if err != nil {
			return nil, err
		}
		row := ControlRow{Control: c.Name, Scenario: c.Scenario, Why: c.Why}
		for i := range controlSeeds(c, seeds) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			seed := first + int64(i)
			arm, err := runArm(ctx, armSpec{src: src, scenario: c.Scenario, name: c.Name, seed: seed}, o)
			if err != nil {
				return nil, fmt.Errorf("%s seed %d: %w", c.Name, seed, err)
			}
			row.Runs = append(row.Runs, arm)
			step(c.Name, seed, arm)
		}
		res.Controls = append(res.Controls, row)
	}
	if res.DefectRuns > 0 {
		res.DetectionRate = float64(res.Detected) / float64(res.DefectRuns)
	}
	if res.CorrectRuns > 0 {
		res.FalseAlarmRate = float64(res.FalseAlarms) / float64(res.CorrectRuns)
	}
	return res, nil
}

// Runs is how many runs measuring sel over seeds seeds takes.
func Runs(sel Selection, seeds int) int {
	n := len(sel.Defects) * seeds * 2
	for _, c := range sel.Controls {
		n += controlSeeds(c, seeds)
	}
	return n
}

func controlSeeds(c Control, seeds int) int {
	if c.Seeds > 0 {
		return c.Seeds
	}
	return seeds
}

// readScenario returns a matrix scenario's text and its own seed (the first seed power runs).
func readScenario(m *Matrix, name string) ([]byte, int64, error) {
	path := m.scenarioPath(name)
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var head struct {
		Seed int64 `yaml:"seed"`
	}
	if err := yaml.Unmarshal(src, &head); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return src, head.Seed, nil
}

// armSpec is one run of the measurement: a matrix scenario's text, the seed and the defect.
type armSpec struct {
	src      []byte // the scenario's text
	scenario string // its file name in the matrix directory, for errors
	name     string // the defect or control the run belongs to: its directory under Options.Out
	seed     int64
	defect   string // the defect switched on; empty for the correct build
}

// runArm runs a's scenario with o.Sets, its seed and defect into o.Out/name/seed-N/{defect,correct}.
// A correct arm is OK when it passed; the caller judges a defect arm.
func runArm(ctx context.Context, a armSpec, o Options) (Arm, error) {
	arm := Arm{Seed: a.seed, Defect: a.defect}
	label := "correct"
	if a.defect != "" {
		label = "defect"
	}
	arm.Dir = filepath.Join(o.Out, a.name, fmt.Sprintf("seed-%d", a.seed), label)
	if err := os.MkdirAll(filepath.Dir(arm.Dir), 0o755); err != nil {
		return arm, err
	}
	v, err := Variant(a.src, a.seed, a.defect, o.Sets...)
	if err != nil {
		return arm, fmt.Errorf("%s: %w", a.scenario, err)
	}
	scen := arm.Dir + ".yaml"
	if err := os.WriteFile(scen, v, 0o644); err != nil {
		return arm, err
	}
	cr, err := o.Run(ctx, scen, arm.Dir)
	if err != nil {
		return arm, err
	}
	arm.Exit = cr.Exit
	if err := readSummary(arm.Dir, &arm); err != nil {
		arm.Verdict = "none"
		arm.Error = err.Error()
	}
	arm.OK = a.defect == "" && arm.Exit == 0 && arm.Verdict == "pass"
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
