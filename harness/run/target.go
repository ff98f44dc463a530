package run

import (
	"context"
	"database/sql"
	"log/slog"
	"strings"
	"time"

	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/harness/infra"
	"github.com/seqgate/seqgate/harness/load"
	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/harness/proxy"
	"github.com/seqgate/seqgate/harness/service"
	tgt "github.com/seqgate/seqgate/harness/target"
)

// A target is what a run drives. up brings it up or connects to it, filling sys as it goes (what is
// in sys when up fails is still torn down); provision creates the scenario's tenants on it.
type target interface {
	up(ctx context.Context, s *state, log *slog.Logger, sys *system) error
	provision(ctx context.Context, s *state, log *slog.Logger) ([]tenant, error)
}

// targetFor picks the target the options describe. A new target profile is its file and its case here.
func targetFor(o Options) target {
	if o.Target != "" {
		return &externalTarget{url: strings.TrimRight(o.Target, "/"), dsn: o.DSN, apiKey: o.APIKey, tenantID: o.TenantID,
			profile: o.Profile, services: o.Services, readyTimeout: o.ReadyTimeout, toxiproxy: o.Toxiproxy}
	}
	return eventlogdTarget{prof: o.PodProfile, services: o.Services}
}

// orShipped is r, or for none the services seqgate ships.
func orShipped(r service.Registry) service.Registry {
	if r == nil {
		return service.Shipped
	}
	return r
}

// tenantsTimeout bounds the wait for every provisioned tenant to become active: --ready-timeout,
// else the pod profile's ready.tenants (nil: none), else DefaultReadyTimeout.
func tenantsTimeout(flag time.Duration, prof *podprofile.Profile) time.Duration {
	if flag > 0 {
		return flag
	}
	if prof != nil && prof.Ready.Tenants > 0 {
		return prof.Ready.Tenants
	}
	return DefaultReadyTimeout
}

// system is what the up phase brought up or connected to. The later phases use what is there and
// do without what is not (no pods: no scraping and no pod faults; no direct connections: no audit).
type system struct {
	name    string             // the run record's target: eventlogd | external
	profile string             // the run record's profile: how the target lays out its tenants
	url     string             // an external target's base URL ("": the pods)
	db      *infra.DB          // a DB server the run opened (created databases in it)
	direct  map[string]*sql.DB // database -> direct connection, not proxied (the run's own databases)
	proxies *proxy.Set         // one proxy per database (nil: none)
	fleet   *pods.Fleet        // the pods (nil: none)
	// audited says the run reads the events tables (the run record's audit); tables is where each
	// tenant's events are (tenant id -> table), filled by provision, read by drain and audit.
	audited   bool
	tables    map[string]audit.Table
	extTables *tgt.Tables // an external target's database handles
	// adminToken and provisionToken are generated per run for the run's own pods (eventlogd
	// --admin-token, --provision-token, given in their environment): no other local user who reaches
	// their loopback ports can call the admin endpoints or make tenants. Empty for an external target.
	adminToken, provisionToken string
	// serviceDBs are databases the run's pods created on a --dsn server for the run's tenants (their
	// real names: drive9_<id>), dropped with the run's own.
	serviceDBs []string
	// metricsPath is where the pods serve their metrics ("": /metrics), lossCounters the pod profile's
	// counters that explain a loss, scraped beside the families the verifier reads.
	metricsPath  string
	lossCounters []string
	// wire is the service's API (the target profile's), set by provision: the load sends by it.
	wire *tgt.Wire
}

// endpoints lists where writers and consumers send: the pods (only those whose process runs, when
// alive is set), or the external target.
func (sys *system) endpoints(alive bool) []load.Endpoint {
	if sys.url != "" {
		return []load.Endpoint{{Name: "external", URL: sys.url}}
	}
	var out []load.Endpoint
	for _, p := range sys.fleet.Pods() {
		if !alive || p.Alive() {
			out = append(out, load.Endpoint{Name: p.Name, URL: p.URL()})
		}
	}
	return out
}

// baseURL is where provisioning and the first requests go.
func (sys *system) baseURL() string {
	if sys.url != "" {
		return sys.url
	}
	return sys.fleet.Pods()[0].URL()
}

// podNames are the run record's pods.
func (sys *system) podNames() []string {
	if sys.fleet == nil {
		return []string{"external"}
	}
	return sys.fleet.Names()
}

// close stops the pods and proxies, closes the direct connections and drops or removes the run's
// databases.
func (sys *system) close(databases []string) {
	if sys.fleet != nil {
		sys.fleet.Stop(10 * time.Second)
	}
	if sys.proxies != nil {
		sys.proxies.Close()
	}
	for _, db := range sys.direct {
		db.Close()
	}
	if sys.extTables != nil {
		_ = sys.extTables.Close()
	}
	if sys.db != nil {
		if sys.db.Kind == infra.DSN {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = sys.db.Drop(ctx, databases...)
			_ = sys.db.DropNamed(ctx, sys.serviceDBs...)
			cancel()
		}
		_ = sys.db.Close()
	}
}

// databases lists the logical databases of the run: meta and one per pool.
func (s *state) databases() []string {
	seen := map[string]bool{}
	out := []string{"meta"}
	for _, t := range s.sc.Expand() {
		if !seen[t.Pool] {
			seen[t.Pool] = true
			out = append(out, t.Pool)
		}
	}
	return out
}
