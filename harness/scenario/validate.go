package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seqgate/seqgate/threshold"
)

// Defaults applied when a field is absent.
const (
	DefaultDrainTimeout = 30 * time.Second
	DefaultBudget       = 1e-4
	DefaultMaxInFlight  = 64
	DefaultTimeout      = 10 * time.Second
	DefaultBackoffMin   = 100 * time.Millisecond
	DefaultBackoffMax   = 2 * time.Second
	DefaultJitter       = 0.5
	DefaultRetention    = time.Hour
	DefaultIdleTimeout  = 30 * time.Second
)

// Limits keep a scenario within what one machine and one ledger can hold.
const (
	MaxTenants   = 1000
	MaxPods      = 64
	MaxConsumers = 10000
	MaxDuration  = 24 * time.Hour
	// MaxBacklogRows bounds a tenant group's backlog: a few seconds of setup and some hundred MB of
	// table on one machine.
	MaxBacklogRows = 5_000_000
	// MaxBacklogAge bounds how old backlog rows are (a year: beyond any retention worth testing).
	MaxBacklogAge = 366 * 24 * time.Hour
)

type validator struct {
	file string
	doc  *yaml.Node
}

// has reports whether the scenario's top-level mapping names key.
func (v *validator) has(key string) bool {
	if v.doc.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(v.doc.Content); i += 2 {
		if v.doc.Content[i].Value == key {
			return true
		}
	}
	return false
}

// at returns the line of the node at path (keys and list indexes); when the last element is absent,
// the line of the closest present parent.
func (v *validator) at(path ...any) int {
	n := v.doc
	for _, p := range path {
		var next *yaml.Node
		switch p := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == p {
						// keep the block's content but report the key's line: it reads better than the
						// line of a block's first child
						val := n.Content[i+1]
						next = &yaml.Node{Line: n.Content[i].Line, Kind: val.Kind, Content: val.Content}
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && p < len(n.Content) {
				next = n.Content[p]
			}
		}
		if next == nil {
			return n.Line
		}
		n = next
	}
	return n.Line
}

func (v *validator) err(field string, line int, allowed []string, format string, args ...any) error {
	return &Error{File: v.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...), Allowed: allowed}
}

