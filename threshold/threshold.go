// Package threshold is the scenario's limit grammar, part of the ledger contract: a run record's
// thresholds {summary path: [expressions]} name numbers of the verifier's summary JSON and bound them.
// The harness checks a scenario's thresholds with it before a run; the verifier judges with it after.
package threshold

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Threshold is one scenario limit on a summary number, e.g. latency_ms.p99 < 500.
type Threshold struct {
	Path  string  // the key as written: a summary path, a scoped one or a windowed one (ValidPath)
	Op    string  // < <= > >= ==
	Value float64 // the limit
	Num   string  // the limit as written, for names and messages

	// What Path names, parsed: Scope "" (the whole run), ScopeTenant or ScopeConsumer with ID; Field
	// the path inside that scope; Window "" (the whole run) or one of Windows.
	Scope  string
	ID     string
	Field  string
	Window string

	// From says where the threshold came from when not from the run record (e.g. "--threshold"),
	// for error messages; empty for the run record's.
	From string
}

// Scopes of a threshold path (per_tenant.<id>.<field>, per_consumer.<id>.<field>).
const (
	ScopeTenant   = "per_tenant"
	ScopeConsumer = "per_consumer"
)

// Windows a threshold may be scoped to (<path>@steady, @fault, @recovery): steady is outside every
// fault's span and its recovery, fault inside some fault's span, recovery from a fault's stop until
// the consumers of its tenants caught up.
var Windows = []string{"steady", "fault", "recovery"}

// List is a parsed thresholds field, sorted by path then expression.
type List []Threshold

// Name is how a broken threshold appears in failed_checks: threshold:<path><op><value>.
func (t Threshold) Name() string { return "threshold:" + t.Path + t.Op + t.Num }

// Holds reports whether the measured value v satisfies the threshold.
func (t Threshold) Holds(v float64) bool {
	switch t.Op {
	case "<":
		return v < t.Value
	case "<=":
		return v <= t.Value
	case ">":
		return v > t.Value
	case ">=":
		return v >= t.Value
	case "==":
		return v == t.Value
	}
	return false
}

var exprRE = regexp.MustCompile(`^\s*(<=|>=|==|<|>)\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*$`)

// Parse parses the run record's thresholds field, {summary path: [expressions]}. An unknown
// path or a malformed expression is an error that names it and lists what is valid.
func Parse(m map[string][]string) (List, error) {
	var out List
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range m {
			if !yield(p) {
				return
			}
		}
	})
	for _, p := range paths {
		target, err := ParsePath(p)
		if err != nil {
			return nil, err
		}
		if len(m[p]) == 0 {
			return nil, fmt.Errorf("threshold %q has no expressions; want e.g. [\"< 500\"] (operators < <= > >= ==)", p)
		}
		for _, e := range m[p] {
			sm := exprRE.FindStringSubmatch(e)
			if sm == nil {
				return nil, fmt.Errorf("threshold %q: expression %q is not <op> <number> (operators < <= > >= ==, e.g. \"< 500\", \"<= 1e-4\")", p, e)
			}
			v, err := strconv.ParseFloat(sm[2], 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("threshold %q: expression %q: %q is not a finite number", p, e, sm[2])
			}
			t := target
			t.Op, t.Value, t.Num = sm[1], v, sm[2]
			out = append(out, t)
		}
	}
	return out, nil
}

// paths are the numeric leaves of the summary JSON; a ".<key>" suffix stands for any map key. The
// verifier's tests derive the same list from its Summary type, so the two cannot drift apart.
var paths = []string{
	"acked",
	"audit.attempts",
	"audit.rows",
	"audit.tenants",
	"batch_torn",
	"batches",
	"budget",
	"cold_wakeups",
	"delivered_before_ack",
	"deliveries",
	"dropped_fraction",
	"drops",
	"duplicates",
	"err",
	"event_loss_fraction",
	"issue_latency_ms.count",
	"issue_latency_ms.max",
	"issue_latency_ms.p50",
	"issue_latency_ms.p90",
	"issue_latency_ms.p99",
	"issue_latency_ms.p999",
	"latency_ms.count",
	"latency_ms.max",
	"latency_ms.p50",
	"latency_ms.p90",
	"latency_ms.p99",
	"latency_ms.p999",
	"leaks",
	"loss_upper_95",
	"lost",
	"lost_by_reason.<key>",
	"metrics.increase.<key>",
	"metrics.last.<key>",
	"metrics.max.<key>",
	"min_acked_for_budget",
	"mutations",
	"offered",
	"ok",
	"projection.acked_per_second",
	"projection.annual_events",
	"projection.crash_losses",
	"projection.crashes_per_pod_year",
	"projection.crashes_per_year",
	"projection.fraction",
	"projection.observed_crashes",
	"projection.pods_in_fleet",
	"projection.run_seconds",
	"projection.unflushed_per_crash",
	"reconnects.max_per_s",
	"reconnects.opens",
	"reconnects.total",
	"records",
	"recovered",
	"recovery_max_ms",
	"recovery_ms.<key>",
	"reorder.max_ms",
	"reorder.overtaken",
	"reset_covered",
	"resets_by_reason.<key>",
	"resync_missed",
	"resync_proven",
	"resync_unproven",
	"resyncs.entries",
	"resyncs.failed",
	"resyncs.listing_ms",
	"resyncs.listings",
	"resyncs.resets",
	"resyncs.resets_missed",
	"resyncs.resets_proven",
	"resyncs.resets_unproven",
	"seq_mismatch",
	"skipped",
	"spurious_resets",
	"structural.both",
	"structural.expected",
	"structural.file_changed",
	"structural.missing",
	"structural.reset",
	"structural.reset_covered",
	"tenant_gone",
	"timeout",
	"undelivered",
	"unexpected",
	"unrecovered_faults",
	"unresolved",
}

