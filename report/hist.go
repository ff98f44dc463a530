package report

import "math"

// latHist is a log-binned histogram of latencies in microseconds: bin i holds values in
// [2^(i/8), 2^((i+1)/8)), about 9% wide, from 1 µs to beyond an hour. It is small enough to keep one
// per time bucket.
type latHist struct {
	bins  []uint32
	count int64
	maxUs float64
}

const binsPerOctave = 8

func binOf(us float64) int {
	if us < 1 {
		return 0
	}
	return int(math.Log2(us) * binsPerOctave)
}

// binUpper is the upper edge of bin i in microseconds.
func binUpper(i int) float64 { return math.Exp2(float64(i+1) / binsPerOctave) }

// binLower is the lower edge of bin i in microseconds (0 for the first bin, which also holds 0).
func binLower(i int) float64 {
	if i == 0 {
		return 0
	}
	return math.Exp2(float64(i) / binsPerOctave)
}

func (h *latHist) add(us float64) {
	if us < 0 {
		us = 0
	}
	i := binOf(us)
	for len(h.bins) <= i {
		h.bins = append(h.bins, 0)
	}
	h.bins[i]++
	h.count++
	if us > h.maxUs {
		h.maxUs = us
	}
}

func (h *latHist) merge(o *latHist) {
	for len(h.bins) < len(o.bins) {
		h.bins = append(h.bins, 0)
	}
	for i, n := range o.bins {
		h.bins[i] += n
	}
	h.count += o.count
	h.maxUs = max(h.maxUs, o.maxUs)
}

// quantile returns the q-quantile in microseconds: the upper edge of the bin that holds it (never
// above the exact maximum), so it overstates by at most one bin width.
func (h *latHist) quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.count)))
	rank = max(rank, 1)
	var seen int64
	for i, n := range h.bins {
		seen += int64(n)
		if seen >= rank {
			return min(binUpper(i), h.maxUs)
		}
	}
	return h.maxUs
}
