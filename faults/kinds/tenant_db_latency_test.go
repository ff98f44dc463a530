package kinds_test

import (
	"context"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// TestDBLatency proves the latency kinds add at least the configured delay per direction (a lower
// bound, which load cannot break) and leave no toxic behind.
func TestDBLatency(t *testing.T) {
	const lat = 150 * time.Millisecond
	for _, c := range []struct {
		def      fault.Def[kinds.LatencyParams]
		via, dir string
		min      time.Duration
	}{
		{kinds.TenantDBLatency(), "t1", "both", 2 * lat},
		{kinds.TenantDBLatency(), "t1", "upstream", lat},
		{kinds.MetaDBLatency(), "meta", "downstream", lat},
	} {
		t.Run(c.def.Name+"/"+c.dir, func(t *testing.T) {
			env := faultstest.NewEnv(t, "t1")
			db := env.OpenVia(t, c.via)
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.PingContext(ctx); err != nil {
				t.Fatal(err)
			}
			f := build(t, c.def, env, c.via, time.Second, kinds.LatencyParams{Latency: lat, Direction: c.dir})
			if err := f.Inject(ctx); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if _, err := conn.ExecContext(ctx, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < c.min {
				t.Errorf("round trip took %s, want >= %s", took, c.min)
			}
			if err := f.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			if n := len(env.Proxies[c.via].Toxics.GetToxicArray()); n != 0 {
				t.Errorf("%d toxics left after Heal", n)
			}
			if _, err := conn.ExecContext(ctx, "SELECT 1"); err != nil {
				t.Fatalf("connection broken by the latency heal: %v", err)
			}
		})
	}
}
