// Package fault is the contract between the fault kinds (package faults/kinds) and the machinery that
// schedules and runs them (package faults): what a kind declares (Def), the Fault it builds, and the
// Env it builds against. It holds no behaviour, so both sides import it without a cycle.
package fault

import (
	"context"
	"slices"
	"time"
)

// Fault is one concrete failure bound to its target: Inject starts it, Heal undoes it. The machinery
// guards every Fault a kind builds (Heal before Inject is refused, a second Heal is a no-op), so a kind
// only implements the two actions.
type Fault interface {
	Inject(ctx context.Context) error
	Heal(ctx context.Context) error
}

// TargetClass says what a kind's target names.
type TargetClass string

// Target classes.
const (
	// TargetTenant: a tenant (its DB proxy, its consumers), `random` or `all`.
	TargetTenant TargetClass = "tenant"
	// TargetPod: a pod name, `random` or `all`.
	TargetPod TargetClass = "pod"
	// TargetMeta: the single meta DB; the target is omitted or `meta`.
	TargetMeta TargetClass = "meta"
)

// Timing says how a kind uses the shared `for` duration.
type Timing string

// Timings.
const (
	// TimingSpan: the fault lasts `for` (required, > 0); Heal runs at at+for.
	TimingSpan Timing = "span"
	// TimingInstant: the fault is a single action at `at`; `for` must be omitted and Heal only undoes
	// leftovers (it is called right after Inject).
	TimingInstant Timing = "instant"
)

// Resource is what a fault holds on its target while it lasts; two faults on the same resource of
// the same target may not overlap.
type Resource string

// Resources a fault kind may hold.
const (
	ResourceDB        Resource = "db"        // a DB proxy (a tenant's DB or the meta DB), or a pod's link to it
	ResourcePod       Resource = "pod"       // an eventlogd pod process
	ResourceConsumers Resource = "consumers" // a tenant's SSE consumers
	ResourceEvents    Resource = "events"    // a tenant's event inserts
	ResourceTenant    Resource = "tenant"    // the tenant itself (its record in the meta DB)
)

// Resources is every Resource, in the order error messages list them.
var Resources = []Resource{ResourceDB, ResourcePod, ResourceConsumers, ResourceEvents, ResourceTenant}

// Valid reports whether r is one of Resources.
func (r Resource) Valid() bool { return slices.Contains(Resources, r) }

// Def declares one fault kind with its typed parameter struct P. P's fields carry the tags the
// machinery reads: `yaml` (the key), `help` (one line, printed by `seqgate faults`) and, for strings,
// `enum` (the allowed values, comma-separated). Field types are time.Duration, string, int or bool.
type Def[P any] struct {
	Name      string      // the kind's name in scenarios, schedule.json and the ledger
	Simulates string      // what real-world failure this stands for
	Mechanism string      // how it is made (toxiproxy toxic, signal, admin hook) and how Heal undoes it
	Targets   TargetClass // what its target names
	Timing    Timing      // span or instant
	// Resource names what two faults must not hold at once on the same target: the schedule refuses
	// (timeline) or skips (nemesis) overlapping faults on it. One of Resources: registering a kind
	// with any other panics, so a typo cannot turn the conflict check off.
	Resource Resource
	// Defaults are the parameters of a fault that gives none; a scenario's params override them key by key.
	Defaults P
	// Build binds the kind to one concrete target (a name of class Targets) with validated params;
	// span is the fault's `for` (0 for instant kinds). It fails when the target does not exist in env.
	Build func(env Env, target string, span time.Duration, p P) (Fault, error)
}
