// Package wait lets a test wait for a condition instead of a time: For polls until the condition
// holds, Never proves over a window that it does not. Every package's tests use these two, so a
// test on a loaded machine only gets slower, never flaky, and a negative assertion names the window
// its control proved long enough.
package wait

import (
	"testing"
	"time"
)

// maxPoll caps the pause between two looks at a condition: the first looks come quickly (an event
// already on its way is seen within a millisecond or two), later ones back off to this.
const maxPoll = 50 * time.Millisecond

// For polls cond until it holds; after timeout it fails t (Fatalf) naming what it waited for. Give
// a generous timeout: it bounds a hang, it does not pace the test.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// ForEvery is For with a fixed period between two looks, for a cond that is costly or that itself
// drives the system (a query to Prometheus, a write per look): the period paces that work.
func ForEvery(t testing.TB, timeout, period time.Duration, what string, cond func() bool) {
	t.Helper()
	if !UntilEvery(timeout, period, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// UntilEvery is Until with a fixed period between two looks (see ForEvery).
func UntilEvery(timeout, period time.Duration, cond func() bool) bool {
	return poll(timeout, period, period, cond)
}

// Until polls cond until it holds or timeout passes, and reports whether it held. For a test that
// decides itself what a timeout means.
func Until(timeout time.Duration, cond func() bool) bool {
	return poll(timeout, time.Millisecond, maxPoll, cond)
}

// poll looks at cond, first after pause, doubling it up to most, until it holds (true) or timeout
// passed (false).
func poll(timeout, pause, most time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, most)
	}
}

// Never polls happened over window and fails t (Fatalf) as soon as it holds, naming what must not
// happen. A negative assertion is only as good as its window: pair it with a control in which the
// event does happen and is seen by For within the same window.
func Never(t testing.TB, window time.Duration, what string, happened func() bool) {
	t.Helper()
	deadline := time.Now().Add(window)
	pause := time.Millisecond
	for {
		if happened() {
			t.Fatalf("%s happened within %v", what, window)
			return
		}
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, maxPoll)
	}
}
