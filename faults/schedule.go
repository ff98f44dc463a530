package faults

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Instance is one concrete fault of a run: a kind bound to its targets, start time and duration. The
// schedule (every Instance of a run) is a pure function of the scenario, the seed, the run duration and
// the target names, and is saved to the run directory before the run starts.
type Instance struct {
	ID      string        // f001, f002, ... in start order
	Kind    string        // a Registry name
	Target  string        // as recorded in the ledger: a name, "all" or "meta"
	Targets []string      // the concrete names it acts on (one, or every name for "all")
	Slots   []string      // the same targets by stable name (tenant_<N>, pod names, meta), for Rebind
	At      time.Duration // start, from the run start
	For     time.Duration // duration (0 for instant kinds)
	Params  Params        // the kind's typed params; nil = the kind's defaults
	Source  string        // where it came from: "faults[2] line 14 rep 1" or "nemesis #3"
}

// instanceJSON is an Instance in schedule.json: P is map[string]any when writing (Params.Map, keys
// sorted, omitted when the kind has no params) and json.RawMessage when reading.
type instanceJSON[P any] struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Target  string   `json:"target"`
	Targets []string `json:"targets"`
	Slots   []string `json:"slots"`
	At      string   `json:"at"`
	For     string   `json:"for"`
	Params  P        `json:"params,omitempty"`
	Source  string   `json:"source"`
}

// MarshalJSON writes durations as Go duration strings ("1m30s") so schedule.json is readable.
func (in Instance) MarshalJSON() ([]byte, error) {
	return json.Marshal(instanceJSON[map[string]any]{in.ID, in.Kind, in.Target, in.Targets, in.Slots, in.At.String(), in.For.String(), paramsMap(in.Params), in.Source})
}

// UnmarshalJSON reads what MarshalJSON wrote; the kind must be registered and its params are decoded
// into the kind's typed struct and validated (absent params are the kind's defaults).
func (in *Instance) UnmarshalJSON(b []byte) error {
	var j instanceJSON[json.RawMessage]
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	k, ok := Lookup(j.Kind)
	if !ok {
		return fmt.Errorf("fault %s: %v", j.ID, unknownKind(j.Kind))
	}
	params, err := k.decodeJSON(j.Params)
	if err != nil {
		return fmt.Errorf("fault %s (%s): %v", j.ID, j.Kind, err)
	}
	at, err := time.ParseDuration(j.At)
	if err != nil {
		return fmt.Errorf("fault %s: at: %v", j.ID, err)
	}
	dur, err := time.ParseDuration(j.For)
	if err != nil {
		return fmt.Errorf("fault %s: for: %v", j.ID, err)
	}
	*in = Instance{j.ID, j.Kind, j.Target, j.Targets, j.Slots, at, dur, params, j.Source}
	return nil
}

// End is when the instance is healed (At for instant kinds).
func (in Instance) End() time.Duration { return in.At + in.For }

// TargetSet is the names faults may target in one run: the run's tenant ids (as the service returned
// them from provision, in the scenario's declaration order) and pod names. A scenario may name a tenant
// by its id or by its stable slot name tenant_<N> (N = 1-based position in Tenants), which is what a
// scenario author can know in advance and what Rebind uses to replay a schedule on new tenant ids.
type TargetSet struct {
	Tenants []string
	Pods    []string
}

// TenantSlot returns the stable name of the n-th tenant (1-based): tenant_<n>.
func TenantSlot(n int) string { return fmt.Sprintf("tenant_%d", n) }

// resolveName maps a concrete name or a slot name of class c to the concrete name, or "".
func (ts TargetSet) resolveName(c TargetClass, name string) string {
	names := ts.names(c)
	if slices.Contains(names, name) {
		return name
	}
	if c == TargetTenant {
		if rest, ok := strings.CutPrefix(name, "tenant_"); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 1 && n <= len(names) {
				return names[n-1]
			}
		}
	}
	return ""
}

// slotOf returns the stable name of a concrete name of class c.
func (ts TargetSet) slotOf(c TargetClass, name string) string {
	if c == TargetTenant {
		if i := slices.Index(ts.Tenants, name); i >= 0 {
			return TenantSlot(i + 1)
		}
	}
	return name
}

func (ts TargetSet) allowedNames(c TargetClass) string {
	names := ts.names(c)
	if c == TargetTenant && len(names) > 0 {
		return fmt.Sprintf("%s..%s or a tenant id (%s)", TenantSlot(1), TenantSlot(len(names)), strings.Join(names, ", "))
	}
	return strings.Join(names, ", ")
}

func (ts TargetSet) names(c TargetClass) []string {
	switch c {
	case TargetTenant:
		return ts.Tenants
	case TargetPod:
		return ts.Pods
	}
	return []string{TargetMetaDB}
}

// maxInstances bounds the schedule so a typo (every: 1ms) cannot make millions of faults.
const maxInstances = 10000

// PCG stream constants: the timeline and the nemesis draw from separate streams of the seed, so adding
// a nemesis does not change which targets the timeline's `random` entries got.
const (
	streamTimeline = 0x74696d656c696e65 // "timeline"
	streamNemesis  = 0x6e656d6573697300 // "nemesis"
)