func (v *validator) check(s *Scenario) error {
	if s.Name == "" {
		return v.err("name", v.at("name"), nil, "missing (the run directory and the ledger are named after it)")
	}
	if !validName(s.Name) {
		return v.err("name", v.at("name"), []string{"one path segment: letters, digits, '.', '_', '-', at most 100, not . or .."},
			"%q is not one path segment (it names the run directory runs/<name>-<time> and every mutation's path)", s.Name)
	}
	if s.Duration <= 0 || s.Duration.D() > MaxDuration {
		return v.err("duration", v.at("duration"), []string{"0s < duration <= 24h"}, "missing or out of range")
	}
	if s.DrainTimeout == 0 {
		s.DrainTimeout = Duration(DefaultDrainTimeout)
	}
	if s.DrainTimeout < 0 {
		return v.err("drain_timeout", v.at("drain_timeout"), []string{"a positive duration"}, "negative")
	}
	// budget: absent means the default; 0 written out means zero tolerance (any loss fails).
	if !v.has("budget") {
		s.Budget = DefaultBudget
	}
	if s.Budget < 0 || s.Budget >= 1 {
		return v.err("budget", v.at("budget"), []string{"0 <= budget < 1 (0: any loss fails)"}, "out of range: %g", s.Budget)
	}
	if err := v.budgetProof(s); err != nil {
		return err
	}
	groups := map[string]bool{}
	total := 0
	if len(s.Tenants) == 0 {
		return v.err("tenants", v.at("tenants"), nil, "at least one tenant group is needed")
	}
	for i := range s.Tenants {
		g := &s.Tenants[i]
		f := fmt.Sprintf("tenants[%d]", i)
		if g.Group == "" {
			g.Group = "g" + strconv.Itoa(i+1)
		}
		if groups[g.Group] {
			return v.err(f+".group", v.at("tenants", i, "group"), nil, "duplicate group name %q", g.Group)
		}
		groups[g.Group] = true
		if g.Count < 1 {
			return v.err(f+".count", v.at("tenants", i, "count"), []string{">= 1"}, "count is %d", g.Count)
		}
		if g.Mode == "" {
			g.Mode = "dedicated"
		}
		if !slices.Contains(Modes, g.Mode) {
			return v.err(f+".mode", v.at("tenants", i, "mode"), Modes, "unknown mode %q", g.Mode)
		}
		if g.Cold && g.Mode == "shared" {
			return v.err(f+".cold", v.at("tenants", i, "cold"), []string{"cold: true with mode: dedicated"},
				"a shared-pool tenant cannot be cold: its pool is woken by the other tenants in it")
		}
		if b := g.Backlog; b != nil {
			if b.Rows < 1 || b.Rows > MaxBacklogRows {
				return v.err(f+".backlog.rows", v.at("tenants", i, "backlog", "rows"), []string{fmt.Sprintf("1..%d", MaxBacklogRows)}, "rows is %d", b.Rows)
			}
			if b.Age <= 0 || b.Age.D() > MaxBacklogAge {
				return v.err(f+".backlog.age", v.at("tenants", i, "backlog", "age"), []string{"0s < age <= 8784h"}, "missing or out of range")
			}
			if g.Cold {
				return v.err(f+".backlog", v.at("tenants", i, "backlog"), []string{"a backlog on a group that gets load"},
					"a cold group's backlog would never be swept (its DB must not be woken)")
			}
		}
		total += g.Count
	}
	if total > MaxTenants {
		return v.err("tenants", v.at("tenants"), []string{fmt.Sprintf("<= %d tenants", MaxTenants)}, "%d tenants", total)
	}
	// No pods (pods: absent, or count 0) is a scenario for `seqgate run --target`, which runs against
	// a service that has its own; a run with eventlogd pods refuses it.
	if s.Pods.Count < 0 || s.Pods.Count > MaxPods {
		return v.err("pods.count", v.at("pods", "count"), []string{fmt.Sprintf("1..%d", MaxPods), "0 or absent (only with --target)"}, "pods.count is %d", s.Pods.Count)
	}
	if s.Pods.Eventlogd.Retention == 0 {
		s.Pods.Eventlogd.Retention = Duration(DefaultRetention)
	}
	if s.Pods.Eventlogd.Retention < 0 {
		return v.err("pods.eventlogd.fs_events_retention", v.at("pods", "eventlogd", "fs_events_retention"), []string{"a positive duration"}, "negative")
	}
	flagNames := make([]string, 0, len(s.Pods.Eventlogd.Flags))
	for name := range s.Pods.Eventlogd.Flags {
		flagNames = append(flagNames, name)
	}
	sort.Strings(flagNames)
	for _, name := range flagNames {
		// A key is a flag name and nothing else: "meta-dsn=DSN" or "-pod" would otherwise slip past
		// the reserved names below and override what the harness set.
		if !flagName.MatchString(name) {
			return v.err("pods.eventlogd.flags."+name, v.at("pods", "eventlogd", "flags", name), []string{"[a-z0-9][a-z0-9-]* (a flag name without --)"},
				"%q is not a flag name", name)
		}
		if slices.Contains(HarnessFlags, name) {
			return v.err("pods.eventlogd.flags."+name, v.at("pods", "eventlogd", "flags", name), nil,
				"--%s is set by the harness (use the dedicated field where there is one)", name)
		}
	}
	groupNames := make([]string, 0, len(groups))
	for g := range groups {
		groupNames = append(groupNames, g)
	}
	sort.Strings(groupNames)
	for i := range s.Load {
		if err := v.load(s, i, groups, groupNames); err != nil {
			return err
		}
	}
	consumers := 0
	for i := range s.Consumers {
		c := &s.Consumers[i]
		f := fmt.Sprintf("consumers[%d]", i)
		n := total
		if c.Tenants != "" {
			if !groups[c.Tenants] {
				return v.err(f+".tenants", v.at("consumers", i, "tenants"), groupNames, "no tenant group %q", c.Tenants)
			}
			n = s.groupCount(c.Tenants)
		}
		if c.Count < 0 {
			return v.err(f+".count", v.at("consumers", i, "count"), []string{">= 0"}, "count is %d", c.Count)
		}
		consumers += n * c.Count
		if c.BackoffMin == 0 {
			c.BackoffMin = Duration(DefaultBackoffMin)
		}
		if c.BackoffMax == 0 {
			c.BackoffMax = Duration(DefaultBackoffMax)
		}
		if c.BackoffMin < 0 || c.BackoffMax < c.BackoffMin {
			return v.err(f+".backoff_max", v.at("consumers", i, "backoff_max"), []string{"0 < backoff_min <= backoff_max"}, "backoff_min %v, backoff_max %v", c.BackoffMin.D(), c.BackoffMax.D())
		}
		if c.Jitter == 0 {
			c.Jitter = DefaultJitter
		}
		if c.Jitter < 0 || c.Jitter > 1 {
			return v.err(f+".jitter", v.at("consumers", i, "jitter"), []string{"0..1 (a fraction of the backoff)"}, "jitter is %g", c.Jitter)
		}
		if c.IdleTimeout == 0 {
			c.IdleTimeout = Duration(DefaultIdleTimeout)
		}
		if c.IdleTimeout < 0 {
			return v.err(f+".idle_timeout", v.at("consumers", i, "idle_timeout"), []string{"a positive duration"}, "negative")
		}
		if c.Slow < 0 {
			return v.err(f+".slow", v.at("consumers", i, "slow"), []string{"a positive duration"}, "negative")
		}
		if c.Start < 0 || c.Start >= s.Duration {
			return v.err(f+".start", v.at("consumers", i, "start"), []string{fmt.Sprintf("0 <= start < duration (%v)", s.Duration.D())}, "start is %v", c.Start.D())
		}
		if c.Since != nil && (*c.Since < 0 || !c.IsDurable()) {
			return v.err(f+".since", v.at("consumers", i, "since"), []string{"a seq >= 0, with durable: true"}, "since %d (durable %v)", *c.Since, c.IsDurable())
		}
		if c.RcvBuf < 0 || c.RcvBuf > 64<<20 {
			return v.err(f+".rcvbuf", v.at("consumers", i, "rcvbuf"), []string{"0 (kernel autotuning) or 1..67108864 bytes"}, "rcvbuf is %d", c.RcvBuf)
		}
		if err := v.consumerKind(c, i); err != nil {
			return err
		}
	}
	if consumers > MaxConsumers {
		return v.err("consumers", v.at("consumers"), []string{fmt.Sprintf("<= %d consumers in all", MaxConsumers)}, "%d consumers", consumers)
	}
	for k, exprs := range s.Thresholds {
		if len(exprs) == 0 {
			return v.err("thresholds."+k, v.at("thresholds", k), []string{`a list of expressions such as ["< 0.0001"]`}, "empty")
		}
		if _, err := threshold.Parse(map[string][]string{k: exprs}); err != nil {
			return v.err("thresholds."+k, v.at("thresholds", k), nil, "%v", err)
		}
	}
	return nil
}

