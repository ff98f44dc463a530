//go:build linux

package load

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// alarm wakes a schedule at an arrival's intended time. The wait is a Go timer, which a busy process
// fires on time (every scheduling round checks the timers). An idle process, though, sleeps in the
// netpoller in whole milliseconds and wakes up to a millisecond late, which is the whole schedule-slip
// budget. So for a wait of a millisecond or more (a process that will surely sleep), a timerfd in that
// same netpoller is armed for the same instant, after the timer: its expiry ends the netpoller's sleep
// within the kernel's timer slack (~50 µs), and the scheduler then finds the timer due. Nothing reads
// the timerfd (arming it again resets it); no thread is held and nothing spins. Shorter waits do
// without: the extra wake-up cost ~40 µs of CPU per arrival at 2,000/s (measured under load), more
// than a busy process's timer lateness is worth.
type alarm struct {
	timer *time.Timer
	fd    int
	f     *os.File // keeps the timerfd registered in the netpoller; nil: the Go timer alone
}

// preciseWait is the shortest wait for which the timerfd is armed.
const preciseWait = time.Millisecond

// newAlarm returns an alarm; close it.
func newAlarm() *alarm {
	a := &alarm{timer: time.NewTimer(time.Hour)}
	a.timer.Stop()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return a // no timerfd (a sandbox may refuse it): the Go timer alone, less precise when idle
	}
	a.fd, a.f = fd, os.NewFile(uintptr(fd), "timerfd") // a non-blocking descriptor: NewFile registers it
	return a
}

// until waits until t; it reports false when ctx ended first. A t in the past returns at once.
func (a *alarm) until(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	a.timer.Reset(d)
	if a.f != nil && d >= preciseWait {
		// Armed after the timer with the same duration, so it never expires before the timer is
		// due (an early wake-up would find the timer not yet due and sleep another millisecond).
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
		_ = unix.TimerfdSettime(a.fd, 0, &spec, nil) // on failure the timer still fires, less precisely
	}
	select {
	case <-a.timer.C:
		return true
	case <-ctx.Done():
		a.timer.Stop()
		return false
	}
}

// close releases the timerfd.
func (a *alarm) close() {
	a.timer.Stop()
	if a.f != nil {
		a.f.Close()
	}
}
