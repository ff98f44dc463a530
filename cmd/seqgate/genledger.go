package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier/synth"
)

type genLedgerFlags struct {
	cfg   synth.Config
	out   string
	truth string
	quiet bool
}

func newGenLedgerCmd() *cobra.Command {
	var f genLedgerFlags
	cmd := &cobra.Command{
		Use:   "gen-ledger",
		Short: "Write a synthetic ledger with exactly the anomalies asked for, and its ground truth",
		Long: `gen-ledger writes a realistic ledger v1 (docs/ledger-v1.md): a run of tenants (dedicated and
shared, some cold) and pods, writers' mutations spread over time, every consumer's connections and
deliveries, drop-counter metrics, DB proxy counters, the final audit, consumer summaries and the end.
Each anomaly flag injects exactly that many instances under the spec's definitions, nothing else:

  --lost K             acked, never persisted; a retry_dropped_total{tenant_id,reason} counter on the
                       acking pod rises by one for each (reasons tenant_cap, global_cap, expired in turn)
  --silent K           acked, never persisted, no counter explains it (and its pod never crashes)
  --crash-loss K       acked by the last pod, never persisted; that pod then crashes (pod crash record)
  --skipped K          a persisted event one consumer's cursor passed without delivering it
  --undelivered K      persisted events beyond a consumer's final cursor (its stream stalls at the end)
  --duplicates K       an event delivered twice to one consumer
  --leaks K            a consumer receives the path of another tenant's mutation
  --unexpected K       a consumer receives a path no mutation wrote
  --seq-mismatch K     a consumer receives an event in a frame carrying its previous seq
  --masked-skips K     a consumer misses an event; a frame at its seq carries a path no mutation wrote
  --reorder K          an event delivered after the next one, which was sent after its ack (overtaken)
  --recovered K        a mutation that timed out but whose event persisted and was delivered
  --seq-too-old K      an event one consumer missed, then a seq_too_old reset (reset-covered)
  --spurious-resets K  a seq_too_old reset that jumps the cursor over a row still in the audit
  --cold N             the last N tenants are cold: no writers; their DB proxy counters stay flat
  --cold-wakeups K     K of the cold tenants' DB proxies see traffic mid-run (a cold wakeup each)
  --idle-tenants N     N more tenants with no records at all; every tenant is then named in tenant
                       records after the run record instead of the run record's tenants list

--events is the number of acked event-producing mutations (the summary's "acked"); about 3% more
mutations are structural, silent (chmod) or ambiguous (err/timeout, nothing persisted). The ledger goes
to stdout or --out (gzip when the name ends in .gz); the truth JSON to --truth, by default
OUT.truth.json beside --out (none for stdout). The same flags and seed give the same bytes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGenLedger(cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	c := &f.cfg
	fl.Int64Var(&c.Seed, "seed", 1, "random seed")
	fl.IntVar(&c.Tenants, "tenants", 4, "tenants (cold ones included)")
	fl.IntVar(&c.ConsumersPerTenant, "consumers-per-tenant", 2, "durable SSE consumers per tenant")
	fl.IntVar(&c.Events, "events", 10000, "acked event-producing mutations")
	fl.IntVar(&c.Pods, "pods", 3, "eventlogd pods")
	fl.Float64Var(&c.Rate, "rate", 1000, "event mutations per second (sets the run's length)")
	fl.Float64Var(&c.Budget, "budget", 1e-4, "loss budget written in the run record")
	fl.IntVar(&c.Cold, "cold", 0, "cold tenants (the last N)")
	fl.IntVar(&c.Idle, "idle-tenants", 0, "more tenants, named in tenant records and otherwise silent (no writers, consumers or proxy)")
	fl.IntVar(&c.Lost, "lost", 0, "lost mutations explained by a drop counter")
	fl.IntVar(&c.Silent, "silent", 0, "lost mutations nothing explains")
	fl.IntVar(&c.CrashLoss, "crash-loss", 0, "lost mutations acked by a pod that later crashes")
	fl.IntVar(&c.Skipped, "skipped", 0, "(consumer, event) pairs skipped")
	fl.IntVar(&c.Undelivered, "undelivered", 0, "(consumer, event) pairs beyond the final cursor")
	fl.IntVar(&c.Duplicates, "duplicates", 0, "events delivered twice to a consumer")
	fl.IntVar(&c.Leaks, "leaks", 0, "deliveries of another tenant's path")
	fl.IntVar(&c.Unexpected, "unexpected", 0, "deliveries of a path no mutation wrote")
	fl.IntVar(&c.SeqMismatch, "seq-mismatch", 0, "deliveries of an event in a frame carrying the consumer's previous seq")
	fl.IntVar(&c.MaskedSkips, "masked-skips", 0, "skipped events hidden behind a frame at their seq with a path no mutation wrote")
	fl.IntVar(&c.Reorder, "reorder", 0, "overtaken events")
	fl.IntVar(&c.Recovered, "recovered", 0, "timed-out mutations whose event appears anyway")
	fl.IntVar(&c.SeqTooOld, "seq-too-old", 0, "missed events covered by a later seq_too_old reset")
	fl.IntVar(&c.SpuriousResets, "spurious-resets", 0, "seq_too_old resets over rows still audited")
	fl.IntVar(&c.ColdWakeups, "cold-wakeups", 0, "cold tenants whose DB gets traffic")
	fl.BoolVar(&c.Resync, "resync", false, "consumers list after every reset (run.resync); --seq-too-old events are then passed by a server_restart and shown by the listing")
	fl.IntVar(&c.ResyncMissed, "resync-missed", 0, "with --resync: events a server_restart passed that the listing after it does not show")
	fl.StringVar(&f.out, "out", "-", `ledger path ("-" = stdout; .gz = gzip)`)
	fl.StringVar(&f.truth, "truth", "", "truth JSON path (default: OUT.truth.json when --out is a file)")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
	return cmd
}

func runGenLedger(stdout, stderr io.Writer, f genLedgerFlags) error {
	if err := f.cfg.Validate(); err != nil {
		return &exitError{exitUnusable, err}
	}
	truthPath := f.truth
	if truthPath == "" && f.out != "-" {
		truthPath = f.out + ".truth.json"
	}
	if !f.quiet {
		f.cfg.Progress = stderr
	}
	var w *ledger.Writer
	if f.out == "-" {
		w = ledger.NewWriter(stdout)
	} else {
		var err error
		if w, err = ledger.Create(f.out); err != nil {
			return &exitError{exitUnusable, fmt.Errorf("--out: %w", err)}
		}
	}
	truth, err := synth.Generate(f.cfg, w)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if f.out != "-" {
			os.Remove(f.out) // a half-written ledger would only mislead
		}
		return &exitError{exitUnusable, err}
	}
	if truthPath != "" {
		b, err := json.MarshalIndent(truth, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(truthPath, append(b, '\n'), 0o644); err != nil {
			return &exitError{exitUnusable, fmt.Errorf("--truth: %w", err)}
		}
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "gen-ledger: %d records, acked %d, lost %d, verdict %s%s\n", truth.Records, truth.Acked,
			truth.Lost, truth.Verdict, failedSuffix(truth.FailedBecause))
	}
	return nil
}

func failedSuffix(fs []string) string {
	if len(fs) == 0 {
		return ""
	}
	return " (" + strings.Join(fs, ", ") + ")"
}