func (s *Scenario) groupCount(group string) int {
	for _, g := range s.Tenants {
		if g.Group == group {
			return g.Count
		}
	}
	return 0
}

func (s *Scenario) groupCold(group string) bool {
	for _, g := range s.Tenants {
		if g.Group == group {
			return g.Cold
		}
	}
	return false
}

func (v *validator) load(s *Scenario, i int, groups map[string]bool, groupNames []string) error {
	l := &s.Load[i]
	f := fmt.Sprintf("load[%d]", i)
	if !groups[l.Tenants] {
		return v.err(f+".tenants", v.at("load", i, "tenants"), groupNames, "no tenant group %q", l.Tenants)
	}
	if s.groupCold(l.Tenants) {
		return v.err(f+".tenants", v.at("load", i, "tenants"), nil, "group %q is cold: a cold tenant gets no load", l.Tenants)
	}
	if l.TimeUnit == 0 {
		l.TimeUnit = Duration(time.Second)
	}
	if l.TimeUnit < 0 {
		return v.err(f+".time_unit", v.at("load", i, "time_unit"), []string{"a positive duration"}, "negative")
	}
	if l.Start < 0 || l.Start >= s.Duration {
		return v.err(f+".start", v.at("load", i, "start"), []string{fmt.Sprintf("0s <= start < duration (%v)", s.Duration.D())}, "start is %v", l.Start.D())
	}
	switch l.Executor {
	case "constant-arrival-rate":
		if l.Rate <= 0 {
			return v.err(f+".rate", v.at("load", i, "rate"), []string{"> 0 mutations per time_unit per tenant"}, "rate is %g", l.Rate)
		}
		if len(l.Stages) > 0 {
			return v.err(f+".stages", v.at("load", i, "stages"), nil, "stages belong to ramping-arrival-rate, not %s", l.Executor)
		}
		if l.Duration == 0 {
			l.Duration = s.Duration - l.Start
		}
	case "ramping-arrival-rate":
		if len(l.Stages) == 0 {
			return v.err(f+".stages", v.at("load", i, "stages"), []string{"a list of {target, duration}"}, "ramping-arrival-rate needs stages")
		}
		if l.Rate != 0 {
			return v.err(f+".rate", v.at("load", i, "rate"), []string{"start_rate", "stages"}, "rate belongs to constant-arrival-rate; the stages set the rates")
		}
		var sum Duration
		for j, st := range l.Stages {
			if st.Duration <= 0 || st.Target < 0 {
				return v.err(fmt.Sprintf("%s.stages[%d]", f, j), v.at("load", i, "stages", j), []string{"target >= 0", "duration > 0"}, "target %g, duration %v", st.Target, st.Duration.D())
			}
			sum += st.Duration
		}
		// The stages set the length; a duration may be given only if it agrees (the resolved scenario
		// written to the run directory carries it, and must parse again).
		if l.Duration != 0 && l.Duration != sum {
			return v.err(f+".duration", v.at("load", i, "duration"), []string{"omit it", sum.D().String() + " (the sum of the stages)"}, "duration %v disagrees with the stages (%v)", l.Duration.D(), sum.D())
		}
		l.Duration = sum
		if l.StartRate < 0 {
			return v.err(f+".start_rate", v.at("load", i, "start_rate"), []string{">= 0"}, "start_rate is %g", l.StartRate)
		}
	default:
		return v.err(f+".executor", v.at("load", i, "executor"), Executors, "unknown executor %q", l.Executor)
	}
	if l.Duration <= 0 || l.Start+l.Duration > s.Duration {
		return v.err(f+".duration", v.at("load", i, "duration"), []string{fmt.Sprintf("start + duration <= duration of the run (%v)", s.Duration.D())}, "the block runs from %v for %v", l.Start.D(), l.Duration.D())
	}
	if l.MaxInFlight == 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.MaxInFlight < 1 || l.MaxInFlight > 10000 {
		return v.err(f+".max_in_flight", v.at("load", i, "max_in_flight"), []string{"1..10000"}, "max_in_flight is %d", l.MaxInFlight)
	}
	if l.Timeout == 0 {
		l.Timeout = Duration(DefaultTimeout)
	}
	if l.Timeout < 0 {
		return v.err(f+".timeout", v.at("load", i, "timeout"), []string{"a positive duration"}, "negative")
	}
	if len(l.Mix) == 0 {
		l.Mix = map[string]int{"write": 1}
	}
	sum := 0
	for op, w := range l.Mix {
		if !slices.Contains(Ops, op) {
			return v.err(f+".mix."+op, v.at("load", i, "mix"), Ops, "unknown op %q", op)
		}
		if w < 0 {
			return v.err(f+".mix."+op, v.at("load", i, "mix", op), []string{">= 0"}, "weight is %d", w)
		}
		sum += w
	}
	if sum == 0 {
		return v.err(f+".mix", v.at("load", i, "mix"), []string{"at least one weight > 0"}, "all weights are 0")
	}
	return v.batchSize(l, i)
}

