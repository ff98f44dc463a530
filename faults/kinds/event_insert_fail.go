package kinds

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// EventInsertFailName is the name of the failing event insert fault.
const EventInsertFailName = "event_insert_fail"

// EventInsertFailParams are the parameters of event_insert_fail (none: the failure lasts `for`).
type EventInsertFailParams struct{}

// EventInsertFail declares event_insert_fail.
func EventInsertFail() fault.Def[EventInsertFailParams] {
	return fault.Def[EventInsertFailParams]{
		Name:      EventInsertFailName,
		Simulates: "the event insert fails while the mutation itself succeeds (an fs_events table or partition in trouble, an insert that always times out): every event of the tenant goes to the retry buffer, which overflows its per-tenant cap if the failure lasts (losses must be counted as tenant_cap, never silent)",
		Mechanism: "eventlogd's test-only admin failpoint (--admin) on every pod: POST /v1/admin/failpoint/event-insert?for=FOR&tenant=ID (hot-path event inserts of that tenant fail at once without touching the DB; retry flushes are unaffected); Heal posts for=0s. A pod holds one failpoint: schedule one event_insert_fail at a time and not with target all (a second one replaces the first). A pod restarted during the fault comes back without it",
		Targets:   fault.TargetTenant,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourceEvents,
		Build:     buildEventInsertFail,
	}
}

func buildEventInsertFail(env fault.Env, target string, span time.Duration, _ EventInsertFailParams) (fault.Fault, error) {
	id, pods, err := tenantOnPods(env, target, EventInsertFailName)
	if err != nil {
		return nil, err
	}
	return &eventInsertFail{tenant: id, span: span, pods: pods}, nil
}

// tenantOnPods resolves a tenant target to the service's tenant id (when the Env names tenants
// otherwise) and returns the admin client of every pod: the kinds that act on one tenant through
// the pods' admin endpoints. No pods (an external target) is an error naming the kind.
func tenantOnPods(env fault.Env, target, kind string) (string, []*admin, error) {
	id := target
	if m, ok := env.(fault.TenantIDs); ok {
		var err error
		if id, err = m.TenantID(target); err != nil {
			return "", nil, err
		}
	}
	var pods []*admin
	for _, pod := range env.PodNames() {
		a, err := adminOf(env, pod)
		if err != nil {
			return "", nil, err
		}
		pods = append(pods, a)
	}
	if len(pods) == 0 {
		return "", nil, errors.New(kind + ": no pods to ask (an external target has no admin endpoint)")
	}
	return id, pods, nil
}

// eventInsertFail arms the event-insert failpoint of one tenant on every pod (any pod may take its
// writes). The arm request carries the span, so pods disarm by themselves if the harness dies.
type eventInsertFail struct {
	tenant string
	span   time.Duration
	pods   []*admin
}

func (f *eventInsertFail) Inject(ctx context.Context) error { return f.arm(ctx, f.span) }

func (f *eventInsertFail) Heal(ctx context.Context) error { return f.arm(ctx, 0) }

func (f *eventInsertFail) arm(ctx context.Context, d time.Duration) error {
	path := "/v1/admin/failpoint/event-insert?for=" + url.QueryEscape(d.String()) + "&tenant=" + url.QueryEscape(f.tenant)
	var errs []error
	for _, p := range f.pods {
		errs = append(errs, p.post(ctx, path))
	}
	return errors.Join(errs...)
}
