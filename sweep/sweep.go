package sweep

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/seqgate/seqgate/harness/child"
	"github.com/seqgate/seqgate/harness/scenario"
)

// Plan is one sweep: the scenario, the axis, its values and the SLIs beyond the scenario's own.
type Plan struct {
	Scenario string // the scenario file
	Axis     Axis
	Values   []float64
	Group    string // the tenant group of AxisTenants (empty: the first one with load)
	Limits   Limits
	// Sets are --set assignments written into every step file before the axis's own (the same code as
	// `seqgate run --set`); RunArgs are the arguments every step's run gets, recorded in the result.
	Sets    []string
	RunArgs []string
	// FoldedRunArgs are the --run-args, as given, that were overrides and are already in Sets (recorded).
	FoldedRunArgs []string
	// Refine, when > 0, bisects the axis between the last value that held and the first that broke
	// until they are within this fraction of each other (0.1: 10%), running at most RefineSteps more
	// steps (default 6) and starting none after RefineTime (default 1h) has passed since the pass began.
	Refine      float64
	RefineSteps int
	RefineTime  time.Duration
	// Now is the clock of the refine pass's time bound (nil: time.Now).
	Now func() time.Time
}

// Default bounds of the refine pass.
const (
	DefaultRefineSteps = 6
	DefaultRefineTime  = time.Hour
)

// Result is the capacity table with its conclusions.
type Result struct {
	Config    Config   `json:"config"`
	Scenario  string   `json:"scenario"`
	Axis      Axis     `json:"axis"`
	Steps     []Step   `json:"steps"`
	Held      float64  `json:"held"` // the highest axis value whose step held every SLI (0: none)
	HeldAcked float64  `json:"held_acked_per_s"`
	BrokeAt   float64  `json:"broke_at"` // the first value that broke an SLI (0: none broke)
	BrokeBy   []string `json:"broke_by,omitempty"`
	Harness   string   `json:"harness_limit,omitempty"` // set when the breaking step may be the harness's limit
	Fit       *USL     `json:"usl,omitempty"`
	FitError  string   `json:"usl_error,omitempty"`
	FitLoad   string   `json:"usl_load"`          // what N is in the fit
	Refined   string   `json:"refined,omitempty"` // how the refine pass ended (empty: it did not run)
}

