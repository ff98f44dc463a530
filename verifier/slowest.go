package verifier

import (
	"container/heap"
	"fmt"
	"slices"

	"github.com/seqgate/seqgate/ledger"
)

// DefaultSlowest is how many of the slowest deliveries a Summary keeps when
// Options.SlowestDeliveries is 0.
const DefaultSlowest = 10

// SlowDelivery is one of the slowest first deliveries of an acked event (a witness of the latency
// tail: p99 hides the one event that arrived 40 s late). Times are run-relative milliseconds.
type SlowDelivery struct {
	MID         string  `json:"mid"`
	Tenant      string  `json:"tenant"`
	Path        string  `json:"path"`
	Consumer    string  `json:"consumer"`
	AckPod      string  `json:"ack_pod"`      // the pod that answered the write
	DeliveryPod string  `json:"delivery_pod"` // the pod whose stream delivered it
	AckMs       float64 `json:"ack_ms"`
	DeliveredMs float64 `json:"delivered_ms"`
	LatencyMs   float64 `json:"latency_ms"`
	// Faults are the faults active at some time between the ack and the delivery ("id kind(target)").
	Faults []string `json:"faults"`
}

// slowEntry is one kept delivery: its latency (ns), delivery time, mutation, consumer and pod.
type slowEntry struct {
	d, t int64
	id   int32
	cons int32
	pod  string
}

// slowHeap is a min-heap by latency: its root is the fastest of the kept, the first to go.
type slowHeap []slowEntry

func (h slowHeap) Len() int { return len(h) }
func (h slowHeap) Less(i, j int) bool {
	if h[i].d != h[j].d {
		return h[i].d < h[j].d
	}
	return h[i].t > h[j].t // of equal latencies the later delivery goes first
}
func (h slowHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *slowHeap) Push(x any)   { *h = append(*h, x.(slowEntry)) }
func (h *slowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// slowest keeps the n slowest first deliveries in a heap of n: memory does not grow with the run.
type slowest struct {
	n int
	h slowHeap
}

func newSlowest(n int) *slowest {
	if n == 0 {
		n = DefaultSlowest
	}
	return &slowest{n: max(n, 0)}
}

// couldTake reports whether an offer of latency d could be taken now or later: the fastest kept
// only gets slower once n are kept.
func (s *slowest) couldTake(d int64) bool {
	return s.n > 0 && (len(s.h) < s.n || d > s.h[0].d)
}

// offer considers one first delivery; the common case (faster than every kept one) is one comparison.
func (s *slowest) offer(d, t int64, id, cons int32, pod string) {
	if s.n == 0 || (len(s.h) == s.n && d <= s.h[0].d) {
		return
	}
	e := slowEntry{d: d, t: t, id: id, cons: cons, pod: pod}
	if len(s.h) < s.n {
		heap.Push(&s.h, e)
		return
	}
	s.h[0] = e
	heap.Fix(&s.h, 0)
}

// slowestReport writes the kept deliveries into the summary, slowest first, each with the faults
// active between its ack and its delivery. It runs after the fault windows are known (last in the
// checkers' list).
type slowestReport struct {
	ix   *index
	slow *slowest
}

func (c *slowestReport) Observe(*ledger.Record) {}

func (c *slowestReport) Finish(s *Summary) {
	kept := slices.Clone(c.slow.h)
	slices.SortFunc(kept, func(a, b slowEntry) int {
		switch {
		case a.d != b.d:
			if a.d > b.d {
				return -1
			}
			return 1
		case a.t != b.t:
			if a.t < b.t {
				return -1
			}
			return 1
		}
		return 0
	})
	s.SlowestDeliveries = make([]SlowDelivery, 0, len(kept))
	for _, e := range kept {
		m := c.ix.mutationAt(e.id)
		ack, at := ms(c.ix.done(m)), ms(e.t)
		sd := SlowDelivery{MID: c.ix.mid(m), Tenant: c.ix.tenantName(c.ix.muts.tenantOf(m)), Path: c.ix.path(m), Consumer: c.ix.cons[e.cons].id,
			AckPod: c.ix.podName(m), DeliveryPod: e.pod, AckMs: ack, DeliveredMs: at, LatencyMs: ms(e.d), Faults: []string{}}
		for _, f := range s.Faults {
			if f.StartMs <= at && (f.StopMs == nil || *f.StopMs >= ack) {
				sd.Faults = append(sd.Faults, fmt.Sprintf("%s %s(%s)", f.ID, f.Kind, f.Target))
			}
		}
		s.SlowestDeliveries = append(s.SlowestDeliveries, sd)
	}
}

// slowestCheck describes the slowest deliveries: witnesses by name, no number of its own. It comes
// after the windows, since it names the faults of each delivery.
var slowestCheck = descriptor{
	Meaning: "the slowest deliveries of the run, by name",
	Name:    "slowest_deliveries", File: "slowest.go",
	build: func(e *checkEnv) checker { return &slowestReport{ix: e.ix, slow: e.slow} },
}

// observedKinds reads no record: its work is in Finish (dispatch.go).
func (c *slowestReport) observedKinds() []string { return nil }
