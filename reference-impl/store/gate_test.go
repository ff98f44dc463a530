package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
)

// TestReadGate: a tenant's gate admits StreamTenantMax reads at once; the next one queues (counted)
// until a read leaves, or gives up with its context. Per-tenant: another tenant's gate is its own.
// StreamTenantMax < 0 means no gate at all.
func TestReadGate(t *testing.T) {
	p := NewPools(nil, PoolOptions{MaxOpen: 32}) // stream handle 8, per tenant 2
	g := p.StreamGate("pool", "a")
	if g != p.StreamGate("pool", "a") || g == p.StreamGate("pool", "b") {
		t.Fatal("a tenant's gate must be one and its own")
	}
	r1, err1 := g.Enter(context.Background())
	r2, err2 := g.Enter(context.Background())
	if err1 != nil || err2 != nil || g.Waited() != 0 {
		t.Fatalf("two reads: %v %v, waited %d; want both admitted without waiting", err1, err2, g.Waited())
	}
	if _, err := p.StreamGate("pool", "b").Enter(context.Background()); err != nil {
		t.Fatalf("tenant b blocked by tenant a's reads: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := g.Enter(ctx); !errors.Is(err, context.DeadlineExceeded) || g.Waited() != 1 {
		t.Fatalf("third read: %v, waited %d; want it queued (1) and given up with its context", err, g.Waited())
	}
	admitted := make(chan func())
	go func() {
		r, _ := g.Enter(context.Background())
		admitted <- r
	}()
	wait.For(t, 10*time.Second, "the fourth read to queue behind the two", func() bool { return g.Waited() >= 2 })
	r1()
	(<-admitted)()
	r2()
	if w := p.GateWaits(); w["a"] != 2 || w["b"] != 0 {
		t.Errorf("GateWaits = %v, want a: 2, b: 0", w)
	}
	if NewPools(nil, PoolOptions{StreamTenantMax: -1}).StreamGate("pool", "a") != nil {
		t.Error("StreamTenantMax -1 must mean no gate")
	}
	var none *TenantStore = &TenantStore{}
	if release, err := none.enter(context.Background()); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
}
