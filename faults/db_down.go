package faults

import (
	"context"
	"fmt"
	"time"
)

// KindTenantDBDown is the name of the tenant-DB outage fault.
const KindTenantDBDown = "tenant_db_down"

// DownParams are the parameters of tenant_db_down and meta_db_down (none: the outage lasts `for`).
type DownParams struct{}

func tenantDBDownKind() Kind {
	return defineKind(Kind{
		Name:      KindTenantDBDown,
		Simulates: "the tenant DB is down: open connections break at once and new ones are refused for `for` (inserts fail fast and fill the retry buffer)",
		Mechanism: "toxiproxy Proxy.Stop (closes the listener and every connection); Heal is Proxy.Start on the same address",
		Targets:   TargetTenant,
		Timing:    TimingSpan,
		resource:  "db",
	}, DownParams{}, func(env Env, target string, _ time.Duration, _ DownParams) (Fault, error) {
		px, err := env.TenantProxy(target)
		if err != nil {
			return nil, err
		}
		return &dbDown{proxy: px}, nil
	})
}

// dbDown takes a DB proxy down for the fault's span.
type dbDown struct {
	proxy ToxicProxy
}

func (d *dbDown) Inject(ctx context.Context) error {
	if err := d.proxy.SetEnabled(ctx, false); err != nil {
		return fmt.Errorf("proxy %s: stop: %w", d.proxy.ProxyName(), err)
	}
	return nil
}

func (d *dbDown) Heal(ctx context.Context) error {
	if err := d.proxy.SetEnabled(ctx, true); err != nil {
		return fmt.Errorf("proxy %s: %w", d.proxy.ProxyName(), err)
	}
	return nil
}
