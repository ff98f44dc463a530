//go:build !linux

package load

import (
	"context"
	"time"

	"github.com/seqgate/seqgate/internal/sleep"
)

// alarm wakes a schedule at an arrival's intended time; elsewhere than Linux, with Go's timers
// alone (which may wake an idle process up to a millisecond late).
type alarm struct{}

func newAlarm() *alarm { return &alarm{} }

func (a *alarm) until(ctx context.Context, t time.Time) bool { return sleep.Until(ctx, t) }

func (a *alarm) close() {}
