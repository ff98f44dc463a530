// Package run runs one scenario end to end in fixed phases — up (DB server, proxies, pods), provision,
// consumers, load (with faults, scraping and proxy sampling), heal, drain, stop, audit, end — writing
// everything it observes to a ledger v1 in the run directory. Every log line carries the phase. It
// does not judge: the caller verifies the ledger it wrote.
package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/consumer"
	"github.com/seqgate/seqgate/harness/infra"
	"github.com/seqgate/seqgate/harness/load"
	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/harness/proxy"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/scrape"
	"github.com/seqgate/seqgate/ledger"
)

// Hook is something a test does to a running system at a time after the load starts (e.g. kill a pod
// by hand as a negative control). Hooks are not faults: they write no fault records.
type Hook struct {
	At   time.Duration
	Name string
	Do   func(ctx context.Context, env faults.Env) error
}

// Options configure one run.
type Options struct {
	Scenario *scenario.Scenario
	Dir      string // the run directory (created)
	// Eventlogd is the binary for the pods (ignored with Target).
	Eventlogd string
	// DSN is an existing server; empty starts a private one (or Infra says docker).
	DSN   string
	Infra string
	// Target and APIKey run against an external drive9-compatible service: no pods, no proxies, and
	// no audit unless DSN is given.
	Target, APIKey string
	// Toxiproxy is a toxiproxy server's API URL: the DB proxies live there instead of in-process.
	// With harness-started pods the run creates its proxies on it (and deletes them at the end); with
	// Target it adopts the proxies the server already has, named after the service's pools (meta,
	// tenant_1, shared_pool...), so DB faults reach an external service's databases.
	Toxiproxy string
	Hooks     []Hook
	// Replay is a previous run directory whose schedule.json is used instead of expanding the
	// scenario's faults again.
	Replay string
	// Log receives the phase log lines (also written to run.log); Progress the live display.
	Log      io.Writer
	Progress io.Writer
	Terminal bool
}

// Result is what a run produced.
type Result struct {
	RunID       string
	Dir         string
	Ledger      string
	Interrupted bool  // ctx was cancelled (Ctrl-C): the ledger is complete but marked so
	Drained     bool  // every durable consumer reached its tenant's head before the drain timeout
	FaultErr    error // inject/heal failures: the run is not trustworthy
	Offered     int64 // arrivals the schedule produced
	Dropped     int64 // arrivals not sent: no free request slot at their time
	// DroppedByTenant is Dropped per tenant id (tenants with none are absent).
	DroppedByTenant map[string]int64
	Acked           int64 // mutations answered 2xx
	Events          int64 // file_changed events delivered to all consumers
	LoadSeconds     float64
	Wall            time.Duration
}

// resultFile is result.json in the run directory: the harness's own figures, which the ledger does
// not carry (arrivals dropped by the open model, wall time).
type resultFile struct {
	RunID       string           `json:"run_id"`
	Interrupted bool             `json:"interrupted"`
	Drained     bool             `json:"drained"`
	FaultError  string           `json:"fault_error,omitempty"`
	Offered     int64            `json:"offered"`
	Dropped     int64            `json:"dropped"`
	DroppedBy   map[string]int64 `json:"dropped_by_tenant,omitempty"`
	Acked       int64            `json:"acked"`
	Events      int64            `json:"events_delivered"`
	LoadSeconds float64          `json:"load_seconds"`
	WallSeconds float64          `json:"wall_seconds"`
}

func (res *Result) save() error {
	f := resultFile{RunID: res.RunID, Interrupted: res.Interrupted, Drained: res.Drained, Offered: res.Offered,
		Dropped: res.Dropped, DroppedBy: res.DroppedByTenant, Acked: res.Acked, Events: res.Events, LoadSeconds: res.LoadSeconds, WallSeconds: res.Wall.Seconds()}
	if res.FaultErr != nil {
		f.FaultError = res.FaultErr.Error()
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(res.Dir, "result.json"), append(b, '\n'), 0o644)
}

