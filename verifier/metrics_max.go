package verifier

import (
	"maps"
	"slices"
	"strings"

	"github.com/seqgate/seqgate/ledger"
)

// Metric kinds in Metrics.Types.
const (
	MetricCounter = "counter"
	MetricGauge   = "gauge"
)

// Metrics summarises the scraped `metric` records so thresholds can address them. A family is a
// counter or a gauge by the TYPE its pods exported (the metric records' type); a record without one
// (a ledger written before metric records carried it, or an untyped family) is a counter when its name ends in _total, the
// Prometheus naming convention, else a gauge.
type Metrics struct {
	// Types says, per family sampled, whether it was summarised as a counter or a gauge.
	Types map[string]string `json:"types"`
	// Max is, per metric family, the largest value any sample of it took over the run, across every
	// pod and label set (e.g. the oldest outbox row's age: a pinned outbox shows as a large max).
	// Meant for gauges; for a counter it is the largest cumulative value of one series.
	Max map[string]float64 `json:"max"`
	// Last is, per gauge family, the largest last sample of any series (pod and label set): the
	// highest level the run ended at (e.g. a retry buffer that never emptied). The largest, not the
	// sum, because a gauge of shared state (the outbox's oldest age) is exported by every pod alike.
	Last map[string]float64 `json:"last"`
	// Increase is, per counter family, how much it grew over the run summed over every pod and label
	// set, counted from 0 (pods start with fresh counters; a series first seen at v grew by v) and
	// across restarts (a sample below the previous one is a reset: it grew by the new value), e.g.
	// drive9_sse_event_retry_dropped_total: the drops the service admits to. A gauge has none.
	Increase map[string]float64 `json:"increase"`
	// Missing lists the families the scenario named (the run record's metrics) of which no pod
	// exported a single sample: the verdict cannot be a pass without them.
	Missing []string `json:"missing"`
}

// metricsSummary collects Metrics from the metric records. It is reported, not judged: thresholds
// (metrics.max.<family>, metrics.last.<family>, metrics.increase.<family>) turn it into a verdict.
type metricsSummary struct {
	ix       *index
	max      map[string]float64
	increase map[string]float64
	types    map[string]string      // family -> the type its first typed record said
	last     map[string]seriesState // series key -> its family and previous sample
}

// seriesState is one series' family and latest sample.
type seriesState struct {
	family string
	v      float64
}

func newMetricsSummary(ix *index) *metricsSummary {
	return &metricsSummary{ix: ix, max: map[string]float64{}, increase: map[string]float64{}, types: map[string]string{},
		last: map[string]seriesState{}}
}

func (m *metricsSummary) Observe(r *ledger.Record) {
	if r.K != ledger.KindMetric || r.Name == "" {
		return
	}
	if v, ok := m.max[r.Name]; !ok || r.Value > v {
		m.max[r.Name] = r.Value
	}
	if _, ok := m.types[r.Name]; !ok && r.MetricType != "" {
		m.types[r.Name] = r.MetricType
	}
	key := seriesKey(r)
	prev, seen := m.last[key]
	switch {
	case !seen || r.Value < prev.v: // born during the run, or reset by a restart
		m.increase[r.Name] += r.Value
	default:
		m.increase[r.Name] += r.Value - prev.v
	}
	if !seen {
		prev.family = r.Name
	}
	m.last[key] = seriesState{family: prev.family, v: r.Value}
}

func (m *metricsSummary) Finish(s *Summary) {
	out := Metrics{Types: map[string]string{}, Max: m.max, Last: map[string]float64{}, Increase: map[string]float64{}, Missing: []string{}}
	for name := range m.max {
		out.Types[name] = MetricKind(name, m.types[name])
		if out.Types[name] == MetricCounter {
			out.Increase[name] = m.increase[name]
		}
	}
	for _, st := range m.last {
		if out.Types[st.family] != MetricGauge {
			continue
		}
		if v, ok := out.Last[st.family]; !ok || st.v > v {
			out.Last[st.family] = st.v
		}
	}
	for _, name := range m.ix.run.Metrics {
		if _, ok := m.max[name]; !ok && !slices.Contains(out.Missing, name) {
			out.Missing = append(out.Missing, name)
		}
	}
	slices.Sort(out.Missing)
	s.Metrics = out
}

// MetricKind decides whether a family is read as a counter or a gauge (MetricCounter, MetricGauge): by
// the TYPE its pods exported (the metric record's type), else (an untyped family, or a ledger
// without types) by the _total suffix Prometheus reserves for counters. The report plots by it too.
func MetricKind(name, recorded string) string {
	switch recorded {
	case MetricCounter, MetricGauge:
		return recorded
	}
	if strings.HasSuffix(name, "_total") {
		return MetricCounter
	}
	return MetricGauge
}

// seriesKey identifies one time series: pod, family and its sorted labels.
func seriesKey(r *ledger.Record) string {
	var b strings.Builder
	b.WriteString(r.Pod + "\x00" + r.Name)
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
		b.WriteString("\x00" + k + "=" + r.Labels[k])
	}
	return b.String()
}

// metricsCheck describes the metric summary: a family the scenario names with no sample makes the
// verdict inconclusive (decide's metrics_exported).
var metricsCheck = descriptor{
	Meaning: "the metric families the scenario names must have been exported by some pod",
	Name:    CheckMetricsExported, File: "metrics_max.go", Covers: []string{"metrics.*"}, Gate: gateInconclusive,
	build: func(e *checkEnv) checker { return newMetricsSummary(e.ix) },
}
