//go:build linux

package load

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAlarmArmsOnlyLongWaits: set arms the timerfd for a wait of a millisecond or more (and
// re-arms it for an earlier instant), and leaves it alone for a shorter wait.
func TestAlarmArmsOnlyLongWaits(t *testing.T) {
	a := newAlarm()
	defer a.close()
	if !a.precise() {
		t.Skip("no timerfd here")
	}
	remaining := func() time.Duration {
		var cur unix.ItimerSpec
		if err := unix.TimerfdGettime(a.fd, &cur); err != nil {
			t.Fatal(err)
		}
		return time.Duration(cur.Value.Nano())
	}
	now := time.Now()
	steps := []struct {
		wait    time.Duration
		armed   bool          // the timerfd is armed after this set
		atMost  time.Duration // and expires within this
		atLeast time.Duration // but not before this (lower bound of what is left)
	}{
		{500 * time.Microsecond, false, 0, 0},
		{time.Hour, true, time.Hour, 59 * time.Minute},
		{time.Minute, true, time.Minute, 59 * time.Second},            // an earlier instant replaces it
		{100 * time.Microsecond, true, time.Minute, 59 * time.Second}, // too short: the minute stays
	}
	for i, st := range steps {
		a.set(now.Add(st.wait), st.wait)
		r := remaining()
		if (r > 0) != st.armed || r > st.atMost || (st.armed && r < st.atLeast) {
			t.Fatalf("step %d (wait %v): %v left on the timerfd, want armed=%v within [%v, %v]", i, st.wait, r, st.armed, st.atLeast, st.atMost)
		}
	}
}
