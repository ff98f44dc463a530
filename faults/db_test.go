package faults

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/kinds"
)

var markSeq atomic.Int64

func newMark(t *testing.T) string {
	return fmt.Sprintf("%s-%d", t.Name(), markSeq.Add(1))
}

func hasMark(t *testing.T, db *sql.DB, id string) bool {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM marks WHERE id = ?", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// rowAppearsWithin polls the server directly (no proxy) for the mark for up to d.
func rowAppearsWithin(t *testing.T, db *sql.DB, id string, d time.Duration) bool {
	t.Helper()
	return eventually(d, func() bool { return hasMark(t, db, id) })
}

func waitErr(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return within 20s", what)
		return nil
	}
}

// TestDBStall proves both stall endings on a real proxy in front of a real MariaDB: while stalled, an
// INSERT sent on an open connection does not reach the server; with then=resume it completes after
// Heal on the same, still usable connection (and a connection opened during the stall succeeds); with
// then=reset it fails, never executed, and the pool recovers with new connections. The no-fault row is
// the negative control: the same INSERT lands at once, so the absence check has teeth.
func TestDBStall(t *testing.T) {
	cases := []struct {
		kind, via, then string
	}{
		{"", "t1", ""},
		{kinds.TenantDBStallName, "t1", kinds.ThenResume},
		{kinds.TenantDBStallName, "t1", kinds.ThenReset},
		{kinds.MetaDBStallName, "meta", kinds.ThenResume},
		{kinds.MetaDBStallName, "meta", kinds.ThenReset},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s", c.kind, c.then), func(t *testing.T) {
			env := newTestEnv(t, "t1")
			db, truth := env.openVia(t, c.via), direct(t)
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.PingContext(ctx); err != nil {
				t.Fatal(err)
			}
			var f Fault
			if c.kind != "" {
				target := "t1"
				if c.via == "meta" {
					target = TargetMetaDB
				}
				if f, err = Build(env, instance(t, c.kind, target, time.Second, kinds.StallParams{Then: c.then})); err != nil {
					t.Fatal(err)
				}
				if err := f.Inject(ctx); err != nil {
					t.Fatal(err)
				}
			}
			id := newMark(t)
			res := make(chan error, 1)
			go func() {
				_, err := conn.ExecContext(ctx, "INSERT INTO marks (id) VALUES (?)", id)
				res <- err
			}()
			// A connection opened during the stall (resume only: it must complete after Heal).
			newConn := make(chan error, 1)
			var db2 *sql.DB
			if c.then == kinds.ThenResume {
				db2 = env.openVia(t, c.via)
				go func() { newConn <- db2.PingContext(ctx) }()
			}
			appeared := rowAppearsWithin(t, truth, id, 400*time.Millisecond)
			if f == nil {
				if !appeared || waitErr(t, res, "insert") != nil {
					t.Fatal("negative control: without a fault the insert must land")
				}
				return
			}
			if appeared {
				t.Fatal("the insert reached the server during the stall")
			}
			select {
			case err := <-res:
				t.Fatalf("the insert returned during the stall: %v", err)
			default:
			}
			if err := f.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			if n := len(env.proxies[c.via].Toxics.GetToxicArray()); n != 0 {
				t.Errorf("%d toxics left after Heal", n)
			}
			err = waitErr(t, res, "held insert")
			switch c.then {
			case kinds.ThenResume:
				if err != nil {
					t.Fatalf("held insert failed after resume: %v", err)
				}
				if !hasMark(t, truth, id) {
					t.Fatal("held insert returned ok but the row is missing")
				}
				if err := conn.PingContext(ctx); err != nil {
					t.Fatalf("the held connection did not survive the stall: %v", err)
				}
				if err := waitErr(t, newConn, "connect during stall"); err != nil {
					t.Fatalf("connection opened during the stall failed: %v", err)
				}
			case kinds.ThenReset:
				if err == nil {
					t.Fatal("held insert succeeded; then=reset must cut the connection")
				}
				if hasMark(t, truth, id) {
					t.Fatal("the held insert was executed; a reset stall drops it")
				}
				if err := db.PingContext(ctx); err != nil {
					t.Fatalf("new connections after the reset stall: %v", err)
				}
			}
		})
	}
}

// TestDBDown proves tenant_db_down and meta_db_down: open connections break, new ones are refused,
// and after Heal the same address accepts again.
func TestDBDown(t *testing.T) {
	for _, c := range []struct{ kind, via, target string }{
		{kinds.TenantDBDownName, "t1", "t1"},
		{kinds.MetaDBDownName, "meta", TargetMetaDB},
	} {
		t.Run(c.kind, func(t *testing.T) {
			env := newTestEnv(t, "t1")
			db := env.openVia(t, c.via)
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.PingContext(ctx); err != nil {
				t.Fatal(err)
			}
			addr := env.proxies[c.via].Listen
			f, err := Build(env, instance(t, c.kind, c.target, time.Second, nil))
			if err != nil {
				t.Fatal(err)
			}
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
			if env.proxies[c.via].Listen != addr {
				t.Errorf("proxy moved from %s to %s", addr, env.proxies[c.via].Listen)
			}
			if err := db.PingContext(ctx); err != nil {
				t.Fatalf("after Heal: %v", err)
			}
		})
	}
}

// TestDBLatency proves the latency kinds add at least the configured delay per direction (a lower
// bound, which load cannot break) and leave no toxic behind.
func TestDBLatency(t *testing.T) {
	const lat = 150 * time.Millisecond
	for _, c := range []struct {
		kind, via, target, dir string
		min                    time.Duration
	}{
		{kinds.TenantDBLatencyName, "t1", "t1", "both", 2 * lat},
		{kinds.TenantDBLatencyName, "t1", "t1", "upstream", lat},
		{kinds.MetaDBLatencyName, "meta", TargetMetaDB, "downstream", lat},
	} {
		t.Run(c.kind+"/"+c.dir, func(t *testing.T) {
			env := newTestEnv(t, "t1")
			db := env.openVia(t, c.via)
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.PingContext(ctx); err != nil {
				t.Fatal(err)
			}
			f, err := Build(env, instance(t, c.kind, c.target, time.Second, kinds.LatencyParams{Latency: lat, Direction: c.dir}))
			if err != nil {
				t.Fatal(err)
			}
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
			if n := len(env.proxies[c.via].Toxics.GetToxicArray()); n != 0 {
				t.Errorf("%d toxics left after Heal", n)
			}
			if _, err := conn.ExecContext(ctx, "SELECT 1"); err != nil {
				t.Fatalf("connection broken by the latency heal: %v", err)
			}
		})
	}
}
