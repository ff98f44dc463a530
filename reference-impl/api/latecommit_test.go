package api_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestLateCommitIsNotSkipped makes a lower seq commit after a higher one on purpose: connection 1
// inserts an event (the insert protocol of the guard) and holds its transaction open while the
// service commits another event of the same tenant on connection 2.
//   - lock: the second insert waits on the sequence row for the first to commit, so its seq is
//     higher and the reader never passes the first;
//   - horizon: the second insert commits at once above the open one; the stream holds it back at
//     the missing seq until the late commit, then sends both in seq order;
//   - late-commit-skip (no guard): the reader's cursor passes the late seq and skips it.
//
// Each runs under both --event-commit modes: joined, the service's /second is inserted in its
// write's transaction (under lock it waits on the sequence row there) and commits with the file.
func TestLateCommitIsNotSkipped(t *testing.T) {
	for _, commit := range api.EventCommitModes {
		for _, mode := range []string{"lock", "horizon", "late-commit-skip"} {
			t.Run(commit+"/"+mode, func(t *testing.T) { lateCommitCase(t, commit, mode) })
		}
	}
}

func lateCommitCase(t *testing.T, commit, mode string) {
	skip := mode == "late-commit-skip"
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	p := e.pod("p", func(c *api.Config) {
		c.EventCommit = commit
		c.EventInsertTimeout = 20 * time.Second
		c.Stream.HorizonWait = 5 * time.Minute // the late commit comes long before: never given up
		c.Guard = store.Guards[mode]
		if skip {
			c.Defects = defect.Set{defect.LateCommitSkip: true}
		}
	})
	tenant, k := p.provision(t, "ded")
	p.write(t, k, "/first", "x")
	sub := p.subscribe(t, k, 1).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })

	h := holdInsert(t, e, p, tenant, k, mode == "lock")
	lateSeq := h.seq
	var early []frame
	const window = 3 * time.Second // the late-commit-skip defect (the control) delivers /second within it
	switch mode {
	case "late-commit-skip":
		// The second event commits above the open one and is delivered first.
		if got, ok := sub.until(t, window, func(f frame) bool { return f.Path == "/second" }); !ok {
			t.Fatalf("second event not delivered: %+v", got)
		}
	case "horizon":
		// The second event commits above the open one (its write returns) but is held back.
		mustWithin(t, 30*time.Second, "the second write to return", func() { <-h.done })
		var held bool
		if early, held = sub.until(t, window, func(f frame) bool { return f.Path == "/second" }); held {
			t.Fatalf("horizon: /second delivered while seq %d was in flight: %+v", lateSeq, early)
		}
	case "lock":
		h.awaitWaiting(t)
	}
	h.commit(t)
	p.write(t, k, "/third", "x")
	got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/third" })
	if !ok {
		t.Fatalf("third event not delivered: %+v", got)
	}
	if !skip {
		// A sentinel write bounds the look for a stray frame after /third (a repeat, a late
		// out-of-order frame): the stream delivers in seq order, so any such frame comes before it.
		p.write(t, k, "/sentinel", "x")
		more, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/sentinel" })
		if !ok {
			t.Fatalf("sentinel event not delivered: %+v", more)
		}
		got = append(got, more...)
	}
	got = append(early, got...)
	sawLate, order := false, []string{}
	for _, f := range got {
		sawLate = sawLate || (f.Path == "/late" && f.Seq == lateSeq)
		if f.Type == "file_changed" {
			order = append(order, f.Path)
		}
	}
	if sawLate == skip {
		t.Fatalf("late seq %d delivered = %v, want %v: %+v", lateSeq, sawLate, !skip, got)
	}
	if !skip && strings.Join(order, " ") != "/late /second /third /sentinel" {
		t.Fatalf("frames %v, want /late /second /third /sentinel in seq order", order)
	}
}

