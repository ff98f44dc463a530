package faults

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// TargetClass says what a kind's target names.
type TargetClass string

// Target classes.
const (
	// TargetTenant: a tenant id (its DB proxy, its consumers), `random` or `all`.
	TargetTenant TargetClass = "tenant"
	// TargetPod: a pod name, `random` or `all`.
	TargetPod TargetClass = "pod"
	// TargetMeta: the single meta DB; the target is omitted or `meta`.
	TargetMeta TargetClass = "meta"
)

// Target keywords accepted wherever a name is.
const (
	TargetRandom = "random" // one target drawn from the scenario seed
	TargetAll    = "all"    // every target of the class at once
	TargetMetaDB = "meta"   // the meta DB (the only TargetMeta target)
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

// Kind describes one fault kind: its name, what it simulates, how it is made, what it targets and its
// typed parameters. Kinds are values in the explicit Registry list.
type Kind struct {
	Name      string
	Simulates string // what real-world failure this stands for
	Mechanism string // how it is made (toxiproxy toxic, signal, admin hook) and how Heal undoes it
	Targets   TargetClass
	Timing    Timing

	// resource names what two faults must not hold at once (db, pod, consumers), see conflict.
	resource string
	params   []ParamDoc
	// decode validates a params node (nil = defaults) and returns the canonical params map.
	decode func(node *yaml.Node) (map[string]any, error)
	// build binds the kind to one concrete target with decoded params.
	build func(env Env, target string, span time.Duration, params map[string]any) (Fault, error)
}

// Params returns the kind's parameters with their types, defaults, units and meaning.
func (k Kind) Params() []ParamDoc { return append([]ParamDoc(nil), k.params...) }

// defineKind ties a kind's typed parameter struct P (its zero-config defaults in def) to the generic
// decoding and documentation, so each kind file only writes its typed constructor.
func defineKind[P any](k Kind, def P, build func(env Env, target string, span time.Duration, p P) (Fault, error)) Kind {
	docs, err := paramDocs(def)
	if err != nil {
		panic(fmt.Sprintf("faults: kind %s: %v", k.Name, err))
	}
	k.params = docs
	k.decode = func(node *yaml.Node) (map[string]any, error) {
		p := def
		if err := decodeParams(node, &p, docs); err != nil {
			return nil, err
		}
		return canonicalParams(&p, docs), nil
	}
	k.build = func(env Env, target string, span time.Duration, m map[string]any) (Fault, error) {
		node, err := mapNode(m)
		if err != nil {
			return nil, err
		}
		p := def
		if err := decodeParams(node, &p, docs); err != nil {
			return nil, err
		}
		return build(env, target, span, p)
	}
	return k
}

// Registry is every fault kind, in the order `seqgate faults` prints them. It is an explicit list:
// adding a kind means adding its constructor here.
var Registry = mustRegistry(
	tenantDBStallKind(),
	tenantDBLatencyKind(),
	tenantDBDownKind(),
	metaDBStallKind(),
	metaDBLatencyKind(),
	metaDBDownKind(),
	podCrashKind(),
	podPauseKind(),
	podRestartKind(),
	outboxPollerStallKind(),
	eventInsertFailKind(),
	consumerSlowKind(),
	consumerDisconnectKind(),
)

func mustRegistry(kinds ...Kind) []Kind {
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.Name] {
			panic("faults: duplicate kind " + k.Name)
		}
		seen[k.Name] = true
	}
	return kinds
}

// Lookup returns the kind named name.
func Lookup(name string) (Kind, bool) {
	for _, k := range Registry {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// KindNames returns every registered kind name, for error messages.
func KindNames() []string {
	names := make([]string, len(Registry))
	for i, k := range Registry {
		names[i] = k.Name
	}
	return names
}

func unknownKind(name string) error {
	return fmt.Errorf("unknown fault kind %q (allowed: %s)", name, strings.Join(KindNames(), ", "))
}
