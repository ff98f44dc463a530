//go:build !linux

package load

import "time"

// alarm makes an idle process wake up on time for the earliest wait of a queue; elsewhere than
// Linux there is none, and Go's timers alone may wake an idle process up to a millisecond late.
type alarm struct{}

func newAlarm() *alarm { return &alarm{} }

func (a *alarm) precise() bool { return false }

func (a *alarm) set(time.Time, time.Duration) {}

func (a *alarm) close() {}
