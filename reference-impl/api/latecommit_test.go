package api_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestLateCommitIsNotSkipped makes a lower seq commit after a higher one on purpose: connection 1
// inserts an event (the insert protocol of the service) and holds its transaction open while the
// service commits another event of the same tenant on connection 2. With the sequence-row lock the
// second insert waits for the first to commit, so its seq is higher and the reader never passes the
// first; with the late-commit-skip defect the reader's cursor passes the late seq and skips it.
func TestLateCommitIsNotSkipped(t *testing.T) {
	for _, skip := range []bool{false, true} {
		t.Run(map[bool]string{false: "ordered", true: "late-commit-skip"}[skip], func(t *testing.T) {
			e, p := defectPod(t, defect.LateCommitSkip, skip, func(c *api.Config) { c.EventInsertTimeout = 20 * time.Second })
			tenant, k := p.provision(t, "ded")
			p.write(t, k, "/first", "x")
			sub := p.subscribe(t, k, 1).start()
			sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })

			h := holdInsert(t, e, p, tenant, k, !skip)
			lateSeq := h.seq
			if skip {
				// The second event commits above the open one and is delivered first.
				if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/second" }); !ok {
					t.Fatalf("second event not delivered: %+v", got)
				}
			} else {
				h.awaitWaiting(t)
			}
			h.commit(t)
			p.write(t, k, "/third", "x")
			got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/third" })
			if !ok {
				t.Fatalf("third event not delivered: %+v", got)
			}
			if !skip {
				got = append(got, sub.collect(100*time.Millisecond)...)
			}
			sawLate := false
			for _, f := range got {
				sawLate = sawLate || (f.Path == "/late" && f.Seq == lateSeq)
			}
			if sawLate == skip {
				t.Fatalf("late seq %d delivered = %v, want %v: %+v", lateSeq, sawLate, !skip, got)
			}
		})
	}
}

// heldInsert is an event insert of the service's protocol whose transaction a test holds open on
// its own connection, while the service writes /second of the same tenant (in the background).
type heldInsert struct {
	direct *sql.DB
	tx     *sql.Tx
	seq    int64 // the held row's seq (/late)
	done   chan struct{}
}

// holdInsert inserts /late for tenant in a transaction left open, then starts the write of /second
// through p with key k; ordered is the insert's sequence guard (false: the late-commit-skip shape).
func holdInsert(t *testing.T, e *env, p *pod, tenant, k string, ordered bool) *heldInsert {
	t.Helper()
	ctx := testCtx(t)
	direct, err := store.OpenDB(ctx, dsnDirect(e, "ded"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	tx, err := direct.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	h := &heldInsert{direct: direct, tx: tx, done: make(chan struct{})}
	if h.seq, err = store.InsertEventTx(ctx, tx, tenant, store.Event{Path: "/late", Op: "write", CreatedAt: time.Now()}, ordered); err != nil {
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

// awaitWaiting waits until the service's insert of /second waits on the sequence row.
func (h *heldInsert) awaitWaiting(t *testing.T) {
	t.Helper()
	waitFor(t, 10*time.Second, "the second insert to wait on the sequence row", func() bool {
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
