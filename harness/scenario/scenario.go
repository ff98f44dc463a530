// Package scenario reads, validates and resolves seqgate scenario files (YAML, docs/scenarios.md): the
// seed, the run's length, the tenants, the pods, the open-model load, the consumers and the thresholds.
// Every error a scenario author can cause names the file, the line, the field and the allowed values.
package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/seqgate/seqgate/faults"
	"go.yaml.in/yaml/v3"
)

// Scenario is one parsed and validated scenario, with defaults applied.
type Scenario struct {
	Name         string              `yaml:"name"`
	Seed         int64               `yaml:"seed"`
	Duration     Duration            `yaml:"duration"`
	DrainTimeout Duration            `yaml:"drain_timeout"`
	Budget       float64             `yaml:"budget"` // always written: 0 is zero tolerance, not "unset"
	Tenants      []TenantGroup       `yaml:"tenants"`
	Pods         Pods                `yaml:"pods"`
	Load         []Load              `yaml:"load"`
	Consumers    []Consumers         `yaml:"consumers"`
	Thresholds   map[string][]string `yaml:"thresholds,omitempty"`
	Metrics      []string            `yaml:"metrics,omitempty"`
	// Faults is the fault timeline and Nemesis the seeded random faults (package faults decodes and
	// validates both; the run expands them with the seed into schedule.json).
	Faults  []faults.Spec       `yaml:"faults,omitempty"`
	Nemesis *faults.NemesisSpec `yaml:"nemesis,omitempty"`
}

// TenantGroup declares Count tenants that share a name (used by load and consumers to select them),
// a pool mode and whether they stay cold (no load at all: the run checks their DB is never woken).
type TenantGroup struct {
	Group string `yaml:"group"`
	Count int    `yaml:"count"`
	Mode  string `yaml:"mode"` // dedicated | shared
	Cold  bool   `yaml:"cold,omitempty"`
	// Backlog, when set, is written into each tenant's events table before any load: old rows that
	// the service's retention sweep must delete while the run writes (eventlogd pods only).
	Backlog *Backlog `yaml:"backlog,omitempty"`
}

// Backlog is Rows events rows created Age before the load starts, with paths outside the run's prefix
// (so no consumer expects them and the audit never reads them).
type Backlog struct {
	Rows int      `yaml:"rows"`
	Age  Duration `yaml:"age"`
}

// Pods declares the eventlogd fleet.
type Pods struct {
	Count     int       `yaml:"count"`
	Eventlogd Eventlogd `yaml:"eventlogd,omitempty"`
}

// Eventlogd holds the flags every pod is started with.
type Eventlogd struct {
	// Retention is --fs-events-retention (default 1h).
	Retention Duration `yaml:"fs_events_retention,omitempty"`
	// Defect is --defect NAME (a seeded known-bad behaviour), empty for none.
	Defect string `yaml:"defect,omitempty"`
	// Flags are further flags, name (without --) to value, e.g. buffer caps.
	Flags map[string]string `yaml:"flags,omitempty"`
}

// Executors are the allowed load executors (k6's open-model ones).
var Executors = []string{"constant-arrival-rate", "ramping-arrival-rate"}

// Ops are the mutation kinds a load mix may name.
var Ops = []string{"write", "mkdir", "rename", "copy", "chmod", "delete", "write_unicode", "write_invalid_utf8", "batch"}

// Batch ops: files per POST /v1/fs:batch-write (eventlogd accepts at most 100).
const (
	DefaultBatchSize = 5
	MaxBatchSize     = 100
)

// Modes are the tenant pool modes.
var Modes = []string{"dedicated", "shared"}

// Load is one open-model load block applied to every tenant of a group: each tenant gets the rate.
type Load struct {
	Tenants  string   `yaml:"tenants"`
	Executor string   `yaml:"executor"`
	Start    Duration `yaml:"start,omitempty"`    // offset from the start of the load phase
	Duration Duration `yaml:"duration,omitempty"` // constant-arrival-rate: default the rest of the run
	// Rate is mutations per TimeUnit per tenant (constant-arrival-rate).
	Rate     float64  `yaml:"rate,omitempty"`
	TimeUnit Duration `yaml:"time_unit,omitempty"` // default 1s
	// StartRate and Stages ramp the rate linearly per stage (ramping-arrival-rate).
	StartRate float64 `yaml:"start_rate,omitempty"`
	Stages    []Stage `yaml:"stages,omitempty"`
	// MaxInFlight bounds concurrent requests of each tenant of this block (each tenant has its own
	// slots, so a stalled tenant cannot starve the others); a mutation due when all of its tenant's
	// slots are busy is dropped and counted for that tenant, never sent late (default 64).
	MaxInFlight int `yaml:"max_in_flight,omitempty"`
	// Timeout bounds one request; past it the mutation is recorded as res=timeout (default 10s).
	Timeout Duration `yaml:"timeout,omitempty"`
	// Mix weights the ops (default write: 1).
	Mix map[string]int `yaml:"mix,omitempty"`
	// BatchSize is how many files each batch op writes in one POST /v1/fs:batch-write (default 5,
	// at most 100); only with batch in the mix.
	BatchSize int `yaml:"batch_size,omitempty"`
}

