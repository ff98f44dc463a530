package verifier

import "slices"

// Timeline bounds: the first bucket is 100 ms wide and the width doubles whenever the run outgrows
// TimelineBuckets, so a long run gets wider buckets, not more.
const (
	TimelineBuckets      = 160
	timelineInitialWidth = int64(100e6)
)

// Timeline is when the verifier's anomalies happened: per anomaly kind (the witness key of its
// count), how many instances fell in each time bucket of the run. Every instance the summary counts
// is in it, at the time its witness gives (a loss at its ack, a skipped, undelivered or reset-covered
// event when it persisted), so a kind's buckets add up to its number in the summary. The report
// plots it and the live metrics show it; neither reads the spec again.
type Timeline struct {
	// WidthNs is the width of one bucket; bucket i holds run times [i*WidthNs, (i+1)*WidthNs).
	WidthNs int64
	// Counts holds, per kind, the instances per bucket (at most TimelineBuckets buckets).
	Counts map[WitnessKey][]int64
}

func newTimeline() *Timeline {
	return &Timeline{WidthNs: timelineInitialWidth, Counts: map[WitnessKey][]int64{}}
}

// add counts one instance of kind at run time t (ns); a time before the run's start counts in the
// first bucket.
func (tl *Timeline) add(kind WitnessKey, t int64) {
	t = max(t, 0)
	for t/tl.WidthNs >= TimelineBuckets {
		tl.coarsen()
	}
	i := int(t / tl.WidthNs)
	c := tl.Counts[kind]
	if len(c) <= i {
		c = append(c, make([]int64, i+1-len(c))...)
	}
	c[i]++
	tl.Counts[kind] = c
}

// coarsen doubles the bucket width, merging neighbours.
func (tl *Timeline) coarsen() {
	tl.WidthNs *= 2
	for k, c := range tl.Counts {
		n := (len(c) + 1) / 2
		for i := range n {
			v := c[2*i]
			if 2*i+1 < len(c) {
				v += c[2*i+1]
			}
			c[i] = v
		}
		tl.Counts[k] = c[:n]
	}
}

// Total is the number of instances of kind.
func (tl *Timeline) Total(kind WitnessKey) int64 {
	var n int64
	for _, v := range tl.Counts[kind] {
		n += v
	}
	return n
}

// Kinds lists the kinds with an instance, sorted.
func (tl *Timeline) Kinds() []WitnessKey {
	var out []WitnessKey
	for k := range tl.Counts {
		if tl.Total(k) > 0 {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Each calls fn for every bucket of kind with an instance: its start (run time, ns) and its count.
func (tl *Timeline) Each(kind WitnessKey, fn func(startNs, n int64)) {
	for i, v := range tl.Counts[kind] {
		if v > 0 {
			fn(int64(i)*tl.WidthNs, v)
		}
	}
}
