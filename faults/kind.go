package faults

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seqgate/seqgate/faults/fault"
)

// The contract between the kinds and this package lives in package faults/fault (so faults/kinds can
// use it without importing the machinery); these aliases keep the names the harness and the docs use.
type (
	// Env is everything a fault needs from the harness (see fault.Env).
	Env = fault.Env
	// Targets names what faults can hit (see fault.Targets).
	Targets = fault.Targets
	// Proxies hands out the toxiproxy proxies in front of the databases (see fault.Proxies).
	Proxies = fault.Proxies
	// ToxicProxy is one proxy a DB fault acts on, in-process or on a toxiproxy server (see
	// fault.ToxicProxy).
	ToxicProxy = fault.ToxicProxy
	// Pods hands out pod handles and admin endpoints (see fault.Pods).
	Pods = fault.Pods
	// Consumers hands out a tenant's SSE consumers (see fault.Consumers).
	Consumers = fault.Consumers
	// TenantIDs maps tenant names to service tenant ids, optionally (see fault.TenantIDs).
	TenantIDs = fault.TenantIDs
	// SharedProxies names the tenants behind a tenant's DB proxy, optionally (see fault.SharedProxies).
	SharedProxies = fault.SharedProxies
	// GoneTenants learns which tenants a fault deleted, optionally (see fault.GoneTenants).
	GoneTenants = fault.GoneTenants
	// PodMetaProxies hands out one pod's meta DB proxy, optionally (see fault.PodMetaProxies).
	PodMetaProxies = fault.PodMetaProxies
	// AdminTokens hands out the pods' admin token, optionally (see fault.AdminTokens).
	AdminTokens = fault.AdminTokens
	// Pod is one service process (see fault.Pod).
	Pod = fault.Pod
	// Consumer is one SSE subscriber (see fault.Consumer).
	Consumer = fault.Consumer
	// Fault is one concrete failure bound to its target (see fault.Fault).
	Fault = fault.Fault
	// TargetClass says what a kind's target names (see fault.TargetClass).
	TargetClass = fault.TargetClass
	// Timing says how a kind uses `for` (see fault.Timing).
	Timing = fault.Timing
)

// Target classes and timings, as in package fault.
const (
	TargetTenant  = fault.TargetTenant
	TargetPod     = fault.TargetPod
	TargetMeta    = fault.TargetMeta
	TimingSpan    = fault.TimingSpan
	TimingInstant = fault.TimingInstant
)

// Target keywords accepted wherever a name is.
const (
	TargetRandom = "random" // one target drawn from the scenario seed
	TargetAll    = "all"    // every target of the class at once
	TargetMetaDB = "meta"   // the meta DB (the only TargetMeta target)
)

// Kind is one registered fault kind: its name, what it simulates, how it is made, what it targets and
// its parameters. It is a fault.Def with its parameter type P erased: the typed struct lives on in the
// Params values the kind decodes, and only the kind's own Build ever sees it.
type Kind struct {
	Name      string
	Simulates string // what real-world failure this stands for
	Mechanism string // how it is made (toxiproxy toxic, signal, admin hook) and how Heal undoes it
	Targets   TargetClass
	Timing    Timing

	// resource names what two faults must not hold at once, see conflict.
	resource fault.Resource
	params   []ParamDoc
	defaults Params
	// decodeYAML decodes and validates a scenario's params node (nil = defaults).
	decodeYAML func(node *yaml.Node) (Params, error)
	// decodeJSON decodes and validates the params of a schedule.json instance (nil = defaults).
	decodeJSON func(raw []byte) (Params, error)
	// wrap checks that v is the kind's parameter struct and binds it to the kind.
	wrap func(v any) (Params, error)
}

// Defaults returns the parameters of a fault of this kind that gives none.
func (k Kind) Defaults() Params { return k.defaults }

