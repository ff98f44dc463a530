// Package sleep waits in ways a cancelled context cuts short: the harness's backoffs, schedule
// points and periodic samplers, so each of them is one call instead of a timer-and-select copy.
package sleep

import (
	"context"
	"time"
)

// For waits d; it reports false when ctx ended first. A d of zero or less returns true at once.
func For(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Until waits until t; it reports false when ctx ended first. A t in the past returns true at once.
func Until(ctx context.Context, t time.Time) bool { return For(ctx, time.Until(t)) }

// Every calls f every period until ctx ends, the first time one period from now. It returns when
// ctx ends (never while f runs); a call that takes longer than period delays the next, none pile up.
func Every(ctx context.Context, period time.Duration, f func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}
