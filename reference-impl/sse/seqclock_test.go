package sse

import (
	"testing"
	"time"
)

// TestSeqClock: before answers the newest seq seen at least keep ago, and nothing while the pod has
// no sample that old (the control: a sample one tick too young is not an answer).
func TestSeqClock(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	keep := 5 * time.Second
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, tc := range []struct {
		name    string
		samples []seqSample // observed in order
		now     time.Time
		want    int64
		ok      bool
	}{
		{"no history", nil, at(10 * time.Second), 0, false},
		{"too young", []seqSample{{at(0), 10}}, at(keep - time.Millisecond), 0, false},
		{"exactly keep", []seqSample{{at(0), 10}}, at(keep), 10, true},
		{"newest old enough", []seqSample{{at(0), 10}, {at(time.Second), 20}, {at(3 * time.Second), 30}, {at(6 * time.Second), 40}}, at(8 * time.Second), 30, true},
		{"a lower seq later is ignored", []seqSample{{at(0), 10}, {at(time.Second), 5}}, at(7 * time.Second), 10, true},
		{"within the spacing the newest sample moves on", []seqSample{{at(0), 10}, {at(10 * time.Millisecond), 12}}, at(keep), 0, false},
		{"within the spacing, old enough later", []seqSample{{at(0), 10}, {at(10 * time.Millisecond), 12}}, at(keep + 10*time.Millisecond), 12, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c seqClock
			for _, s := range tc.samples {
				c.observe("pool", s.seq, s.at, keep)
			}
			got, ok := c.before("pool", tc.now, keep)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("before = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
			if _, ok := c.before("other", tc.now, keep); ok {
				t.Fatal("another pool answered from this pool's samples")
			}
		})
	}
}
