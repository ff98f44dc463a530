package load

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/target"
	"github.com/seqgate/seqgate/ledger"
)

// Endpoint is one place mutations can be sent (a pod, or the external target).
type Endpoint struct {
	Name string // the ledger's pod name
	URL  string // base URL, no trailing slash
}

// Tenant is a provisioned tenant the writers act for.
type Tenant struct {
	ID    string // the service's tenant_id (the ledger's tenant)
	Key   string // API key
	Index int    // 1-based slot in the scenario, seeds its streams
	// Phase shifts its arrivals by this fraction of an interval (0 <= Phase < 1), so the tenants of a
	// group do not all fire at the same instant. The run sets it from the tenant's place in its whole
	// group, so a tenant keeps its schedule whichever agent of a sharded run drives it.
	Phase float64
}

// Block is one scenario load block bound to its tenants.
type Block struct {
	Index   int
	Load    scenario.Load
	Tenants []Tenant
}

// Config is what every writer of a run shares.
type Config struct {
	RunID     string
	Prefix    string // first path segment (default "seqgate")
	Seed      int64
	Start     time.Time // the run's clock origin
	Sink      ledger.Sink
	Endpoints func() []Endpoint // where to send; called per mutation so dead pods can be left out
	Client    *http.Client      // nil: Run makes one that keeps a connection per request slot
	// Wire is the service's API, the request of each op (nil: drive9's, target.Drive9Wire).
	Wire *target.Wire
}

// wire is the API the driver sends to.
func (d *Driver) wire() *target.Wire {
	if d.cfg.Wire != nil {
		return d.cfg.Wire
	}
	return target.Drive9Wire
}

// Stats are live totals over every writer (safe to read while running).
type Stats struct {
	Offered atomic.Int64 // arrivals the schedule produced
	Dropped atomic.Int64 // arrivals not sent: every request slot of their tenant was busy at the intended time
	Sent    atomic.Int64
	OK      atomic.Int64
	Err     atomic.Int64
	Timeout atomic.Int64
}

// Driver runs the load blocks of a run.
type Driver struct {
	cfg   Config
	Stats Stats
	rr    atomic.Uint64

	mu      sync.Mutex
	files   map[string][]string // tenant -> paths that exist (sources for rename, copy, chmod, delete)
	dropped map[string]int64    // tenant -> arrivals not sent in time
}

// NewDriver returns a Driver for cfg.
func NewDriver(cfg Config) *Driver {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	return &Driver{cfg: cfg, files: map[string][]string{}, dropped: map[string]int64{}}
}

// DroppedByTenant returns, per tenant id, the arrivals that could not be sent in time (every request
// slot of that tenant was busy). Tenants with none are absent. Safe while running.
func (d *Driver) DroppedByTenant() map[string]int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]int64, len(d.dropped))
	for t, n := range d.dropped {
		out[t] = n
	}
	return out
}

// drop counts an arrival of tenant that was not sent (every request slot busy at its intended time
// due) and writes its drop record: a run that did not apply its load has not tested it, and the
// verifier can only say so if the ledger shows it.
func (d *Driver) drop(tenant string, block int, due time.Time) {
	d.Stats.Dropped.Add(1)
	d.mu.Lock()
	d.dropped[tenant]++
	d.mu.Unlock()
	_ = d.cfg.Sink.Write(&ledger.Record{K: ledger.KindDrop, Tenant: tenant, IntendedT: due.Sub(d.cfg.Start).Nanoseconds(),
		Block: strconv.Itoa(block)})
}

// DefaultPrefix is the first path segment of every mutation when Config.Prefix is empty.
const DefaultPrefix = "seqgate"

// TenantDir is the folder of a tenant's mutations in a run whose Config.Prefix is empty:
// /<DefaultPrefix>/<run_id>/<tenant>/ (what a consumer lists when it resyncs).
func TenantDir(runID, tenant string) string {
	return "/" + DefaultPrefix + "/" + runID + "/" + tenant + "/"
}

// RunPrefix returns the path prefix of every mutation of the run: /<prefix>/<run_id>/.
func (d *Driver) RunPrefix() string { return "/" + d.cfg.Prefix + "/" + d.cfg.RunID + "/" }

// Path returns the unique path of mutation mid of tenant: /<prefix>/<run_id>/<tenant>/<mid>.
func (d *Driver) Path(tenant, mid string) string {
	return "/" + d.cfg.Prefix + "/" + d.cfg.RunID + "/" + tenant + "/" + mid
}

// Run drives every block from loadStart until its schedule ends or ctx is done, then waits for the
// requests in flight. Each tenant of a block has its own queue and MaxInFlight request slots: a
// tenant whose requests hang (a stalled DB) uses up only its own slots, so the other tenants of the
// block stay on schedule.
//
// Run is called once per Driver.
func (d *Driver) Run(ctx context.Context, loadStart time.Time, blocks []Block) {
	if d.cfg.Client == nil {
		// Room for an idle connection per request slot: after a burst (a backlog sent by a
		// process that was starved of CPU, or a service that stalled) the slots beyond the room
		// would each dial a new connection for their next request, and dials were a third of
		// the driver's CPU in a profile of such a backlog.
		slots := 0
		for _, b := range blocks {
			slots += max(b.Load.MaxInFlight, 0) * len(b.Tenants)
		}
		lim := newDialLimiter(maxDialsPerAddr)
		tr := &http.Transport{MaxIdleConnsPerHost: max(slots, 256), IdleConnTimeout: 30 * time.Second, DialContext: lim.DialContext}
		d.cfg.Client = &http.Client{Transport: tr}
		// The client is Run's own: once every request is answered, nothing dials on it again, and
		// no dial or idle connection outlives Run.
		defer func() {
			lim.Close()
			tr.CloseIdleConnections()
		}()
	}
	var sched, inflight sync.WaitGroup
	for _, b := range blocks {
		for _, t := range b.Tenants {
			q := newQueue(d, loadStart, b, t, &inflight)
			sched.Add(1)
			go func() {
				defer sched.Done()
				q.run(ctx)
			}()
		}
	}
	sched.Wait()
	inflight.Wait()
}

// take returns an existing file of tenant (removing it when consume is set), or "".
func (d *Driver) take(tenant string, pick int, consume bool) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	fs := d.files[tenant]
	if len(fs) == 0 {
		return ""
	}
	i := pick % len(fs)
	p := fs[i]
	if consume {
		fs[i] = fs[len(fs)-1]
		d.files[tenant] = fs[:len(fs)-1]
	}
	return p
}

func (d *Driver) keep(tenant, path string) {
	d.mu.Lock()
	d.files[tenant] = append(d.files[tenant], path)
	d.mu.Unlock()
}

func (d *Driver) now() int64 { return time.Since(d.cfg.Start).Nanoseconds() }
