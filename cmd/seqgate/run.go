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

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/run"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
	"github.com/seqgate/seqgate/harness/target"
	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/live"
	"github.com/seqgate/seqgate/verifier"
)

type runFlags struct {
	out       string
	dsn       string
	infra     string
	eventlogd string
	target    string
	apiKey    string
	tenantID  string
	profile   string
	auditDB   string
	tenantCol string
	ready     time.Duration
	provConc  int
	junit     string
	replay    string
	sets      []string
	seed      string
	duration  string
	metrics   string
	toxiproxy string
	shard     string
	runID     string
	podsProf  string
	podsBin   string
	// args is the command line as given (commandLine), for the run record's provenance.
	args []string
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Run one scenario end to end (DB, proxies, pods, load, consumers, faults, audit) and verify its ledger",
		Long: `run brings up a private MySQL-compatible server (or uses --dsn), one toxiproxy proxy per database,
the scenario's pods (eventlogd's, or another service's by --target-profile drive9 or --pods-profile FILE,
with --pods-bin PATH), consumers and open-model load; injects the scenario's faults; drains,
audits the DB, writes the ledger and verifies it. Everything goes to the run directory
(runs/<scenario>-<time>/ unless --out): ledger.jsonl.gz, summary.json, summary.txt, report.html, summary.md, run.log, pods/*.log,
scenario.yaml (resolved), schedule.json, pools.json.

Exit codes are the verdict's: 0 pass, 1 fail, 2 inconclusive, 3 a run that could not complete
(bad scenario, infrastructure error, Ctrl-C). See docs/run.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.args = commandLine(cmd, args)
			return runRun(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "", "run directory (default runs/<scenario>-<UTC time>)")
	fl.StringVar(&f.dsn, "dsn", "", "use this existing MySQL-compatible server (go-sql-driver DSN, e.g. 'root:pw@tcp(127.0.0.1:3306)/') instead of a private one; with --target: the service's own server, each tenant's database is opened from it and audited")
	fl.StringVar(&f.infra, "infra", "private", "where the DB server comes from when --dsn is not given: private (mariadbd/mysqld on PATH) or docker")
	fl.StringVar(&f.eventlogd, "eventlogd", "", "eventlogd binary (default: next to seqgate, else on PATH; never built implicitly)")
	fl.StringVar(&f.podsProf, "pods-profile", "", "start the pods by this pod profile YAML file (binary, args, env, readiness, layout; docs/external.md) instead of eventlogd's")
	fl.StringVar(&f.podsBin, "pods-bin", "", "the pods' binary (default: the pod profile's binary; for eventlogd as --eventlogd finds it)")
	fl.StringVar(&f.target, "target", "", "run against this external drive9-compatible base URL instead of eventlogd pods")
	fl.StringVar(&f.apiKey, "api-key", "", "with --target: the API key of the one tenant to use (default: provision each tenant)")
	fl.StringVar(&f.tenantID, "tenant-id", "", "with --api-key: that tenant's id (the ledger's tenant, and how drive9 and {tenant} templates find its database; default external)")
	fl.StringVar(&f.profile, "target-profile", service.Eventlogd, "with --target: how the service provisions tenants and where their events live: "+strings.Join(service.Shipped.Names(), ", ")+"; without --target: the built-in pod profile the run starts its pods by: "+strings.Join(service.Shipped.PodNames(), ", ")+" (docs/external.md)")
	fl.StringVar(&f.auditDB, "audit-db", "", "with --target and --dsn: the database of each tenant's events, a template with {tenant}, {tenant_nodash}, {pool} (default: the profile's; required for generic)")
	fl.StringVar(&f.tenantCol, "tenant-column", "", "with --target and --dsn: the fs_events column naming the tenant, or none (default: the profile's; required for generic)")
	fl.IntVar(&f.provConc, "provision-concurrency", run.DefaultProvisionConcurrency, "how many tenants to provision at once (1..256)")
	fl.DurationVar(&f.ready, "ready-timeout", 0, "how long to wait for every provisioned tenant to become active (default: the pod profile's ready.tenants"+ownTenantsWait()+"; else "+run.DefaultReadyTimeout.String()+")")
	fl.StringVar(&f.replay, "replay", "", "replay the fault schedule of this earlier run directory (its schedule.json) instead of expanding the scenario's faults")
	fl.StringVar(&f.toxiproxy, "toxiproxy", "", "drive the DB proxies on this toxiproxy server's HTTP API (e.g. http://127.0.0.1:8474) instead of in-process ones; with --target, adopt the proxies it already has, named after the service's pools (docs/stack.md)")
	fl.StringVar(&f.junit, "junit", "", "also write JUnit XML (one testcase per check) to PATH")
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario field, PATH=VALUE (repeatable), e.g. --set load[0].rate=600 --set pods.count=5; the run directory's scenario.yaml records the result")
	fl.StringVar(&f.seed, "seed", "", "override the scenario's seed (same as --set seed=N)")
	fl.StringVar(&f.duration, "duration", "", "override the scenario's duration (same as --set duration=D)")
	fl.StringVar(&f.shard, "shard", "", "be agent K of N of one run (K/N, 1 <= K <= N): drive only this agent's share of the scenario's tenants against --target and write its own ledger; agent 1 injects the faults, the others record them; no verdict (seqgate verify merges the N ledgers; docs/scale-out.md)")
	fl.StringVar(&f.runID, "run-id", "", "the run's id (letters, digits, '.', '_', '-'; at most 64); default <scenario>-<UTC time>, or with --shard <scenario>-s<seed>-<digest of the resolved scenario>, the same for every agent")
	fl.StringVar(&f.metrics, "metrics-addr", "", "serve seqgate's own Prometheus metrics of the run at http://ADDR/metrics while it goes on (e.g. 127.0.0.1:9464)")
	return cmd
}

func runRun(ctx context.Context, stdout, stderr io.Writer, path string, f runFlags) error {
	sc, err := readScenario(path, f)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	if f.target == "" {
		for flag, v := range map[string]string{"--api-key": f.apiKey, "--tenant-id": f.tenantID, "--audit-db": f.auditDB, "--tenant-column": f.tenantCol} {
			if v != "" {
				return &exitError{exitUnusable, fmt.Errorf("%s needs --target", flag)}
			}
		}
		if sc.Pods.Count == 0 {
			return &exitError{exitUnusable, fmt.Errorf("%s declares no pods (pods: {count: N}): seqgate runs eventlogd pods unless --target names a service", path)}
		}
	}
	if f.target != "" && (f.podsProf != "" || f.podsBin != "") {
		return &exitError{exitUnusable, errors.New("--pods-profile and --pods-bin start pods, and --target runs against a service that runs its own: give one or the other")}
	}
	if f.tenantID != "" && f.apiKey == "" {
		return &exitError{exitUnusable, errors.New("--tenant-id needs --api-key (provisioned tenants get their ids from the service)")}
	}
	if f.provConc < 0 || f.provConc > 256 { // 0: the default
		return &exitError{exitUnusable, fmt.Errorf("--provision-concurrency %d: allowed 1..256", f.provConc)}
	}
	if f.ready < 0 { // 0: the default
		return &exitError{exitUnusable, fmt.Errorf("--ready-timeout %s: want a positive duration", f.ready)}
	}
	if f.target != "" {
		// Resolve the profile now, so a bad --target-profile, --audit-db or --tenant-column is reported
		// before anything starts.
		p, err := service.Shipped.Profile(target.Options{Profile: f.profile, AuditDB: f.auditDB, TenantColumn: f.tenantCol}, f.dsn != "")
		if err != nil {
			return &exitError{exitUnusable, err}
		}
		if f.apiKey != "" && f.tenantID == "" && f.dsn != "" && p.NeedsTenantID() {
			return &exitError{exitUnusable, fmt.Errorf("--target-profile %s finds a tenant's events by its id (%s): give --tenant-id with --api-key, or drop --dsn to run without an audit", p.Name, p.Layout())}
		}
	}
	var prof *podprofile.Profile
	if f.target == "" {
		if prof, err = checkPods(path, sc, f); err != nil {
			return &exitError{exitUnusable, err}
		}
	}
	sh, runID, err := shardOf(sc, f)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	if err := run.CheckShard(run.Options{Scenario: sc, Target: f.target, APIKey: f.apiKey, Replay: f.replay, Toxiproxy: f.toxiproxy, Shard: sh}); err != nil {
		return &exitError{exitUnusable, err}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the first signal stops the run cleanly; a second one kills seqgate (and, by Pdeathsig, its children)
	}()
	dir := f.out
	switch {
	case dir != "":
	case sh.Sharded():
		dir = filepath.Join("runs", fmt.Sprintf("%s.shard-%d-of-%d", runID, sh.K, sh.N))
	case runID != "":
		dir = filepath.Join("runs", runID)
	default:
		dir = filepath.Join("runs", fmt.Sprintf("%s-%s", sc.Name, time.Now().UTC().Format("20060102T150405")))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &exitError{exitUnusable, err}
	}
	opts := run.Options{Scenario: sc, Dir: dir, DSN: f.dsn, ProvisionToken: os.Getenv("SEQGATE_PROVISION_TOKEN"), Infra: f.infra, Target: f.target, APIKey: f.apiKey, TenantID: f.tenantID,
		Profile: target.Options{Profile: f.profile, AuditDB: f.auditDB, TenantColumn: f.tenantCol}, ReadyTimeout: f.ready, ProvisionConcurrency: f.provConc, Replay: f.replay, Toxiproxy: f.toxiproxy,
		Log: stderr, Progress: stderr, Terminal: isTerminal(stderr), Shard: sh, RunID: runID}
	var liveMetrics *live.Metrics
	if f.metrics != "" {
		m, stopLive, err := serveLive(f.metrics, stderr)
		if err != nil {
			return &exitError{exitUnusable, err}
		}
		defer stopLive()
		opts.Observe, liveMetrics = m.Observe, m
	}
	if f.target == "" {
		bin, err := podsBinary(ctx, stderr, path, sc, f, prof, dir)
		if err != nil {
			return &exitError{exitUnusable, err}
		}
		opts.Eventlogd, opts.PodProfile = bin, prof
	}
	if opts.Provenance, err = runProvenance(ctx, path, sc, f, opts.Eventlogd, prof); err != nil {
		return &exitError{exitUnusable, err}
	}
	res, err := run.Run(ctx, opts)
	if err != nil {
		return &exitError{exitUnusable, fmt.Errorf("run %s: %w (run directory %s)", sc.Name, err, dir)}
	}
	if sh.Sharded() {
		return shardDone(stdout, res, sh)
	}
	s, err := verifyRun(res, f)
	if err != nil {
		return &exitError{exitUnusable, err}
	}
	if liveMetrics != nil {
		liveMetrics.ShowVerdict(s)
	}
	if err := verifier.WriteText(stdout, s); err != nil {
		return &exitError{exitUnusable, err}
	}
	fmt.Fprintln(stdout, finalLine(res))
	if res.CPU != nil {
		fmt.Fprintf(stdout, "cpu during the load: %s\n", res.CPU)
	}
	if res.Audit != nil && !res.Audit.OK {
		fmt.Fprintf(stdout, "audit failed (%d tenants, %d rows read): %s\n", res.Audit.Tenants, res.Audit.Rows, res.Audit.Error)
	}
	writeRunReport(stderr, res.Ledger, res.Dir, s) // report.html and summary.md (docs/report.md), after the verdict is out
	switch {
	case res.Interrupted:
		return &exitError{exitUnusable, errors.New("interrupted: the ledger is complete up to the interruption and marked so (end.reason)")}
	case res.FaultErr != nil && s.Verdict == verifier.VerdictPass:
		return &exitError{exitInconclusive, fmt.Errorf("a fault could not be injected or healed, so a pass proves nothing: %w", res.FaultErr)}
	case res.Audit != nil && !res.Audit.OK && s.Verdict == verifier.VerdictPass:
		// The verifier judges this from the ledger's audit record too; the harness never lets it pass.
		return &exitError{exitInconclusive, fmt.Errorf("the audit of the events table did not complete, so a pass proves nothing: %s", res.Audit.Error)}
	}
	if code := verifier.ExitCode(s); code != exitPass {
		return &exitError{code: code}
	}
	return nil
}

// finalLine is the run's own figures after the verdict. The rates divide by the scheduled duration
// (Result.PerSecond), so the offered rate agrees with the scenario's; the load phase's own length is
// printed beside it.
func finalLine(res *run.Result) string {
	over := fmt.Sprintf("over the scheduled %gs", res.ScheduledSeconds)
	if res.LoadSeconds < res.ScheduledSeconds {
		over = fmt.Sprintf("over the %.1fs the load ran (cut short)", res.LoadSeconds)
	}
	return fmt.Sprintf("run %s: offered %.1f/s, acked %.1f/s %s (%d offered, %d acked, %d dropped by the open model), %d events delivered, %s, wall %s, directory %s; the load began at %.3fs of the run (the scenario's at: times count from there, the times above from the run's start)",
		res.RunID, res.PerSecond(res.Offered), res.PerSecond(res.Acked), over, res.Offered, res.Acked, res.Dropped, res.Events,
		resyncLine(res), res.Wall.Round(100*time.Millisecond), res.Dir, res.LoadStartSeconds)
}

// resyncLine is the cost of the consumers' listings after resets.
func resyncLine(res *run.Result) string {
	s := fmt.Sprintf("%d resyncs listing %d entries in %s", res.Resyncs, res.Listed, res.Listing.Round(time.Millisecond))
	if res.ResyncsFailed > 0 {
		s += fmt.Sprintf(" (%d failed)", res.ResyncsFailed)
	}
	return s
}

// readScenario reads the scenario file with the command line's overrides (--seed, --duration, then
// every --set in order) applied before it is validated, so an override is checked like the file.
func readScenario(path string, f runFlags) (*scenario.Scenario, error) {
	var sets []string
	if f.seed != "" {
		sets = append(sets, "seed="+f.seed)
	}
	if f.duration != "" {
		sets = append(sets, "duration="+f.duration)
	}
	sets = append(sets, f.sets...)
	if len(sets) == 0 {
		return scenario.ReadFile(path)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, err := scenario.Override(src, sets)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return scenario.Parse(path+" (with --set/--seed/--duration)", out)
}

// verifyRun judges the ledger the run wrote and saves summary.json and summary.txt (and JUnit) next to it.
func verifyRun(res *run.Result, f runFlags) (*verifier.Summary, error) {
	r, err := ledger.Open(res.Ledger)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s, err := verifier.Verify(r, verifier.Options{})
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", res.Ledger, err)
	}
	summary, err := run.CreateFile(res.Dir, "summary.json", 0o644) // not through a link in the run directory
	if err != nil {
		return nil, err
	}
	if err := writeFile(summary, s, verifier.WriteJSON); err != nil {
		return nil, err
	}
	// The human summary, as printed, kept beside the JSON: run.log ends before the verdict.
	text, err := run.CreateFile(res.Dir, "summary.txt", 0o644)
	if err != nil {
		return nil, err
	}
	if err := writeFile(text, s, verifier.WriteText); err != nil {
		return nil, err
	}
	if f.junit != "" {
		fh, err := os.Create(f.junit)
		if err != nil {
			return nil, err
		}
		if err := writeFile(fh, s, verifier.WriteJUnit); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// writeFile writes s to fh and closes it.
func writeFile(fh *os.File, s *verifier.Summary, write func(io.Writer, *verifier.Summary) error) error {
	if err := write(fh, s); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// isTerminal reports whether w is a character device (a live terminal gets the one-line display).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// ownTenantsWait names the shipped pod profiles that wait for their tenants a time of their own
// (", drive9's 3m0s"), for --ready-timeout's help.
func ownTenantsWait() string {
	var b strings.Builder
	for _, name := range service.Shipped.PodNames() {
		if p, err := service.Shipped.Pods(name); err == nil && p.Ready.Tenants > 0 {
			fmt.Fprintf(&b, ", %s's %s", name, p.Ready.Tenants)
		}
	}
	return b.String()
}
