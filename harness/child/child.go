// Package child runs `seqgate run` as a child process for the commands that are made of many runs
// (power, sweep): each run is isolated in its own process group, dies with its parent, and on
// cancellation gets SIGINT so it heals its faults and stops its pods before it exits.
package child

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Result is how one child run ended.
type Result struct {
	Exit int           // the run's exit code (0 pass, 1 fail, 2 inconclusive, 3 could not complete)
	CPU  time.Duration // user+system CPU of the child and every descendant it waited for (pods, DB)
	Wall time.Duration
	// MachineBusy is the share of the machine's CPU time (all cores, every process) that was busy
	// while the run lasted, from /proc/stat; -1 where /proc/stat cannot be read.
	MachineBusy float64
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
		busy0, total0, statErr := cpuTimes()
		err = cmd.Run()
		res := Result{Wall: time.Since(start), MachineBusy: -1}
		if busy1, total1, err := cpuTimes(); err == nil && statErr == nil && total1 > total0 {
			res.MachineBusy = float64(busy1-busy0) / float64(total1-total0)
		}
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

// cpuTimes reads the machine's aggregate CPU counters (the "cpu" line of /proc/stat, in clock ticks):
// busy = everything but idle and iowait.
func cpuTimes() (busy, total uint64, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, errors.New("/proc/stat: empty")
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", sc.Text())
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %q: %w", f, err)
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, nil
}
