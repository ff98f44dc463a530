package verifier

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/seqgate/seqgate/ledger"
)

// latencyCheck measures delivery latency (first delivery t minus the mutation's done_t, 0 when the
// event arrived before the ack, counted as delivered_before_ack) for every mutation in W and every
// consumer that received it, and issue latency (done_t minus intended_t, so a stalled writer cannot
// hide its own queueing). Quantiles come from HDR histograms at microsecond resolution.
type latencyCheck struct {
	ix          *index
	all         *hdrhistogram.Histogram
	byTenant    map[int32]*hdrhistogram.Histogram
	byCons      map[int32]*hdrhistogram.Histogram
	issue       *hdrhistogram.Histogram
	issueTenant map[int32]*hdrhistogram.Histogram
	pending     []pendingDelivery
	beforeAck   map[int32]int64 // per consumer
	deliveries  map[int32]int64 // first deliveries per consumer
	samples     []latSample     // every delivery latency, kept only when a threshold names a window
}

// latSample is one first delivery's latency (ns, 0 when before the ack) and its mutation.
type latSample struct {
	id int32
	d  int64
}

type pendingDelivery struct {
	t    int64
	id   int32
	cons int32
}

// maxLatencyUs caps recorded latencies at one day; larger values are clamped, not dropped.
const maxLatencyUs = 24 * 3600 * 1_000_000

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, maxLatencyUs, 3) }

func newLatencyCheck(ix *index) *latencyCheck {
	return &latencyCheck{ix: ix, all: newHist(), issue: newHist(), byTenant: map[int32]*hdrhistogram.Histogram{},
		byCons: map[int32]*hdrhistogram.Histogram{}, issueTenant: map[int32]*hdrhistogram.Histogram{},
		beforeAck: map[int32]int64{}, deliveries: map[int32]int64{}}
}

func record(h *hdrhistogram.Histogram, ns int64) {
	us := ns / 1000
	if us < 0 {
		us = 0
	}
	if us > maxLatencyUs {
		us = maxLatencyUs
	}
	_ = h.RecordValue(us) // cannot fail: the value is clamped into range
}

func histOf[K comparable](m map[K]*hdrhistogram.Histogram, k K) *hdrhistogram.Histogram {
	h, ok := m[k]
	if !ok {
		h = newHist()
		m[k] = h
	}
	return h
}

func (c *latencyCheck) Observe(r *ledger.Record) {
	switch r.K {
	case ledger.KindMut:
		if r.DoneT == 0 && r.IntendedT == 0 {
			return
		}
		d := subSat(r.DoneT, r.IntendedT)
		record(c.issue, d)
		record(histOf(c.issueTenant, c.ix.tenant(r.Tenant)), d)
	case ledger.KindEv:
		f := c.ix.cur
		if !f.first {
			return
		}
		m := c.ix.mutationAt(f.id)
		if m.flags&fHasMut == 0 {
			c.pending = append(c.pending, pendingDelivery{t: r.T, id: f.id, cons: f.cons})
			return
		}
		c.deliver(f.id, m, f.cons, r.T)
	}
}

func (c *latencyCheck) deliver(id int32, m *mutation, cons int32, t int64) {
	if !m.inW() {
		return
	}
	d := subSat(t, m.doneT)
	if d <= 0 {
		d = 0
		c.beforeAck[cons]++
	}
	if c.ix.windows {
		c.samples = append(c.samples, latSample{id: id, d: d})
	}
	c.deliveries[cons]++
	record(c.all, d)
	record(histOf(c.byTenant, m.tenant), d)
	record(histOf(c.byCons, cons), d)
}

func (c *latencyCheck) Finish(s *Summary) {
	for _, p := range c.pending {
		c.deliver(p.id, c.ix.mutationAt(p.id), p.cons, p.t)
	}
	s.LatencyMs = quantiles(c.all)
	s.IssueLatencyMs = quantiles(c.issue)
	for ti, h := range c.byTenant {
		s.tenant(c.ix.tenantName(ti)).LatencyMs = quantiles(h)
	}
	for ti, h := range c.issueTenant {
		s.tenant(c.ix.tenantName(ti)).IssueLatencyMs = quantiles(h)
	}
	for ci, h := range c.byCons {
		cs := c.ix.cons[ci]
		st := s.consumer(cs.id)
		st.LatencyMs = quantiles(h)
		st.DeliveredBeforeAck = c.beforeAck[ci]
		st.Deliveries = c.deliveries[ci]
		tst := s.tenant(c.ix.tenantName(cs.tenant))
		tst.DeliveredBeforeAck += c.beforeAck[ci]
		tst.Deliveries += c.deliveries[ci]
		s.DeliveredBeforeAck += c.beforeAck[ci]
		s.Deliveries += c.deliveries[ci]
	}
}

func quantiles(h *hdrhistogram.Histogram) Quantiles {
	if h.TotalCount() == 0 {
		return Quantiles{}
	}
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1000 }
	return Quantiles{Count: h.TotalCount(), P50: q(50), P90: q(90), P99: q(99), P999: q(99.9),
		Max: float64(h.Max()) / 1000}
}
