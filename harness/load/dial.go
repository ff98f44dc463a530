package load

import (
	"context"
	"net"
	"sync"
	"time"
)

// maxDialsPerAddr bounds the connections the driver dials at once to one address. A burst of due
// arrivals (the process starved of CPU for a moment, or the service slow) puts more requests in
// flight than there are idle connections, and net/http dials one for each; on 2 cores those dials
// took the CPU the sends needed, the backlog grew, and more dials followed: in the worst of six
// profiled 8,000/s runs 69% of the driver's CPU was in dialing and it sent 9,036 of 16,000. With
// the dials bounded, a request waiting for one takes the first connection another request hands
// back instead (net/http gives a returned connection to a waiting request before its dial ends):
// six of six such runs sent every request (docs/performance.md). The bound is per address, so an
// endpoint whose dials hang (a pod down behind a black hole) never holds up another's.
const maxDialsPerAddr = 8

// dialLimiter dials through dial with at most n dials in progress per address.
type dialLimiter struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	n    int

	mu   sync.Mutex
	sems map[string]chan struct{}
}

func newDialLimiter(n int) *dialLimiter {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second} // net/http's defaults
	return &dialLimiter{dial: d.DialContext, n: n}
}

// DialContext is the transport's dialer: it waits for one of addr's dial slots (or ctx), then dials.
func (l *dialLimiter) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	l.mu.Lock()
	if l.sems == nil {
		l.sems = map[string]chan struct{}{}
	}
	sem := l.sems[addr]
	if sem == nil {
		sem = make(chan struct{}, l.n)
		l.sems[addr] = sem
	}
	l.mu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-sem }()
	return l.dial(ctx, network, addr)
}
