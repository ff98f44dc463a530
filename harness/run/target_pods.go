package run

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/service"
	tgt "github.com/seqgate/seqgate/harness/target"
)

// provisionAdminDSN provisions the scenario's tenants on pods whose layout is admin_dsn (drive9's
// local provisioner): each through POST /v1/provision, the service creating the tenant's database on
// the server behind {tenant_dsn}; then it waits until each is active, and opens and checks every
// tenant's events table directly (not through the proxies), all before any load. Every tenant sits
// behind the one tenant_db proxy, so a tenant-DB fault acts on all of them.
func provisionAdminDSN(ctx context.Context, s *state, log *slog.Logger, prof *podprofile.Profile, services service.Registry) ([]tenant, error) {
	for _, g := range s.sc.Tenants {
		if g.Backlog != nil {
			return nil, fmt.Errorf("tenant group %q: backlog: only with pods of layout pools (the pod profile %s has layout %s: its service makes the tables)",
				g.Group, prof.Name, prof.Layout)
		}
	}
	p, err := services.Profile(tgt.Options{Profile: prof.Target}, true)
	if err != nil {
		return nil, err
	}
	s.sys.wire = p.Wire()
	if prof.Uses(podprofile.PhProvisionToken) {
		p.ProvisionToken = s.sys.provisionToken
	}
	var out []tenant
	var list []tgt.Tenant
	for _, slot := range s.sc.Expand() {
		tn, err := p.Provision(ctx, provisionClient, s.sys.baseURL(), slot.Pool)
		if err != nil {
			return nil, err
		}
		slot.Pool = podprofile.TenantDBProxy // the proxy a tenant-DB fault on this tenant acts on
		out = append(out, tenant{Tenant: slot, ID: tn.ID, Key: tn.Key})
		tn.Pool = slot.Pool
		list = append(list, tn)
		if name, err := p.Database(tn); err == nil {
			s.sys.serviceDBs = append(s.sys.serviceDBs, name)
		}
	}
	log.Info("tenants provisioned", "count", len(out), "profile", prof.Name)
	if err := waitActive(ctx, log, p, s.sys.baseURL(), list, tenantsTimeout(s.o.ReadyTimeout, prof), "pod profile "+prof.Name); err != nil {
		return nil, err
	}
	srv, err := tgt.ParseServer(s.sys.db.DirectDSN(""))
	if err != nil {
		return nil, err
	}
	tables, err := p.Open(ctx, srv, list)
	if err != nil {
		return nil, err
	}
	s.sys.extTables, s.sys.tables = tables, tables.ByTenant
	log.Info("events tables checked", "profile", prof.Name, "layout", p.Layout(), "tenants", len(list),
		"tenant_db_proxy", "every tenant's database is behind proxy "+podprofile.TenantDBProxy+": a tenant-DB fault reaches all of them")
	return out, nil
}