// Run executes the plan step by step into out, stopping after the first step that breaks an SLI, then
// (with Refine) bisects between the last value that held and the first that broke.
func Run(ctx context.Context, p Plan, out string, run child.Func, progress io.Writer) (*Result, error) {
	src, err := os.ReadFile(p.Scenario)
	if err != nil {
		return nil, err
	}
	if _, err := scenario.Parse(p.Scenario, src); err != nil {
		return nil, err
	}
	base, err := scenario.Override(src, p.Sets)
	if err != nil {
		return nil, err
	}
	sc, err := scenario.Parse(p.Scenario+" (with --set)", base)
	if err != nil {
		return nil, err
	}
	if p.Refine < 0 || p.Refine >= 1 || math.IsNaN(p.Refine) {
		return nil, fmt.Errorf("refine %g: want a fraction in (0, 1), e.g. 0.1 for 10%%", p.Refine)
	}
	if p.RefineSteps <= 0 {
		p.RefineSteps = DefaultRefineSteps
	}
	if p.RefineTime <= 0 {
		p.RefineTime = DefaultRefineTime
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	res := &Result{Scenario: p.Scenario, Axis: p.Axis, FitLoad: "mean mutations in flight"}
	res.Config = Config{Scenario: p.Scenario, ScenarioSHA256: hashHex(src), Seed: sc.Seed, Pods: sc.Pods.Count,
		Budget: sc.Budget, Axis: p.Axis, Values: p.Values, Group: p.Group, Sets: append([]string{}, p.Sets...),
		RunArgs: append([]string{}, p.RunArgs...), FoldedRunArgs: append([]string{}, p.FoldedRunArgs...), Limits: p.Limits}
	if p.Refine > 0 {
		res.Config.Refine, res.Config.RefineSteps, res.Config.RefineSeconds = p.Refine, p.RefineSteps, p.RefineTime.Seconds()
	}
	if p.Axis == AxisPods {
		res.FitLoad = "pods"
	}
	total := len(p.Values)
	step := func(v float64, refine bool) (Step, error) {
		i := len(res.Steps)
		if err := ctx.Err(); err != nil {
			return Step{}, err
		}
		sets, err := Sets(sc, p.Axis, v, p.Group)
		if err != nil {
			return Step{}, err
		}
		variant, err := scenario.Override(base, sets)
		if err != nil {
			return Step{}, err
		}
		if _, err := scenario.Parse(fmt.Sprintf("%s (step %d)", p.Scenario, i+1), variant); err != nil {
			return Step{}, err
		}
		st := Step{Index: i + 1, Value: v, Refine: refine, Sets: sets, Dir: filepath.Join(out, fmt.Sprintf("step-%02d", i+1))}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return Step{}, err
		}
		scen := st.Dir + ".yaml"
		st.File = scen
		if err := os.WriteFile(scen, variant, 0o644); err != nil {
			return Step{}, err
		}
		what := fmt.Sprintf("%d/%d", i+1, total)
		if refine {
			what = fmt.Sprintf("%d (refine)", i+1)
		}
		fmt.Fprintf(progress, "sweep: step %s, %s %g: running (%s)\n", what, p.Axis, v, st.Dir)
		cr, err := run(ctx, scen, st.Dir)
		if err != nil {
			return Step{}, fmt.Errorf("step %d (%s %g): %w", i+1, p.Axis, v, err)
		}
		st.Exit = cr.Exit
		st.MachineBusy = cr.MachineBusy
		if cr.Wall > 0 {
			st.CPUCores = cr.CPU.Seconds() / cr.Wall.Seconds()
		}
		if err := measure(&st, p.Limits); err != nil {
			st.Verdict = "none"
			st.Broke = append(st.Broke, "the run did not complete: "+err.Error())
		}
		res.Steps = append(res.Steps, st)
		fmt.Fprintf(progress, "sweep: step %d: offered %.0f/s acked %.0f/s p99 %.0f ms lost %g dropped %.1f%% cpu %.2f cores (machine %.0f%% busy) ran out: %s, slip p99 %.1f ms -> %s\n",
			i+1, st.OfferedPerS, st.AckedPerS, st.P99Ms, st.Lost, 100*st.DroppedFrac, st.CPUCores, 100*st.MachineBusy, st.RanOut, st.SlipP99Ms, stepWord(st))
		return st, nil
	}
	for _, v := range p.Values {
		st, err := step(v, false)
		if err != nil {
			return nil, err
		}
		if len(st.Broke) > 0 {
			res.BrokeAt, res.BrokeBy, res.Harness = v, st.Broke, st.Harness
			break
		}
		res.Held, res.HeldAcked = v, st.AckedPerS
	}
	if p.Refine > 0 && res.Held > 0 && res.BrokeAt > 0 {
		if err := refine(ctx, p, res, step, progress); err != nil {
			return nil, err
		}
	}
	var n, x []float64
	for _, st := range res.Steps {
		if st.Verdict == "none" {
			continue
		}
		load := st.Concurrency
		if p.Axis == AxisPods {
			load = st.Value
		}
		n, x = append(n, load), append(x, st.AckedPerS)
	}
	if u, err := FitUSL(n, x); err == nil {
		res.Fit = &u
	} else {
		res.FitError = err.Error()
	}
	return res, nil
}

// refine bisects between res.Held and res.BrokeAt until the gap is within p.Refine of the value that
// held (or, on a whole-number axis, the two are adjacent), within p.RefineSteps steps and p.RefineTime.
// Each step moves one end: a held step raises Held, a broken one lowers BrokeAt.
func refine(ctx context.Context, p Plan, res *Result, step func(float64, bool) (Step, error), progress io.Writer) error {
	whole := p.Axis != AxisRate
	began := p.Now()
	for n := 0; ; n++ {
		lo, hi := res.Held, res.BrokeAt
		mid := (lo + hi) / 2
		if whole {
			mid = math.Floor(mid)
		}
		switch {
		case (hi-lo)/lo <= p.Refine || mid <= lo:
			res.Refined = fmt.Sprintf("the knee is between %g and %g (within %g%%)", lo, hi, 100*p.Refine)
			return nil
		case n >= p.RefineSteps:
			res.Refined = fmt.Sprintf("stopped after %d refine steps (the bound): the knee is between %g and %g, wider than %g%%", n, lo, hi, 100*p.Refine)
			return nil
		case p.Now().Sub(began) >= p.RefineTime:
			res.Refined = fmt.Sprintf("stopped after %s (the refine pass's time bound, %d steps): the knee is between %g and %g, wider than %g%%",
				p.Now().Sub(began).Round(time.Second), n, lo, hi, 100*p.Refine)
			return nil
		}
		fmt.Fprintf(progress, "sweep: refine between %g and %g\n", lo, hi)
		st, err := step(mid, true)
		if err != nil {
			return err
		}
		if len(st.Broke) > 0 {
			res.BrokeAt, res.BrokeBy, res.Harness = mid, st.Broke, st.Harness
		} else {
			res.Held, res.HeldAcked = mid, st.AckedPerS
		}
	}
}

func stepWord(st Step) string {
	switch {
	case len(st.Broke) > 0 && st.Harness != "":
		return fmt.Sprintf("BROKE %v (but %s)", st.Broke, st.Harness)
	case len(st.Broke) > 0:
		return fmt.Sprintf("BROKE %v", st.Broke)
	case st.Harness != "":
		return "held (note: " + st.Harness + ")"
	}
	return "held"
}
