package run

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seqgate/seqgate/harness/consumer"
	"github.com/seqgate/seqgate/harness/infra"
	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/harness/proxy"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/ledger"
)

// databases lists the logical databases of the run: meta and one per pool.
func (r *runner) databases() []string {
	seen := map[string]bool{}
	out := []string{"meta"}
	for _, t := range r.sc.Expand() {
		if !seen[t.Pool] {
			seen[t.Pool] = true
			out = append(out, t.Pool)
		}
	}
	return out
}

// up starts the DB server, the proxies and the pods (or, for an external target, only what --dsn gives).
func (r *runner) up(ctx context.Context) error {
	if r.o.Target != "" {
		if r.o.Toxiproxy != "" {
			set, err := proxy.AdoptServerSet(r.o.Toxiproxy)
			if err != nil {
				return err
			}
			r.proxies = set
			r.log.Info("external target: DB faults through the toxiproxy server's proxies", "phase", "up",
				"toxiproxy", r.o.Toxiproxy, "proxies", strings.Join(set.Names(), ","))
		}
		if r.o.DSN == "" {
			r.log.Info("external target: no pods, no proxies, no audit", "phase", "up", "target", r.o.Target)
			return nil
		}
		// The external service's own database: every tenant's fs_events rows are read from it as is
		// (nothing is created or dropped there).
		d, err := sql.Open("mysql", r.o.DSN)
		if err != nil {
			return fmt.Errorf("--dsn: %w", err)
		}
		d.SetMaxOpenConns(4)
		for _, name := range r.databases() {
			r.direct[name] = d
		}
		r.log.Info("external target, audited through --dsn", "phase", "up", "target", r.o.Target)
		return d.PingContext(ctx)
	}
	prefix := ""
	if r.o.DSN != "" {
		prefix = "sg" + strings.ToLower(r.start.UTC().Format("20060102t150405")) + "_"
	}
	db, err := infra.Open(ctx, infra.Options{Infra: r.o.Infra, DSN: r.o.DSN, Prefix: prefix, LogPath: filepath.Join(r.o.Dir, "db.log")})
	if err != nil {
		return err
	}
	r.db = db
	r.log.Info("database server", "phase", "up", "kind", db.Kind, "addr", db.Addr)
	if err := db.Create(ctx, r.databases()...); err != nil {
		return err
	}
	for _, name := range r.databases() {
		d, err := sql.Open("mysql", db.DirectDSN(name))
		if err != nil {
			return err
		}
		d.SetMaxOpenConns(4)
		r.direct[name] = d
	}
	if r.o.Toxiproxy != "" {
		set, err := proxy.NewServerSet(r.o.Toxiproxy)
		if err != nil {
			return err
		}
		r.proxies = set
	} else {
		r.proxies = proxy.NewSet()
	}
	type poolJSON struct {
		ID   string `json:"id"`
		Role string `json:"role"`
		DSN  string `json:"dsn"`
	}
	var pools []poolJSON
	var metaDSN string
	for _, name := range r.databases() {
		p, err := r.proxies.Add(name, db.Addr)
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
	b, _ := json.MarshalIndent(map[string]any{"pools": pools}, "", "  ")
	poolsPath := filepath.Join(r.o.Dir, "pools.json")
	if err := os.WriteFile(poolsPath, b, 0o600); err != nil {
		return err
	}
	e := r.sc.Pods.Eventlogd
	args := []string{"--meta-dsn", metaDSN, "--pools", poolsPath, "--fs-events-retention", e.Retention.D().String(), "--admin"}
	if e.Defect != "" {
		args = append(args, "--defect", e.Defect)
	}
	names := make([]string, 0, len(e.Flags))
	for k := range e.Flags {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "--"+k+"="+e.Flags[k])
	}
	r.log.Info("starting pods", "phase", "up", "count", r.sc.Pods.Count, "eventlogd", r.o.Eventlogd)
	fleet, err := pods.Start(ctx, pods.Config{Binary: r.o.Eventlogd, Args: args, LogDir: filepath.Join(r.o.Dir, "pods"),
		Start: r.start, Sink: r.sink}, r.sc.Pods.Count)
	if err != nil {
		return err
	}
	r.fleet = fleet
	r.log.Info("pods ready", "phase", "up", "pods", strings.Join(fleet.Names(), ","))
	return nil
}

// baseURL is where provisioning and the first requests go.
func (r *runner) baseURL() string {
	if r.o.Target != "" {
		return strings.TrimRight(r.o.Target, "/")
	}
	return r.fleet.Pods()[0].URL()
}

// provision creates every tenant of the scenario in its pool and learns its id and key.
func (r *runner) provision(ctx context.Context) error {
	slots := r.sc.Expand()
	if r.o.Target != "" && r.o.APIKey != "" {
		if len(slots) != 1 {
			return fmt.Errorf("--api-key names one tenant, but the scenario declares %d: give it one tenant, or omit --api-key to provision them", len(slots))
		}
		r.tenants = []tenant{{Tenant: slots[0], ID: "external", Key: r.o.APIKey}}
		return nil
	}
	for _, s := range slots {
		body := []byte("{}")
		if r.o.Target == "" {
			body, _ = json.Marshal(map[string]string{"pool": s.Pool})
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.baseURL()+"/v1/provision", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := r.client.Do(req)
		if err != nil {
			return err
		}
		var out struct {
			TenantID string `json:"tenant_id"`
			APIKey   string `json:"api_key"`
			Pool     string `json:"pool"` // eventlogd says where it put the tenant; drive9 does not
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 || json.Unmarshal(b, &out) != nil || out.TenantID == "" || out.APIKey == "" {
			return fmt.Errorf("POST /v1/provision (pool %s): HTTP %d %s", s.Pool, resp.StatusCode, strings.TrimSpace(string(b)))
		}
		if r.o.Target != "" && out.Pool != "" {
			s.Pool = out.Pool // the service chose the pool: DB faults hit the proxy of that name
		}
		r.tenants = append(r.tenants, tenant{Tenant: s, ID: out.TenantID, Key: out.APIKey})
	}
	r.log.Info("tenants provisioned", "phase", "provision", "count", len(r.tenants))
	return nil
}

// header writes the run record (and the pod records held back until now).
func (r *runner) header() error {
	r.env = &env{pool: map[string]string{}, ids: map[string]string{}, consumers: map[string][]*consumer.Consumer{}, proxies: r.proxies, fleet: r.fleet}
	for _, t := range r.tenants {
		r.env.tenants = append(r.env.tenants, t.Name())
		r.env.pool[t.Name()] = t.Pool
		r.env.ids[t.Name()] = t.ID
	}
	rec := &ledger.Record{K: ledger.KindRun, V: ledger.Version, RunID: r.runID, Scenario: r.sc.Name, Seed: r.sc.Seed,
		StartUnixNs: r.start.UnixNano(), Budget: r.sc.Budget, Target: "eventlogd", Thresholds: r.sc.Thresholds}
	if r.o.Target != "" {
		rec.Target = "external"
	}
	for _, t := range r.tenants {
		rec.Tenants = append(rec.Tenants, ledger.Tenant{ID: t.ID, Mode: t.Mode, Cold: t.Cold})
	}
	if r.fleet != nil {
		rec.Pods = r.fleet.Names()
	} else {
		rec.Pods = []string{"external"}
	}
	return r.sink.header(rec)
}
