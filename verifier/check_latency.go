package verifier

import (
	"fmt"
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/seqgate/seqgate/ledger"
)

// latencyCheck measures delivery latency (first delivery t minus the mutation's done_t, 0 when the
// event arrived before the ack, counted as delivered_before_ack) for every mutation in W and every
// consumer that received it, and issue latency (done_t minus intended_t, so a stalled writer cannot
// hide its own queueing). Quantiles come from HDR histograms at microsecond resolution.
//
// Each value is recorded once, per consumer (delivery) or per tenant (issue); the per-tenant and
// run-wide histograms are merged from those at the end. A merge adds bucket counts, so its quantiles
// are the ones recording every value three times would give, at a third of the cost per record.
type latencyCheck struct {
	ix          *index
	byCons      []*hist // by consumer index; nil: no delivery yet
	issueTenant []*hist // by tenant index; nil: no mutation yet
	pending     []pendingDelivery
	beforeAck   []int64     // per consumer
	deliveries  []int64     // first deliveries per consumer
	samples     []latSample // every delivery latency, kept only when a threshold names a window
	slow        *slowest    // the slowest first deliveries (nil: none kept)
}

// latSample is one first delivery's latency (ns, 0 when before the ack) and its mutation.
type latSample struct {
	id int32
	d  int64
}

// pendingDelivery is a first delivery that came before its mutation's mut record. Once that record
// has come it is resolved: its latency d is recorded, and it stays only as an offer to the slowest
// deliveries, which must see it after every other delivery, as before (see deliverResolved).
type pendingDelivery struct {
	t, d     int64
	id       int32
	cons     int32
	pod      string // the delivering pod
	resolved bool
}

// maxLatencyUs caps recorded latencies at one day; larger values are clamped, not dropped.
const maxLatencyUs = 24 * 3600 * 1_000_000

// hist is an HDR histogram of microseconds, 1 to maxLatencyUs at 3 significant digits, made small
// (up to histSmallUs, about half the memory) and widened to the full range the first time it is
// given a larger value, by recording or by a merge. Below histSmallUs its buckets are the full
// range's, so every count, quantile and max it gives is the one the full-range histogram gives.
type hist struct {
	h    *hdrhistogram.Histogram
	full bool
}

// histSmallUs is what a histogram holds before it is widened: most latencies are far below it.
const histSmallUs = 10_000_000

func newHist() *hist { return &hist{h: hdrhistogram.New(1, histSmallUs, 3)} }

func (x *hist) widen() {
	if x.full {
		return
	}
	f := hdrhistogram.New(1, maxLatencyUs, 3)
	f.Merge(x.h) // every value fits the full range
	x.h, x.full = f, true
}

// merge adds from's counts to x.
func (x *hist) merge(from *hist) {
	if from.full {
		x.widen()
	}
	x.h.Merge(from.h) // x's range now holds every value of from's
}

func newLatencyCheck(ix *index) *latencyCheck { return &latencyCheck{ix: ix} }

func record(h *hist, ns int64) {
	us := ns / 1000
	if us < 0 {
		us = 0
	}
	if us > maxLatencyUs {
		us = maxLatencyUs
	}
	if h.h.RecordValue(us) != nil { // beyond the small range
		h.widen()
		_ = h.h.RecordValue(us) // cannot fail: the value is clamped into the full range
	}
}

// histAt returns (*hs)[i], growing the slice and creating the histogram on first use.
func histAt(hs *[]*hist, i int32) *hist {
	if int(i) >= len(*hs) {
		*hs = append(*hs, make([]*hist, int(i)+1-len(*hs))...)
	}
	h := (*hs)[i]
	if h == nil {
		h = newHist()
		(*hs)[i] = h
	}
	return h
}

// countAt returns &(*ns)[i], growing the slice on first use.
func countAt(ns *[]int64, i int32) *int64 {
	if int(i) >= len(*ns) {
		*ns = append(*ns, make([]int64, int(i)+1-len(*ns))...)
	}
	return &(*ns)[i]
}

func (c *latencyCheck) Observe(r *ledger.Record) {
	switch r.K {
	case ledger.KindMut:
		if r.DoneT == 0 && r.IntendedT == 0 {
			return
		}
		// the driver interned this record's (tenant, path): its entry names the tenant
		record(histAt(&c.issueTenant, c.ix.muts.tenantOf(c.ix.mutationAt(c.ix.cur.id))), subSat(r.DoneT, r.IntendedT))
	case ledger.KindEv:
		f := c.ix.cur
		if !f.first {
			return
		}
		m := c.ix.mutationAt(f.id)
		if m.flags&fHasMut == 0 {
			if len(c.pending) == cap(c.pending) {
				c.deliverResolved()
			}
			c.pending = append(c.pending, pendingDelivery{t: r.T, id: f.id, cons: f.cons, pod: r.Pod})
			return
		}
		c.deliver(f.id, m, f.cons, r.T, r.Pod)
	}
}

func (c *latencyCheck) deliver(id int32, m *mutation, cons int32, t int64, pod string) {
	if d, ok := c.measure(id, m, cons, t); ok && c.slow != nil {
		c.slow.offer(d, t, id, cons, pod)
	}
}

