package verifier

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seqgate/seqgate/threshold"
)

// measureThreshold reads the number a threshold bounds: in the whole summary, in one tenant's or
// consumer's stats, or in one window's.
func measureThreshold(doc map[string]any, t threshold.Threshold) float64 {
	switch {
	case t.Scope != "":
		// resolveThresholdIDs has refused ids the ledger does not have: a tenant or consumer with no
		// entry is an idle one, every number of which is 0, and measure gives 0 for every path of
		// the empty entry.
		scope, _ := doc[t.Scope].(map[string]any)
		one, _ := scope[t.ID].(map[string]any)
		return measure(one, t.Field)
	case t.Window != "":
		ws, _ := doc["windows"].(map[string]any)
		w, _ := ws[t.Window].(map[string]any)
		return measure(w, t.Field)
	}
	return measure(doc, t.Field)
}

// mergeThresholds is the gate a ledger is judged against: the run record's thresholds, each path
// given in extra replacing the run record's expressions for that path.
func mergeThresholds(run, extra map[string][]string) map[string][]string {
	out := maps.Clone(run)
	if out == nil {
		out = map[string][]string{}
	}
	maps.Copy(out, extra)
	return out
}

// parseThresholds parses the merged gate. An error names where the bad threshold came from: the run
// record, or opts.ThresholdsFrom for one given in Options.
func parseThresholds(run map[string][]string, opts Options) (threshold.List, error) {
	from := opts.ThresholdsFrom
	if from == "" {
		from = "options"
	}
	if _, err := threshold.Parse(opts.Thresholds); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	th, err := threshold.Parse(mergeThresholds(run, opts.Thresholds))
	if err != nil {
		return nil, fmt.Errorf("run record thresholds: %w", err)
	}
	for i := range th {
		if _, given := opts.Thresholds[th[i].Path]; given {
			th[i].From = from
		}
	}
	return th, nil
}

// resolveThresholdIDs points every per-tenant threshold at its tenant's entry in per_tenant, whether
// it names the tenant by its scenario name (per_tenant.tenant_2.lost) or by the service's id, and
// refuses a per-tenant or per-consumer threshold whose tenant or consumer the ledger does not have: it
// would measure 0 and pass whatever happened.
func resolveThresholdIDs(s *Summary, ix *index, th threshold.List) error {
	for i, t := range th {
		if err := checkMetricAggregate(s, t); err != nil {
			return err
		}
		// Every tenant and consumer of the ledger is known here, idle ones (no entry) included.
		var known []string
		what := "tenant"
		switch t.Scope {
		case threshold.ScopeTenant:
			if ti, ok := ix.tenantRef(t.ID); ok {
				th[i].ID = ix.tenantName(ti)
				continue
			}
			for ti := range ix.tenantNames {
				known = append(known, ix.tenantName(int32(ti)))
			}
		case threshold.ScopeConsumer:
			if _, ok := ix.consIDs[t.ID]; ok {
				continue
			}
			what = "consumer"
			for _, c := range ix.cons {
				known = append(known, c.id)
			}
		default:
			continue
		}
		slices.Sort(known)
		known = slices.Compact(known)
		if len(known) > 10 {
			known = append(known[:10], "...")
		}
		return fmt.Errorf("%s: threshold %q: the ledger has no %s %q (its %ss: %s)", source(t), t.Path, what, t.ID, what, strings.Join(known, ", "))
	}
	return nil
}

// checkMetricAggregate refuses a threshold that bounds a counter's last value or a gauge's increase
// (the summary has neither: a gauge's increase is meaningless), or a metric per tenant or consumer
// (never computed): each would measure 0 and pass.
func checkMetricAggregate(s *Summary, t threshold.Threshold) error {
	name, ok := metricFamily(t.Field)
	if ok && t.Scope != "" {
		// Metrics are scraped per pod, not per tenant or consumer: the scoped number is always 0.
		return fmt.Errorf("%s: threshold %q: metrics are summarised over the whole run, not per tenant or consumer; bound %s", source(t), t.Path, t.Field)
	}
	kind := s.Metrics.Types[name]
	if !ok || kind == "" {
		return nil
	}
	from := source(t)
	switch {
	case kind == MetricGauge && strings.HasPrefix(t.Field, "metrics.increase."):
		return fmt.Errorf("%s: threshold %q: %s is a gauge, which has no increase; bound metrics.max.%s or metrics.last.%s", from, t.Path, name, name, name)
	case kind == MetricCounter && strings.HasPrefix(t.Field, "metrics.last."):
		return fmt.Errorf("%s: threshold %q: %s is a counter, which has no last level; bound metrics.increase.%s", from, t.Path, name, name)
	}
	return nil
}

// source names where a threshold came from in an error: the run record, or the option that gave it.
func source(t threshold.Threshold) string {
	if t.From == "" {
		return "run record thresholds"
	}
	return t.From
}

// windowsAsked reports whether a threshold names a window (the windows are computed only then).
func windowsAsked(th threshold.List) bool {
	for _, t := range th {
		if t.Window != "" {
			return true
		}
	}
	return false
}

// measure reads the value at path from the summary as the JSON shows it (a missing map key is 0).
func measure(doc map[string]any, path string) float64 {
	var cur any = doc
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0
		}
		cur = m[part]
	}
	v, _ := cur.(float64)
	return v
}

// summaryDoc is the summary as generic JSON, the form threshold paths address.
func summaryDoc(s *Summary) map[string]any {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Summary only holds marshalable values
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(err)
	}
	return doc
}
