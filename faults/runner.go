package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/ledger"
)

// Recorder receives the `fault` ledger records (phase start and stop) the Runner produces. It must be
// safe for concurrent use (ledger.Writer.Write is).
type Recorder func(rec *ledger.Record)

// Clock returns the time since the run started on the harness's monotonic clock (the ledger's `t`).
type Clock func() time.Duration

// Runner injects and heals a schedule's faults at their times against an Env.
type Runner struct {
	record Recorder
	now    Clock
	items  []*runItem

	mu     sync.Mutex
	closed bool // set by HealAll: nothing is injected after it
}

type runItem struct {
	inst   Instance
	tenant string // the service's tenant id of a fault on one tenant, for its records ("" otherwise)
	fault  *guard
	mu     sync.Mutex // serializes heal so the stop record is written once
}

// NewRunner binds every instance to its targets in env (so a bad target name fails before the run, not
// in the middle of it). record may be nil (no records); now must not be nil.
func NewRunner(env Env, instances []Instance, record Recorder, now Clock) (*Runner, error) {
	if record == nil {
		record = func(*ledger.Record) {}
	}
	r := &Runner{record: record, now: now}
	var errs []error
	for _, in := range instances {
		f, err := Build(env, in)
		if err != nil {
			errs = append(errs, &Error{ID: in.ID, Kind: in.Kind, Phase: "build", Err: err})
			continue
		}
		r.items = append(r.items, &runItem{inst: in, tenant: tenantOf(env, in), fault: guarded(f)})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

// NewRecordOnly is a Runner that injects nothing: at each instance's times it only writes the start
// and stop records, so that an agent of a sharded run that does not own the faults still has them in
// its ledger (the owner, agent owner, injects them). Every record carries injected_by = owner.
func NewRecordOnly(instances []Instance, owner int, record Recorder, now Clock) *Runner {
	if record == nil {
		record = func(*ledger.Record) {}
	}
	r := &Runner{record: func(rec *ledger.Record) { rec.InjectedBy = owner; record(rec) }, now: now}
	for _, in := range instances {
		r.items = append(r.items, &runItem{inst: in, fault: guarded(recordOnly{})})
	}
	return r
}

// recordOnly is the fault of a record-only Runner: nothing to inject or heal.
type recordOnly struct{}

func (recordOnly) Inject(context.Context) error { return nil }
func (recordOnly) Heal(context.Context) error   { return nil }

// tenantOf is the service's tenant id a fault on exactly one tenant acts on: the ledger's fault
// record names it beside the target (which may be a slot name, tenant_<N>), so a verifier can tell
// which tenant it hit without knowing the harness's naming.
func tenantOf(env Env, in Instance) string {
	k, ok := Lookup(in.Kind)
	if !ok || k.Targets != TargetTenant || len(in.Targets) != 1 {
		return ""
	}
	m, ok := env.(TenantIDs)
	if !ok {
		return in.Targets[0] // the Env names tenants by their ids
	}
	id, err := m.TenantID(in.Targets[0])
	if err != nil {
		return ""
	}
	return id
}

// Build binds one instance to its concrete targets: a Fault whose Heal is refused before Inject and is
// idempotent after a successful Heal. Target "all" yields one fault acting on every name in Targets.
func Build(env Env, in Instance) (Fault, error) {
	k, ok := Lookup(in.Kind)
	if !ok {
		return nil, unknownKind(in.Kind)
	}
	if len(in.Targets) == 0 {
		return nil, fmt.Errorf("kind %s: no targets", in.Kind)
	}
	params := in.Params
	if params == nil {
		params = k.Defaults()
	}
	if params.kind() != k.Name {
		return nil, fmt.Errorf("kind %s: given the params of kind %s", k.Name, params.kind())
	}
	var parts multi
	for _, t := range in.Targets {
		f, err := params.build(env, t, in.For)
		if err != nil {
			return nil, fmt.Errorf("%s on %s: %w", in.Kind, t, err)
		}
		parts = append(parts, guarded(f))
	}
	if len(parts) == 1 {
		return parts[0], nil // already guarded
	}
	return guarded(parts), nil
}

// Run injects each fault at its At and heals it at its End, concurrently, and returns once every
// fault's turn is over or ctx is done. It returns the inject and heal failures (*Error, joined); any
// failure makes the run inconclusive. Faults still active when ctx ends are left for HealAll.
func (r *Runner) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(r.items))
	for i, it := range r.items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.runOne(ctx, it)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *Runner) runOne(ctx context.Context, it *runItem) error {
	if !r.sleepUntil(ctx, it.inst.At) {
		return nil
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil
	}
	r.emit(it, "start", nil)
	if err := it.fault.Inject(ctx); err != nil {
		if ctx.Err() != nil {
			// Interrupted (end of the load phase, Ctrl-C), not broken: HealAll finishes or undoes it
			// and reports only what it cannot heal.
			return nil
		}
		ierr := &Error{ID: it.inst.ID, Kind: it.inst.Kind, Phase: "inject", Err: err}
		// Undo whatever part of it happened now rather than at its end.
		return errors.Join(ierr, r.heal(context.WithoutCancel(ctx), it, err))
	}
	if !r.sleepUntil(ctx, it.inst.End()) {
		return nil
	}
	return r.heal(ctx, it, nil)
}

