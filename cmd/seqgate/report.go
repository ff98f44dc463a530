package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/report"
	"github.com/seqgate/seqgate/verifier"
)

type reportFlags struct {
	out       string
	summary   string
	witnesses int
	stats     bool
}

func newReportCmd() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report RUN_DIR|LEDGER...",
		Short: "Write report.html (verdict, witnesses, plots with fault bands, budget) and summary.md for a run",
		Long: `report reads one run's ledger in a single streaming pass and writes a self-contained report.html
(no network at view time) and summary.md beside it (for a CI job summary or a pull-request comment).

Given a run directory it reads its ledger (ledger.jsonl.gz) and its summary.json, and writes
RUN_DIR/report.html. Given ledger files it verifies them in the same pass (or takes the verdict from
--summary) and writes ./report.html. seqgate run writes both files into every run directory.

Exit codes: 0 the report was written (whatever the verdict), 3 unusable input. See docs/report.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "report page to write (default RUN_DIR/report.html, or ./report.html for ledger files); summary.md goes beside it")
	fl.StringVar(&f.summary, "summary", "", "take the verdict from this summary.json (default: RUN_DIR/summary.json; for ledger files: verify them in the same pass)")
	fl.IntVar(&f.witnesses, "witnesses", verifier.DefaultWitnesses, "witnesses kept per check when the ledger is verified here")
	fl.BoolVar(&f.stats, "stats", false, "print records/s and peak RSS to stderr")
	_ = fl.MarkHidden("stats")
	return cmd
}

func runReport(stdout, stderr io.Writer, args []string, f reportFlags) error {
	start := time.Now()
	if f.witnesses < 0 {
		return &exitError{exitUnusable, fmt.Errorf("--witnesses %d: want >= 0", f.witnesses)}
	}
	paths, out, summary := args, f.out, f.summary
	if len(args) == 1 {
		if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
			dir := args[0]
			ps, err := report.FindLedger(dir)
			if err != nil {
				return &exitError{exitUnusable, err}
			}
			paths = ps
			if out == "" {
				out = filepath.Join(dir, report.HTMLName)
			}
			if p := filepath.Join(dir, report.SummaryName); summary == "" {
				if _, err := os.Stat(p); err == nil {
					summary = p
				} else if !errors.Is(err, fs.ErrNotExist) {
					return &exitError{exitUnusable, err}
				}
			}
		}
	}
	if out == "" {
		out = report.HTMLName
	}
	var s *verifier.Summary
	var raw map[string][]json.RawMessage
	if summary != "" {
		var err error
		if s, raw, err = report.LoadSummary(summary); err != nil {
			return &exitError{exitUnusable, fmt.Errorf("--summary: %w", err)}
		}
	}
	opts := verifier.Options{Witnesses: f.witnesses}
	if f.witnesses == 0 {
		opts.Witnesses = -1
	}
	in, err := report.Build(paths, s, raw, opts)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	in.Data.OutboxRetention, in.Data.OutboxRetentionFrom = outboxRetention(filepath.Dir(paths[0]))
	if err := report.WriteFiles(out, in); err != nil {
		return &exitError{exitUnusable, err}
	}
	if f.stats {
		printStats(stderr, "report", in.Data.Records, time.Since(start))
	}
	fmt.Fprintf(stdout, "verdict: %s\nreport: %s\nsummary: %s\n", in.Summary.Verdict, out, filepath.Join(filepath.Dir(out), report.MarkdownName))
	return nil
}

// writeRunReport renders the report of a finished run into its directory. A report that cannot be
// written is reported on stderr and does not change the run's verdict.
func writeRunReport(stderr io.Writer, ledgerPath, dir string, s *verifier.Summary) {
	in, err := report.Build([]string{ledgerPath}, s, nil, verifier.Options{})
	if err == nil {
		in.Data.OutboxRetention, in.Data.OutboxRetentionFrom = outboxRetention(dir)
		err = report.WriteFiles(filepath.Join(dir, report.HTMLName), in)
	}
	if err != nil {
		fmt.Fprintf(stderr, "seqgate: report: %v (the verdict stands)\n", err)
	}
}

// outboxRetention is the pods' --outbox-retention as the run directory's scenario.yaml sets it
// (pods.eventlogd.flags), and where it was read; zero when the scenario sets none or there is no
// scenario beside the ledger (the report then uses eventlogd's default).
func outboxRetention(dir string) (time.Duration, string) {
	path := filepath.Join(dir, "scenario.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, ""
	}
	sc, err := scenario.Parse(path, b)
	if err != nil {
		return 0, ""
	}
	v, ok := sc.Pods.Eventlogd.Flags["outbox-retention"]
	if !ok {
		return 0, ""
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, ""
	}
	return d, "the run's pods.eventlogd.flags.outbox-retention"
}
