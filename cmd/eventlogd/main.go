// Command eventlogd is the reference event log of design 000 (one process = one pod); see
// docs/eventlogd.md. `eventlogd sweep --before TIME` is the operator sweep of docs/runbook.md;
// `eventlogd check-flags --name=value...` says, as JSON, which flags and seeded defects this binary
// accepts and which of the given ones it would refuse, without starting anything. Every flag can also be given as an environment variable
// EVENTLOGD_<FLAG_UPPER_SNAKE> (a flag on the command line wins).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/internal/provenance"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "eventlogd:", err)
		os.Exit(1)
	}
}

type options struct {
	listen, pools, logLevel string
	defects                 []string
	testDefects             bool
	version                 bool
	provisionTokenFile      string
	sendBuffer              int
	cfg                     api.Config
}

// testDefectsFlag must be on the command line for --defect to be honoured; it is never read from
// the environment, so an inherited EVENTLOGD_DEFECT alone cannot break a pod.
const testDefectsFlag = "test-defects"

// defectList collects repeated --defect flags (each may also be a comma-separated list).
type defectList struct{ v *[]string }

func (d defectList) String() string {
	if d.v == nil {
		return ""
	}
	return strings.Join(*d.v, ",")
}
func (d defectList) Set(s string) error { *d.v = append(*d.v, s); return nil }

