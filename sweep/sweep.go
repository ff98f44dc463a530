package sweep

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
}

// Result is the capacity table with its conclusions.
type Result struct {
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
	FitLoad   string   `json:"usl_load"` // what N is in the fit
}

// Run executes the plan step by step into out, stopping after the first step that breaks an SLI.
func Run(ctx context.Context, p Plan, out string, run child.Func, progress io.Writer) (*Result, error) {
	src, err := os.ReadFile(p.Scenario)
	if err != nil {
		return nil, err
	}
	sc, err := scenario.Parse(p.Scenario, src)
	if err != nil {
		return nil, err
	}
	res := &Result{Scenario: p.Scenario, Axis: p.Axis, FitLoad: "mean mutations in flight"}
	if p.Axis == AxisPods {
		res.FitLoad = "pods"
	}
	for i, v := range p.Values {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sets, err := Sets(sc, p.Axis, v, p.Group)
		if err != nil {
			return nil, err
		}
		variant, err := scenario.Override(src, sets)
		if err != nil {
			return nil, err
		}
		if _, err := scenario.Parse(fmt.Sprintf("%s (step %d)", p.Scenario, i+1), variant); err != nil {
			return nil, err
		}
		st := Step{Index: i + 1, Value: v, Dir: filepath.Join(out, fmt.Sprintf("step-%02d", i+1))}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, err
		}
		scen := st.Dir + ".yaml"
		if err := os.WriteFile(scen, variant, 0o644); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "sweep: step %d/%d, %s %g: running (%s)\n", i+1, len(p.Values), p.Axis, v, st.Dir)
		cr, err := run(ctx, scen, st.Dir)
		if err != nil {
			return nil, fmt.Errorf("step %d (%s %g): %w", i+1, p.Axis, v, err)
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
		fmt.Fprintf(progress, "sweep: step %d: offered %.0f/s acked %.0f/s p99 %.0f ms lost %g dropped %.1f%% cpu %.2f cores (machine %.0f%% busy) slip p99 %.1f ms -> %s\n",
			i+1, st.OfferedPerS, st.AckedPerS, st.P99Ms, st.Lost, 100*st.DroppedFrac, st.CPUCores, 100*st.MachineBusy, st.SlipP99Ms, stepWord(st))
		if len(st.Broke) > 0 {
			res.BrokeAt, res.BrokeBy, res.Harness = v, st.Broke, st.Harness
			break
		}
		res.Held, res.HeldAcked = v, st.AckedPerS
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
