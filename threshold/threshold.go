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
	Path  string  // a summary JSON path, one of Paths
	Op    string  // < <= > >= ==
	Value float64 // the limit
	Num   string  // the limit as written, for names and messages
}

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
		if !ValidPath(p) {
			return nil, fmt.Errorf("threshold path %q is not a summary number; valid paths: %s", p, strings.Join(Paths(), ", "))
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
			out = append(out, Threshold{Path: p, Op: sm[1], Value: v, Num: sm[2]})
		}
	}
	return out, nil
}

// paths are the numeric leaves of the summary JSON; a ".<key>" suffix stands for any map key. The
// verifier's tests derive the same list from its Summary type, so the two cannot drift apart.
var paths = []string{
	"acked",
	"budget",
	"cold_wakeups",
	"delivered_before_ack",
	"deliveries",
	"duplicates",
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
	"metrics.max.<key>",
	"min_acked_for_budget",
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
	"reorder.max_ms",
	"reorder.overtaken",
	"reset_covered",
	"resets_by_reason.<key>",
	"skipped",
	"spurious_resets",
	"undelivered",
	"unexpected",
}

// Paths lists the summary paths a threshold may name, sorted (a ".<key>" suffix stands for any key).
func Paths() []string { return slices.Clone(paths) }

// ValidPath reports whether p names a summary number a threshold may bound.
func ValidPath(p string) bool {
	if slices.Contains(paths, p) {
		return true
	}
	for _, v := range paths {
		if base, ok := strings.CutSuffix(v, ".<key>"); ok {
			if key, ok := strings.CutPrefix(p, base+"."); ok && key != "" {
				return true
			}
		}
	}
	return false
}
