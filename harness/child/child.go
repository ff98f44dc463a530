// Package child runs `seqgate run` as a child process for the commands that are made of many runs
// (power, sweep): each run is isolated in its own process group, dies with its parent, and on
// cancellation gets SIGINT so it heals its faults and stops its pods before it exits.
package child

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Result is how one child run ended.
type Result struct {
	Exit int           // the run's exit code (0 pass, 1 fail, 2 inconclusive, 3 could not complete)
	CPU  time.Duration // user+system CPU of the child and every descendant it waited for (pods, DB)
	Wall time.Duration
}

// Func runs one scenario file into dir and reports how it ended; err is for a run that could not be
// started or was cancelled.
type Func func(ctx context.Context, scenario, dir string) (Result, error)

// Seqgate returns a Func that runs `bin run SCENARIO --out DIR [extra...]`, with the child's output in
// DIR/child.log.
func Seqgate(bin string, extra ...string) Func {
	return func(ctx context.Context, scenario, dir string) (Result, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Result{}, err
		}
		logf, err := os.Create(filepath.Join(dir, "child.log"))
		if err != nil {
			return Result{}, err
		}
		defer logf.Close()
		args := append([]string{"run", scenario, "--out", dir}, extra...)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = time.Minute
		start := time.Now()
		err = cmd.Run()
		res := Result{Wall: time.Since(start)}
		if ps := cmd.ProcessState; ps != nil {
			res.CPU = ps.UserTime() + ps.SystemTime()
		}
		var ee *exec.ExitError
		switch {
		case err == nil:
			return res, nil
		case ctx.Err() != nil:
			return res, ctx.Err()
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			res.Exit = ee.ExitCode()
			return res, nil
		}
		return res, err
	}
}
