package api_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// These tests hold a reset to its promise: a client that resyncs (lists) when it receives a reset
// and streams on from the reset's seq misses nothing. A write whose file commits with its event
// (a batch write in every --event-commit mode, every write under joined) and whose seq lies below
// the reset's is seen only through that listing, so the reset must not be sent while it is still
// committing.

// openDB opens a pool's database directly, as another writer of it.
func (e *env) openDB(t *testing.T, pool string) *sql.DB {
	t.Helper()
	for _, p := range e.pools {
		if p.ID == pool {
			db, err := store.OpenDB(testCtx(t), p.DSN)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}
	}
	t.Fatalf("no pool %s", pool)
	return nil
}

// inFlight writes a file and its event for tenant in one transaction, as a batch write does, and
// leaves it open (its seq taken, nothing visible); commit commits it.
func inFlight(t *testing.T, db *sql.DB, tenant, path string) (seq int64, commit func()) {
	t.Helper()
	ctx := testCtx(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := tx.ExecContext(ctx, `INSERT INTO files (tenant_id, path, is_dir, mode, revision, content, updated_at) VALUES (?, ?, 0, 420, 1, 'x', ?)`, tenant, path, now); err != nil {
		t.Fatal(err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO fs_events (tenant_id, path, op, created_at, batch) VALUES (?, ?, 'write', ?, 'inflight')`, tenant, path, now)
	if err != nil {
		t.Fatal(err)
	}
	if seq, err = res.LastInsertId(); err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	commit = func() {
		if !done.Swap(true) {
			if err := tx.Commit(); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(commit)
	return seq, commit
}

// firstReset opens a stream of key from since 0 and returns its first reset and whether the
// transaction had committed when the reset arrived. It commits the transaction once the reset
// arrived, or after 3 s without one (a reset that waits for it gets it then).
func firstReset(t *testing.T, p *pod, key string, commit func()) (frame, bool) {
	t.Helper()
	var committed atomic.Bool
	arrived := make(chan struct{})
	go func() {
		select {
		case <-arrived:
		case <-time.After(3 * time.Second):
		}
		commit()
		committed.Store(true)
	}()
	sub := p.subscribe(t, key, 0).start()
	defer sub.close()
	got, ok := sub.until(t, 30*time.Second, func(f frame) bool { return f.Type == "reset" })
	was := committed.Load()
	close(arrived)
	if !ok {
		t.Fatalf("no reset: %+v", got)
	}
	return got[len(got)-1], was
}

// TestResetWaitsForABatchStillCommitting: under --event-commit separate (the default) a batch
// write still committing below the head holds an initial_sync until it commits. Under the
// reset-passes-batch defect the reset is sent at once: the client's listing misses the batch's
// file, and its event lies below the reset's seq.
func TestResetWaitsForABatchStillCommitting(t *testing.T) {
	for _, tc := range []struct {
		name   string
		defect bool
	}{{"settled", false}, {"reset-passes-batch", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.pod("p", func(c *api.Config) {
				c.Stream.HorizonWait = time.Minute // a gap is waited for, not given up, within the test
				if tc.defect {
					c.Defects = defect.Set{defect.ResetPassesBatch: true}
				}
			})
			tenant, k := p.provision(t, "shared")
			p.write(t, k, "/before", "x")
			seq, commit := inFlight(t, e.openDB(t, "shared"), tenant, "/batch/1")
			p.write(t, k, "/after", "x") // the head, above the batch
			reset, committed := firstReset(t, p, k, commit)
			if reset.Reason != "initial_sync" || reset.Seq <= seq {
				t.Fatalf("reset %+v, want initial_sync above the batch's seq %d", reset, seq)
			}
			if committed == tc.defect {
				t.Fatalf("batch committed when the reset arrived: %v, want %v", committed, !tc.defect)
			}
		})
	}
}

// TestResetSettlesBelowNeighboursSeqs: in a shared pool under --event-commit joined, a write of
// this tenant in flight below a page of its neighbours' seqs still holds the reset. Under the
// narrow-settle defect the reset looks at the PageSize seqs below the head only (all neighbours')
// and is sent at once.
func TestResetSettlesBelowNeighboursSeqs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		defect bool
	}{{"settled", false}, {"narrow-settle", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.pod("p", func(c *api.Config) {
				c.EventCommit = api.EventCommitJoined
				c.Stream.PageSize = 5
				c.Stream.HorizonWait = time.Minute
				if tc.defect {
					c.Defects = defect.Set{defect.NarrowSettle: true}
				}
			})
			ta, ka := p.provision(t, "shared")
			_, kb := p.provision(t, "shared")
			seq, commit := inFlight(t, e.openDB(t, "shared"), ta, "/joined/1")
			for i := range 12 { // more than a page of the neighbour's seqs above it
				p.write(t, kb, fmt.Sprintf("/b/%d", i), "x")
			}
			p.write(t, ka, "/a/head", "x")
			reset, committed := firstReset(t, p, ka, commit)
			if reset.Reason != "initial_sync" || reset.Seq <= seq+12 {
				t.Fatalf("reset %+v, want initial_sync above the neighbour's seqs (in flight: %d)", reset, seq)
			}
			if committed == tc.defect {
				t.Fatalf("write committed when the reset arrived: %v, want %v", committed, !tc.defect)
			}
		})
	}
}

// TestStreamHonoursPullCursor: under the horizon guard the pull endpoint's next_since can be a
// neighbour's seq above this tenant's head; seed 003's bootstrap streams on from it. The stream
// takes it as the cursor it is (no reset, the next write delivered); a since above every seq of the
// DB is still server_restart. Under the pull-horizon-cursor defect the pull's own cursor is a
// server_restart too.
func TestStreamHonoursPullCursor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		defect bool
	}{{"honoured", false}, {"pull-horizon-cursor", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.pod("p", func(c *api.Config) {
				if tc.defect {
					c.Defects = defect.Set{defect.PullHorizonCursor: true}
				}
			})
			_, ka := p.provision(t, "shared")
			_, kb := p.provision(t, "shared")
			p.write(t, ka, "/a/1", "x")
			for i := range 3 {
				p.write(t, kb, fmt.Sprintf("/b/%d", i), "x")
			}
			paths, next := p.pullAll(t, ka, 0, 100)
			_, head := p.pullAll(t, kb, 0, 100)
			if strings.Join(paths, " ") != "/a/1" || next != head {
				t.Fatalf("pull: %v next_since %d; want /a/1 and the neighbour's head %d (the horizon)", paths, next, head)
			}
			for _, c := range []struct {
				since int64
				reset string // the first frame's reason, "" = a heartbeat
			}{{next, map[bool]string{false: "", true: "server_restart"}[tc.defect]}, {head + 1000, "server_restart"}} {
				sub := p.subscribe(t, ka, c.since).start()
				got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
				if !ok || (c.reset == "") != (got[0].Type == "heartbeat") || (c.reset != "" && got[0].Reason != c.reset) {
					t.Fatalf("since %d: frames %+v, want first %q", c.since, got, c.reset)
				}
				if c.since == next && !tc.defect {
					p.write(t, ka, "/a/2", "x")
					if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/a/2" }); !ok {
						t.Fatalf("the next write was not delivered: %+v", got)
					}
				}
				sub.close()
			}
		})
	}
}

// TestPullAtTheHeadLeavesTheTenantDBAlone: a pull consumer of a quiet tenant polling at its head is
// answered from the meta DB's head hint, as a stream's resume at the head is: the tenant DB gets no
// query, so a cold serverless DB stays asleep. A write (this pod's, or another pod's once its hint
// lands) is still answered by the next pulls. Under the pull-wakes-cold defect every poll queries
// the tenant DB.
func TestPullAtTheHeadLeavesTheTenantDBAlone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		defect bool
	}{{"from the hint", false}, {"pull-wakes-cold", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated}, poolDef{id: "ded2", role: store.RoleDedicated})
			mod := func(c *api.Config) {
				if tc.defect {
					c.Defects = defect.Set{defect.PullWakesCold: true}
				}
			}
			p, p2 := e.pod("p", mod), e.pod("p2", mod)
			tenant, k := p.provision(t, "ded")
			_, kfresh := p.provision(t, "ded2") // never writes: its hint is the provisioned 0
			p.write(t, k, "/a", "x")
			p.write(t, k, "/b", "x")
			_, head := p.pullAll(t, k, 0, 100)
			meta := e.openMeta(t)
			wait.For(t, 10*time.Second, "the head hint to reach the head", func() bool {
				var h int64
				_ = meta.QueryRowContext(testCtx(t), `SELECT head FROM tenant_seq_head WHERE tenant_id = ?`, tenant).Scan(&h)
				return h == head
			})
			for _, c := range []struct {
				name, key string
				since     int64
			}{{"at the head", k, head}, {"a tenant that never wrote", kfresh, 0}} {
				queries := func() float64 { return metricSum(t, p2.srv, "eventlogd_tenant_db_event_queries_total", nil) }
				before := queries()
				for range 20 {
					code, pg := p2.pull(t, c.key, fmt.Sprintf("since=%d", c.since))
					if code != 200 || len(pg.Events) != 0 || pg.NextSince != c.since || pg.HasMore {
						t.Fatalf("%s: pull at the head: %d %+v", c.name, code, pg)
					}
				}
				want := 0.0
				if tc.defect {
					want = 20
				}
				if got := queries() - before; got != want {
					t.Errorf("%s: 20 pulls issued %v tenant-DB reads, want %v", c.name, got, want)
				}
			}
			// A write on the other pod reaches this pod's pulls once its hint lands.
			p.write(t, k, "/c", "x")
			wait.For(t, 10*time.Second, "the new write in a pull at the old head", func() bool {
				_, pg := p2.pull(t, k, fmt.Sprintf("since=%d", head))
				return len(pg.Events) == 1 && pg.Events[0].Path == "/c"
			})
		})
	}
}

// openMeta opens the meta database directly.
func (e *env) openMeta(t *testing.T) *sql.DB {
	t.Helper()
	db, err := store.OpenDB(context.Background(), e.metaDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
