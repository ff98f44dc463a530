// Package proxy puts one in-process toxiproxy proxy in front of each database a run uses (every tenant
// pool and the meta DB), so faults can stall or cut one tenant's DB alone, and counts each proxy's
// connections and bytes exactly for the ledger's `proxy` records.
package proxy

import (
	"fmt"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Proxy is one toxiproxy proxy and the counting relay behind it.
type Proxy struct {
	// Name is the pool or DB it fronts (tenant_3, shared_pool, meta).
	Name string
	// Tenants are the ledger tenant ids served through it (none for the meta DB).
	Tenants []string
	// Toxi is the toxiproxy proxy: faults add toxics to it, Stop/Start it.
	Toxi *toxiproxy.Proxy
	cnt  *counter
}

// Addr is the loopback address clients (eventlogd) connect to.
func (p *Proxy) Addr() string { return p.Toxi.Listen }

// Counters are cumulative totals since the proxy was made.
type Counters struct {
	Conns, BytesUp, BytesDown int64
}

// Counters returns the connections accepted and bytes relayed so far (up = client to DB).
func (p *Proxy) Counters() Counters {
	return Counters{Conns: p.cnt.conns.Load(), BytesUp: p.cnt.up.Load(), BytesDown: p.cnt.down.Load()}
}

// Set owns every proxy of a run.
type Set struct {
	srv *toxiproxy.ApiServer

	mu      sync.Mutex
	proxies []*Proxy
}

// NewSet returns an empty set backed by an in-process toxiproxy server (its HTTP API is not started).
func NewSet() *Set {
	return &Set{srv: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())}
}

// Add starts a proxy named name on a free loopback port in front of upstream (host:port).
func (s *Set) Add(name, upstream string) (*Proxy, error) {
	cnt, err := newCounter(upstream)
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", name, err)
	}
	tp := toxiproxy.NewProxy(s.srv, name, "127.0.0.1:0", cnt.addr())
	if err := tp.Start(); err != nil {
		cnt.close()
		return nil, fmt.Errorf("proxy %s: %w", name, err)
	}
	p := &Proxy{Name: name, Toxi: tp, cnt: cnt}
	s.mu.Lock()
	s.proxies = append(s.proxies, p)
	s.mu.Unlock()
	return p, nil
}

// All returns the proxies in the order they were added.
func (s *Set) All() []*Proxy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Proxy(nil), s.proxies...)
}

// Get returns the proxy named name, or nil.
func (s *Set) Get(name string) *Proxy {
	for _, p := range s.All() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Close stops every proxy and breaks their connections. Safe to call more than once.
func (s *Set) Close() {
	s.mu.Lock()
	ps := s.proxies
	s.proxies = nil
	s.mu.Unlock()
	for _, p := range ps {
		p.Toxi.Stop()
		p.cnt.close()
	}
}