// Stage ramps the rate linearly to Target over Duration.
type Stage struct {
	Target   float64  `yaml:"target"`
	Duration Duration `yaml:"duration"`
}

// Consumers declares Count SSE consumers on every tenant of a group (every tenant when Tenants is empty).
type Consumers struct {
	Tenants    string   `yaml:"tenants,omitempty"`
	Count      int      `yaml:"count"`
	Durable    *bool    `yaml:"durable,omitempty"`     // default true
	BackoffMin Duration `yaml:"backoff_min,omitempty"` // default 100ms
	BackoffMax Duration `yaml:"backoff_max,omitempty"` // default 2s
	Jitter     float64  `yaml:"jitter,omitempty"`      // fraction of the backoff, default 0.5
	Slow       Duration `yaml:"slow,omitempty"`        // delay after each frame (a slow consumer)
	// IdleTimeout gives up a connection that carries no frame at all for this long (default 30s,
	// two of eventlogd's 15 s live heartbeats): a paused pod keeps its sockets open.
	IdleTimeout Duration `yaml:"idle_timeout,omitempty"`
	// Start is when these consumers connect for the first time, from the start of the load phase
	// (default 0: before the load, like every other consumer). A late consumer finds whatever the
	// tenant wrote before it.
	Start Duration `yaml:"start,omitempty"`
	// Since, when set, is the durable cursor the consumers start from (saved in an earlier life):
	// their first connection is ?since=N and replays everything after N. Unset: a fresh subscription
	// (no since; the service answers initial_sync). Only for durable consumers.
	Since *int64 `yaml:"since,omitempty"`
	// RcvBuf, when > 0, is the SO_RCVBUF (bytes) of each stream socket, set before connecting so the
	// TCP window stays small: a slow reader then pushes back on the server within a few KB instead of
	// the megabytes loopback autotuning allows. Linux doubles the value and raises it to its minimum
	// (2,304 bytes on this kernel). The consumer's reads are bounded to RcvBuf bytes too, so its own
	// buffers do not absorb the backlog either. 0 = the kernel's autotuning.
	RcvBuf int `yaml:"rcvbuf,omitempty"`
	// Kind is how these consumers read: sse (a stream, the default) or pull (GET
	// /v1/events/changes polled every Interval, PageSize events per request, following next_since
	// at once while has_more; always durable).
	Kind     string   `yaml:"kind,omitempty"`
	Interval Duration `yaml:"interval,omitempty"`  // pull: the pause between polls at the head [1s]
	PageSize int      `yaml:"page_size,omitempty"` // pull: limit of each request, 1..1000 [100]
	// Resync makes these consumers list the tenant's run tree after every reset but
	// structural_change, as a client does before it streams on (default true for durable
	// consumers; false turns listing off). ResyncStructural lists after structural_change too.
	Resync           *bool `yaml:"resync,omitempty"`
	ResyncStructural bool  `yaml:"resync_structural,omitempty"`
}

// IsDurable reports whether these consumers keep a durable cursor (the default).
func (c Consumers) IsDurable() bool { return c.Durable == nil || *c.Durable }

// IsResync reports whether these consumers list after a reset: durable ones unless resync: false.
func (c Consumers) IsResync() bool { return c.IsDurable() && (c.Resync == nil || *c.Resync) }

// Duration is a time.Duration written as Go writes it ("30s", "1m30s", "250ms").
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML parses a Go duration string and names the line when it is not one.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return &Error{Line: n.Line, Msg: fmt.Sprintf("bad duration %q", n.Value), Allowed: []string{`a Go duration such as "250ms", "30s", "1m30s"`}}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration back as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Error is a scenario problem a user can fix: where it is, what is wrong, what is allowed.
type Error struct {
	File    string
	Line    int
	Field   string
	Msg     string
	Allowed []string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	if len(e.Allowed) > 0 {
		b.WriteString(" (allowed: " + strings.Join(e.Allowed, ", ") + ")")
	}
	return b.String()
}

// Tenant is one resolved tenant slot: its group, its index in the run and its pool.
type Tenant struct {
	Group string
	Index int    // 1-based, in declaration order
	Mode  string // dedicated | shared
	Cold  bool
	Pool  string // tenant_<Index> for dedicated, shared_pool for shared
	// Backlog is the group's backlog (nil: none).
	Backlog *Backlog
}

// SharedPool is the pool (and database) every shared-mode tenant lives in.
const SharedPool = "shared_pool"

// Expand lists every tenant slot of the scenario in declaration order.
func (s *Scenario) Expand() []Tenant {
	var out []Tenant
	for _, g := range s.Tenants {
		for i := 0; i < g.Count; i++ {
			t := Tenant{Group: g.Group, Index: len(out) + 1, Mode: g.Mode, Cold: g.Cold, Backlog: g.Backlog}
			t.Pool = fmt.Sprintf("tenant_%d", t.Index)
			if g.Mode == "shared" {
				t.Pool = SharedPool
			}
			out = append(out, t)
		}
	}
	return out
}

// Marshal renders the resolved scenario (defaults applied) as YAML, for the run directory. The fault
// timeline and nemesis are left out: the run writes their expansion to schedule.json instead.
func (s *Scenario) Marshal() ([]byte, error) {
	c := *s
	c.Faults, c.Nemesis = nil, nil
	return yaml.Marshal(&c)
}
