package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/threshold"
	"github.com/seqgate/seqgate/verifier"
)

type verifyFlags struct {
	jsonPath   string
	junitPath  string
	budget     float64
	budgetSet  bool // --budget given (0 is zero tolerance, not "unset")
	witnesses  int
	stats      bool
	decodeOnly bool
	thresholds []string // --threshold 'PATH: EXPR', repeatable
	slowest    int
}

func newVerifyCmd() *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify LEDGER...",
		Short: "Judge a run's ledger: loss, skips, stalls, leaks, latency, reorder against the budget",
		Long: `verify reads one run's ledger (several files of one run are merged; "-" is stdin; .gz is
gunzipped), computes every definition of docs/ledger-v1.md and prints the verdict first, then the
failed checks with their numbers, then the witnesses of each anomaly.

Exit codes: 0 pass, 1 fail (fail beats inconclusive), 2 inconclusive (no end record, an
interrupted run, no acked event, a promised audit that did not succeed, or a run that did not
drain), 3 unusable input.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.budgetSet = cmd.Flags().Changed("budget")
			return runVerify(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.jsonPath, "json", "", `write the summary JSON to PATH ("-" = stdout; the human summary then goes to stderr)`)
	fl.StringVar(&f.junitPath, "junit", "", "write JUnit XML (one testcase per check) to PATH")
	fl.Float64Var(&f.budget, "budget", 0, "loss budget; overrides the run record's budget, 0 = any loss fails (default: the run's, else 1e-4)")
	fl.IntVar(&f.witnesses, "witnesses", verifier.DefaultWitnesses, "witnesses kept per check (0 = none)")
	fl.StringArrayVar(&f.thresholds, "threshold", nil, `judge against this threshold too, 'PATH: EXPR' (repeatable), e.g. --threshold 'latency_ms.p99: < 500' --threshold 'per_tenant.tenant_2.timeout: == 0'; a path given here replaces the run record's expressions for that path, the run record's other thresholds still apply (docs/thresholds.md)`)
	fl.IntVar(&f.slowest, "slowest", verifier.DefaultSlowest, "keep the N slowest deliveries as witnesses (0 = none)")
	fl.BoolVar(&f.stats, "stats", false, "print records/s and peak RSS to stderr (for make bench)")
	fl.BoolVar(&f.decodeOnly, "decode-only", false, "only read and decode the ledger (the benchmark floor); implies --stats")
	_ = fl.MarkHidden("stats")
	_ = fl.MarkHidden("decode-only")
	return cmd
}

func runVerify(stdout, stderr io.Writer, args []string, f verifyFlags) error {
	if f.budgetSet && !(f.budget >= 0 && f.budget <= 1) {
		return &exitError{exitUnusable, fmt.Errorf("--budget %g: want a fraction in [0, 1]", f.budget)}
	}
	if f.witnesses < 0 {
		return &exitError{exitUnusable, fmt.Errorf("--witnesses %d: want >= 0", f.witnesses)}
	}
	if f.slowest < 0 {
		return &exitError{exitUnusable, fmt.Errorf("--slowest %d: want >= 0", f.slowest)}
	}
	given, err := parseThresholdFlags(f.thresholds)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	if os.Getenv("GOGC") == "" {
		// The verifier's heap is long-lived tables (mutations, audit rows) that hold no pointers, so
		// a GC cycle has little to mark and little garbage to find: a tight GC target keeps the heap
		// (and the memory the runtime retains for it) near what is live, at no measurable time cost.
		debug.SetGCPercent(20)
	}
	start := time.Now()
	r, err := ledger.Open(args...)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	defer r.Close()
	if f.decodeOnly {
		var n int64
		for {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return &exitError{exitUnusable, err}
			}
			n++
		}
		printStats(stderr, "decode-only", n, time.Since(start))
		return nil
	}
	opts := verifier.Options{Witnesses: f.witnesses, Thresholds: given, ThresholdsFrom: "--threshold", SlowestDeliveries: f.slowest}
	if f.slowest == 0 {
		opts.SlowestDeliveries = -1
	}
	if f.budgetSet {
		opts.Budget = &f.budget
	}
	if f.witnesses == 0 {
		opts.Witnesses = -1
	}
	s, err := verifier.Verify(r, opts)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	if f.stats {
		printStats(stderr, "verify", s.Records, time.Since(start))
	}
	human := stdout
	if f.jsonPath == "-" {
		human = stderr
	}
	if err := verifier.WriteText(human, s); err != nil {
		return &exitError{exitUnusable, err}
	}
	if f.jsonPath != "" {
		if err := writeTo(f.jsonPath, stdout, s, verifier.WriteJSON); err != nil {
			return &exitError{exitUnusable, fmt.Errorf("--json: %w", err)}
		}
	}
	if f.junitPath != "" {
		if err := writeTo(f.junitPath, stdout, s, verifier.WriteJUnit); err != nil {
			return &exitError{exitUnusable, fmt.Errorf("--junit: %w", err)}
		}
	}
	if code := verifier.ExitCode(s); code != exitPass {
		return &exitError{code: code}
	}
	return nil
}

// parseThresholdFlags turns --threshold 'PATH: EXPR' values into the thresholds field's form, checking
// each on its own so that an error names the flag value that caused it. The path is everything before
// the last colon (an expression has none), the expression everything after it.
func parseThresholdFlags(vals []string) (map[string][]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, v := range vals {
		i := strings.LastIndexByte(v, ':')
		if i < 0 {
			return nil, fmt.Errorf("--threshold %q: want 'PATH: EXPR', e.g. 'latency_ms.p99: < 500' or 'per_tenant.tenant_2.lost: == 0'", v)
		}
		path, expr := strings.TrimSpace(v[:i]), strings.TrimSpace(v[i+1:])
		if _, err := threshold.Parse(map[string][]string{path: {expr}}); err != nil {
			return nil, fmt.Errorf("--threshold %q: %w", v, err)
		}
		out[path] = append(out[path], expr)
	}
	return out, nil
}

func writeTo(path string, stdout io.Writer, s *verifier.Summary, write func(io.Writer, *verifier.Summary) error) error {
	if path == "-" {
		return write(stdout, s)
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh, s); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// printStats prints throughput, the CPU time (user + sys: on a shared machine it says more than the
// wall time) and the peak resident set size (VmHWM) of this process.
func printStats(w io.Writer, what string, n int64, d time.Duration) {
	fmt.Fprintf(w, "stats: %s records=%d seconds=%.3f records_per_s=%.0f cpu_seconds=%.3f peak_rss_mib=%.1f\n",
		what, n, d.Seconds(), float64(n)/d.Seconds(), cpuSeconds(), float64(peakRSSKiB())/1024)
}

// cpuSeconds is the user and system CPU time this process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func peakRSSKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kib int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kib)
			return kib
		}
	}
	return 0
}
