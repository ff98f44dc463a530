package run

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seqgate/seqgate/internal/sleep"
)

// progress prints the run's live state: one rewritten line on a terminal, a plain line every
// `every` otherwise (CI logs).
type progress struct {
	w        io.Writer
	terminal bool
	every    time.Duration
	line     func(elapsed time.Duration) string
}

func (p *progress) run(ctx context.Context, start time.Time) {
	period := p.every
	if p.terminal {
		period = time.Second
	}
	sleep.Every(ctx, period, func() {
		s := p.line(time.Since(start).Truncate(time.Second))
		if p.terminal {
			fmt.Fprint(p.w, "\r\033[K"+s)
		} else {
			fmt.Fprintln(p.w, "progress: "+s)
		}
	})
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// rate turns two cumulative counts a period apart into a per-second rate.
type rate struct{ last int64 }

func (r *rate) per(now int64, d time.Duration) float64 {
	v := float64(now-r.last) / d.Seconds()
	r.last = now
	return v
}

func faultList(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ",")
}