// runner holds one run's state; its methods are the phases.
type runner struct {
	o     Options
	sc    *scenario.Scenario
	log   *slog.Logger
	start time.Time
	runID string
	sink  *headedSink
	w     *ledger.Writer

	db      *infra.DB
	direct  map[string]*sql.DB // pool -> direct connection (audit, drain)
	proxies *proxy.Set
	fleet   *pods.Fleet
	env     *env
	tenants []tenant
	cons    []*consumer.Consumer
	driver  *load.Driver
	faults  *faults.Runner
	client  *http.Client
	res     Result

	scraper   *scrape.Scraper
	loadStart time.Time     // set once, before the load, the fault runner and the hooks start
	loadBegun chan struct{} // closed once loadStart is set (late consumers wait for it)
	late      map[*consumer.Consumer]bool
}

type tenant struct {
	scenario.Tenant
	ID, Key string
}

// Name is the tenant's stable name for fault targets (tenant_<index>), unlike ID, which the service
// draws at provision time.
func (t tenant) Name() string { return fmt.Sprintf("tenant_%d", t.Index) }

// Run runs the scenario. Cleanup (heal, stop pods and proxies, remove a private DB) happens on every
// path, also when ctx is cancelled; on cancel the ledger is still finished, with end.reason
// "interrupted". The error is for runs that could not produce a ledger worth verifying.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	r := &runner{o: o, sc: o.Scenario, direct: map[string]*sql.DB{}, loadBegun: make(chan struct{}), client: &http.Client{Timeout: 30 * time.Second}}
	wall := time.Now()
	if err := os.MkdirAll(filepath.Join(o.Dir, "pods"), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(o.Dir, "run.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	out := io.Writer(logf)
	if o.Log != nil {
		out = io.MultiWriter(o.Log, logf)
	}
	r.log = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	r.runID = fmt.Sprintf("%s-%s", r.sc.Name, wall.UTC().Format("20060102T150405"))
	r.log = r.log.With("run", r.runID) // every line names its run, then its phase
	r.res = Result{RunID: r.runID, Dir: o.Dir, Ledger: filepath.Join(o.Dir, "ledger.jsonl.gz")}
	if b, err := r.sc.Marshal(); err == nil {
		_ = os.WriteFile(filepath.Join(o.Dir, "scenario.yaml"), b, 0o644)
	}
	r.w, err = ledger.Create(r.res.Ledger)
	if err != nil {
		return nil, err
	}
	r.sink = &headedSink{w: r.w}
	r.start = time.Now()
	defer r.cleanup()

	if err := r.up(ctx); err != nil {
		return nil, r.fail("up", err)
	}
	if err := r.provision(ctx); err != nil {
		return nil, r.fail("provision", err)
	}
	if err := r.header(); err != nil {
		return nil, r.fail("provision", err)
	}
	consCtx, stopConsumers := context.WithCancel(context.Background())
	var consWG sync.WaitGroup
	defer func() { stopConsumers(); consWG.Wait() }()
	r.startConsumers(consCtx, &consWG)
	if err := r.schedule(); err != nil { // after the consumers: consumer faults bind to them
		return nil, r.fail("schedule", err)
	}
	r.waitConsumersOpen(ctx)

	sampleCtx, stopSampling := context.WithCancel(context.Background())
	var sampleWG sync.WaitGroup
	r.startSampling(sampleCtx, &sampleWG)

	r.loadPhase(ctx)
	r.healAll()

	var drained bool
	if ctx.Err() == nil {
		drained = r.drain(ctx, r.sc.DrainTimeout.D())
	} else {
		// Interrupted: a short drain still lets the consumers take what is already in flight, so the
		// ledger of an interrupted run is not full of undelivered events that were merely late.
		drained = r.drain(context.Background(), min(r.sc.DrainTimeout.D(), 3*time.Second))
	}
	r.res.Drained = drained
	stopConsumers()
	consWG.Wait()
	stopSampling()
	sampleWG.Wait()
	// The last proxy sample (the cold check compares first and last) is taken before the pods stop:
	// a pod closing its idle DB connections on shutdown is not a wakeup.
	r.sampleProxies()
	if r.fleet != nil {
		r.log.Info("stopping pods", "phase", "stop")
		r.fleet.Stop(10 * time.Second)
	}
	r.auditPhase()
	for _, c := range r.cons {
		_ = r.w.Write(c.Summary())
		r.res.Events += c.Events()
	}
	end := &ledger.Record{K: ledger.KindEnd, T: r.now(), Drained: drained}
	switch {
	case ctx.Err() != nil:
		end.Reason, r.res.Interrupted = "interrupted", true
	case r.res.FaultErr != nil:
		end.Reason = "fault error: " + r.res.FaultErr.Error()
	case !drained:
		end.Reason = "drain timeout"
	}
	if err := r.w.Write(end); err != nil {
		return nil, r.fail("end", err)
	}
	if err := r.w.Close(); err != nil {
		return nil, r.fail("end", err)
	}
	r.res.Wall = time.Since(wall)
	if err := r.res.save(); err != nil {
		return nil, r.fail("end", err)
	}
	r.log.Info("run finished", "phase", "end", "drained", drained, "reason", end.Reason, "ledger", r.res.Ledger, "wall", r.res.Wall.Round(time.Millisecond))
	return &r.res, nil
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func (r *runner) now() int64 { return time.Since(r.start).Nanoseconds() }

func (r *runner) fail(phase string, err error) error {
	r.log.Error("run failed", "phase", phase, "err", err)
	return fmt.Errorf("%s: %w", phase, err)
}

// cleanup undoes everything up started, in reverse, whatever happened.
func (r *runner) cleanup() {
	r.healAll()
	if r.fleet != nil {
		r.fleet.Stop(10 * time.Second)
	}
	if r.proxies != nil {
		r.proxies.Close()
	}
	for _, db := range r.direct {
		db.Close() // the external DSN's handle is shared by every pool: closing it twice is harmless
	}
	if r.db != nil {
		if r.db.Kind == infra.DSN {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = r.db.Drop(ctx, r.databases()...)
			cancel()
		}
		_ = r.db.Close()
	}
	_ = r.w.Close()
}

// schedule expands the fault timeline and nemesis with the seed, saves schedule.json and binds the
// faults to their targets.
func (r *runner) schedule() error {
	var inst []faults.Instance
	if r.o.Replay != "" {
		sched, err := faults.LoadSchedule(filepath.Join(r.o.Replay, faults.ScheduleFile))
		if err != nil {
			return err
		}
		inst = sched.Faults
		r.log.Info("replaying fault schedule", "phase", "schedule", "from", r.o.Replay)
	} else {
		ts := faults.TargetSet{Tenants: r.env.Tenants(), Pods: r.env.PodNames()}
		var err error
		if inst, err = faults.Expand(r.sc.Faults, r.sc.Nemesis, r.sc.Seed, r.sc.Duration.D(), ts); err != nil {
			return err
		}
	}
	if err := faults.SaveSchedule(filepath.Join(r.o.Dir, faults.ScheduleFile), faults.Schedule{
		Scenario: r.sc.Name, Seed: r.sc.Seed, RunDuration: r.sc.Duration.D().String(), Faults: inst}); err != nil {
		return err
	}
	if len(inst) == 0 {
		return nil
	}
	r.log.Info("fault schedule", "phase", "schedule", "faults", len(inst))
	// Fault times count from the start of the load phase (r.loadStart, set before the runner runs);
	// their records are moved onto the ledger's clock, which started before the pods.
	record := func(rec *ledger.Record) {
		rec.T += r.loadStart.Sub(r.start).Nanoseconds()
		_ = r.w.Write(rec)
	}
	runner, err := faults.NewRunner(r.env, inst, record, func() time.Duration { return time.Since(r.loadStart) })
	if err != nil {
		return err
	}
	r.faults = runner
	return nil
}

// endpoints lists where writers send: pods whose process runs (or the external target).
func (r *runner) podEndpoints(alive bool) []load.Endpoint {
	if r.o.Target != "" {
		return []load.Endpoint{{Name: "external", URL: strings.TrimRight(r.o.Target, "/")}}
	}
	var out []load.Endpoint
	for _, p := range r.fleet.Pods() {
		if !alive || p.Alive() {
			out = append(out, load.Endpoint{Name: p.Name, URL: p.URL()})
		}
	}
	return out
}
