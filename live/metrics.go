// Package live exposes a run while it goes on: seqgate's own Prometheus metrics, computed from the
// ledger records as the harness writes them (seqgate run --metrics-addr, docs/report.md).
package live

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// Metrics are seqgate's own metrics of one run. Observe feeds them; they are registered on the
// registry given to NewMetrics. Label values are bounded: result codes, fault kinds, reset reasons.
type Metrics struct {
	offered   prometheus.Counter
	acked     prometheus.Counter
	failed    *prometheus.CounterVec
	dropped   prometheus.Counter
	delivered prometheus.Counter
	resets    *prometheus.CounterVec
	conns     prometheus.Gauge
	lag       prometheus.GaugeFunc
	faults    *prometheus.GaugeVec
	slip      prometheus.Histogram
	anomalies *prometheus.GaugeVec

	mu       sync.Mutex
	head     map[string]int64  // tenant -> highest seq any of its consumers received
	cursor   map[string]int64  // consumer -> highest seq it received
	tenantOf map[string]string // consumer -> tenant
	open     map[string]bool   // open connections
	active   map[string]string // fault id -> kind, while active

	resetReasons resetReasons // bounds the resets' reason label
}

// NewMetrics builds the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		offered: prometheus.NewCounter(prometheus.CounterOpts{Name: "seqgate_mutations_offered_total",
			Help: "Mutations the open-model schedule produced (sent or dropped)."}),
		acked: prometheus.NewCounter(prometheus.CounterOpts{Name: "seqgate_mutations_acked_total",
			Help: "Mutations the service answered with success."}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "seqgate_mutations_failed_total",
			Help: "Mutations answered with an error or given up on (result: err, timeout)."}, []string{"result"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "seqgate_mutations_dropped_total",
			Help: "Arrivals the open model could not send: every request slot of the tenant was busy."}),
		delivered: prometheus.NewCounter(prometheus.CounterOpts{Name: "seqgate_events_delivered_total",
			Help: "file_changed events delivered to consumers (each consumer's delivery counts)."}),
		resets: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "seqgate_resets_received_total",
			Help: "Reset frames consumers received, by reason."}, []string{"reason"}),
		conns: prometheus.NewGauge(prometheus.GaugeOpts{Name: "seqgate_sse_connections_open",
			Help: "SSE connections of the consumers that are open now."}),

		faults: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "seqgate_faults_active",
			Help: "Faults injected and not yet healed, by kind."}, []string{"kind"}),
		slip: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "seqgate_schedule_slip_seconds",
			Help:    "How late each mutation was sent after the time the schedule intended (coordinated omission shows here).",
			Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30}}),
		anomalies: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "seqgate_anomalies",
			Help: "The verifier's anomalies of the run, by kind (the witness key of its count), once the run has been verified."}, []string{"kind"}),
		head: map[string]int64{}, cursor: map[string]int64{}, tenantOf: map[string]string{},
		open: map[string]bool{}, active: map[string]string{},
	}
	// Computed when scraped, not per event: a max over every consumer.
	m.lag = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seqgate_consumer_lag_events",
		Help: "The largest consumer lag: the highest seq any consumer of its tenant received minus its own cursor, in events."}, m.maxLag)
	for _, c := range []prometheus.Collector{m.offered, m.acked, m.failed, m.dropped, m.delivered, m.resets, m.conns, m.lag, m.faults, m.slip, m.anomalies} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Observe updates the metrics with one ledger record; records of other kinds are ignored. It is
// safe for concurrent use and keeps nothing of r.
func (m *Metrics) Observe(r *ledger.Record) {
	switch r.K {
	case ledger.KindMut:
		m.offered.Inc()
		if r.Res == ledger.ResOK {
			m.acked.Inc()
		} else {
			m.failed.WithLabelValues(r.Res).Inc()
		}
		if r.IntendedT != 0 && r.T >= r.IntendedT {
			m.slip.Observe(float64(r.T-r.IntendedT) / 1e9)
		}
	case ledger.KindDrop:
		m.offered.Inc()
		m.dropped.Inc()
	case ledger.KindEv:
		m.delivered.Inc()
		m.advance(r)
	case ledger.KindReset:
		m.resets.WithLabelValues(m.resetReasons.label(r.Reason)).Inc()
		m.advance(r)
	case ledger.KindConn:
		m.mu.Lock()
		switch r.Phase {
		case "open":
			m.open[strings.Clone(r.Conn)] = true
		case "close", "fail":
			delete(m.open, r.Conn)
		}
		m.conns.Set(float64(len(m.open)))
		m.mu.Unlock()
	case ledger.KindFault:
		m.mu.Lock()
		switch r.Phase {
		case "start":
			if _, ok := m.active[r.ID]; !ok {
				m.active[strings.Clone(r.ID)] = strings.Clone(r.Kind)
				m.faults.WithLabelValues(r.Kind).Inc()
			}
		case "stop":
			if kind, ok := m.active[r.ID]; ok {
				delete(m.active, r.ID)
				m.faults.WithLabelValues(kind).Dec()
			}
		}
		m.mu.Unlock()
	}
}

// advance moves a consumer's cursor and its tenant's head, and recomputes the largest lag.
func (m *Metrics) advance(r *ledger.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tenantOf[r.Consumer]; !ok {
		m.tenantOf[strings.Clone(r.Consumer)] = strings.Clone(r.Tenant)
	}
	if cur, ok := m.cursor[r.Consumer]; !ok || r.Seq > cur {
		m.cursor[strings.Clone(r.Consumer)] = r.Seq
	}
	if h, ok := m.head[r.Tenant]; !ok || r.Seq > h {
		m.head[strings.Clone(r.Tenant)] = r.Seq
	}
}

func (m *Metrics) maxLag() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var worst int64
	for c, cur := range m.cursor {
		worst = max(worst, m.head[m.tenantOf[c]]-cur)
	}
	return float64(worst)
}

// ShowVerdict shows what the verifier found in the run: each anomaly kind of its timeline with its
// count. The metrics read the verifier's numbers, not the ledger again.
func (m *Metrics) ShowVerdict(s *verifier.Summary) {
	if s == nil || s.Timeline == nil {
		return
	}
	for _, k := range s.Timeline.Kinds() {
		m.anomalies.WithLabelValues(string(k)).Set(float64(s.Timeline.Total(k)))
	}
}
