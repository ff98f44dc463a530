// Package load drives mutations at the scenario's arrival rates (an open model, as k6's
// constant-arrival-rate and ramping-arrival-rate executors): every mutation has an intended send time
// fixed in advance, a slow service never slows the schedule down, and a mutation due while all of a
// block's request slots are busy is dropped and counted rather than sent late.
package load

import (
	"math"
	"time"

	"github.com/seqgate/seqgate/harness/scenario"
)

// Pacer gives the offset of the i-th arrival (0-based) from the start of its block, and false once
// the block is over.
type Pacer func(i int) (time.Duration, bool)

// NewPacer returns the pacer of one load block for one tenant; phase (0 <= phase < 1) shifts the
// arrivals by a fraction of an interval so tenants of a group do not all fire at the same instant.
func NewPacer(l scenario.Load, phase float64) Pacer {
	unit := l.TimeUnit.D().Seconds()
	if unit <= 0 {
		unit = 1
	}
	switch l.Executor {
	case "ramping-arrival-rate":
		return rampPacer(l.StartRate/unit, l.Stages, unit, phase)
	default:
		rate := l.Rate / unit // per second
		end := l.Duration.D()
		return func(i int) (time.Duration, bool) {
			t := time.Duration((float64(i) + phase) / rate * float64(time.Second))
			return t, t < end
		}
	}
}

// rampPacer finds the time at which the cumulative arrival count N(t) (the integral of a rate that is
// linear within each stage) reaches i+phase.
func rampPacer(r0 float64, stages []scenario.Stage, unit, phase float64) Pacer {
	type seg struct {
		from, to   float64 // rate per second at the start and end
		start, len float64 // seconds
		before     float64 // arrivals before the segment
	}
	var segs []seg
	at, n := 0.0, 0.0
	for _, st := range stages {
		r1 := st.Target / unit
		d := st.Duration.D().Seconds()
		segs = append(segs, seg{from: r0, to: r1, start: at, len: d, before: n})
		n += (r0 + r1) / 2 * d
		at += d
		r0 = r1
	}
	return func(i int) (time.Duration, bool) {
		k := float64(i) + phase
		for _, s := range segs {
			count := (s.from + s.to) / 2 * s.len
			if k >= s.before+count {
				continue
			}
			x := k - s.before // arrivals into this segment: x = from*t + (to-from)/(2 len) t^2
			a := (s.to - s.from) / (2 * s.len)
			var t float64
			if math.Abs(a) < 1e-12 {
				t = x / s.from
			} else {
				t = (-s.from + math.Sqrt(s.from*s.from+4*a*x)) / (2 * a)
			}
			return time.Duration((s.start + t) * float64(time.Second)), true
		}
		return 0, false
	}
}
