package run

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/harness/infra"
	"github.com/seqgate/seqgate/harness/load"
	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/harness/proxy"
	"github.com/seqgate/seqgate/harness/scenario"
	tgt "github.com/seqgate/seqgate/harness/target"
)

// eventlogdTarget is the reference service run by the harness: a DB server (private, docker or
// --dsn), one proxy per database (in-process, or on the --toxiproxy server), and the scenario's
// eventlogd pods.
type eventlogdTarget struct{}

func (eventlogdTarget) up(ctx context.Context, s *state, log *slog.Logger, sys *system) error {
	sys.name, sys.profile, sys.audited = "eventlogd", tgt.Eventlogd, true
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
	if err := db.Create(ctx, s.databases()...); err != nil {
		return err
	}
	for _, name := range s.databases() {
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
	type poolJSON struct {
		ID   string `json:"id"`
		Role string `json:"role"`
		DSN  string `json:"dsn"`
	}
	var pools []poolJSON
	var metaDSN string
	for _, name := range s.databases() {
		p, err := sys.proxies.Add(name, db.Addr)
		if err != nil {
			return err
		}
		dsn := db.ProxiedDSN(p.Addr(), name)
		if name == "meta" {
			metaDSN = dsn
			continue
		}
		role := "dedicated"
		if name == scenario.SharedPool {
			role = "shared"
		}
		pools = append(pools, poolJSON{ID: name, Role: role, DSN: dsn})
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
	b, _ := json.MarshalIndent(map[string]any{"pools": pools}, "", "  ")
	poolsPath := filepath.Join(s.o.Dir, "pools.json")
	if err := writeFile(s.o.Dir, "pools.json", b, 0o600); err != nil {
		return err
	}
	if sys.adminToken, err = newToken(); err != nil {
		return err
	}
	if sys.provisionToken, err = newToken(); err != nil {
		return err
	}
	args, env := eventlogdCommand(s.sc.Pods.Eventlogd, metaDSN, poolsPath, sys.adminToken, sys.provisionToken)
	log.Info("starting pods", "count", s.sc.Pods.Count, "eventlogd", s.o.Eventlogd)
	fleet, err := pods.Start(ctx, pods.Config{Binary: s.o.Eventlogd, Args: args, Env: env, LogDir: filepath.Join(s.o.Dir, "pods"),
		Start: s.start, Sink: s.sink, ReadyAfter: podReadyAfter(len(pools)), PodEnv: func(pod string) []string {
			if dsn, ok := podMetaDSN[pod]; ok {
				return []string{"EVENTLOGD_META_DSN=" + dsn}
			}
			return nil
		}}, s.sc.Pods.Count)
	if err != nil {
		return err
	}
	sys.fleet = fleet
	log.Info("pods ready", "pods", strings.Join(fleet.Names(), ","))
	return nil
}

// provision creates each tenant in its pool (the scenario's: tenant_<n>, shared_pool) through the
// pods' POST /v1/provision, several at once and spread over the pods (each pod rate-limits
// provisioning on its own), and notes where its events are: its pool's database, tenant_id column.
func (eventlogdTarget) provision(ctx context.Context, s *state, log *slog.Logger) ([]tenant, error) {
	p, err := tgt.New(tgt.Options{}, true)
	if err != nil {
		return nil, err
	}
	p.SendPool, p.ProvisionToken = true, s.sys.provisionToken
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
	return out, nil
}

// eventlogdCommand is every pod's arguments and extra environment. The meta DSN (which carries the
// --dsn password, if any) and the run's admin and provisioning tokens go in the environment, never on
// the command line that every local user can read; the pools file holding the pool DSNs is written
// 0600.
func eventlogdCommand(e scenario.Eventlogd, metaDSN, poolsPath, adminToken, provisionToken string) (args, env []string) {
	args = []string{"--pools", poolsPath, "--fs-events-retention", e.Retention.D().String(), "--admin"}
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
	return args, []string{"EVENTLOGD_META_DSN=" + metaDSN, "EVENTLOGD_ADMIN_TOKEN=" + adminToken, "EVENTLOGD_PROVISION_TOKEN=" + provisionToken}
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
