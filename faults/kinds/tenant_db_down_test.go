package kinds_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// TestDBDown proves tenant_db_down and meta_db_down: open connections break, new ones are refused,
// and after Heal the same address accepts again.
func TestDBDown(t *testing.T) {
	for _, def := range []fault.Def[kinds.DownParams]{kinds.TenantDBDown(), kinds.MetaDBDown()} {
		via := "t1"
		if def.Targets == fault.TargetMeta {
			via = "meta"
		}
		t.Run(def.Name, func(t *testing.T) {
			env := faultstest.NewEnv(t, "t1")
			db := env.OpenVia(t, via)
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.PingContext(ctx); err != nil {
				t.Fatal(err)
			}
			addr := env.Proxies[via].Listen
			f := build(t, def, env, via, time.Second, kinds.DownParams{})
			if err := f.Inject(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(ctx, "SELECT 1"); err == nil {
				t.Error("a query on an open connection succeeded while the DB is down")
			}
			if nc, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
				nc.Close()
				t.Error("a new connection was accepted while the DB is down")
			} else if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("new connection: want connection refused, got %v", err)
			}
			if err := f.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			if env.Proxies[via].Listen != addr {
				t.Errorf("proxy moved from %s to %s", addr, env.Proxies[via].Listen)
			}
			if err := db.PingContext(ctx); err != nil {
				t.Fatalf("after Heal: %v", err)
			}
		})
	}
}
