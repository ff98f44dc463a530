package verifier

import (
	"slices"
	"strings"

	"github.com/seqgate/seqgate/ledger"
)

// Metrics summarises the scraped `metric` records so thresholds can address them.
type Metrics struct {
	// Max is, per metric family, the largest value any sample of it took over the run, across every
	// pod and label set (e.g. the oldest outbox row's age: a pinned outbox shows as a large max).
	Max map[string]float64 `json:"max"`
	// Increase is, per metric family, how much it grew over the run summed over every pod and label
	// set, counted from 0 (pods start with fresh counters; a series first seen at v grew by v) and
	// across restarts (a sample below the previous one is a reset: it grew by the new value). Meant
	// for counters, e.g. drive9_sse_event_retry_dropped_total: the drops the service admits to.
	Increase map[string]float64 `json:"increase"`
}

// metricsSummary collects Metrics from the metric records. It is reported, not judged: thresholds
// (metrics.max.<family>, metrics.increase.<family>) turn it into a verdict.
type metricsSummary struct {
	max      map[string]float64
	increase map[string]float64
	last     map[string]float64 // series key -> previous sample
}

func newMetricsSummary() *metricsSummary {
	return &metricsSummary{max: map[string]float64{}, increase: map[string]float64{}, last: map[string]float64{}}
}

func (m *metricsSummary) Observe(r *ledger.Record) {
	if r.K != ledger.KindMetric || r.Name == "" {
		return
	}
	if v, ok := m.max[r.Name]; !ok || r.Value > v {
		m.max[r.Name] = r.Value
	}
	key := seriesKey(r)
	prev, seen := m.last[key]
	switch {
	case !seen || r.Value < prev: // born during the run, or reset by a restart
		m.increase[r.Name] += r.Value
	default:
		m.increase[r.Name] += r.Value - prev
	}
	m.last[key] = r.Value
}

func (m *metricsSummary) Finish(s *Summary) {
	s.Metrics.Max, s.Metrics.Increase = m.max, m.increase
}

// seriesKey identifies one time series: pod, family and its sorted labels.
func seriesKey(r *ledger.Record) string {
	var b strings.Builder
	b.WriteString(r.Pod + "\x00" + r.Name)
	keys := make([]string, 0, len(r.Labels))
	for k := range r.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + r.Labels[k])
	}
	return b.String()
}
