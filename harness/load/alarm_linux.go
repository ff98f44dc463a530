//go:build linux

package load

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seqgate/seqgate/internal/sleep"
)

// alarm wakes a schedule at an arrival's intended time. Go's timers wake an idle process up to a
// millisecond late (the runtime's netpoller sleeps in whole milliseconds when nothing else is
// due), and a millisecond is the whole schedule-slip budget. A timerfd armed with the time left is
// a descriptor in that same netpoller: it wakes the parked goroutine within the kernel's timer
// slack (~50 µs), with no spinning and no thread held while waiting.
type alarm struct {
	fd    int
	f     *os.File // the timerfd, read through the netpoller; nil: fall back to a Go timer
	unarm func() bool
	buf   [8]byte
}

// newAlarm returns an alarm whose waits end early, reporting false, once ctx is done. Close it.
func newAlarm(ctx context.Context) *alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &alarm{} // no timerfd (a sandbox may refuse it): Go's timers, less precise
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	// A deadline in the past fails the read in progress and every later one: the wait ends now.
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	return &alarm{fd: fd, f: f, unarm: stop}
}

// until waits until t (Go's monotonic clock is CLOCK_MONOTONIC, so the time left is exact); it
// reports false when ctx ended first. A t in the past returns at once.
func (a *alarm) until(ctx context.Context, t time.Time) bool {
	if a.f == nil {
		return sleep.Until(ctx, t)
	}
	d := time.Until(t)
	if d <= 0 { // an it_value of zero would disarm the timerfd, not fire it
		return ctx.Err() == nil
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(a.fd, 0, &spec, nil); err != nil {
		return sleep.Until(ctx, t)
	}
	_, err := a.f.Read(a.buf[:]) // the expiry count; fails only at the ctx deadline above
	return err == nil && ctx.Err() == nil
}

// close releases the timerfd.
func (a *alarm) close() {
	if a.f != nil {
		a.unarm()
		a.f.Close()
	}
}
