package kinds

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// TenantDeleteName is the name of the tenant deletion fault.
const TenantDeleteName = "tenant_delete"

// TenantDeleteParams are the parameters of tenant_delete (none: a deletion is one action).
type TenantDeleteParams struct{}

// TenantDelete declares tenant_delete.
func TenantDelete() fault.Def[TenantDeleteParams] {
	return fault.Def[TenantDeleteParams]{
		Name:      TenantDeleteName,
		Simulates: "a tenant is deleted while its writers and consumers run (an account closed, a workspace removed): its key stops working, its open streams end, and events still in a retry buffer are dropped and counted as tenant_gone, never written into the deleted tenant's database",
		Mechanism: "eventlogd's test-only admin endpoint (--admin): DELETE /v1/admin/tenants/ID on the first pod that answers (the deletion is in the shared meta DB, so one pod is enough); instant (no `for`), never undone. The harness then stops waiting for the tenant's consumers in the drain, and the verifier does not count what they could no longer receive as undelivered (docs/ledger-v1.md)",
		Targets:   fault.TargetTenant,
		Timing:    fault.TimingInstant,
		Resource:  fault.ResourceTenant,
		Build:     buildTenantDelete,
	}
}

func buildTenantDelete(env fault.Env, target string, _ time.Duration, _ TenantDeleteParams) (fault.Fault, error) {
	id, pods, err := tenantOnPods(env, target, TenantDeleteName)
	if err != nil {
		return nil, err
	}
	f := &tenantDelete{name: target, id: id, pods: pods}
	if g, ok := env.(fault.GoneTenants); ok {
		f.gone = g
	}
	return f, nil
}

// tenantDelete deletes one tenant through the first pod that answers. Heal has nothing to undo.
type tenantDelete struct {
	name, id string
	pods     []*admin
	gone     fault.GoneTenants // nil: the Env does not track deletions
}

func (f *tenantDelete) Inject(ctx context.Context) error {
	var errs []error
	for _, p := range f.pods {
		err := p.do(ctx, http.MethodDelete, "/v1/admin/tenants/"+url.PathEscape(f.id))
		if err == nil {
			if f.gone != nil {
				f.gone.TenantDeleted(f.name)
			}
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("delete tenant %s (%s): no pod could: %w", f.name, f.id, errors.Join(errs...))
}

func (f *tenantDelete) Heal(context.Context) error { return nil }