// batchSize checks load[i].batch_size: the files of each batch op, 1..MaxBatchSize (eventlogd's
// bound), default DefaultBatchSize; only with a batch op in the mix.
func (v *validator) batchSize(l *Load, i int) error {
	f := fmt.Sprintf("load[%d].batch_size", i)
	if l.Mix["batch"] == 0 {
		if l.BatchSize != 0 {
			return v.err(f, v.at("load", i, "batch_size"), []string{"only with a batch op in the mix"}, "batch_size %d without batch in mix", l.BatchSize)
		}
		return nil
	}
	if l.BatchSize == 0 {
		l.BatchSize = DefaultBatchSize
	}
	if l.BatchSize < 1 || l.BatchSize > MaxBatchSize {
		return v.err(f, v.at("load", i, "batch_size"), []string{fmt.Sprintf("1..%d", MaxBatchSize)}, "batch_size is %d", l.BatchSize)
	}
	return nil
}

// validName reports whether a scenario name can be one path segment of the run directory and of
// every mutation's path: no separator, no "." or "..", nothing a URL or a shell would need to quote.
func validName(n string) bool {
	if n == "" || n == "." || n == ".." || len(n) > 100 {
		return false
	}
	for _, c := range n {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// flagName is an eventlogd flag name as pods.eventlogd.flags keys give it (without the dashes).
var flagName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
