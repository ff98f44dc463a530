package kinds

import (
	"context"
	"fmt"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// TenantDBDownName is the name of the tenant-DB outage fault.
const TenantDBDownName = "tenant_db_down"

// DownParams are the parameters of tenant_db_down and meta_db_down (none: the outage lasts `for`).
type DownParams struct{}

// TenantDBDown declares tenant_db_down.
func TenantDBDown() fault.Def[DownParams] {
	return fault.Def[DownParams]{
		Name:      TenantDBDownName,
		Simulates: "the tenant DB is down: open connections break at once and new ones are refused for `for` (inserts fail fast and fill the retry buffer)",
		Mechanism: "toxiproxy Proxy.Stop (closes the listener and every connection); Heal is Proxy.Start on the same address",
		Targets:   fault.TargetTenant,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourceDB,
		Build: func(env fault.Env, target string, _ time.Duration, _ DownParams) (fault.Fault, error) {
			px, err := env.TenantProxy(target)
			if err != nil {
				return nil, err
			}
			return &dbDown{proxy: px}, nil
		},
	}
}

// dbDown takes a DB proxy down for the fault's span.
type dbDown struct {
	proxy fault.ToxicProxy
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
