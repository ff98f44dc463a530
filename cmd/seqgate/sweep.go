package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/seqgate/seqgate/harness/child"
	"github.com/seqgate/seqgate/sweep"
)

type sweepFlags struct {
	rates, ramp, axis, group, out, seqgate, refine string
	steps, refineSteps                             int
	refineTime                                     time.Duration
	p99Max, maxDropped, maxSlip                    float64
	runArgs, sets                                  []string
}

func newSweepCmd() *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep SCENARIO",
		Short: "Capacity planning: rerun a scenario at increasing load until an SLI breaks; capacity table, plot and a USL fit",
		Long: `sweep reruns SCENARIO at increasing load, each step a full verified 'seqgate run' into its own
directory, and stops after the first step that breaks an SLI: the scenario's verdict (its thresholds,
the loss budget), --p99-max, or more than --max-dropped of the arrivals the open model could not send.
The swept axis is the total offered rate (--axis rate: every load block is scaled by one factor), the
number of pods (--axis pods) or the tenants of one group (--axis tenants, --group). Each step also
records the harness's own limits (its schedule slip, the CPU of the whole run); a step where the
harness may have been the limit says so instead of blaming the service. --set overrides go into every
step file (DIR/step-NN.yaml), so a step reruns by hand on the same system; --refine bisects between
the last step that held and the first that broke.

It prints and writes sweep.md (the capacity table and its conclusion), sweep.json and sweep.svg
(throughput and latency against the axis, the highest value that held marked), and fits the
Universal Scalability Law to the steps. Exit 0 when the sweep ran (whatever it found), 3 when a flag
or the scenario is unusable or a step could not be started. See docs/sweep.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSweep(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.rates, "rates", "", "step values, increasing, e.g. 100,200,400 (offered mutations/s for --axis rate)")
	fl.StringVar(&f.ramp, "ramp", "", "geometric steps START:FACTOR, e.g. 100:2 (with --steps)")
	fl.IntVar(&f.steps, "steps", 6, "number of --ramp steps (at most 32)")
	fl.StringVar(&f.axis, "axis", "rate", "what to sweep: rate, pods or tenants")
	fl.StringVar(&f.group, "group", "", "with --axis tenants: the tenant group to grow (default: the first group with load)")
	fl.Float64Var(&f.p99Max, "p99-max", 5000, "delivery p99 in ms above which a step breaks (0: only the scenario's thresholds)")
	fl.Float64Var(&f.maxDropped, "max-dropped", 0.01, "fraction of arrivals the open model could not send above which a step breaks")
	fl.Float64Var(&f.maxSlip, "max-slip", 20, "the harness's p99 schedule slip in ms above which a step is marked harness-limited")
	fl.StringVar(&f.out, "out", "", "output directory (default runs/sweep-<scenario>-<UTC time>)")
	fl.StringVar(&f.seqgate, "seqgate", "", "the seqgate binary each step runs (default: this one)")
	fl.StringArrayVar(&f.runArgs, "run-arg", nil, "an argument passed to every step's 'seqgate run' (repeatable), e.g. --run-arg=--target=http://127.0.0.1:8080; a --set, --seed or --duration given this way is written into the step files instead")
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario field in every step file, PATH=VALUE (repeatable, as 'seqgate run --set'), e.g. --set pods.count=3")
	fl.StringVar(&f.refine, "refine", "", "after the first step that broke, bisect between it and the last that held until they are within this fraction, e.g. 10% or 0.1 (default off)")
	fl.IntVar(&f.refineSteps, "refine-steps", sweep.DefaultRefineSteps, "at most this many refine steps")
	fl.DurationVar(&f.refineTime, "refine-time", sweep.DefaultRefineTime, "start no refine step after the refine pass has run this long")
	return cmd
}

func runSweep(ctx context.Context, stdout, stderr io.Writer, path string, f sweepFlags) error {
	values, err := sweep.ParseValues(f.rates, f.ramp, f.steps)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	axis := sweep.Axis(f.axis)
	switch axis {
	case sweep.AxisRate, sweep.AxisPods, sweep.AxisTenants:
	default:
		return &exitError{exitUnusable, fmt.Errorf("--axis %q: want rate, pods or tenants", f.axis)}
	}
	if f.maxDropped < 0 || f.maxDropped > 1 || f.p99Max < 0 || f.maxSlip < 0 {
		return &exitError{exitUnusable, fmt.Errorf("--max-dropped must be in [0, 1], --p99-max and --max-slip >= 0")}
	}
	refine, err := parseFraction(f.refine)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	if f.refineSteps < 1 || f.refineSteps > maxRefineSteps || f.refineTime <= 0 {
		return &exitError{exitUnusable, fmt.Errorf("--refine-steps %d, --refine-time %s: want 1..%d steps and a positive time", f.refineSteps, f.refineTime, maxRefineSteps)}
	}
	argSets, runArgs, err := sweep.SplitRunArgs(f.runArgs)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	sets := append(append([]string{}, f.sets...), argSets...)
	bin := f.seqgate
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return &exitError{exitUnusable, err}
		}
	}
	out := f.out
	if out == "" {
		base := filepath.Base(path)
		out = filepath.Join("runs", fmt.Sprintf("sweep-%s-%s", base[:len(base)-len(filepath.Ext(base))], time.Now().UTC().Format("20060102T150405")))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	plan := sweep.Plan{Scenario: path, Axis: axis, Values: values, Group: f.group,
		Limits: sweep.Limits{P99Ms: f.p99Max, MaxDropped: f.maxDropped, MaxSlipMs: f.maxSlip, Cores: runtime.NumCPU()},
		Sets:   sets, RunArgs: runArgs, FoldedRunArgs: sweep.FoldedRunArgs(f.runArgs), Refine: refine, RefineSteps: f.refineSteps, RefineTime: f.refineTime}
	fmt.Fprintf(stderr, "sweep: %s over %s %v into %s\n", path, axis, values, out)
	res, err := sweep.Run(ctx, plan, out, child.Seqgate(bin, runArgs...), stderr)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	for name, write := range map[string]func(io.Writer, *sweep.Result) error{"sweep.md": sweep.WriteMarkdown, "sweep.json": sweep.WriteJSON, "sweep.svg": sweep.WriteSVG} {
		if err := writeAny(filepath.Join(out, name), res, write); err != nil {
			return &exitError{exitUnusable, err}
		}
	}
	if err := sweep.WriteMarkdown(stdout, res); err != nil {
		return &exitError{exitUnusable, err}
	}
	fmt.Fprintf(stdout, "sweep: table, plot and fit in %s\n", out)
	return nil
}

// maxRefineSteps bounds --refine-steps: each step is a full run.
const maxRefineSteps = 16

// parseFraction reads --refine: "" (off), a percentage ("10%") or a fraction ("0.1"), in (0, 1).
func parseFraction(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(num, 64)
	if pct {
		v /= 100
	}
	if err != nil || !(v > 0 && v < 1) {
		return 0, fmt.Errorf("--refine %q: want a resolution such as 10%% or 0.1 (above 0, below 100%%)", s)
	}
	return v, nil
}

func writeAny[T any](path string, v T, write func(io.Writer, T) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh, v); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
