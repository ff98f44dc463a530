package kinds_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
	"github.com/seqgate/seqgate/internal/wait"
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
	return wait.Until(d, func() bool { return hasMark(t, db, id) })
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
		def       *fault.Def[kinds.StallParams] // nil: the no-fault control
		via, then string
	}{
		{nil, "t1", ""},
		{ptr(kinds.TenantDBStall()), "t1", kinds.ThenResume},
		{ptr(kinds.TenantDBStall()), "t1", kinds.ThenReset},
		{ptr(kinds.MetaDBStall()), "meta", kinds.ThenResume},
		{ptr(kinds.MetaDBStall()), "meta", kinds.ThenReset},
	}
	for _, c := range cases {
		name := "no_fault"
		if c.def != nil {
			name = c.def.Name + "/" + c.then
		}
		t.Run(name, func(t *testing.T) {
			env := faultstest.NewEnv(t, "t1")
			db, truth := env.OpenVia(t, c.via), faultstest.Direct(t)
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.PingContext(ctx); err != nil {
				t.Fatal(err)
			}
			var f fault.Fault
			if c.def != nil {
				f = build(t, *c.def, env, c.via, time.Second, kinds.StallParams{Then: c.then})
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
				db2 = env.OpenVia(t, c.via)
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
			if n := len(env.Proxies[c.via].Toxics.GetToxicArray()); n != 0 {
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

func ptr[T any](v T) *T { return &v }