// ParamsOf checks v, which must be the kind's parameter struct (e.g. kinds.StallParams for
// tenant_db_stall) within the decoders' rules, and binds it to the kind: for instances built in code
// rather than decoded from a scenario or a schedule.
func (k Kind) ParamsOf(v any) (Params, error) { return k.wrap(v) }

// Params is one fault's parameters: the kind's typed parameter struct, decoded and validated once
// (from the scenario or from schedule.json) and bound to the kind whose Build takes it. Only a Kind
// makes them (decoding, Defaults, ParamsOf).
type Params interface {
	// Value returns the kind's parameter struct (e.g. kinds.LatencyParams), by value.
	Value() any
	// Map returns every parameter by its YAML name, durations as Go duration strings ("1m30s"): what
	// schedule.json prints and the `fault` ledger records carry.
	Map() map[string]any

	kind() string
	build(env Env, target string, span time.Duration) (Fault, error)
}

// registered is a fault.Def as the registry keeps it: its params docs worked out once.
type registered[P any] struct {
	def  fault.Def[P]
	docs []ParamDoc
}

// typed is a value of a kind's parameter struct bound to its kind.
type typed[P any] struct {
	reg *registered[P]
	v   P
}

func (t typed[P]) Value() any          { return t.v }
func (t typed[P]) Map() map[string]any { return canonicalParams(&t.v, t.reg.docs) }
func (t typed[P]) kind() string        { return t.reg.def.Name }

// MarshalJSON and MarshalYAML print Map, so params marshalled on their own read as in schedule.json.
func (t typed[P]) MarshalJSON() ([]byte, error) { return json.Marshal(t.Map()) }
func (t typed[P]) MarshalYAML() (any, error)    { return t.Map(), nil }

func (t typed[P]) build(env Env, target string, span time.Duration) (Fault, error) {
	return t.reg.def.Build(env, target, span, t.v)
}

// register turns a kind's Def into its registry entry: its params docs come from P's struct tags (a
// kind whose tags are incomplete panics at start-up, so `go test` catches it), and decoding fills a P
// from the defaults and then validates it against those docs.
func register[P any](def fault.Def[P]) Kind {
	docs, err := paramDocs(def.Defaults)
	if err == nil {
		err = checkParams(&def.Defaults, docs)
	}
	if err == nil && !def.Resource.Valid() {
		err = fmt.Errorf("resource %q is not one of %v", def.Resource, fault.Resources)
	}
	if err != nil {
		panic(fmt.Sprintf("faults: kind %s: %v", def.Name, err))
	}
	reg := &registered[P]{def: def, docs: docs}
	return Kind{
		Name:      def.Name,
		Simulates: def.Simulates,
		Mechanism: def.Mechanism,
		Targets:   def.Targets,
		Timing:    def.Timing,
		resource:  def.Resource,
		params:    docs,
		defaults:  typed[P]{reg, def.Defaults},
		decodeYAML: func(node *yaml.Node) (Params, error) {
			p := def.Defaults
			if err := decodeParams(node, &p, docs); err != nil {
				return nil, err
			}
			return typed[P]{reg, p}, nil
		},
		decodeJSON: func(raw []byte) (Params, error) {
			p := def.Defaults
			if err := decodeJSONParams(raw, &p, docs); err != nil {
				return nil, err
			}
			return typed[P]{reg, p}, nil
		},
		wrap: func(v any) (Params, error) {
			p, ok := v.(P)
			if !ok {
				return nil, fmt.Errorf("kind %s takes %T params, got %T", def.Name, def.Defaults, v)
			}
			if err := checkParams(&p, docs); err != nil {
				return nil, fmt.Errorf("kind %s: %v", def.Name, err)
			}
			return typed[P]{reg, p}, nil
		},
	}
}

// paramsMap is p.Map(), nil for nil params (an instance built in code without params).
func paramsMap(p Params) map[string]any {
	if p == nil {
		return nil
	}
	return p.Map()
}

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