func flags(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("eventlogd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host, _ := os.Hostname()
	c := &o.cfg
	fs.IntVar(&o.sendBuffer, "socket-send-buffer", 0, "SO_SNDBUF of every accepted connection in bytes (0: the kernel's default, autotuned to megabytes on loopback, which hides a slow consumer from the send queue for a long time)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:7070", "HTTP listen address (:0 picks a free port; the bound address is printed as 'listening on ADDR')")
	fs.StringVar(&c.PodID, "pod", fmt.Sprintf("%s-%d", host, os.Getpid()), "pod name (outbox cursor and pod registry key)")
	fs.StringVar(&c.MetaDSN, "meta-dsn", "", "meta DB DSN (go-sql-driver form; the database is created if missing)")
	fs.StringVar(&o.pools, "pools", "", `pools file (JSON {"pools":[{"id","role","dsn"}]}); empty: one shared pool "shared_pool" on the meta server`)
	fs.DurationVar(&c.Retention, "fs-events-retention", time.Hour, "fs_events retention, used by both sweep paths")
	fs.BoolVar(&c.Admin, "admin", false, "serve the test-only /v1/admin endpoints")
	fs.StringVar(&c.AdminToken, "admin-token", "", "require this token (header X-Admin-Token or Authorization: Bearer) on /v1/admin; mandatory with --admin when --listen is not loopback")
	fs.Var(defectList{&o.defects}, "defect", "switch on a seeded defect (repeatable or comma-separated; test-only: needs --test-defects): "+defectNames())
	fs.BoolVar(&o.testDefects, testDefectsFlag, false, "allow --defect: this pod is a test subject (command line only, never from the environment)")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.BoolVar(&o.version, "version", false, "print eventlogd's build (module, version, VCS revision, Go version) and exit (command line only)")

	fs.DurationVar(&c.EventInsertTimeout, "event-insert-timeout", 2*time.Second, "hot-path fs_events insert timeout")
	c.Guard = store.GuardHorizon
	fs.Func("late-commit-guard", "how a reader never passes a seq that commits later: horizon (inserts not serialised; streams stop at a missing seq, at most --sse-horizon-wait) or lock (a tenant's inserts serialised on a row lock) (default horizon)", func(v string) error {
		g, ok := store.Guards[v]
		if !ok {
			return fmt.Errorf("%q is not a guard (allowed: horizon, lock)", v)
		}
		c.Guard = g
		return nil
	})
	fs.StringVar(&c.EventCommit, "event-commit", api.EventCommitSeparate, "how a mutation's event is committed: separate (the mutation commits, then its event is inserted, bounded by --event-insert-timeout: two commits) or joined (the event is inserted in the mutation's own transaction after a savepoint: one commit; a failed event insert rolls back to the savepoint and the mutation commits alone) or grouped (joined, and a tenant's concurrent writes commit together: one transaction, one multi-row upsert and one multi-row event insert per group); docs/eventlogd.md")
	fs.IntVar(&c.Buffer.GlobalCap, "retry-global-cap", 10000, "retry buffer: entries across all tenants")
	fs.IntVar(&c.Buffer.TenantCap, "retry-tenant-cap", 1000, "retry buffer: entries per tenant")
	fs.IntVar(&c.Buffer.Concurrency, "retry-concurrency", 8, "retry buffer: tenants flushing at once")
	fs.DurationVar(&c.Buffer.InsertTimeout, "retry-insert-timeout", 30*time.Second, "retry buffer: per-entry flush insert timeout")
	fs.DurationVar(&c.Buffer.BackoffMin, "retry-backoff-min", time.Second, "retry buffer: first retry delay (doubles per attempt)")
	fs.DurationVar(&c.Buffer.BackoffMax, "retry-backoff-max", 5*time.Minute, "retry buffer: retry delay cap")
	fs.DurationVar(&c.Buffer.MaxAge, "retry-max-age", 0, "retry buffer: drop entries older than this (0: retention clamped to [1h, 24h])")
	fs.DurationVar(&c.ShutdownBudget, "shutdown-budget", 10*time.Second, "graceful shutdown: time to flush the retry buffer")
	fs.IntVar(&c.StreamCloseRate, "shutdown-stream-close-rate", 1000, "graceful shutdown: event streams closed per second, in batches every 10ms (negative = all at once)")
	fs.DurationVar(&c.StreamCloseMax, "shutdown-stream-close-max", 5*time.Second, "graceful shutdown: streams still open after this much pacing close together")

	fs.DurationVar(&c.OutboxCoalesce, "outbox-coalesce", 200*time.Millisecond, "minimum spacing of this pod's outbox inserts")
	fs.DurationVar(&c.OutboxPoll, "outbox-poll-interval", 200*time.Millisecond, "outbox poller period")
	fs.DurationVar(&c.OutboxRetention, "outbox-retention", time.Hour, "outbox row lifetime")
	fs.DurationVar(&c.OutboxCursorMaxAge, "outbox-cursor-max-age", 10*time.Minute, "outbox prune gate ignores cursors not refreshed for this long")
	fs.DurationVar(&c.OutboxPruneEvery, "outbox-prune-every", 10*time.Second, "outbox prune and oldest-age gauge period")
	fs.DurationVar(&c.PodHeartbeat, "pod-heartbeat", 5*time.Second, "pod registry heartbeat period")
	fs.DurationVar(&c.PodStaleAfter, "pod-stale-after", 30*time.Second, "a pod silent this long is swept with its outbox cursor")

	fs.DurationVar(&c.SweepInterval, "sweep-interval", time.Hour, "lazy write-path sweep: at most once per tenant per interval")
	fs.DurationVar(&c.SharedSweepInterval, "shared-sweep-interval", 30*time.Minute, "shared-pool sweep: cluster-wide claim interval per pool")
	fs.DurationVar(&c.MaintenanceInterval, "maintenance-interval", 10*time.Minute, "backstop sweep pass over tenants that wrote since the last pass")
	fs.IntVar(&c.SweepBatch, "sweep-batch", 5000, "rows per sweep DELETE")
	fs.IntVar(&c.SweepMaxBatches, "sweep-max-batches", 20, "DELETE statements per sweep")

	fs.IntVar(&c.Stream.PageSize, "sse-page-size", 1000, "rows per fs_events read")
	fs.DurationVar(&c.Stream.Heartbeat, "sse-heartbeat", 15*time.Second, "live heartbeat period")
	fs.IntVar(&c.Stream.ReplayHeartbeatPages, "sse-replay-heartbeat-pages", 10, "replay: heartbeat every N pages")
	fs.DurationVar(&c.Stream.ReplayHeartbeatEvery, "sse-replay-heartbeat-interval", 5*time.Second, "replay: or every T")
	fs.IntVar(&c.Stream.MaxPagesPerWake, "sse-max-pages-per-wake", 10, "live drain: full pages per wake before a short re-arm")
	fs.DurationVar(&c.Stream.CatchUpDelay, "sse-catchup-delay", 10*time.Millisecond, "live drain: re-arm delay after the page cap")
	fs.StringVar(&c.Stream.StructuralEvents, "structural-events", "dual", "how rename, delete, mkdir and copy are sent: reset (drive9's reset(structural_change) only), dual (file_changed with old and new path, then the reset: the migration window), file_changed (the detailed form only)")
	fs.IntVar(&c.Stream.QueueSize, "sse-queue-size", 1024, "frames in each connection's send queue")
	fs.DurationVar(&c.Stream.QueueWait, "sse-queue-wait", 2*time.Second, "a send queue full this long ends the connection with reset(slow_consumer)")
	fs.DurationVar(&c.Stream.WriteTimeout, "sse-write-timeout", 30*time.Second, "per socket write deadline")
	fs.DurationVar(&c.Stream.QueryTimeout, "sse-query-timeout", 10*time.Second, "bound on each fs_events read of a stream (a stalled DB becomes a retried error)")
	fs.IntVar(&c.Stream.ReplayBudgetEvents, "sse-replay-budget-events", 0, "replay: end a connection (heartbeat at its cursor) after a full page takes it past this many events (0: no cap)")
	fs.DurationVar(&c.Stream.ReplayBudgetTime, "sse-replay-budget-time", 0, "replay: or after this long (0: no cap)")
	fs.DurationVar(&c.Stream.LivenessPoll, "sse-liveness-poll", 0, "optional poll of a connected tenant not polled for this long (0: off)")
	fs.DurationVar(&c.Stream.HorizonWait, "sse-horizon-wait", 5*time.Second, "--late-commit-guard horizon: how long a stream waits for a missing seq before it gives it up as a rolled-back insert")

	fs.DurationVar(&c.RequestTimeout, "request-timeout", 30*time.Second, "server-side bound on a filesystem request (mutation + event insert)")
	fs.DurationVar(&c.AuthCacheTTL, "auth-cache-ttl", 5*time.Second, "API key cache lifetime (a deleted tenant's key works this long)")
	fs.DurationVar(&c.AuthStaleMax, "auth-stale-max", time.Minute, "while the meta DB fails, honour a cached key this long past its TTL (a revoked key can act for at most TTL + this)")
	fs.DurationVar(&c.Limits.AuthNegativeTTL, "auth-negative-ttl", 5*time.Second, "refuse a key the meta DB did not know without asking again for this long")
	fs.IntVar(&c.Limits.AuthCacheMax, "auth-cache-max", 100000, "cached API keys; the least recently used is evicted past this")
	fs.DurationVar(&c.Limits.StreamAuthEvery, "stream-auth-interval", 0, "revalidate the keys of open event streams this often; a deleted tenant's streams end (0: --auth-cache-ttl)")

	fs.DurationVar(&c.Limits.HeaderTimeout, "header-timeout", 10*time.Second, "reading a request's headers")
	fs.DurationVar(&c.Limits.IdleTimeout, "idle-timeout", 2*time.Minute, "close a keep-alive connection idle this long")
	fs.DurationVar(&c.Limits.BodyReadTimeout, "body-read-timeout", time.Minute, "reading one request body (a dripped body ends the request)")
	fs.IntVar(&c.Limits.MaxInflight, "max-inflight", 512, "concurrent requests other than event streams, /healthz and /metrics; past it 429 with Retry-After")
	fs.Int64Var(&c.Limits.MaxBodyBytes, "max-body-bytes-inflight", 64<<20, "request-body bytes read at once across the pod, each body counted at its Content-Length; past it 429")
	fs.IntVar(&c.Limits.MaxStreams, "max-streams", 10000, "open event streams per pod; past it 429")
	fs.IntVar(&c.Limits.MaxTenantStreams, "max-tenant-streams", 200, "open event streams per tenant per pod; past it 429")
	fs.Float64Var(&c.Limits.ProvisionRate, "provision-rate", 20, "POST /v1/provision per second per pod (token bucket); past it 429")
	fs.IntVar(&c.Limits.ProvisionBurst, "provision-burst", 100, "provision token bucket size")
	fs.StringVar(&c.Limits.ProvisionToken, "provision-token", "", "token POST /v1/provision must carry (Authorization: Bearer TOKEN or X-Provision-Token); give it as EVENTLOGD_PROVISION_TOKEN, a command line is readable by every local user")
	fs.StringVar(&o.provisionTokenFile, "provision-token-file", "", "file holding the provisioning token (instead of --provision-token)")
	fs.BoolVar(&c.Limits.OpenProvisioning, "open-provisioning", false, "UNSAFE: let anyone who reaches the port provision tenants without a token (they get shared pools only); a pod refuses to start without a token or this flag")
	fs.IntVar(&c.Limits.MaxTenantInflight, "max-tenant-inflight", 0, "one tenant's share of --max-inflight (unauthenticated requests, provisions and admin calls share one more); past it 429 (0: max-inflight/4, at least 1)")
	fs.Int64Var(&c.Limits.MaxTenantBodyBytes, "max-tenant-body-bytes", 0, "one tenant's share of --max-body-bytes-inflight (the anonymous caller has one too); past it 429 (0: max-body-bytes-inflight/4)")
	fs.DurationVar(&c.Limits.ResponseWriteTimeout, "response-write-timeout", 30*time.Second, "bound on writing one answer (event streams excluded: --sse-write-timeout); a client that does not read its answer frees the slot and memory after it")
	fs.IntVar(&c.DB.MaxOpen, "db-max-open", 32, "open connections per tenant DB")
	fs.IntVar(&c.DB.StreamMaxOpen, "db-stream-max-open", 0, "connections event streams may hold per tenant DB, on a handle of their own (0: db-max-open/4)")
	fs.IntVar(&c.DB.StreamTenantMax, "db-stream-tenant-max", 0, "stream reads one tenant may run at once on that handle; the rest of its reads queue on the tenant, not on the handle (0: db-stream-max-open/4, at least 1; -1: no per-tenant bound)")
	fs.DurationVar(&c.DB.ConnMaxIdle, "db-conn-max-idle", 5*time.Minute, "idle connection lifetime")
	fs.DurationVar(&c.DB.IdleClose, "pool-idle-close", 0, "close a tenant DB handle unused this long (0: never)")
	return fs
}

func defectNames() string {
	var n []string
	for _, d := range defect.All {
		n = append(n, string(d))
	}
	return strings.Join(n, ", ")
}

// applyEnv sets every flag not given on the command line from EVENTLOGD_<FLAG_UPPER_SNAKE>.
func applyEnv(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil || f.Name == testDefectsFlag || f.Name == "version" {
			return
		}
		env := "EVENTLOGD_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %v", env, v, e)
			}
		}
	})
	return err
}

