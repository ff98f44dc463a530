// Package tick holds eventlogd's two timing idioms: a periodic loop and a sleep that a context
// cancels, so each background loop says only what it does each period.
package tick

import (
	"context"
	"time"
)

// Every calls fn every d until ctx ends; the first call comes d after the start. It returns when
// ctx ends (never while fn runs: a running fn finishes first).
func Every(ctx context.Context, d time.Duration, fn func(ctx context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if ctx.Err() != nil {
				return // both were ready: ending wins
			}
			fn(ctx)
		}
	}
}

// Sleep waits d or until ctx ends, whichever comes first; it reports whether the full d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
