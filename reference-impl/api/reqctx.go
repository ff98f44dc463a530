package api

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// reqCtx is a filesystem request's context: its parent's values and cancellation under the
// request's deadline (--request-timeout), and the tenant withTenant found (Value(tenantKey)). It
// behaves as context.WithValue(context.WithDeadline(parent, d), tenantKey, t) does, but the timer
// behind the deadline is made only when something waits on Done (a statement on the tenant DB
// does; the queued writes of a write group never do), and it lives in the request's reqWriter:
// a write costs no context, timer, cancel registration or request copy of its own (five to seven
// allocations a request otherwise). Until Done is called, Err reads the clock instead (and
// context.Cause says what the parent's does: nothing in the pod asks a request's context for it).
type reqCtx struct {
	parent   context.Context
	deadline time.Time
	// tenant is set by withTenant, before the handler it guards runs (and before anything but the
	// key's own lookup saw this context); nil until then.
	tenant *reqTenant
	t      reqTenant // tenant's storage

	timed  atomic.Pointer[timedCtx] // context.WithDeadline(parent, deadline), from the first Done
	mu     sync.Mutex               // makes timed, sets endErr
	ended  atomic.Bool              // stop ran; endErr is set
	endErr error                    // Err once stop ran: Canceled, or the error it had by then
}

type timedCtx struct {
	context.Context
	cancel context.CancelFunc
}

var _ context.Context = (*reqCtx)(nil)

// init bounds the context by parent's deadline or timeout from now, whichever comes first.
func (c *reqCtx) init(parent context.Context, timeout time.Duration) {
	c.parent, c.deadline = parent, time.Now().Add(timeout)
	if d, ok := parent.Deadline(); ok && d.Before(c.deadline) {
		c.deadline = d
	}
}

// stop is the context's CancelFunc: Err keeps the error it had (Canceled when none), and the
// timer Done made, if any, is released.
func (c *reqCtx) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended.Load() {
		return
	}
	if t := c.timed.Load(); t != nil {
		t.cancel()
		c.endErr = t.Err()
	} else if c.endErr = c.errNow(); c.endErr == nil {
		c.endErr = context.Canceled
	}
	c.ended.Store(true)
}

// materialize returns the timed context, making it on first use (cancelled at once after stop).
func (c *reqCtx) materialize() *timedCtx {
	if t := c.timed.Load(); t != nil {
		return t
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.timed.Load(); t != nil {
		return t
	}
	ctx, cancel := context.WithDeadline(c.parent, c.deadline)
	t := &timedCtx{ctx, cancel}
	if c.ended.Load() {
		cancel()
	}
	c.timed.Store(t)
	return t
}

// errNow is Err before stop and before any Done: the parent's error, or DeadlineExceeded once the
// deadline passed.
func (c *reqCtx) errNow() error {
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *reqCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *reqCtx) Done() <-chan struct{} { return c.materialize().Done() }

func (c *reqCtx) Err() error {
	if c.ended.Load() {
		return c.endErr
	}
	if t := c.timed.Load(); t != nil {
		return t.Err()
	}
	return c.errNow()
}

func (c *reqCtx) Value(key any) any {
	if k, ok := key.(ctxKey); ok && k == tenantKey && c.tenant != nil {
		return c.tenant
	}
	if t := c.timed.Load(); t != nil {
		return t.Value(key)
	}
	return c.parent.Value(key)
}

// setWriteDeadline is http.NewResponseController(w).SetWriteDeadline(t) without the controller
// (an allocation per call): the first writer of w's chain that has the method sets it.
func setWriteDeadline(w http.ResponseWriter, t time.Time) error {
	if u, ok := inChain[interface{ SetWriteDeadline(time.Time) error }](w); ok {
		return u.SetWriteDeadline(t)
	}
	return http.ErrNotSupported
}

// setReadDeadline is setWriteDeadline for the read deadline.
func setReadDeadline(w http.ResponseWriter, t time.Time) error {
	if u, ok := inChain[interface{ SetReadDeadline(time.Time) error }](w); ok {
		return u.SetReadDeadline(t)
	}
	return http.ErrNotSupported
}

// inChain returns the first writer of w's Unwrap chain that is an I, as the response controller
// looks for it.
func inChain[I any](w http.ResponseWriter) (I, bool) {
	for {
		if u, ok := w.(I); ok {
			return u, true
		}
		un, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			var zero I
			return zero, false
		}
		w = un.Unwrap()
	}
}
