//go:build linux

package load

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// alarm makes an idle process wake up on time for the earliest wait of a queue. Each wait is a Go
// timer, which a busy process fires on time (every scheduling round checks the timers). An idle
// process, though, sleeps in the netpoller in whole milliseconds and wakes up to a millisecond late,
// which is the whole schedule-slip budget. So for a wait of a millisecond or more (a process that
// will surely sleep), a timerfd in that same netpoller is armed for the same instant, after the
// timer: its expiry ends the netpoller's sleep within the kernel's timer slack (~50 µs), and the
// scheduler then finds the timer due. Nothing reads the timerfd (arming it again resets it); no
// thread is held and nothing spins. Shorter waits do without: the extra wake-up cost ~40 µs of CPU
// per arrival at 2,000/s (measured under load), more than a busy process's timer lateness is worth.
// An alarm is used under its queue's lock.
type alarm struct {
	fd int
	f  *os.File  // keeps the timerfd registered in the netpoller; nil: Go timers alone
	at time.Time // the instant it is armed for
}

// preciseWait is the shortest wait for which the timerfd is armed.
const preciseWait = time.Millisecond

// newAlarm returns an alarm; close it.
func newAlarm() *alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &alarm{} // no timerfd (a sandbox may refuse it): Go timers alone, less precise when idle
	}
	return &alarm{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")} // a non-blocking descriptor: NewFile registers it
}

// precise reports whether set does anything (callers skip computing an instant it would ignore).
func (a *alarm) precise() bool { return a.f != nil }

// set ends the netpoller's sleep at t, wait from now, when wait is a millisecond or more. Call it
// after the Go timer for t is armed, with the same wait, so it never expires before the timer is
// due (an early wake-up would find the timer not yet due and sleep another millisecond).
func (a *alarm) set(t time.Time, wait time.Duration) {
	if a.f == nil || wait < preciseWait || t.Equal(a.at) {
		return
	}
	a.at = t
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(wait.Nanoseconds())}
	_ = unix.TimerfdSettime(a.fd, 0, &spec, nil) // on failure the timer still fires, less precisely
}

// close releases the timerfd; set does nothing after it.
func (a *alarm) close() {
	if a.f != nil {
		a.f.Close()
		a.f = nil
	}
}
