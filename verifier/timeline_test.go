package verifier

import (
	"math"
	"testing"
)

// TestTimelineAddsUpToTheSummary: every instance the summary counts is in the timeline, so each
// kind's buckets add up to the summary's number; a clean ledger has an empty timeline.
func TestTimelineAddsUpToTheSummary(t *testing.T) {
	s := anomalySummary(t)
	tl := s.Timeline
	for _, c := range []struct {
		kind WitnessKey
		want int64
	}{
		{WitnessLost, s.Lost}, {WitnessSilent, s.LostByReason[ReasonSilent]}, {WitnessSkipped, s.Skipped},
		{WitnessUndelivered, s.Undelivered}, {WitnessResetCovered, s.ResetCovered}, {WitnessUnresolved, s.Unresolved},
		{WitnessTenantGone, s.TenantGone},
	} {
		if got := tl.Total(c.kind); got != c.want {
			t.Errorf("timeline %s = %d, summary %d", c.kind, got, c.want)
		}
	}
	if s.Lost == 0 || s.Skipped == 0 || s.Undelivered == 0 || s.ResetCovered == 0 {
		t.Fatalf("the anomaly ledger lacks anomalies: lost %d skipped %d undelivered %d reset_covered %d", s.Lost, s.Skipped, s.Undelivered, s.ResetCovered)
	}
	if len(tl.Counts[WitnessLost]) > TimelineBuckets {
		t.Errorf("%d buckets, want at most %d", len(tl.Counts[WitnessLost]), TimelineBuckets)
	}
	// The lost witnesses' ack times fall in buckets that count a loss.
	for _, w := range s.Witnesses[string(WitnessLost)] {
		ack := int64(w.(lostWitness).AckMs * 1e6)
		if i := ack / tl.WidthNs; tl.Counts[WitnessLost][i] == 0 {
			t.Errorf("lost witness acked at %d ns: its bucket %d counts no loss", ack, i)
		}
	}
	clean := verifyText(t, edit{}.build(), Options{})
	if k := clean.Timeline.Kinds(); len(k) != 0 {
		t.Errorf("clean ledger: timeline kinds %v, want none", k)
	}
}

// TestTimelineCoarsens: buckets double in width as times grow, keep their counts, and stay bounded
// even for the largest time.
func TestTimelineCoarsens(t *testing.T) {
	tests := []struct {
		name      string
		times     []int64
		wantWidth int64
	}{
		{"fits", []int64{0, 50e6, 15_000e6}, 100e6},
		{"one doubling", []int64{0, 16_000e6}, 200e6},
		{"before the start", []int64{-5, math.MinInt64}, 100e6},
		{"largest time", []int64{0, math.MaxInt64}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTimeline()
			for _, x := range tc.times {
				tl.add(WitnessLost, x)
			}
			if tc.wantWidth != 0 && tl.WidthNs != tc.wantWidth {
				t.Errorf("width %d, want %d", tl.WidthNs, tc.wantWidth)
			}
			if got := tl.Total(WitnessLost); got != int64(len(tc.times)) {
				t.Errorf("total %d, want %d", got, len(tc.times))
			}
			if n := len(tl.Counts[WitnessLost]); n > TimelineBuckets {
				t.Errorf("%d buckets", n)
			}
			var sum int64
			tl.Each(WitnessLost, func(start, n int64) {
				if start < 0 || start%tl.WidthNs != 0 {
					t.Errorf("bucket start %d", start)
				}
				sum += n
			})
			if sum != int64(len(tc.times)) {
				t.Errorf("Each sums to %d", sum)
			}
		})
	}
}