// statPaths are the numbers the summary repeats per tenant and per consumer (its Stats): what
// per_tenant.<id>.<field> and per_consumer.<id>.<field> may name. A verifier test derives the same
// list from the Stats type.
var statPaths = []string{
	"acked",
	"batch_torn",
	"cold_wakeups",
	"delivered_before_ack",
	"deliveries",
	"dropped_fraction",
	"drops",
	"duplicates",
	"err",
	"event_loss_fraction",
	"issue_latency_ms.count",
	"issue_latency_ms.max",
	"issue_latency_ms.p50",
	"issue_latency_ms.p90",
	"issue_latency_ms.p99",
	"issue_latency_ms.p999",
	"latency_ms.count",
	"latency_ms.max",
	"latency_ms.p50",
	"latency_ms.p90",
	"latency_ms.p99",
	"latency_ms.p999",
	"leaks",
	"loss_upper_95",
	"lost",
	"lost_by_reason.<key>",
	"metrics.increase.<key>",
	"metrics.last.<key>",
	"metrics.max.<key>",
	"mutations",
	"offered",
	"ok",
	"reconnects.max_per_s",
	"reconnects.opens",
	"reconnects.total",
	"recovered",
	"reorder.max_ms",
	"reorder.overtaken",
	"reset_covered",
	"resets_by_reason.<key>",
	"resync_missed",
	"resync_proven",
	"resync_unproven",
	"seq_mismatch",
	"skipped",
	"spurious_resets",
	"tenant_gone",
	"timeout",
	"undelivered",
	"unexpected",
	"unresolved",
}

// windowPaths are the numbers the summary computes per window (windows.<window>.<field>): what
// <field>@<window> may name. A verifier test derives the same list from the WindowStats type.
var windowPaths = []string{
	"acked",
	"delivered_before_ack",
	"deliveries",
	"dropped_fraction",
	"drops",
	"event_loss_fraction",
	"issue_latency_ms.count",
	"issue_latency_ms.max",
	"issue_latency_ms.p50",
	"issue_latency_ms.p90",
	"issue_latency_ms.p99",
	"issue_latency_ms.p999",
	"latency_ms.count",
	"latency_ms.max",
	"latency_ms.p50",
	"latency_ms.p90",
	"latency_ms.p99",
	"latency_ms.p999",
	"lost",
	"mutations",
	"unresolved",
}

// Paths lists the summary paths a threshold may name, sorted (a ".<key>" suffix stands for any key).
func Paths() []string { return slices.Clone(paths) }

// StatPaths lists the fields per_tenant.<id>.<field> and per_consumer.<id>.<field> may name.
func StatPaths() []string { return slices.Clone(statPaths) }

// WindowPaths lists the fields <field>@steady, @fault and @recovery may name.
func WindowPaths() []string { return slices.Clone(windowPaths) }

// ValidPath reports whether p names a summary number a threshold may bound: a summary path, a
// per-tenant or per-consumer one, or a windowed one.
func ValidPath(p string) bool {
	_, err := ParsePath(p)
	return err == nil
}

// ParsePath parses a threshold's key: <path>, per_tenant.<id>.<field>, per_consumer.<id>.<field>
// or <field>@<window>. The returned Threshold has Path, Scope, ID, Field and Window set. The error
// names p and lists what is valid.
func ParsePath(p string) (Threshold, error) {
	t := Threshold{Path: p, Field: p}
	if base, w, ok := strings.Cut(p, "@"); ok {
		if !slices.Contains(Windows, w) {
			return t, fmt.Errorf("threshold path %q: window %q is not one of @%s", p, w, strings.Join(Windows, ", @"))
		}
		if !inList(windowPaths, base) {
			return t, fmt.Errorf("threshold path %q: %q is not computed per window; windowed paths: %s", p, base, strings.Join(windowPaths, ", "))
		}
		t.Field, t.Window = base, w
		return t, nil
	}
	for _, scope := range []string{ScopeTenant, ScopeConsumer} {
		rest, ok := strings.CutPrefix(p, scope+".")
		if !ok {
			continue
		}
		// Ids may hold dots (consumer t3.c1): the field is the longest valid tail of one to three
		// segments (per_consumer.t3.c1.latency_ms.p99: id t3.c1, field latency_ms.p99).
		parts := strings.Split(rest, ".")
		for n := 3; n >= 1; n-- {
			if len(parts) <= n {
				continue
			}
			field := strings.Join(parts[len(parts)-n:], ".")
			if id := strings.Join(parts[:len(parts)-n], "."); id != "" && inList(statPaths, field) {
				t.Scope, t.ID, t.Field = scope, id, field
				return t, nil
			}
		}
		return t, fmt.Errorf("threshold path %q: want %s.<id>.<field>, field one of: %s", p, scope, strings.Join(statPaths, ", "))
	}
	if inList(paths, p) {
		return t, nil
	}
	return t, fmt.Errorf("threshold path %q is not a summary number; valid paths: %s, per_tenant.<id>.<field>, per_consumer.<id>.<field>, <field>@<window>", p, strings.Join(Paths(), ", "))
}

// inList reports whether p is one of list, where an entry ending in ".<key>" stands for any key.
func inList(list []string, p string) bool {
	if slices.Contains(list, p) {
		return true
	}
	for _, v := range list {
		if base, ok := strings.CutSuffix(v, ".<key>"); ok {
			if key, ok := strings.CutPrefix(p, base+"."); ok && key != "" && !strings.Contains(key, "@") {
				return true
			}
		}
	}
	return false
}
