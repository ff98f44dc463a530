package load

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
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

	mu      sync.Mutex
	sems    map[string]chan struct{}
	life    context.Context // done once Close is called
	kill    context.CancelFunc
	waiting atomic.Int64 // dials waiting for a slot now
}

func newDialLimiter(n int) *dialLimiter {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second} // net/http's defaults
	return &dialLimiter{dial: d.DialContext, n: n}
}

// requestKey carries a request's own context into the dial: net/http dials with a context that keeps
// the request's values but not its cancellation (a dial it starts may serve a later request).
type requestKey struct{}

// dialScoped returns ctx marked as the request context of its dials: a dial still waiting for a
// slot of the limiter when ctx ends (the request was answered over a connection another request
// handed back, timed out, or was cancelled) gives up at once instead of waiting for a slot it no
// longer needs.
func dialScoped(ctx context.Context) context.Context {
	return context.WithValue(ctx, requestKey{}, ctx)
}

// Close makes every dial waiting for a slot, and every later one, fail at once (the transport is
// being closed); dials in progress are cancelled.
func (l *dialLimiter) Close() {
	l.mu.Lock()
	l.lifeLocked()
	l.mu.Unlock()
	l.kill()
}

func (l *dialLimiter) lifeLocked() context.Context {
	if l.life == nil {
		l.life, l.kill = context.WithCancel(context.Background())
	}
	return l.life
}

// DialContext is the transport's dialer: it waits for one of addr's dial slots, then dials. The wait
// ends early, with an error, when ctx or the request's own context (dialScoped) is done, or the
// limiter is closed.
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
	life := l.lifeLocked()
	l.mu.Unlock()
	var reqDone <-chan struct{} // nil: no request context, never ready
	req, _ := ctx.Value(requestKey{}).(context.Context)
	if req != nil {
		reqDone = req.Done()
	}
	l.waiting.Add(1)
	select {
	case sem <- struct{}{}:
		l.waiting.Add(-1)
	case <-ctx.Done():
		l.waiting.Add(-1)
		return nil, ctx.Err()
	case <-reqDone:
		l.waiting.Add(-1)
		return nil, req.Err()
	case <-life.Done():
		l.waiting.Add(-1)
		return nil, net.ErrClosed
	}
	defer func() { <-sem }()
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(life, cancel)
	defer stop()
	return l.dial(dctx, network, addr)
}
