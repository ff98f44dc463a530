package sse

import (
	"sync"
	"time"
)

// seqClock remembers, per pool, when this pod saw which seqs visible: the samples a reset's settle
// needs to know how far below the head a write can still be in flight (settle.go). A sample (at,
// seq) says seq was committed by at; AUTO_INCREMENT hands out seqs in time order, so every seq below
// it was taken before at. A seq below the sample of HorizonWait ago that is still missing has been
// in flight for longer than any stream waits for a gap: the settle may start there.
type seqClock struct {
	mu    sync.Mutex
	pools map[string][]seqSample
}

type seqSample struct {
	at  time.Time
	seq int64
}

// seqClockSpacing is the least time between two kept samples of a pool: a later read within it
// replaces the newest sample (at its own, later time), so a pool keeps about keep/spacing samples.
const seqClockSpacing = 50 * time.Millisecond

// observe records that seq was visible in a read of pool that ended at now.
func (c *seqClock) observe(pool string, seq int64, now time.Time, keep time.Duration) {
	if seq <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pools == nil {
		c.pools = map[string][]seqSample{}
	}
	ss := c.pools[pool]
	if n := len(ss); n > 0 && now.Sub(ss[n-1].at) < seqClockSpacing {
		if seq > ss[n-1].seq {
			ss[n-1] = seqSample{now, seq}
		}
	} else if n == 0 || seq >= ss[n-1].seq {
		ss = append(ss, seqSample{now, seq})
	}
	c.pools[pool] = trim(ss, now, keep)
}

// before returns the highest seq this pod saw visible in pool at least keep before now, if any.
func (c *seqClock) before(pool string, now time.Time, keep time.Duration) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ss := trim(c.pools[pool], now, keep)
	if len(ss) > 0 {
		c.pools[pool] = ss
	}
	if len(ss) == 0 || now.Sub(ss[0].at) < keep {
		return 0, false
	}
	return ss[0].seq, true
}

// trim drops the samples older than the newest one at least keep old (that one stays: it is the
// answer of before).
func trim(ss []seqSample, now time.Time, keep time.Duration) []seqSample {
	i := 0
	for i+1 < len(ss) && now.Sub(ss[i+1].at) >= keep {
		i++
	}
	if i == 0 {
		return ss
	}
	return append(ss[:0], ss[i:]...)
}
