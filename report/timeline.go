package report

import "math"

// Counters kept per time bucket.
const (
	cOffered     = iota // mutations the schedule wanted sent (by intended_t), dropped ones included
	cAcked              // mutations answered ok (by done_t)
	cFailed             // mutations answered err or timeout (by done_t)
	cDropped            // arrivals the open model did not send (drop records, by intended_t)
	cDelivered          // file_changed frames delivered (by t)
	cLost               // acked events never persisted nor delivered (by ack time)
	cSkipped            // (consumer, event) a cursor passed (by the event's ack time)
	cUndelivered        // (consumer, event) beyond a consumer's final cursor (by the event's ack time)
	cReconnects         // conn opens after a consumer's first (by t)
	cConnFails          // conn records with phase fail (by t)
	cReqStart           // mutation requests sent (by t)
	cReqEnd             // mutation requests answered or given up (by done_t)
	numCounters
)

// defaultMaxBuckets bounds the buckets of a timeline: a long run gets wider buckets, not more. A
// timeline ends with between half of it and all of it, enough points for a plot a person reads.
const defaultMaxBuckets = 160

// initialWidth is the first bucket width; it doubles whenever the run outgrows the buckets.
const initialWidth = int64(100e6) // 100 ms

// bucket is one slice of the run's time axis.
type bucket struct {
	n       [numCounters]int64
	resets  []int64   // resets delivered, by reason index
	metrics []float64 // per metric family: max of a gauge, or the sum of a counter's increases; NaN = no sample
	conns   int64     // open SSE connections at the end of the bucket (-1 = no change seen)
	lat     latHist   // delivery latency of events acked in this bucket
	// Per followed consumer (its slot): the largest first-delivery latency (µs, NaN: none) of events
	// acked in this bucket, and the highest seq it was sent in the bucket (0: none). Per followed
	// tenant: the highest seq of its audit rows created in the bucket (0: none).
	lag  []float64
	cur  []int64
	head []int64
}

// timeline is a run's time axis cut into at most max equal buckets.
type timeline struct {
	width int64 // ns per bucket
	max   int
	b     []bucket
	// sumFam[i] says metric family i is a counter (increases add up) rather than a gauge (max).
	sumFam []bool
}

func newTimeline(max int) *timeline {
	if max < 2 {
		max = defaultMaxBuckets
	}
	return &timeline{width: initialWidth, max: max}
}

// at returns the bucket holding run time t (ns), widening the buckets as needed.
func (tl *timeline) at(t int64) *bucket {
	if t < 0 {
		t = 0
	}
	i := t / tl.width
	for i >= int64(tl.max) {
		tl.coarsen()
		i = t / tl.width
	}
	for int64(len(tl.b)) <= i {
		tl.b = append(tl.b, bucket{conns: -1})
	}
	return &tl.b[i]
}

// coarsen doubles the bucket width, merging neighbours.
func (tl *timeline) coarsen() {
	tl.width *= 2
	n := (len(tl.b) + 1) / 2
	for i := 0; i < n; i++ {
		a := tl.b[2*i]
		if 2*i+1 < len(tl.b) {
			a.merge(&tl.b[2*i+1], tl.sumFam)
		}
		tl.b[i] = a
	}
	clear(tl.b[n:])
	tl.b = tl.b[:n]
}

// merge adds the later bucket o into b.
func (b *bucket) merge(o *bucket, sumFam []bool) {
	for i := range b.n {
		b.n[i] += o.n[i]
	}
	for i, v := range o.resets {
		b.addReset(i, v)
	}
	for i, v := range o.metrics {
		if !math.IsNaN(v) {
			b.metric(i, v, i < len(sumFam) && sumFam[i])
		}
	}
	if o.conns >= 0 {
		b.conns = o.conns
	}
	b.lat.merge(&o.lat)
	b.mergeLag(o)
	b.cur = mergeMax(b.cur, o.cur, 0)
	b.head = mergeMax(b.head, o.head, 0)
}

func (b *bucket) addReset(reason int, n int64) {
	for len(b.resets) <= reason {
		b.resets = append(b.resets, 0)
	}
	b.resets[reason] += n
}

// metric folds v into family i: the max for a gauge, the sum for a counter's increase.
func (b *bucket) metric(i int, v float64, sum bool) {
	for len(b.metrics) <= i {
		b.metrics = append(b.metrics, math.NaN())
	}
	switch cur := b.metrics[i]; {
	case math.IsNaN(cur):
		b.metrics[i] = v
	case sum:
		b.metrics[i] = cur + v
	case v > cur:
		b.metrics[i] = v
	}
}

// metricOr returns family i's value in b, NaN when b has no sample of it.
func (b *bucket) metricOr(i int) float64 {
	if i >= len(b.metrics) {
		return math.NaN()
	}
	return b.metrics[i]
}
