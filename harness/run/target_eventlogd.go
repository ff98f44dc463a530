package run

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/harness/infra"
	"github.com/seqgate/seqgate/harness/load"
	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/harness/proxy"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
	tgt "github.com/seqgate/seqgate/harness/target"
)

// eventlogdTarget is the pods a run starts itself: a DB server (private, docker or --dsn), one proxy
// per database (in-process, or on the --toxiproxy server), and the scenario's pods, each started by
// the pod profile (harness/podprofile; nil: the built-in eventlogd one, seqgate's reference service).
type eventlogdTarget struct {
	prof     *podprofile.Profile
	services service.Registry // what the profile's target names (nil: the shipped services)
}

// profile is the pod profile the pods start by.
func (t eventlogdTarget) profile() *podprofile.Profile {
	if t.prof != nil {
		return t.prof
	}
	p, err := service.Shipped.Pods(service.Eventlogd)
	if err != nil {
		panic(err) // the shipped profiles are checked by harness/service's tests
	}
	return p
}

func (t eventlogdTarget) up(ctx context.Context, s *state, log *slog.Logger, sys *system) error {
	prof := t.profile()
	sys.name, sys.profile, sys.audited = "eventlogd", prof.Target, true
	if prof.Target != service.Eventlogd {
		sys.name = "external" // a service other than eventlogd, in pods the run started (the run record's pods)
	}
	if s.sc.Pods.Count < 1 {
		return fmt.Errorf("the scenario declares no pods (pods: {count: N}): seqgate runs eventlogd pods unless --target names a service")
	}
	prefix := ""
	if s.o.DSN != "" {
		prefix = "sg" + strings.ToLower(s.start.UTC().Format("20060102t150405")) + "_"
	}
	db, err := infra.Open(ctx, infra.Options{Infra: s.o.Infra, DSN: s.o.DSN, Prefix: prefix, LogPath: filepath.Join(s.o.Dir, "db.log")})
	if err != nil {
		return err
	}
	sys.db = db
	log.Info("database server", "kind", db.Kind, "addr", db.Addr)
	databases := s.databases()
	if prof.Layout == podprofile.LayoutAdminDSN {
		databases = []string{"meta"} // the pods create each tenant's database themselves
	}
	if err := db.Create(ctx, databases...); err != nil {
		return err
	}
	for _, name := range databases {
		d, err := sql.Open("mysql", db.DirectDSN(name))
		if err != nil {
			return err
		}
		d.SetMaxOpenConns(4)
		sys.direct[name] = d
	}
	if s.o.Toxiproxy != "" {
		set, err := proxy.NewServerSet(s.o.Toxiproxy)
		if err != nil {
			return err
		}
		sys.proxies = set
		log.Info("DB proxies on a toxiproxy server", "toxiproxy", s.o.Toxiproxy)
	} else {
		sys.proxies = proxy.NewSet()
	}
	vars := podprofile.Vars{podprofile.PhRetention: s.sc.Pods.Eventlogd.Retention.D().String()}
	for _, name := range databases {
		if _, err := sys.proxies.Add(name, db.Addr); err != nil {
			return err
		}
	}
	switch prof.Layout {
	case podprofile.LayoutPools:
		path, err := writePools(s, db, sys.proxies)
		if err != nil {
			return err
		}
		vars[podprofile.PhPoolsFile] = path
	case podprofile.LayoutAdminDSN:
		// Every tenant's database is on the server the admin DSN names: one proxy carries them all,
		// so a tenant-DB fault acts on every tenant (the log of the schedule says which).
		p, err := sys.proxies.Add(podprofile.TenantDBProxy, db.Addr)
		if err != nil {
			return err
		}
		vars[podprofile.PhTenantDSN] = db.ProxiedDSN(p.Addr(), "")
	}
	// Each pod reaches the meta DB through a proxy of its own, chained in front of the shared one:
	// a fault on "meta" still hits every pod, one on a pod's proxy (pod_meta_db_latency) only that
	// pod's meta connections.
	podMetaDSN := map[string]string{}
	for i := 1; i <= s.sc.Pods.Count; i++ {
		pod := fmt.Sprintf("pod-%d", i)
		p, err := sys.proxies.Add(PodMetaProxyName(pod), sys.proxies.Get("meta").Addr())
		if err != nil {
			return err
		}
		podMetaDSN[pod] = db.ProxiedDSN(p.Addr(), "meta")
	}
	if sys.adminToken, err = newToken(); err != nil {
		return err
	}
	if sys.provisionToken, err = newToken(); err != nil {
		return err
	}
	vars[podprofile.PhAdminToken], vars[podprofile.PhProvisionToken] = sys.adminToken, sys.provisionToken
	if prof.Uses(podprofile.PhDataDir) {
		dir := filepath.Join(s.o.Dir, "pods", "data")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		vars[podprofile.PhDataDir] = dir
	}
	log.Info("starting pods", "count", s.sc.Pods.Count, "profile", prof.Name, "binary", s.o.Eventlogd)
	fleet, err := pods.Start(ctx, pods.Config{Binary: s.o.Eventlogd, LogDir: filepath.Join(s.o.Dir, "pods"),
		Start: s.start, Sink: s.sink, AddrLine: prof.Ready.AddressLine, Health: prof.HealthPath(), ReadyAfter: max(prof.ReadyTimeout(), podReadyAfter(len(s.databases()))),
		Command: func(pod, listen string) ([]string, []string, error) {
			v := podprofile.Vars{podprofile.PhPod: pod, podprofile.PhListen: listen, podprofile.PhMetaDSN: podMetaDSN[pod]}
			for k, x := range vars {
				v[k] = x
			}
			return podCommand(prof, s.sc.Pods.Eventlogd, v)
		}}, s.sc.Pods.Count)
	if err != nil {
		return err
	}
	sys.fleet, sys.metricsPath, sys.lossCounters = fleet, prof.MetricsPath(), prof.LossCounters
	log.Info("pods ready", "pods", strings.Join(fleet.Names(), ","))
	return nil
}

