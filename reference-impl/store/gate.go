package store

import (
	"context"
	"database/sql"
	"sync/atomic"
)

// ReadGate bounds how many reads one tenant runs at once on a handle its pool's tenants share (the
// stream-read handle): a tenant with many streams queues on its own gate, so the handle's other
// connections stay free for the other tenants' reads.
type ReadGate struct {
	slots  chan struct{}
	waited atomic.Int64
}

// Enter returns once the tenant may read (its release must be called when the read is done), or
// ctx's error.
func (g *ReadGate) Enter(ctx context.Context) (release func(), err error) {
	select {
	case g.slots <- struct{}{}:
		return g.leave, nil
	default:
	}
	g.waited.Add(1)
	select {
	case g.slots <- struct{}{}:
		return g.leave, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *ReadGate) leave() { <-g.slots }

// Waited counts the reads that found every slot of the tenant's gate taken and queued.
func (g *ReadGate) Waited() int64 { return g.waited.Load() }

// enter is the gate of a TenantStore that may have none.
func (s *TenantStore) enter(ctx context.Context) (func(), error) {
	if s.Gate == nil {
		return func() {}, nil
	}
	return s.Gate.Enter(ctx)
}

// StreamGate returns the read gate of tenant in pool id (made on first use), or nil when per-tenant
// stream read limits are off (PoolOptions.StreamTenantMax < 0).
func (p *Pools) StreamGate(id, tenant string) *ReadGate {
	if p.opts.StreamTenantMax < 0 {
		return nil
	}
	key := id + "\x00" + tenant
	p.gateMu.Lock()
	defer p.gateMu.Unlock()
	g := p.gates[key]
	if g == nil {
		g = &ReadGate{slots: make(chan struct{}, p.opts.StreamTenantMax)}
		p.gates[key] = g
	}
	return g
}

// StreamStats are the stream-read handles' statistics by pool: WaitCount is the reads that waited
// for a connection of the handle (with per-tenant gates on, a sign that more tenants read at once
// than the handle has connections for; with them off, also of one tenant hogging it).
func (p *Pools) StreamStats() map[string]sql.DBStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]sql.DBStats, len(p.streams))
	for id, db := range p.streams {
		out[id] = db.Stats()
	}
	return out
}

// GateWaits are the queued reads of each tenant's stream gate, by tenant id (tenants with a gate only).
func (p *Pools) GateWaits() map[string]int64 {
	p.gateMu.Lock()
	defer p.gateMu.Unlock()
	out := make(map[string]int64, len(p.gates))
	for key, g := range p.gates {
		for i := 0; i < len(key); i++ {
			if key[i] == 0 {
				out[key[i+1:]] += g.Waited()
				break
			}
		}
	}
	return out
}

// gateMap is the Pools' registry of tenant gates; it grows with the tenants that ever streamed on
// this pod (a few dozen bytes each).
type gateMap = map[string]*ReadGate
