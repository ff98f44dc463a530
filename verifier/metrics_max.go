package verifier

import "github.com/seqgate/seqgate/verifier/ledger"

// Metrics summarises the scraped `metric` records so thresholds can address them.
type Metrics struct {
	// Max is, per metric family, the largest value any sample of it took over the run, across every
	// pod and label set (e.g. the oldest outbox row's age: a pinned outbox shows as a large max).
	Max map[string]float64 `json:"max"`
}

// metricsMax collects Metrics.Max from the metric records. It is reported, not judged: thresholds
// (metrics.max.<family>) turn it into a verdict.
type metricsMax struct {
	max map[string]float64
}

func newMetricsMax() *metricsMax { return &metricsMax{max: map[string]float64{}} }

func (m *metricsMax) Observe(r *ledger.Record) {
	if r.K != ledger.KindMetric || r.Name == "" {
		return
	}
	if v, ok := m.max[r.Name]; !ok || r.Value > v {
		m.max[r.Name] = r.Value
	}
}

func (m *metricsMax) Finish(s *Summary) { s.Metrics.Max = m.max }
