package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/seqgate/seqgate/harness/child"
	"github.com/seqgate/seqgate/harness/infra"
	"github.com/seqgate/seqgate/internal/provenance"
	"github.com/seqgate/seqgate/power"
)

type powerFlags struct {
	matrix  string
	defects string
	seeds   int
	out     string
	ci      bool
	seqgate string
	sets    []string
	dsn     string
}

func newPowerCmd() *cobra.Command {
	var f powerFlags
	cmd := &cobra.Command{
		Use:   "power",
		Short: "Measure the gate's teeth: every seeded defect against its exposing scenario, and the correct build beside it, over N seeds",
		Long: `power runs, for each defect of the matrix (scenarios/power/matrix.yaml), its exposing scenario with
the defect switched on (eventlogd --defect) and the same scenario on the correct build, once per seed
(the scenario's own seed, then seed+1, ...). Every run is a full 'seqgate run' into its own directory
under --out. It prints and writes power.json and power.md: per defect and seed, whether the expected
check caught the defect, the checks that failed and their numbers, and whether the correct build
passed; the detection and false-alarm rates at the bottom.

Exit 0 only when every defect is caught by its expected check on every seed and every correct run
passes; 1 otherwise; 3 when the matrix or a flag is unusable or a run could not be started.
See docs/power.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPower(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.matrix, "matrix", "scenarios/power/matrix.yaml", "the matrix file: defect, exposing scenario, expected check(s)")
	fl.StringVar(&f.defects, "defects", "", "comma-separated defects or controls to run (default: all of the matrix)")
	fl.IntVar(&f.seeds, "seeds", 3, "seeds per defect (each seed runs the defect and the correct build)")
	fl.StringVar(&f.out, "out", "", "output directory (default runs/power-<UTC time>)")
	fl.BoolVar(&f.ci, "ci", false, "only the defects the matrix marks ci: true (the fast subset CI runs)")
	fl.StringVar(&f.seqgate, "seqgate", "", "the seqgate binary each run uses (default: this one)")
	fl.StringVar(&f.dsn, "dsn", "", "run every scenario on this existing MySQL-compatible server (as seqgate run --dsn, e.g. 'root@tcp(127.0.0.1:4000)/' for a TiDB) instead of a private server per run: the gate's teeth on that server")
	fl.StringArrayVar(&f.sets, "set", nil, "override a field of every run's scenario, PATH=VALUE (repeatable, as seqgate run --set), e.g. --set pods.eventlogd.flags.event-commit=grouped; not seed or pods.eventlogd.defect, which power varies")
	return cmd
}

func runPower(ctx context.Context, stdout, stderr io.Writer, f powerFlags) error {
	if err := power.CheckSets(f.sets); err != nil {
		return &exitError{exitUnusable, err}
	}
	m, err := power.ReadMatrix(f.matrix)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	var names []string
	if f.defects != "" {
		for _, n := range strings.Split(f.defects, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	sel, err := m.Select(names, f.ci)
	if err != nil {
		return &exitError{exitUnusable, fmt.Errorf("--defects: %w", err)}
	}
	var runArgs []string
	if f.dsn != "" {
		if _, err := infra.ParseDSN(f.dsn); err != nil {
			return &exitError{exitUnusable, err}
		}
		runArgs = append(runArgs, "--dsn="+f.dsn)
	}
	if f.seeds < 1 {
		return &exitError{exitUnusable, fmt.Errorf("--seeds %d: need at least 1", f.seeds)}
	}

	bin := f.seqgate
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return &exitError{exitUnusable, err}
		}
	}
	out := f.out
	if out == "" {
		out = filepath.Join("runs", "power-"+time.Now().UTC().Format("20060102T150405"))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return &exitError{exitUnusable, err}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(stderr, "power: %d defect(s) x %d seed(s) x 2 builds and %d control(s) = %d runs into %s\n",
		len(sel.Defects), f.seeds, len(sel.Controls), power.Runs(sel, f.seeds), out)
	res, err := power.Run(ctx, power.Options{Matrix: m, Selection: sel, Seeds: f.seeds, Sets: f.sets, Out: out,
		DB: provenance.RedactDSN(f.dsn), Run: child.Seqgate(bin, runArgs...), Progress: stderr})
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	for name, write := range map[string]func(io.Writer, *power.Result) error{"power.json": power.WriteJSON, "power.md": power.WriteMarkdown} {
		if err := writeAny(filepath.Join(out, name), res, write); err != nil {
			return &exitError{exitUnusable, err}
		}
	}
	if err := power.WriteMarkdown(stdout, res); err != nil {
		return &exitError{exitUnusable, err}
	}
	fmt.Fprintf(stdout, "power: matrix in %s\n", out)
	if !res.Pass() {
		return &exitError{exitFail, errors.New("the gate missed a defect or failed a correct build (see the matrix)")}
	}
	return nil
}
