package load

import (
	"context"
	"testing"
	"time"
)

// TestAlarm: a wait never ends before its time, a time in the past returns at once, and a cancelled
// context ends a wait (also one already in progress, for an arrival an hour away) with false.
func TestAlarm(t *testing.T) {
	tests := []struct {
		name   string
		at     time.Duration // from now
		cancel time.Duration // cancel the context after this; < 0: never, 0: before the wait
		want   bool
	}{
		{"future", 20 * time.Millisecond, -1, true},
		{"past", -time.Second, -1, true},
		{"cancelled before", time.Hour, 0, false},
		{"cancelled while waiting", time.Hour, 10 * time.Millisecond, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			switch {
			case tc.cancel == 0:
				cancel()
			case tc.cancel > 0:
				stop := time.AfterFunc(tc.cancel, cancel)
				defer stop.Stop()
			}
			a := newAlarm()
			defer a.close()
			at := time.Now().Add(tc.at)
			for range 3 { // the alarm is reused, as by a schedule
				if got := a.until(ctx, at); got != tc.want {
					t.Fatalf("until = %v, want %v", got, tc.want)
				}
				if tc.want && time.Now().Before(at) {
					t.Fatalf("woke %v before its time", time.Until(at))
				}
				at = at.Add(5 * time.Millisecond)
			}
		})
	}
}