// writePools writes pools.json (0600: it holds the pool DSNs): one entry per pool, each through its
// proxy, dedicated or shared.
func writePools(s *state, db *infra.DB, proxies *proxy.Set) (string, error) {
	type poolJSON struct {
		ID   string `json:"id"`
		Role string `json:"role"`
		DSN  string `json:"dsn"`
	}
	var pools []poolJSON
	for _, name := range s.databases() {
		if name == "meta" {
			continue
		}
		role := "dedicated"
		if name == scenario.SharedPool {
			role = "shared"
		}
		pools = append(pools, poolJSON{ID: name, Role: role, DSN: db.ProxiedDSN(proxies.Get(name).Addr(), name)})
	}
	b, _ := json.MarshalIndent(map[string]any{"pools": pools}, "", "  ")
	if err := writeFile(s.o.Dir, "pools.json", b, 0o600); err != nil {
		return "", err
	}
	return filepath.Join(s.o.Dir, "pools.json"), nil
}

// provision creates each tenant in its pool (the scenario's: tenant_<n>, shared_pool) through the
// pods' POST /v1/provision, several at once and spread over the pods (each pod rate-limits
// provisioning on its own), and notes where its events are: its pool's database, tenant_id column.
func (t eventlogdTarget) provision(ctx context.Context, s *state, log *slog.Logger) ([]tenant, error) {
	if t.profile().Layout == podprofile.LayoutAdminDSN {
		return provisionAdminDSN(ctx, s, log, t.profile(), orShipped(t.services))
	}
	p, err := orShipped(t.services).Profile(tgt.Options{Profile: t.profile().Target}, true)
	if err != nil {
		return nil, err
	}
	p.SendPool, p.ProvisionToken = true, s.sys.provisionToken
	s.sys.wire = p.Wire()
	s.sys.tables = map[string]audit.Table{}
	var mu sync.Mutex
	eps := s.sys.endpoints(true)
	if len(eps) == 0 { // no pod alive: the first one's error says so
		eps = []load.Endpoint{{Name: "pod-1", URL: s.sys.baseURL()}}
	}
	out, err := provisionEach(ctx, log, s.o.Progress, s.sc.Expand(), s.o.ProvisionConcurrency, func(ctx context.Context, slot scenario.Tenant) (tenant, error) {
		t, err := p.Provision(ctx, provisionClient, eps[slot.Index%len(eps)].URL, slot.Pool)
		if err != nil {
			return tenant{}, err
		}
		tb := audit.Table{DB: s.sys.direct[slot.Pool], Database: s.sys.db.Name(slot.Pool), TenantColumn: p.TenantColumn}
		mu.Lock()
		s.sys.tables[t.ID] = tb
		mu.Unlock()
		if b := slot.Backlog; b != nil {
			// Written directly, before any load or consumer: no stream has a cursor yet, so the rows sit
			// below every consumer's starting head, and the first write finds them old.
			t0 := time.Now()
			if err := tb.Backlog(ctx, t.ID, b.Rows, t0.Add(-b.Age.D())); err != nil {
				return tenant{}, err
			}
			log.Info("backlog written", "tenant", t.ID, "rows", b.Rows, "age", b.Age.D().String(), "took", time.Since(t0).Round(time.Millisecond).String())
		}
		return tenant{Tenant: slot, ID: t.ID, Key: t.Key}, nil
	})
	if err != nil {
		return nil, err
	}
	// eventlogd's tenants are usable once provisioned; another service's may need a wait.
	list := make([]tgt.Tenant, 0, len(out))
	for _, tn := range out {
		list = append(list, tgt.Tenant{ID: tn.ID, Key: tn.Key, Pool: tn.Pool})
	}
	if err := waitActive(ctx, log, p, s.sys.baseURL(), list, tenantsTimeout(s.o.ReadyTimeout, t.profile()), "pod profile "+t.profile().Name); err != nil {
		return nil, err
	}
	return out, nil
}

// podCommand is one pod's arguments and extra environment: the profile's, filled with vars, then for
// a profile that starts eventlogd the scenario's seeded defect and flags. Secrets (the meta DSN with
// the --dsn password, the run's tokens) are in the environment only, never on the command line every
// local user can read (the profile refuses a secret placeholder in args); the pools file holding the
// pool DSNs is written 0600.
func podCommand(prof *podprofile.Profile, e scenario.Eventlogd, vars podprofile.Vars) (args, env []string, err error) {
	args, env, err = prof.Expand(vars)
	if err != nil {
		return nil, nil, err
	}
	if !prof.EventlogdFlags {
		return args, env, nil
	}
	if e.Defect != "" {
		args = append(args, "--test-defects", "--defect", e.Defect)
	}
	names := make([]string, 0, len(e.Flags))
	for k := range e.Flags {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "--"+k+"="+e.Flags[k])
	}
	return args, env, nil
}

// newToken is a fresh random token (256 bits, hex).
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate a token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// podReadyAfter bounds a pod's start: eventlogd creates the schema of every pool it has not
// migrated before it listens, one pool after another, so a run of a thousand dedicated tenants
// waits for a thousand schemas (about 40 ms each on a loaded 2-core machine, both pods at once).
func podReadyAfter(pools int) time.Duration {
	return 30*time.Second + time.Duration(pools)*150*time.Millisecond
}

// PodMetaProxyName is the name of the proxy in front of one pod's meta DB connections.
func PodMetaProxyName(pod string) string { return "meta_" + pod }
