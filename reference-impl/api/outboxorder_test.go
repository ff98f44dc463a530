package api_test

import (
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestOutboxHintCommittedLateIsNotSkipped (issue 10 bug 3): an outbox id is taken at INSERT and
// visible at COMMIT. A hint for tenant X whose transaction is held open while another hint (tenant
// Y) is written must still wake X's stream once it commits: the poller reads id > cursor, so the
// outbox must commit in id order (the same care as fs_events' sequence-row lock). X's event is in
// its tenant DB without any other signal, so only X's outbox hint can deliver it.
func TestOutboxHintCommittedLateIsNotSkipped(t *testing.T) {
	e := newEnv(t)
	b := e.pod("b", nil)
	x, kx := b.provision(t, "")
	y, _ := b.provision(t, "")
	sub := b.subscribe(t, kx, 0).start()
	sub.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })
	ctx := testCtx(t)
	stx, err := b.srv.Store(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := stx.InsertEvent(ctx, store.Event{Path: "/x-late", Op: "write", CreatedAt: time.Now()}, true) // no signal
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "b's poller to be idle", func() bool { return b.srv.SignalIdle(ctx) })
	c0 := b.srv.Poller().Cursor()

	meta := b.srv.Meta()
	tx, err := meta.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := store.InsertNotifyHeadsTx(ctx, tx, "another-pod", []string{x}, map[string]int64{x: seq}); err != nil {
		t.Fatal(err)
	}
	yDone := make(chan error, 1)
	go func() { // a later hint (higher id); with in-order commits it waits for X's transaction
		yDone <- meta.InsertNotifyHeads(ctx, "another-pod", []string{y}, map[string]int64{y: 1})
	}()
	// Give b's poller the chance to read Y's row above X's uncommitted id (it does, without the
	// in-order commit); not an assertion: in-order commits keep the cursor where it is.
	deadline := time.Now().Add(3 * time.Second)
	for b.srv.Poller().Cursor() == c0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-yDone:
		if err != nil {
			t.Fatalf("Y's hint: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Y's hint insert did not return")
	}
	if got, ok := sub.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/x-late" }); !ok {
		t.Fatalf("X's late-committed hint was skipped: /x-late never delivered (frames %v, poller cursor %d from %d)", got, b.srv.Poller().Cursor(), c0)
	}
}
