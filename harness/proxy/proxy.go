// Package proxy puts one toxiproxy proxy in front of each database a run uses (every tenant pool and
// the meta DB), so faults can stall or cut one tenant's DB alone, and counts each proxy's connections
// and bytes exactly for the ledger's `proxy` records. The proxies run in-process (NewSet) or on a
// toxiproxy server driven over its HTTP API (NewServerSet: seqgate run --toxiproxy).
package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Proxy is one toxiproxy proxy and the counting relay behind it. It is the faults.ToxicProxy of its
// database in either mode.
type Proxy struct {
	// Name is the pool or DB it fronts (tenant_3, shared_pool, meta).
	Name string
	// Tenants are the ledger tenant ids served through it (none for the meta DB).
	Tenants []string
	// Toxi is the in-process toxiproxy proxy; nil when the proxy lives on a toxiproxy server.
	Toxi *toxiproxy.Proxy

	remote  *toxiclient.Proxy // on a toxiproxy server
	addr    string            // where clients reach the remote proxy
	cnt     *counter          // nil when the server cannot reach a relay of this process
	adopted bool              // found on the server (AdoptServerSet): Close leaves it there
}

// Addr is the address clients (eventlogd) connect to.
func (p *Proxy) Addr() string {
	if p.Toxi != nil {
		return p.Toxi.Listen
	}
	return p.addr
}

// Counters are cumulative totals since the proxy was made.
type Counters struct {
	Conns, BytesUp, BytesDown int64
}

// Counters returns the connections accepted and bytes relayed so far (up = client to DB); zero when
// the proxy has no relay (a toxiproxy server that is not on this machine's loopback).
func (p *Proxy) Counters() Counters {
	if p.cnt == nil {
		return Counters{}
	}
	return Counters{Conns: p.cnt.conns.Load(), BytesUp: p.cnt.up.Load(), BytesDown: p.cnt.down.Load()}
}

// ProxyName names the proxy in fault errors.
func (p *Proxy) ProxyName() string { return p.Name }

// AddToxic adds a toxic given as toxiproxy's JSON toxic object.
func (p *Proxy) AddToxic(_ context.Context, toxicJSON []byte) error {
	if p.Toxi != nil {
		_, err := p.Toxi.Toxics.AddToxicJson(bytes.NewReader(toxicJSON))
		return err
	}
	return addRemoteToxic(p.remote, toxicJSON)
}

// RemoveToxic removes the named toxic; one that is already gone is not an error.
func (p *Proxy) RemoveToxic(ctx context.Context, name string) error {
	if p.Toxi != nil {
		if err := p.Toxi.Toxics.RemoveToxic(ctx, name); err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
			return err
		}
		return nil
	}
	return removeRemoteToxic(p.remote, name)
}

// SetEnabled(false) closes the listener and every connection; SetEnabled(true) listens again on the
// same address. Both are idempotent.
func (p *Proxy) SetEnabled(_ context.Context, on bool) error {
	if p.Toxi != nil {
		if !on {
			p.Toxi.Stop()
			return nil
		}
		if err := p.Toxi.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
			return fmt.Errorf("start again on %s: %w", p.Toxi.Listen, err)
		}
		return nil
	}
	if on {
		return p.remote.Enable()
	}
	return p.remote.Disable()
}

// Set owns every proxy of a run.
type Set struct {
	srv    *toxiproxy.ApiServer // in-process
	server *server              // or a toxiproxy server

	mu      sync.Mutex
	proxies []*Proxy
}

// NewSet returns an empty set backed by an in-process toxiproxy server (its HTTP API is not started).
func NewSet() *Set {
	return &Set{srv: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())}
}

// Add starts a proxy named name in front of upstream (host:port): on a free loopback port in-process,
// or on the toxiproxy server (replacing a proxy of the same name left there by an earlier run).
func (s *Set) Add(name, upstream string) (*Proxy, error) {
	var p *Proxy
	var err error
	if s.server != nil {
		p, err = s.server.add(name, upstream)
	} else {
		p, err = s.addInProcess(name, upstream)
	}
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", name, err)
	}
	s.mu.Lock()
	s.proxies = append(s.proxies, p)
	s.mu.Unlock()
	return p, nil
}

func (s *Set) addInProcess(name, upstream string) (*Proxy, error) {
	cnt, err := newCounter(upstream)
	if err != nil {
		return nil, err
	}
	tp := toxiproxy.NewProxy(s.srv, name, "127.0.0.1:0", cnt.addr())
	if err := tp.Start(); err != nil {
		cnt.close()
		return nil, err
	}
	return &Proxy{Name: name, Toxi: tp, cnt: cnt}, nil
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

// Close stops every proxy and breaks their connections (on a toxiproxy server: deletes the proxies
// this set made; adopted ones stay). Safe to call more than once.
func (s *Set) Close() {
	s.mu.Lock()
	ps := s.proxies
	s.proxies = nil
	s.mu.Unlock()
	for _, p := range ps {
		if p.Toxi != nil {
			p.Toxi.Stop()
		}
		if p.remote != nil && !p.adopted {
			_ = p.remote.Delete()
		}
		if p.cnt != nil {
			p.cnt.close()
		}
	}
}