// TestHorizonGivesUpARolledBackInsert: an insert that rolls back leaves a hole in the seqs; a
// horizon stream waits --sse-horizon-wait for it, then gives it up and delivers what follows (the
// held-back direction is the horizon case of TestLateCommitIsNotSkipped).
func TestHorizonGivesUpARolledBackInsert(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	p := e.pod("p", func(c *api.Config) {
		c.Guard = store.GuardHorizon
		c.Stream.HorizonWait = 300 * time.Millisecond
	})
	tenant, k := p.provision(t, "ded")
	p.write(t, k, "/first", "x")
	sub := p.subscribe(t, k, 1).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	ctx := testCtx(t)
	_, tx := directTx(t, e, "ded")
	hole, err := store.InsertEventTx(ctx, tx, tenant, store.Event{Path: "/never", Op: "write", CreatedAt: time.Now()}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	p.write(t, k, "/after", "x")
	got, ok := sub.until(t, 30*time.Second, func(f frame) bool { return f.Path == "/after" })
	if !ok {
		t.Fatalf("the event after hole %d never came: %+v", hole, got)
	}
	if f := got[len(got)-1]; f.Seq != hole+1 {
		t.Fatalf("/after has seq %d, want %d (right after the hole)", f.Seq, hole+1)
	}
	if n := counter(t, p, "eventlogd_sse_horizon_gaps_given_up_total", nil); n < 1 {
		t.Fatalf("eventlogd_sse_horizon_gaps_given_up_total = %v, want >= 1", n)
	}
}

// directTx opens pool's DB beside the pod and begins a transaction on it (both closed at cleanup):
// an insert there is one the test holds open, commits or rolls back when it chooses.
func directTx(t *testing.T, e *env, pool string) (*sql.DB, *sql.Tx) {
	t.Helper()
	ctx := testCtx(t)
	direct, err := store.OpenDB(ctx, dsnDirect(e, pool))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	tx, err := direct.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return direct, tx
}

// heldInsert is an event insert of the service's protocol whose transaction a test holds open on
// its own connection, while the service writes /second of the same tenant (in the background).
type heldInsert struct {
	direct *sql.DB
	tx     *sql.Tx
	seq    int64 // the held row's seq (/late)
	done   chan struct{}
}

// holdInsert inserts /late for tenant in a transaction left open on pool "ded", then starts the
// write of /second through p with key k; ordered is the insert's sequence guard (true: GuardLock's
// protocol; false: GuardHorizon's single statement, or the late-commit-skip shape).
func holdInsert(t *testing.T, e *env, p *pod, tenant, k string, ordered bool) *heldInsert {
	t.Helper()
	direct, tx := directTx(t, e, "ded")
	h := &heldInsert{direct: direct, tx: tx, done: make(chan struct{})}
	var err error
	if h.seq, err = store.InsertEventTx(testCtx(t), tx, tenant, store.Event{Path: "/late", Op: "write", CreatedAt: time.Now()}, ordered); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.done)
		if code, m, err := p.try("PUT", "/v1/fs/second", k, strings.NewReader("x"), nil); err != nil || code != 200 {
			t.Errorf("write /second: %d %v %v", code, m, err)
		}
	}()
	return h
}

// awaitWaiting waits until the service's insert of /second waits on the sequence row (GuardLock).
func (h *heldInsert) awaitWaiting(t *testing.T) {
	t.Helper()
	wait.For(t, 10*time.Second, "the second insert to wait on the sequence row", func() bool {
		var n int
		_ = h.direct.QueryRow(`SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND INFO LIKE 'INSERT INTO fs_event_seq_lock%'`).Scan(&n)
		return n > 0
	})
}

// commit commits the held insert (the late commit) and waits for the write of /second to return.
func (h *heldInsert) commit(t *testing.T) {
	t.Helper()
	if err := h.tx.Commit(); err != nil {
		t.Fatal(err)
	}
	mustWithin(t, 30*time.Second, "the held-back insert to return after the late commit", func() { <-h.done })
}