// defectSet returns the seeded defects to switch on. They are test-only: any --defect (flag or
// EVENTLOGD_DEFECT) without --test-defects on the command line is refused, and a pod that runs with
// one says so loudly on stderr and in its log.
func (o *options) defectSet(stderr io.Writer, log *slog.Logger) (defect.Set, error) {
	d, err := defect.Parse(strings.Join(o.defects, ","))
	if err != nil {
		return nil, err
	}
	if len(d) == 0 {
		return d, nil
	}
	if !o.testDefects {
		return nil, fmt.Errorf("--defect %s: seeded defects are test-only; add --%s on the command line to switch them on (EVENTLOGD_DEFECT alone never does)",
			d.String(), testDefectsFlag)
	}
	fmt.Fprintf(stderr, "eventlogd: WARNING: SEEDED DEFECTS ON (%s): this pod is deliberately broken for testing; never serve real tenants with it\n", d.String())
	log.Error("SEEDED DEFECTS ON: this pod is deliberately broken for testing", "defects", d.String())
	return d, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "sweep" {
		return runSweep(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "check-flags" {
		return runCheckFlags(args[1:], stdout)
	}
	var o options
	fs := flags(&o, stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.version { // before applyEnv: EVENTLOGD_VERSION never turns a pod into a version print
		_, err := fmt.Fprintln(stdout, "eventlogd", provenance.Line(provenance.Self()))
		return err
	}
	dsnOnCommandLine := commandLine(fs, "meta-dsn") // before applyEnv, which marks what it sets
	tokenOnCommandLine := commandLine(fs, "provision-token")
	if err := applyEnv(fs); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	if o.sendBuffer < 0 || o.sendBuffer > 64<<20 {
		return fmt.Errorf("--socket-send-buffer %d: want 0 (the kernel's default) or 1..%d bytes", o.sendBuffer, 64<<20)
	}
	if err := api.CheckAdminExposure(o.listen, o.cfg.Admin, o.cfg.AdminToken); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})).With("pod", o.cfg.PodID)
	o.cfg.Log = log
	d, err := o.defectSet(stderr, log)
	if err != nil {
		return err
	}
	o.cfg.Defects = d
	if o.pools != "" {
		if o.cfg.Pools, err = store.LoadPools(o.pools); err != nil {
			return fmt.Errorf("--pools: %w", err)
		}
	}
	if o.provisionTokenFile != "" && o.cfg.Limits.ProvisionToken != "" {
		return fmt.Errorf("--provision-token-file and --provision-token (or EVENTLOGD_PROVISION_TOKEN): give one")
	}
	if tokenOnCommandLine {
		log.Warn("--provision-token on the command line, where every local user can read it (/proc/PID/cmdline); pass it as EVENTLOGD_PROVISION_TOKEN or --provision-token-file instead")
	}
	if o.provisionTokenFile != "" {
		b, err := os.ReadFile(o.provisionTokenFile)
		if err != nil {
			return fmt.Errorf("--provision-token-file: %w", err)
		}
		if o.cfg.Limits.ProvisionToken = strings.TrimSpace(string(b)); o.cfg.Limits.ProvisionToken == "" {
			return fmt.Errorf("--provision-token-file %s: empty", o.provisionTokenFile)
		}
	}
	if dsnOnCommandLine && dsnHasPassword(o.cfg.MetaDSN) {
		log.Warn("--meta-dsn carries a password on the command line, where every local user can read it (/proc/PID/cmdline); pass it as EVENTLOGD_META_DSN instead")
	}
	log.Info("effective configuration", "fs_events_retention", o.cfg.Retention.String(), "listen", o.listen,
		"meta_dsn_set", o.cfg.MetaDSN != "", "pools_file", o.pools, "admin", o.cfg.Admin, "admin_token_set", o.cfg.AdminToken != "",
		"provision_token_set", o.cfg.Limits.ProvisionToken != "", "open_provisioning", o.cfg.Limits.OpenProvisioning, "defects", d.String())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	srv, err := api.New(startCtx, o.cfg)
	cancel()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		_ = srv.Close()
		return fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	if o.sendBuffer > 0 {
		ln = sendBufferListener{ln, o.sendBuffer}
	}
	srv.Start()
	hs := srv.HTTPServer()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())

	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-errc:
		log.Error("http server failed", "err", err)
	}
	// Streams first (so Shutdown can finish), then in-flight requests, then the retry buffer.
	srv.StopStreams()
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("http shutdown", "err", err)
		_ = hs.Close()
	}
	scancel()
	err = srv.Close()
	log.Info("stopped")
	return err
}

// commandLine reports whether flag name was given on the command line (not from the environment).
func commandLine(fs *flag.FlagSet, name string) bool {
	seen := false
	fs.Visit(func(f *flag.Flag) { seen = seen || f.Name == name })
	return seen
}

func dsnHasPassword(dsn string) bool {
	c, err := mysql.ParseDSN(dsn)
	return err == nil && c.Passwd != ""
}