// heal heals one item and writes its stop record; cause is an inject error to carry in the record.
func (r *Runner) heal(ctx context.Context, it *runItem, cause error) error {
	it.mu.Lock()
	defer it.mu.Unlock()
	if !it.fault.active() {
		return nil
	}
	err := it.fault.Heal(ctx)
	if err != nil && ctx.Err() != nil {
		return nil // interrupted: the fault stays active and HealAll, with its own context, retries
	}
	r.emit(it, "stop", errors.Join(cause, err))
	if err != nil {
		return &Error{ID: it.inst.ID, Kind: it.inst.Kind, Phase: "heal", Err: err}
	}
	return nil
}

// HealAll heals every fault that is still active (injected, not healed) and stops the Runner from
// injecting anything more. Call it before the drain, on Ctrl-C and on a harness error, with a context
// that is not already cancelled. It returns every heal failure (*Error, joined).
func (r *Runner) HealAll(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	var errs []error
	for _, it := range r.items {
		errs = append(errs, r.heal(ctx, it, nil))
	}
	return errors.Join(errs...)
}

// activeIDs returns the ids of the faults injected and not yet healed.
func (r *Runner) activeIDs() []string {
	var ids []string
	for _, it := range r.items {
		if it.fault.active() {
			ids = append(ids, it.inst.ID)
		}
	}
	return ids
}

// ActiveLabels names the faults injected and not yet healed for people: id, kind and stable target
// names, e.g. "f002 tenant_db_stall(tenant_1)".
func (r *Runner) ActiveLabels() []string {
	var out []string
	for _, it := range r.items {
		if it.fault.active() {
			target := strings.Join(it.inst.Slots, ",")
			if target == "" {
				target = it.inst.Target
			}
			out = append(out, fmt.Sprintf("%s %s(%s)", it.inst.ID, it.inst.Kind, target))
		}
	}
	return out
}

func (r *Runner) sleepUntil(ctx context.Context, at time.Duration) bool {
	if d := at - r.now(); d > 0 {
		return sleep.For(ctx, d)
	}
	return ctx.Err() == nil
}

func (r *Runner) emit(it *runItem, phase string, err error) {
	rec := &ledger.Record{
		K:      ledger.KindFault,
		ID:     it.inst.ID,
		Kind:   it.inst.Kind,
		Target: it.inst.Target,
		Tenant: it.tenant,
		Phase:  phase,
		T:      int64(r.now()),
		Params: paramsMap(it.inst.Params),
	}
	if err != nil {
		rec.Err = err.Error()
	}
	r.record(rec)
}
