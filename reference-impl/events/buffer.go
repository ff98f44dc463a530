// Package events is the publish path of design 000: the hot-path event insert with a bounded
// timeout, and the per-pod retry ring buffer that salvages failed inserts without ever failing the
// mutation.
package events

import (
	"container/list"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/seqgate/seqgate/internal/defaults"

	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// Drop reasons, the values of the reason label of drive9_sse_event_retry_dropped_total.
const (
	DropTenantCap  = "tenant_cap"
	DropGlobalCap  = "global_cap"
	DropExpired    = "expired"
	DropStopped    = "stopped"
	DropShutdown   = "shutdown"
	DropTenantGone = "tenant_gone"
	DropRejected   = "rejected"
)

// ErrTenantGone is returned by an Inserter when the entry's tenant no longer exists or is inactive.
var ErrTenantGone = errors.New("tenant gone")

// ErrRejected is returned (wrapped) by an Inserter when the tenant DB refused the entry for good,
// a data error no retry can fix: the entry is dropped as rejected instead of heading its tenant's
// queue until it expires.
var ErrRejected = errors.New("event refused by the tenant DB")

// Inserter makes one buffered entry durable and returns its seq.
type Inserter interface {
	InsertBuffered(ctx context.Context, tenant string, ev store.Event) (int64, error)
}

// BufferConfig sizes the retry buffer; zero fields take design 000's defaults.
type BufferConfig struct {
	GlobalCap     int           // entries across all tenants (10000)
	TenantCap     int           // entries per tenant (1000)
	Concurrency   int           // tenants flushing at once (8)
	InsertTimeout time.Duration // per-entry flush insert timeout (30s)
	BackoffMin    time.Duration // first retry delay (1s), doubling per attempt
	BackoffMax    time.Duration // retry delay cap (5m)
	MaxAge        time.Duration // entries older than this are dropped as expired (retention clamped to [1h, 24h])
	Tick          time.Duration // scheduler period (50ms)
	Uncounted     bool          // the uncounted-drop defect: drops are not counted
}

func (c *BufferConfig) defaults() {
	if c.GlobalCap <= 0 {
		c.GlobalCap = 10000
	}
	if c.TenantCap <= 0 {
		c.TenantCap = 1000
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
	defaults.Positive(&c.InsertTimeout, 30*time.Second)
	defaults.Positive(&c.BackoffMin, time.Second)
	defaults.Positive(&c.BackoffMax, 5*time.Minute)
	defaults.Positive(&c.MaxAge, time.Hour)
	defaults.Positive(&c.Tick, 50*time.Millisecond)
}

// MaxAgeFor is the retry max age for a retention: the retention clamped to [1h, 24h].
func MaxAgeFor(retention time.Duration) time.Duration {
	return min(max(retention, time.Hour), 24*time.Hour)
}

type entry struct {
	tenant   string
	ev       store.Event
	enq      time.Time
	next     time.Time
	attempts int
	flushing bool
	gel, tel *list.Element
}

type tenantQueue struct {
	q       *list.List
	running bool // a flusher goroutine owns this tenant
}

// Buffer is the per-pod retry ring buffer: a global cap and a per-tenant cap, one FIFO flusher per
// tenant with due entries under a global concurrency cap, per-entry backoff, drop-oldest eviction
// that never evicts an in-flight entry, and a count of every drop by tenant and reason.
type Buffer struct {
	cfg       BufferConfig
	ins       Inserter
	onFlushed func(tenant string, seq int64)
	m         *metrics.Metrics
	log       *slog.Logger

	mu       sync.Mutex
	all      *list.List // every entry in enqueue order (for global eviction and expiry)
	tenants  map[string]*tenantQueue
	stopped  bool // Enqueue refuses (reason stopped)
	draining bool // shutdown flush: backoff ignored
	drops    map[string]map[string]int
	sem      chan struct{}
	wake     chan struct{}
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	done     chan struct{}
	started  bool // guarded by mu
}

// NewBuffer returns a stopped-free buffer; call Start to run its scheduler. onFlushed runs after
// every successful flush (the mandatory second wake).
func NewBuffer(cfg BufferConfig, ins Inserter, onFlushed func(tenant string, seq int64), m *metrics.Metrics, log *slog.Logger) *Buffer {
	cfg.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Buffer{cfg: cfg, ins: ins, onFlushed: onFlushed, m: m, log: log, all: list.New(),
		tenants: map[string]*tenantQueue{}, drops: map[string]map[string]int{}, sem: make(chan struct{}, cfg.Concurrency),
		wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Config returns the effective configuration.
func (b *Buffer) Config() BufferConfig { return b.cfg }

// Enqueue buffers a failed event. It never blocks on I/O. A full tenant cap evicts the tenant's
// oldest idle entry; a full global cap evicts the oldest idle entry of the tenant holding the most
// entries (the enqueuing tenant on a tie), so a tenant over its fair share loses its own entries
// first and never pushes out another tenant's.
func (b *Buffer) Enqueue(tenant string, ev store.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		b.countDrop(tenant, DropStopped)
		return
	}
	// Evict before looking up the tenant's queue: an eviction that empties it deletes it from
	// b.tenants, and a queue fetched before that would be one the scheduler never visits.
	if tq := b.tenants[tenant]; tq != nil && tq.q.Len() >= b.cfg.TenantCap {
		v := oldestIdle(tq.q)
		b.countDrop(tenant, DropTenantCap)
		if v == nil {
			return
		}
		b.remove(v)
	}
	if b.all.Len() >= b.cfg.GlobalCap {
		v := b.globalVictim(tenant)
		if v == nil {
			b.countDrop(tenant, DropGlobalCap)
			return
		}
		b.remove(v)
		b.countDrop(v.tenant, DropGlobalCap)
	}
	tq := b.tenants[tenant]
	if tq == nil {
		tq = &tenantQueue{q: list.New()}
		b.tenants[tenant] = tq
	}
	now := time.Now()
	e := &entry{tenant: tenant, ev: ev, enq: now, next: now.Add(b.cfg.BackoffMin)}
	e.gel = b.all.PushBack(e)
	e.tel = tq.q.PushBack(e)
	b.m.BufferDepth.Set(float64(b.all.Len()))
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// globalVictim picks the entry a full global cap evicts for an Enqueue of tenant: the oldest idle
// entry of the tenant with the most entries, counting the one being enqueued; a tie goes to the
// enqueuing tenant, then to the older entry. Tenants whose entries are all in flight are passed
// over. b.mu held.
func (b *Buffer) globalVictim(tenant string) *entry {
	var victim *entry
	most, mine := 0, false
	for t, tq := range b.tenants {
		n, own := tq.q.Len(), t == tenant
		if own {
			n++
		}
		v := oldestIdle(tq.q)
		if v == nil || n < most {
			continue
		}
		if n == most && victim != nil && (mine || (!own && !v.enq.Before(victim.enq))) {
			continue
		}
		victim, most, mine = v, n, own
	}
	return victim
}

// Reject counts one event of tenant that the tenant DB refused for good on its hot-path insert:
// it is dropped as rejected without being buffered.
func (b *Buffer) Reject(tenant string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.countDrop(tenant, DropRejected)
}

// oldestIdle returns the oldest entry of l that is not being flushed.
func oldestIdle(l *list.List) *entry {
	for el := l.Front(); el != nil; el = el.Next() {
		if e := el.Value.(*entry); !e.flushing {
			return e
		}
	}
	return nil
}

// remove unlinks e; b.mu held.
func (b *Buffer) remove(e *entry) {
	b.all.Remove(e.gel)
	if tq := b.tenants[e.tenant]; tq != nil {
		tq.q.Remove(e.tel)
		if tq.q.Len() == 0 && !tq.running {
			delete(b.tenants, e.tenant)
		}
	}
	b.m.BufferDepth.Set(float64(b.all.Len()))
}

// countDrop records one drop; b.mu held.
func (b *Buffer) countDrop(tenant, reason string) {
	if b.cfg.Uncounted {
		return
	}
	b.m.Dropped.WithLabelValues(tenant, reason).Inc()
	m := b.drops[tenant]
	if m == nil {
		m = map[string]int{}
		b.drops[tenant] = m
	}
	m[reason]++
}

// Start runs the scheduler until Close.
func (b *Buffer) Start() {
	b.mu.Lock()
	b.started = true
	b.mu.Unlock()
	go func() {
		defer close(b.done)
		t := time.NewTicker(b.cfg.Tick)
		defer t.Stop()
		for {
			b.schedule()
			select {
			case <-b.ctx.Done():
				return
			case <-t.C:
			case <-b.wake:
			}
		}
	}()
}

// schedule expires old entries and starts a flusher for every tenant whose head entry is due.
func (b *Buffer) schedule() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	for el := b.all.Front(); el != nil; {
		e := el.Value.(*entry)
		next := el.Next()
		if now.Sub(e.enq) < b.cfg.MaxAge {
			break // enqueue order: the rest are younger
		}
		if !e.flushing {
			b.remove(e)
			b.countDrop(e.tenant, DropExpired)
		}
		el = next
	}
	for tenant, tq := range b.tenants {
		if tq.running || tq.q.Len() == 0 {
			continue
		}
		head := tq.q.Front().Value.(*entry)
		if !b.draining && now.Before(head.next) {
			continue
		}
		select {
		case b.sem <- struct{}{}:
		default:
			return // concurrency cap reached; next tick
		}
		tq.running = true
		b.wg.Add(1)
		go b.flushTenant(tenant, tq)
	}
}

// flushTenant inserts tq's due entries in FIFO order until one fails or none is due.
func (b *Buffer) flushTenant(tenant string, tq *tenantQueue) {
	defer b.wg.Done()
	defer func() { <-b.sem }()
	for {
		b.mu.Lock()
		var e *entry
		if el := tq.q.Front(); el != nil {
			e = el.Value.(*entry)
		}
		if e == nil || (!b.draining && time.Now().Before(e.next)) || b.ctx.Err() != nil {
			tq.running = false
			if tq.q.Len() == 0 && b.tenants[tenant] == tq {
				delete(b.tenants, tenant)
			}
			b.mu.Unlock()
			return
		}
		e.flushing = true
		b.mu.Unlock()

		ctx, cancel := context.WithTimeout(b.ctx, b.cfg.InsertTimeout)
		seq, err := b.ins.InsertBuffered(ctx, tenant, e.ev)
		cancel()

		b.mu.Lock()
		e.flushing = false
		switch {
		case err == nil:
			b.remove(e)
			b.m.FlushResults.WithLabelValues("ok").Inc()
			b.m.Residency.Observe(time.Since(e.enq).Seconds())
			b.mu.Unlock()
			if b.onFlushed != nil {
				b.onFlushed(tenant, seq)
			}
			continue
		case errors.Is(err, ErrRejected):
			b.m.FlushResults.WithLabelValues("rejected").Inc()
			b.remove(e)
			b.countDrop(tenant, DropRejected)
			b.log.Warn("retry flush refused for good; dropped", "tenant_id", tenant, "path", e.ev.Path, "err", err)
			b.mu.Unlock()
			continue
		case errors.Is(err, ErrTenantGone):
			b.m.FlushResults.WithLabelValues("tenant_gone").Inc()
			for el := tq.q.Front(); el != nil; {
				next := el.Next()
				v := el.Value.(*entry)
				b.remove(v)
				b.countDrop(tenant, DropTenantGone)
				el = next
			}
		default:
			b.m.FlushResults.WithLabelValues("error").Inc()
			// An insert whose answer was lost may have committed: the next attempt looks first.
			e.ev.MaybeStored = e.ev.MaybeStored || store.IsAmbiguous(err)
			e.attempts++
			e.next = time.Now().Add(b.backoff(e.attempts))
			b.log.Warn("retry flush failed", "tenant_id", tenant, "attempts", e.attempts, "err", err)
		}
		tq.running = false
		if tq.q.Len() == 0 && b.tenants[tenant] == tq {
			delete(b.tenants, tenant)
		}
		b.mu.Unlock()
		return
	}
}

func (b *Buffer) backoff(attempts int) time.Duration {
	d := b.cfg.BackoffMin
	for i := 1; i < attempts && d < b.cfg.BackoffMax; i++ {
		d *= 2
	}
	return min(d, b.cfg.BackoffMax)
}

// Close stops the buffer: later Enqueues are dropped as stopped, buffered entries are flushed
// (ignoring backoff) for at most budget, and whatever is left is dropped as shutdown. It returns
// how many entries were left.
func (b *Buffer) Close(budget time.Duration) int {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return 0
	}
	b.stopped, b.draining = true, true
	started := b.started
	b.mu.Unlock()
	deadline := time.Now().Add(budget)
	for started && b.Depth() > 0 && time.Now().Before(deadline) {
		select {
		case b.wake <- struct{}{}:
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.cancel()
	if started {
		<-b.done
	}
	b.wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	left := b.all.Len()
	for el := b.all.Front(); el != nil; {
		next := el.Next()
		e := el.Value.(*entry)
		b.remove(e)
		b.countDrop(e.tenant, DropShutdown)
		el = next
	}
	return left
}

// Depth returns the number of buffered entries, in-flight ones included.
func (b *Buffer) Depth() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.all.Len()
}

// Snapshot is the buffer's state for the admin endpoint.
type Snapshot struct {
	Depth     int                       `json:"depth"`
	Tenants   map[string]int            `json:"tenants"`
	Drops     map[string]map[string]int `json:"drops"`
	Stopped   bool                      `json:"stopped"`
	GlobalCap int                       `json:"global_cap"`
	TenantCap int                       `json:"tenant_cap"`
}

// Snapshot returns the depth, per-tenant depth and drops by tenant and reason.
func (b *Buffer) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Snapshot{Depth: b.all.Len(), Tenants: map[string]int{}, Drops: map[string]map[string]int{}, Stopped: b.stopped,
		GlobalCap: b.cfg.GlobalCap, TenantCap: b.cfg.TenantCap}
	for t, tq := range b.tenants {
		if tq.q.Len() > 0 {
			s.Tenants[t] = tq.q.Len()
		}
	}
	for t, m := range b.drops {
		c := map[string]int{}
		for r, n := range m {
			c[r] = n
		}
		s.Drops[t] = c
	}
	return s
}
