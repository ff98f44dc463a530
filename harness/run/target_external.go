package run

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"

	"github.com/seqgate/seqgate/harness/proxy"
)

// externalTarget is a drive9-compatible service the run does not start: no pods, no proxies unless
// toxiproxy names a toxiproxy server in front of its databases (then the run adopts that server's
// proxies, named after the service's pools), and an audit only when dsn names the service's own
// database.
type externalTarget struct {
	url, dsn, apiKey, toxiproxy string
}

func (t externalTarget) up(ctx context.Context, s *state, log *slog.Logger, sys *system) error {
	sys.name, sys.url = "external", t.url
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
		log.Info("external target: no pods, no proxies, no audit", "target", s.o.Target)
		return nil
	}
	// The external service's own database: every tenant's fs_events rows are read from it as is
	// (nothing is created or dropped there).
	d, err := sql.Open("mysql", t.dsn)
	if err != nil {
		return fmt.Errorf("--dsn: %w", err)
	}
	d.SetMaxOpenConns(4)
	for _, name := range s.databases() {
		sys.direct[name] = d
	}
	log.Info("external target, audited through --dsn", "target", s.o.Target)
	return d.PingContext(ctx)
}

// provision names the one tenant --api-key gives, or provisions each through POST /v1/provision
// (the service picks the pool).
func (t externalTarget) provision(ctx context.Context, s *state, log *slog.Logger) ([]tenant, error) {
	slots := s.sc.Expand()
	if t.apiKey != "" {
		if len(slots) != 1 {
			return nil, fmt.Errorf("--api-key names one tenant, but the scenario declares %d: give it one tenant, or omit --api-key to provision them", len(slots))
		}
		return []tenant{{Tenant: slots[0], ID: "external", Key: t.apiKey}}, nil
	}
	var out []tenant
	for _, slot := range slots {
		tn, pool, err := provisionHTTP(ctx, s.sys.baseURL(), slot, []byte("{}"))
		if err != nil {
			return nil, err
		}
		if pool != "" && pool != tn.Pool {
			// The service chose the pool: DB faults hit the proxy of that name. The --dsn handle
			// serves every pool of the service, so the audit finds the tenant under it too.
			if d, ok := s.sys.direct[tn.Pool]; ok {
				s.sys.direct[pool] = d
			}
			tn.Pool = pool
		}
		out = append(out, tn)
	}
	log.Info("tenants provisioned", "count", len(out))
	return out, nil
}
