// Package signal is the cross-pod signal plane of design 000: the in-process event bus, the
// coalesced outbox writer, the outbox poller (meta DB only) and the pod registry.
package signal

import "sync"

// Bus wakes the SSE streams of one pod. A wake carries no data: it tells a stream to look for rows
// after its cursor. Wakes coalesce (one pending wake per subscriber), so Publish never blocks.
type Bus struct {
	mu    sync.Mutex
	subs  map[string]map[*Sub]struct{}
	heads map[string]int64 // highest seq this pod committed per tenant (NoteHead)
}

// Sub is one stream's subscription; C receives a value when the tenant may have new events.
type Sub struct {
	C      chan struct{}
	tenant string
	bus    *Bus
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{subs: map[string]map[*Sub]struct{}{}, heads: map[string]int64{}} }

// NoteHead records that this pod committed seq for tenant. The publish path calls it before it
// publishes the wake, so a stream that subscribes after the wake went out still sees the seq in
// LocalHead (and does not trust an older head hint; see sse's resume at the head).
func (b *Bus) NoteHead(tenant string, seq int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if seq > b.heads[tenant] {
		b.heads[tenant] = seq
	}
}

// LocalHead returns the highest seq this pod committed for tenant (0 when none).
func (b *Bus) LocalHead(tenant string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.heads[tenant]
}

// Subscribe registers a stream for tenant.
func (b *Bus) Subscribe(tenant string) *Sub {
	s := &Sub{C: make(chan struct{}, 1), tenant: tenant, bus: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.subs[tenant]
	if m == nil {
		m = map[*Sub]struct{}{}
		b.subs[tenant] = m
	}
	m[s] = struct{}{}
	return s
}

// Close unregisters the subscription.
func (s *Sub) Close() {
	b := s.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	if m := b.subs[s.tenant]; m != nil {
		delete(m, s)
		if len(m) == 0 {
			delete(b.subs, s.tenant)
		}
	}
}

// Publish wakes every stream of tenant.
func (b *Bus) Publish(tenant string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs[tenant] {
		select {
		case s.C <- struct{}{}:
		default:
		}
	}
}

// PublishAll wakes every stream of every tenant on this pod and returns how many it woke: the
// recovery after a known signal loss whose tenants are unknown. Each woken stream re-reads from its
// cursor (one query; a stream with nothing new reads an empty page), so nothing is closed.
func (b *Bus) PublishAll() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, m := range b.subs {
		for s := range m {
			n++
			select {
			case s.C <- struct{}{}:
			default:
			}
		}
	}
	return n
}

// Subscribers returns how many streams tenant has on this pod.
func (b *Bus) Subscribers(tenant string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs[tenant])
}
