package wait

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB that records a Fatalf instead of stopping the goroutine, so a test can
// see that For and Never fail when they must.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestFor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		after    int32 // cond holds from its after-th call on (0: never)
		every    bool  // ForEvery with a 20 ms period instead of For
		wantFail bool
	}{
		{"holds at once", 1, false, false},
		{"holds after a few polls", 5, false, false},
		{"never holds", 0, false, true},
		{"every: holds after a few polls", 3, true, false},
		{"every: never holds", 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			r := &recorder{TB: t}
			start := time.Now()
			forFn := For
			if tc.every {
				forFn = func(t testing.TB, timeout time.Duration, what string, cond func() bool) {
					ForEvery(t, timeout, 20*time.Millisecond, what, cond)
				}
			}
			forFn(r, 200*time.Millisecond, "the thing", func() bool {
				n := calls.Add(1)
				return tc.after > 0 && n >= tc.after
			})
			if got := r.failed != ""; got != tc.wantFail {
				t.Fatalf("failed=%v (%q), want %v", got, r.failed, tc.wantFail)
			}
			if tc.wantFail && time.Since(start) < 200*time.Millisecond {
				t.Fatalf("gave up after %v, before its timeout", time.Since(start))
			}
			if tc.every && tc.wantFail && calls.Load() > 200/20+1 {
				t.Fatalf("looked %d times in 200 ms, more than a 20 ms period allows", calls.Load())
			}
			if tc.wantFail && r.failed != "timed out after 200ms waiting for the thing" {
				t.Fatalf("message %q does not name what it waited for", r.failed)
			}
		})
	}
}

func TestNever(t *testing.T) {
	for _, tc := range []struct {
		name     string
		after    int32 // happened holds from its after-th call on (0: never)
		wantFail bool
	}{
		{"control: the event happens within the window", 3, true},
		{"the event never happens", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			r := &recorder{TB: t}
			start := time.Now()
			Never(r, 100*time.Millisecond, "the event", func() bool {
				n := calls.Add(1)
				return tc.after > 0 && n >= tc.after
			})
			if got := r.failed != ""; got != tc.wantFail {
				t.Fatalf("failed=%v (%q), want %v", got, r.failed, tc.wantFail)
			}
			if !tc.wantFail && time.Since(start) < 100*time.Millisecond {
				t.Fatalf("returned after %v, before the window closed", time.Since(start))
			}
			if !tc.wantFail && calls.Load() < 3 {
				t.Fatalf("looked %d times over the window, want several", calls.Load())
			}
		})
	}
}
