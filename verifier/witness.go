package verifier

import "math"

// witnessSet keeps the first N instances of each anomaly, per check name, in the order found.
type witnessSet struct {
	limit int
	byCk  map[WitnessKey][]any
	tl    *Timeline // every instance of the timeline's kinds, at its time
}

func newWitnessSet(n int) *witnessSet {
	if n == 0 {
		n = DefaultWitnesses
	}
	if n < 0 {
		n = 0
	}
	return &witnessSet{limit: n, byCk: map[WitnessKey][]any{}, tl: newTimeline()}
}

// add records v as a witness under key unless key already has its N.
func (w *witnessSet) add(key WitnessKey, v any) {
	if len(w.byCk[key]) < w.limit {
		w.byCk[key] = append(w.byCk[key], v)
	}
}

// at counts one instance of key at run time t (ns) in the anomaly timeline: every instance, not
// only the first N kept as witnesses.
func (w *witnessSet) at(key WitnessKey, t int64) { w.tl.add(key, t) }

// full reports whether key has all the witnesses it may keep (so callers can skip building more).
func (w *witnessSet) full(key WitnessKey) bool { return len(w.byCk[key]) >= w.limit }

func (w *witnessSet) lists() map[string][]any {
	out := make(map[string][]any, len(w.byCk))
	for k, v := range w.byCk {
		if len(v) > 0 {
			out[string(k)] = v
		}
	}
	return out
}

// ms converts run-relative nanoseconds to milliseconds.
func ms(ns int64) float64 { return float64(ns) / 1e6 }

// subSat is a - b saturated to the int64 range: ledger times are arbitrary integers, and a difference
// of two of them must not wrap around (a huge latency would turn negative and vanish).
func subSat(a, b int64) int64 {
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) {
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}
