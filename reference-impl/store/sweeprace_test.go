package store_test

import (
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestSharedSweepNeverDeletesAboveATenantsMark: a retried row of tenant X with
// an old created_at, whose seq was taken before the shared sweep's SELECT and committed before its
// DELETE, must not be deleted above X's sweep mark (X's consumer would miss it without a reset).
// The row's transaction is held open across the SELECT; the DELETE (a locking read) waits for it
// when it scans the row, and the commit lands while it waits.
func TestSharedSweepNeverDeletesAboveATenantsMark(t *testing.T) {
	ctx := testCtx(t)
	db := tenantDB(t)
	db.SetMaxOpenConns(8)
	a := &store.TenantStore{DB: db, TenantID: "a"}
	x := &store.TenantStore{DB: db, TenantID: "x"}
	old := time.Now().Add(-2 * time.Hour)
	if _, err := a.InsertEvent(ctx, store.Event{Path: "/a1", Op: "write", CreatedAt: old}, store.GuardLock); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	xSeq, err := store.InsertEventTx(ctx, tx, "x", store.Event{Path: "/x-retried", Op: "write", CreatedAt: old}, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.InsertEvent(ctx, store.Event{Path: "/a3", Op: "write", CreatedAt: old}, store.GuardLock); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := store.SweepShared(ctx, db, time.Now().Add(-time.Hour), 100, 10)
		done <- err
	}()
	// Commit once the sweep's DELETE waits for X's row (or the sweep finished without touching it).
	var sweepErr error
	finished := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !finished; {
		var waits int
		_ = db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.INNODB_LOCK_WAITS`).Scan(&waits)
		if waits > 0 {
			break
		}
		select {
		case sweepErr = <-done:
			finished = true
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if !finished {
		select {
		case sweepErr = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("shared sweep did not return")
		}
	}
	if sweepErr != nil {
		t.Fatal(sweepErr)
	}
	_, swept, err := x.Bounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := x.EventsSince(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 && swept < xSeq {
		t.Fatalf("x's row %d was deleted but x's sweep mark is %d: x's consumer misses it without a reset", xSeq, swept)
	}
}