// measure records a first delivery's latency, d, everywhere but in the slowest deliveries; ok is
// false, and nothing is recorded, when m is not in W.
func (c *latencyCheck) measure(id int32, m *mutation, cons int32, t int64) (d int64, ok bool) {
	if !m.inW() {
		return 0, false
	}
	d = subSat(t, c.ix.done(m))
	if d <= 0 {
		d = 0
		*countAt(&c.beforeAck, cons)++
	}
	if c.ix.windows {
		c.samples = append(c.samples, latSample{id: id, d: d})
	}
	*countAt(&c.deliveries, cons)++
	record(histAt(&c.byCons, cons), d)
	return d, true
}

// deliverResolved records the pending deliveries whose mut record has come since, so that only those
// still without one are held. Which of two equally slow deliveries the slowest keep depends on the
// order they are offered in, and that order must not change: the pending ones are offered at the
// end, in their order, after every other. So a resolved one stays, as an offer, while the slowest
// could still take it; once they hold their n and it is not slower than the fastest of them it
// never can (that one only gets slower), and it is dropped.
func (c *latencyCheck) deliverResolved() {
	keep := c.pending[:0]
	for _, p := range c.pending {
		if !p.resolved {
			// an event-producing mut record is final (observeMut keeps the first); another may yet
			// be replaced by one, so it waits
			m := c.ix.mutationAt(p.id)
			if m.flags&fHasMut == 0 || m.op() != opEvent {
				keep = append(keep, p)
				continue
			}
			d, ok := c.measure(p.id, m, p.cons, p.t)
			if !ok {
				continue
			}
			p.d, p.resolved = d, true
		}
		if c.slow != nil && c.slow.couldTake(p.d) {
			keep = append(keep, p)
		}
	}
	clear(c.pending[len(keep):])
	c.pending = keep
}

func (c *latencyCheck) Finish(s *Summary) {
	for _, p := range c.pending {
		if p.resolved {
			c.slow.offer(p.d, p.t, p.id, p.cons, p.pod)
			continue
		}
		c.deliver(p.id, c.ix.mutationAt(p.id), p.cons, p.t, p.pod)
	}
	all, issue := newHist(), newHist()
	for ti, h := range c.issueTenant {
		if h != nil {
			s.tenant(c.ix.tenantName(int32(ti))).IssueLatencyMs = quantiles(h)
			issue.merge(h)
		}
	}
	byTenant := map[int32]*hist{}
	for ci, h := range c.byCons {
		if h == nil {
			continue
		}
		cs := c.ix.cons[ci]
		// a consumer receives only its own tenant's mutations: its tenant is theirs
		th, ok := byTenant[cs.tenant]
		if !ok {
			th = newHist()
			byTenant[cs.tenant] = th
		}
		th.merge(h)
		all.merge(h)
		st := s.consumer(cs.id)
		st.LatencyMs = quantiles(h)
		before, n := *countAt(&c.beforeAck, int32(ci)), *countAt(&c.deliveries, int32(ci))
		st.DeliveredBeforeAck, st.Deliveries = before, n
		tst := s.tenant(c.ix.tenantName(cs.tenant))
		tst.DeliveredBeforeAck += before
		tst.Deliveries += n
		s.DeliveredBeforeAck += before
		s.Deliveries += n
	}
	for ti, h := range byTenant {
		s.tenant(c.ix.tenantName(ti)).LatencyMs = quantiles(h)
	}
	s.LatencyMs = quantiles(all)
	s.IssueLatencyMs = quantiles(issue)
}

func quantiles(x *hist) Quantiles {
	h := x.h
	if h.TotalCount() == 0 {
		return Quantiles{}
	}
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1000 }
	return Quantiles{Count: h.TotalCount(), P50: q(50), P90: q(90), P99: q(99), P999: q(99.9),
		Max: float64(h.Max()) / 1000}
}

// latencyCheckDesc describes first-delivery latency of acked events.
var latencyCheckDesc = descriptor{
	Meaning: "time from a write's acknowledgement to its event reaching a consumer",
	Name:    "latency", File: "check_latency.go", Path: "latency_ms.p99",
	Covers: []string{"latency_ms.*", "deliveries", "delivered_before_ack"},
	Value:  func(s *Summary) float64 { return s.LatencyMs.P99 },
	Report: func(s *Summary) string {
		return quantilesLine(s.LatencyMs) + fmt.Sprintf(", delivered before ack %d", s.DeliveredBeforeAck)
	},
	Title:      "latency",
	Doc:        "see `latency_ms`, `issue_latency_ms`",
	WitnessDoc: "–",
	build:      func(e *checkEnv) checker { e.lat = newLatencyCheck(e.ix); e.lat.slow = e.slow; return e.lat },
}

// issueLatencyCheck describes how long each write took from when the schedule wanted it sent.
var issueLatencyCheck = descriptor{
	Meaning: "time from when the schedule wanted a write sent to its answer (includes the generator's own queueing)",
	Name:    "issue_latency", File: "check_latency.go", Path: "issue_latency_ms.p99", Covers: []string{"issue_latency_ms.*"},
	Value:  func(s *Summary) float64 { return s.IssueLatencyMs.P99 },
	Report: func(s *Summary) string { return quantilesLine(s.IssueLatencyMs) },
	Title:  "latency",
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *latencyCheck) observedKinds() []string { return []string{ledger.KindMut, ledger.KindEv} }