// Expand turns the timeline and the nemesis into the run's concrete schedule, sorted by start time and
// numbered f001.... The same arguments always give the same schedule. runDuration is the load phase:
// every fault must be healed by then (the drain comes after). Overlapping faults on the same resource
// (a DB proxy, a pod, a tenant's consumers) are an error in the timeline and are skipped by the nemesis.
func Expand(specs []Spec, nemesis *NemesisSpec, seed int64, runDuration time.Duration, targets TargetSet) ([]Instance, error) {
	if runDuration <= 0 {
		return nil, fmt.Errorf("run duration must be > 0, got %s", runDuration)
	}
	var out []Instance
	rng := rand.New(rand.NewPCG(uint64(seed), streamTimeline))
	for i, s := range specs {
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("faults[%d]: %v", i, err)
		}
		k, _ := Lookup(s.Kind)
		reps := 1
		if s.Every > 0 {
			reps = s.Repeat
			if reps == 0 { // until the run ends
				reps = int((runDuration-s.At-s.For)/s.Every) + 1
			}
		}
		if reps < 1 || len(out)+reps > maxInstances {
			return nil, fmt.Errorf("faults[%d] (line %d): %d repetitions do not fit (run %s, limit %d faults)", i, s.Line, reps, runDuration, maxInstances)
		}
		for r := range reps {
			at := s.At + time.Duration(r)*s.Every
			src := fmt.Sprintf("faults[%d]", i)
			if s.Line > 0 {
				src += fmt.Sprintf(" line %d", s.Line)
			}
			if reps > 1 {
				src += fmt.Sprintf(" rep %d", r+1)
			}
			if at+s.For > runDuration || (s.For == 0 && at >= runDuration) {
				return nil, fmt.Errorf("%s: %s ends at %s, after the run's load phase (%s); faults must heal before the drain", src, s.Kind, at+s.For, runDuration)
			}
			target, names, slots, err := resolveTarget(k, s.Target, targets, nil, rng)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", src, err)
			}
			in := Instance{Kind: k.Name, Target: target, Targets: names, Slots: slots, At: at, For: s.For, Params: s.Params, Source: src}
			if c := conflict(out, in); c != nil {
				return nil, fmt.Errorf("%s: %s on %s overlaps %s (%s, %s-%s) on the same resource", src, in.Kind, in.Target, c.Source, c.Kind, c.At, c.End())
			}
			out = append(out, in)
		}
	}
	if nemesis != nil {
		var err error
		if out, err = expandNemesis(out, nemesis, seed, runDuration, targets); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(out, func(a, b Instance) int { return cmp.Compare(a.At, b.At) })
	for i := range out {
		out[i].ID = fmt.Sprintf("f%03d", i+1)
	}
	return out, nil
}

func expandNemesis(out []Instance, n *NemesisSpec, seed int64, runDuration time.Duration, targets TargetSet) ([]Instance, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(seed), streamNemesis))
	stop := n.Stop
	if stop == 0 || stop > runDuration {
		stop = runDuration
	}
	t := n.Start
	for draw := 1; draw <= maxInstances && len(out) < maxInstances; draw++ {
		// Millisecond resolution: schedules stay readable and nothing here is finer than that.
		t += time.Duration(rng.ExpFloat64() * float64(n.MeanInterval)).Round(time.Millisecond)
		k, _ := Lookup(n.Kinds[rng.IntN(len(n.Kinds))])
		var dur time.Duration
		if k.Timing == TimingSpan {
			dur = n.MinDuration + time.Duration(rng.Int64N(int64(n.MaxDuration-n.MinDuration)+1)).Round(time.Millisecond)
			dur = min(max(dur, n.MinDuration), n.MaxDuration)
		}
		if t+dur > stop || (dur == 0 && t >= stop) {
			break
		}
		target, names, slots, err := resolveTarget(k, TargetRandom, targets, n.Targets, rng)
		if err != nil {
			// No valid target for this kind (e.g. targets lists only tenants): skip the draw.
			continue
		}
		in := Instance{Kind: k.Name, Target: target, Targets: names, Slots: slots, At: t, For: dur, Params: n.Params[k.Name], Source: fmt.Sprintf("nemesis #%d", draw)}
		if conflict(out, in) != nil {
			continue // the timeline holds this resource now; the nemesis waits for its next draw
		}
		out = append(out, in)
		t += dur
	}
	return out, nil
}

