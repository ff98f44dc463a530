package run

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/seqgate/seqgate/harness/proxy"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
	tgt "github.com/seqgate/seqgate/harness/target"
)

// DefaultReadyTimeout bounds the wait for provisioned tenants to become active (drive9 says
// "provisioning" for about 3 s).
const DefaultReadyTimeout = 60 * time.Second

// externalTarget is a drive9-compatible service the run does not start: no pods, no proxies unless
// toxiproxy names a toxiproxy server in front of its databases (then the run adopts that server's
// proxies, named after the service's pools), and an audit only when dsn names the service's
// database server. Its profile (package harness/target) says how it provisions tenants, reports
// them active, and where their events live.
type externalTarget struct {
	url, dsn, apiKey, tenantID, toxiproxy string
	profile                               tgt.Options
	services                              service.Registry // nil: the shipped services
	readyTimeout                          time.Duration

	p      *tgt.Profile // resolved by up
	server *tgt.Server  // --dsn, when given
}

func (t *externalTarget) up(ctx context.Context, s *state, log *slog.Logger, sys *system) error {
	sys.name, sys.url = "external", t.url
	p, err := orShipped(t.services).Profile(t.profile, t.dsn != "")
	if err != nil {
		return err
	}
	p.ProvisionToken = s.o.ProvisionToken
	t.p, sys.profile, sys.audited, sys.wire = p, p.Name, t.dsn != "", p.Wire()
	if s.sc.Pods.Count > 0 {
		log.Warn("pods: is ignored with --target (the service runs its own)")
	}
	for _, g := range s.sc.Tenants {
		if g.Backlog != nil {
			// A backlog is written into the events table of a database the harness runs; a service's
			// own table may need columns seqgate does not know.
			return fmt.Errorf("tenant group %q: backlog: only with eventlogd pods, not with --target", g.Group)
		}
	}
	if t.toxiproxy != "" {
		set, err := proxy.AdoptServerSet(t.toxiproxy)
		if err != nil {
			return err
		}
		sys.proxies = set
		log.Info("external target: DB faults through the toxiproxy server's proxies",
			"toxiproxy", t.toxiproxy, "proxies", strings.Join(set.Names(), ","))
	}
	if t.dsn == "" {
		log.Info("external target: no pods, no audit", "target", s.o.Target, "profile", p.Name, "toxiproxy", t.toxiproxy != "")
		return nil
	}
	if t.server, err = tgt.ParseServer(t.dsn); err != nil {
		return err
	}
	if t.apiKey != "" && t.tenantID == "" && p.NeedsTenantID() {
		return fmt.Errorf("--target-profile %s finds a tenant's events by its id (%s): give --tenant-id with --api-key, or drop --dsn to run without an audit",
			p.Name, p.Layout())
	}
	// The service's own databases: every tenant's fs_events rows are read from them as is (nothing is
	// created or dropped there), once provisioning has said which they are.
	log.Info("external target, audited through --dsn", "target", s.o.Target, "profile", p.Name, "layout", p.Layout())
	return nil
}

// provision names the one tenant --api-key gives, or provisions each through POST /v1/provision
// (the service picks the pool); then it waits until the service says every tenant is active and,
// with --dsn, opens each tenant's database and checks its events table, all before any load.
func (t *externalTarget) provision(ctx context.Context, s *state, log *slog.Logger) ([]tenant, error) {
	slots := s.slots()
	var out []tenant
	if t.apiKey != "" {
		if len(slots) != 1 {
			return nil, fmt.Errorf("--api-key names one tenant, but the scenario declares %d: give it one tenant, or omit --api-key to provision them", len(slots))
		}
		id := t.tenantID
		if id == "" {
			id = "external"
		}
		out = []tenant{{Tenant: slots[0], ID: id, Key: t.apiKey}}
	} else {
		var err error
		out, err = provisionEach(ctx, log, s.o.Progress, slots, s.o.ProvisionConcurrency, func(ctx context.Context, slot scenario.Tenant) (tenant, error) {
			tn, err := t.p.Provision(ctx, provisionClient, t.url, slot.Pool)
			if err != nil {
				return tenant{}, err
			}
			// The service chose the pool (eventlogd names it; else it is the one asked for): DB
			// faults hit the toxiproxy proxy of that name, and with --dsn the profile finds the
			// tenant's events in that pool's database (eventlogd's {pool}).
			slot.Pool = tn.Pool
			return tenant{Tenant: slot, ID: tn.ID, Key: tn.Key}, nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := t.waitReady(ctx, log, out); err != nil {
		return nil, err
	}
	return out, t.openTables(ctx, log, s.sys, out)
}

// waitReady waits until the service says every tenant is usable (waitActive).
func (t *externalTarget) waitReady(ctx context.Context, log *slog.Logger, ts []tenant) error {
	var list []tgt.Tenant
	for _, tn := range ts {
		list = append(list, tgt.Tenant{ID: tn.ID, Key: tn.Key, Pool: tn.Pool})
	}
	return waitActive(ctx, log, t.p, t.url, list, tenantsTimeout(t.readyTimeout, nil), "target profile "+t.p.Name)
}

// waitActive waits, within one timeout for all of them, until the service says each tenant is
// usable (at once for a profile whose tenants are usable when provisioned), so no consumer
// subscribes to (and no writer writes at) a tenant still being provisioned; who names the profile
// in the error.
func waitActive(ctx context.Context, log *slog.Logger, p *tgt.Profile, base string, ts []tgt.Tenant, timeout time.Duration, who string) error {
	if p.Ready == tgt.ReadyAtOnce {
		return nil
	}
	begin := time.Now()
	for _, tn := range ts {
		if err := p.WaitReady(ctx, provisionClient, base, tn, max(timeout-time.Since(begin), 0), 200*time.Millisecond); err != nil {
			return fmt.Errorf("%s: %w", who, err)
		}
	}
	log.Info("tenants active", "count", len(ts), "took", time.Since(begin).Round(time.Millisecond))
	return nil
}

// openTables finds where each tenant's events live and checks their schema: a missing database,
// table or column stops the run here, before any load, with an error that names it.
func (t *externalTarget) openTables(ctx context.Context, log *slog.Logger, sys *system, ts []tenant) error {
	if t.server == nil {
		return nil
	}
	var list []tgt.Tenant
	for _, tn := range ts {
		list = append(list, tgt.Tenant{ID: tn.ID, Key: tn.Key, Pool: tn.Pool})
	}
	tables, err := t.p.Open(ctx, t.server, list)
	if err != nil {
		return err
	}
	sys.extTables, sys.tables = tables, tables.ByTenant
	log.Info("events tables checked", "profile", t.p.Name, "layout", t.p.Layout(), "tenants", len(list))
	return nil
}
