// Package run runs one scenario end to end as an explicit list of named phases over a small state,
// writing everything it observes to a ledger v1 in the run directory.
//
// The phases, in order (phases.go), each in its own file:
//
//	up         phase_up.go         the target comes up: DB server, proxies, pods (target_*.go)
//	provision  phase_provision.go  the scenario's tenants, then the ledger's run record
//	consumers  phase_consumers.go  every consumer subscribes; wait for their first frames
//	schedule   phase_schedule.go   the fault timeline and nemesis, expanded and bound
//	load       phase_load.go       the writers, with faults, hooks, scraping and proxy sampling beside them
//	heal       phase_heal.go       every fault still active is healed
//	drain      phase_drain.go      until every durable consumer reached its tenant's head
//	stop       phase_stop.go       consumers, sampling and pods stop
//	audit      phase_audit.go      the persisted rows of the run, read from the DB
//	end        phase_end.go        consumer summaries, the end record, result.json
//
// Every log line carries run= and phase=: each phase logs through a logger that names it. A phase
// is a function of (ctx, *state, logger); it reads what earlier phases left in the state and adds
// its own part (state.go says which phase fills which field). An error from a phase ends the run
// with "<phase>: <error>"; whatever happened, cleanup (phases.go) then stops the consumers and the
// sampling, heals every fault, stops the pods and proxies and removes a private DB server. On Ctrl-C
// (ctx cancelled) the phases after load still run, so the ledger is finished and marked interrupted.
//
// To add a phase (a sweep step, a shard's barrier): write phase_<name>.go with one
// func(ctx, *state, *slog.Logger) error, and add its line to the list in phases.go, where its place
// in the order is visible. Registration is that explicit list, not init().
//
// To add a target (what the run drives): write target_<name>.go with a type implementing target (up:
// bring up or connect to the system and return a *system; provision: the scenario's tenants on it),
// and add its case to targetFor in target.go. The phases only see the *system. A service (how it
// provisions and reports tenants ready, where their events live, its wire, and how its pods start)
// is one definition of package harness/service, which both targets follow: its target profile
// (package harness/target) and its pod profile (package harness/podprofile; eventlogd's by
// default), which eventlogdTarget starts the pods by.
//
// Verification is not a phase here: the harness writes and never judges (it does not import the
// verifier), so cmd/seqgate verifies the ledger this package closed, as `seqgate verify` would.
package run

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/seqgate/seqgate/ledger"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
	"github.com/seqgate/seqgate/harness/shard"
	tgt "github.com/seqgate/seqgate/harness/target"
	"github.com/seqgate/seqgate/internal/proccpu"
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
	// PodProfile is how each pod starts (nil: the built-in eventlogd profile); Eventlogd is its binary.
	PodProfile *podprofile.Profile
	// DSN is an existing server; empty starts a private one (or Infra says docker).
	DSN   string
	Infra string
	// Target and APIKey run against an external drive9-compatible service: no pods, no proxies
	// (unless Toxiproxy), and no audit unless DSN is given (then DSN names the service's database server).
	Target, APIKey string
	// ProvisionToken is sent on every provision request to an external target (X-Provision-Token):
	// an eventlogd run by someone else provisions only with its token. cmd/seqgate reads it from
	// SEQGATE_PROVISION_TOKEN, never from its command line. The run's own pods get a token of their own.
	ProvisionToken string
	// TenantID is the id of the tenant APIKey belongs to (the ledger's tenant, and where a profile
	// that names databases after tenants finds its events); default "external".
	TenantID string
	// Profile says how the external service provisions tenants and where their events live.
	Profile tgt.Options
	// Services are the services Profile and the pod profile's target may name (nil: service.Shipped,
	// the ones seqgate ships).
	Services service.Registry
	// ReadyTimeout bounds the wait for every provisioned tenant to become active (0: the pod
	// profile's ready.tenants, else DefaultReadyTimeout).
	ReadyTimeout time.Duration
	// ProvisionConcurrency is how many tenants are provisioned at once (0: DefaultProvisionConcurrency).
	ProvisionConcurrency int
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
	// Observe, when set, sees every ledger record as it is written (seqgate run --metrics-addr).
	Observe func(*ledger.Record)
	// RunID is the run's id; empty: <scenario>-<UTC time>. The agents of a sharded run share one.
	RunID string
	// Provenance is what the run judges (the builds, the pods' binary and flags, the overrides, the
	// scenario's hash): the run record carries it, with the machine's cores and load added when the
	// record is written; the end record carries the load at the end. Nil: the record has none.
	Provenance *ledger.Provenance
	// Shard, when set, makes this run agent K of N: it drives only its share of the tenants
	// (shard.Assign), injects the faults only as agent 1 (the others record them), and says so in its run record (CheckShard).
	Shard shard.Shard

	// consumerTransport, when set, wraps the transport of the consumers' HTTP client: a test's way
	// to make what the consumers read differ from what the service answered (a listing that lies).
	consumerTransport func(http.RoundTripper) http.RoundTripper
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
	// DroppedByTenant is Dropped per tenant, by the scenario's name (tenant_2; tenants with none are
	// absent); Tenants maps each name to the service's id.
	DroppedByTenant map[string]int64
	Tenants         []TenantName
	Acked           int64 // mutations answered 2xx
	Events          int64 // file_changed events delivered to all consumers
	// Resyncs, ResyncsFailed, Listed and Listing: the consumers' listings after resets, those that
	// failed, the files they found and the time they took, over all consumers.
	Resyncs, ResyncsFailed, Listed int64
	Listing                        time.Duration
	// LoadSeconds is how long the load phase took; ScheduledSeconds the scenario's duration, the
	// span the schedule spread its arrivals over (PerSecond divides by it).
	LoadSeconds      float64
	ScheduledSeconds float64
	// LoadStartSeconds is when the load began on the ledger's clock (seconds from its origin): the
	// origin of a scenario's fault times (at:), where the ledger, the summary and the report count
	// from the run's start; at: 15s is at 15 + LoadStartSeconds there.
	LoadStartSeconds float64
	Wall             time.Duration
	// CPU is each component's CPU over the load phase (nil: the load phase did not run).
	CPU *proccpu.Window
	// Audit is the audit's outcome (nil for a run without one: an external target without --dsn).
	Audit *AuditResult
}

// TenantName pairs a tenant's scenario name (tenant_2) with the id the service gave it.
type TenantName struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// PerSecond is n over the load phase: divided by the scheduled duration, so that an offered rate
// agrees with the scenario's configured rate, or by the elapsed time when the phase was cut short
// (Ctrl-C) and the schedule's later arrivals never came.
func (res *Result) PerSecond(n int64) float64 {
	d := res.ScheduledSeconds
	if d <= 0 || (res.LoadSeconds > 0 && res.LoadSeconds < d) {
		d = res.LoadSeconds
	}
	if d <= 0 {
		return 0
	}
	return float64(n) / d
}

// Run runs the scenario. Cleanup (heal, stop pods and proxies, remove a private DB) happens on every
// path, also when ctx is cancelled; on cancel the ledger is still finished, with end.reason
// "interrupted". The error is for runs that could not produce a ledger worth verifying.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := CheckShard(o); err != nil {
		return nil, err
	}
	s, closeLog, err := newState(o)
	if err != nil {
		return nil, err
	}
	defer closeLog()
	defer s.cleanup()
	if err := s.runPhases(ctx, phases); err != nil {
		return nil, err
	}
	return &s.res, nil
}