// resolveTarget turns a spec's target into the recorded target, the concrete names and their slot
// names. allow, when not empty, restricts random draws (the nemesis's targets list; ids or slots).
func resolveTarget(k Kind, target string, ts TargetSet, allow []string, rng *rand.Rand) (string, []string, []string, error) {
	if k.Targets == TargetMeta {
		return TargetMetaDB, []string{TargetMetaDB}, []string{TargetMetaDB}, nil
	}
	names := ts.names(k.Targets)
	if len(allow) > 0 {
		var allowed []string
		for _, a := range allow {
			if n := ts.resolveName(k.Targets, a); n != "" {
				allowed = append(allowed, n)
			}
		}
		names = slices.DeleteFunc(slices.Clone(names), func(s string) bool { return !slices.Contains(allowed, s) })
	}
	if len(names) == 0 {
		return "", nil, nil, fmt.Errorf("kind %s: the run has no %s to target", k.Name, k.Targets)
	}
	slots := func(ns []string) []string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = ts.slotOf(k.Targets, n)
		}
		return out
	}
	switch target {
	case TargetRandom:
		name := names[rng.IntN(len(names))]
		return name, []string{name}, slots([]string{name}), nil
	case TargetAll:
		return TargetAll, slices.Clone(names), slots(names), nil
	}
	name := ts.resolveName(k.Targets, target)
	if name == "" || !slices.Contains(names, name) {
		return "", nil, nil, fmt.Errorf("kind %s: unknown %s %q (allowed: %s, %s, %s)", k.Name, k.Targets, target, ts.allowedNames(k.Targets), TargetRandom, TargetAll)
	}
	return name, []string{name}, slots([]string{name}), nil
}

// Rebind points a recorded schedule at a new run's targets through the stable slot names (the replay
// path: a new run provisions new tenant ids). It fails when a slot does not exist in ts.
func Rebind(instances []Instance, ts TargetSet) ([]Instance, error) {
	out := make([]Instance, len(instances))
	for i, in := range instances {
		k, ok := Lookup(in.Kind)
		if !ok {
			return nil, fmt.Errorf("fault %s: %v", in.ID, unknownKind(in.Kind))
		}
		if len(in.Slots) == 0 {
			return nil, fmt.Errorf("fault %s (%s): no slots recorded: cannot rebind", in.ID, in.Kind)
		}
		in.Targets = make([]string, len(in.Slots))
		for j, slot := range in.Slots {
			name := slot
			if k.Targets != TargetMeta {
				if name = ts.resolveName(k.Targets, slot); name == "" {
					return nil, fmt.Errorf("fault %s (%s): %s %q does not exist in this run (allowed: %s)", in.ID, in.Kind, k.Targets, slot, ts.allowedNames(k.Targets))
				}
			}
			in.Targets[j] = name
		}
		if in.Target != TargetAll && in.Target != TargetMetaDB {
			in.Target = in.Targets[0]
		}
		out[i] = in
	}
	return out, nil
}

// resources are the things two faults must not hold at once: a DB proxy, a pod, a tenant's consumers.
func resources(in Instance) []string {
	k, _ := Lookup(in.Kind)
	out := make([]string, len(in.Targets))
	for i, t := range in.Targets {
		out[i] = string(k.resource) + ":" + t
	}
	return out
}

func conflict(existing []Instance, in Instance) *Instance {
	mine := resources(in)
	for i := range existing {
		e := &existing[i]
		// Touching intervals count as overlapping: a heal and an inject on the same resource at the same
		// instant would race.
		if in.At > e.End() || e.At > in.End() {
			continue
		}
		for _, r := range resources(*e) {
			if slices.Contains(mine, r) {
				return e
			}
		}
	}
	return nil
}

// ScheduleFile is the name of the schedule in a run directory.
const ScheduleFile = "schedule.json"

// ScheduleVersion is the schedule file format version.
const ScheduleVersion = 1

// Schedule is what a run directory's schedule.json holds: enough to replay a run's faults exactly.
type Schedule struct {
	Version     int        `json:"v"`
	Scenario    string     `json:"scenario"`
	Seed        int64      `json:"seed"`
	RunDuration string     `json:"run_duration"`
	Faults      []Instance `json:"faults"`
}

// SaveSchedule writes s to path as indented JSON (atomically: temp file, then rename).
func SaveSchedule(path string, s Schedule) error {
	s.Version = ScheduleVersion
	if s.Faults == nil {
		s.Faults = []Instance{}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	// Nothing is written through a symbolic link (a run directory may be shared with other local
	// users): the schedule and its temp file are refused when they are links, a stale temp file is
	// removed, and the new one is created exclusively without following links.
	tmp := path + ".tmp"
	for _, p := range []string{path, tmp} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link; the schedule is not written through links", p)
		}
	}
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err // EEXIST: something was put there since the remove; nothing written
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path) // replaces path itself, never a file a link at path names
}

// LoadSchedule reads a schedule written by SaveSchedule and checks every instance against the registry
// (its kind, its params: see Instance.UnmarshalJSON, and that it has targets).
func LoadSchedule(path string) (Schedule, error) {
	var s Schedule
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %v", path, err)
	}
	if s.Version != ScheduleVersion {
		return s, fmt.Errorf("%s: schedule version %d, this seqgate reads %d", path, s.Version, ScheduleVersion)
	}
	for _, in := range s.Faults {
		if len(in.Targets) == 0 {
			return s, fmt.Errorf("%s: fault %s (%s): no targets", path, in.ID, in.Kind)
		}
	}
	return s, nil
}
