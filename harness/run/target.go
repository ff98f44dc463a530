package run

import (
	"context"
	"fmt"
	"time"

	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/harness/target"
	"github.com/seqgate/seqgate/ledger"
)

// DefaultReadyTimeout bounds the wait for provisioned tenants to become active (drive9 says
// "provisioning" for about 3 s).
const DefaultReadyTimeout = 60 * time.Second

// resolveProfile picks the target profile: the flags' for an external target, eventlogd's (with no
// flag overrides: seqgate lays those databases out itself) for the run's own pods.
func (r *runner) resolveProfile() error {
	o := target.Options{}
	if r.o.Target != "" {
		o = r.o.Profile
	}
	p, err := target.New(o, r.o.Target == "" || r.o.DSN != "")
	if err != nil {
		return err
	}
	r.profile = p
	p.SendPool = r.o.Target == "" // our own pods hold the scenario's pools (tenant_<n>, shared_pool)
	if r.o.Target != "" && r.o.DSN != "" {
		if r.server, err = target.ParseServer(r.o.DSN); err != nil {
			return err
		}
		if r.o.APIKey != "" && r.o.TenantID == "" && p.NeedsTenantID() {
			return fmt.Errorf("--target-profile %s finds a tenant's events by its id (%s): give --tenant-id with --api-key, or drop --dsn to run without an audit",
				p.Name, p.Layout())
		}
	}
	return nil
}

// auditing reports whether this run reads the events table (its own DB, or --dsn of a target).
func (r *runner) auditing() bool { return r.o.Target == "" || r.o.DSN != "" }

// waitReady waits, within one ready timeout for all of them, until the service says every tenant is
// usable, so no consumer subscribes to (and no writer writes at) a tenant still being provisioned.
func (r *runner) waitReady(ctx context.Context) error {
	if r.profile.Ready == target.ReadyAtOnce {
		return nil
	}
	timeout := r.o.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	begin := time.Now()
	for _, t := range r.tenants {
		left := timeout - time.Since(begin)
		if err := r.profile.WaitReady(ctx, r.client, r.baseURL(), target.Tenant{ID: t.ID, Key: t.Key, Pool: t.Pool}, max(left, 0), 200*time.Millisecond); err != nil {
			return fmt.Errorf("target profile %s: %w", r.profile.Name, err)
		}
	}
	r.log.Info("tenants active", "phase", "provision", "count", len(r.tenants), "took", time.Since(begin).Round(time.Millisecond))
	return nil
}

// openTables finds where each tenant's events live and checks their schema, before any load: a
// missing database, table or column stops the run here with an error that names it.
func (r *runner) openTables(ctx context.Context) error {
	r.tables = map[string]audit.Table{}
	if r.o.Target == "" {
		for _, t := range r.tenants {
			r.tables[t.ID] = audit.Table{DB: r.direct[t.Pool], Database: r.db.Name(t.Pool), TenantColumn: "tenant_id"}
		}
		return nil
	}
	if r.server == nil {
		return nil
	}
	var ts []target.Tenant
	for _, t := range r.tenants {
		ts = append(ts, target.Tenant{ID: t.ID, Key: t.Key, Pool: t.Pool})
	}
	tables, err := r.profile.Open(ctx, r.server, ts)
	if err != nil {
		return err
	}
	r.extTables = tables
	r.tables = tables.ByTenant
	r.log.Info("events tables checked", "phase", "provision", "profile", r.profile.Name, "layout", r.profile.Layout(), "tenants", len(ts))
	return nil
}

// auditPhase writes the persisted records (every fs_events row of this run, tenant by tenant) and
// then the audit record with the outcome, ok or not: the verifier must not take a run whose audit
// failed for one whose events were all checked.
func (r *runner) auditPhase() {
	if !r.auditing() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ids := make([]string, 0, len(r.tenants))
	for _, t := range r.tenants {
		ids = append(ids, t.ID)
	}
	o := audit.Run(ctx, ids, r.tables, func(id string) string { return r.driver.Path(id, "") }, r.w)
	rec := &ledger.Record{K: ledger.KindAudit, T: r.now(), OK: o.OK(), AuditTenants: int64(o.Tenants), Rows: int64(o.Rows)}
	if o.Err != nil {
		rec.Error = o.Err.Error()
		r.log.Error("audit failed", "phase", "audit", "tenants", o.Tenants, "of", len(ids), "persisted", o.Rows, "err", o.Err)
	} else {
		r.log.Info("audit finished", "phase", "audit", "tenants", o.Tenants, "persisted", o.Rows)
	}
	r.res.Audit = &AuditResult{OK: o.OK(), Tenants: o.Tenants, Rows: o.Rows, Error: rec.Error}
	if err := r.w.Write(rec); err != nil {
		r.log.Error("audit record not written", "phase", "audit", "err", err)
	}
}

// AuditResult is the outcome of the run's audit, as its ledger record says.
type AuditResult struct {
	OK      bool   `json:"ok"`
	Tenants int    `json:"tenants"`
	Rows    int    `json:"rows"`
	Error   string `json:"error,omitempty"`
}
