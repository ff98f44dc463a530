package store_test

import (
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestSweepMarkNeverCoversAKeptRow: created_at and seq orders differ (a created_at is taken before
// the insert waits, and a retried event keeps its first one), so an old row can have a higher seq
// than a young one. The sweep deletes the old rows below the young one and marks through them only;
// the mark never covers the young row it keeps (its readers would get seq_too_old for a row that is
// there). The control is the layout itself: the old rows' highest seq lies above the kept row, which
// is the mark an uncapped sweep raised. Once the young row ages out, everything goes.
func TestSweepMarkNeverCoversAKeptRow(t *testing.T) {
	ctx := testCtx(t)
	db := tenantDB(t)
	a := &store.TenantStore{DB: db, TenantID: "a"}
	b := &store.TenantStore{DB: db, TenantID: "b"}
	now := time.Now()
	old, young := now.Add(-2*time.Hour), now
	// seqs: 1 a old, 2 b old, 3 a young, 4 a old (late), 5 b old, 6 a old.
	layout := []struct {
		st *store.TenantStore
		at time.Time
	}{{a, old}, {b, old}, {a, young}, {a, old}, {b, old}, {a, old}}
	for i, r := range layout {
		seq, err := r.st.InsertEvent(ctx, store.Event{Path: "/p", Op: "write", CreatedAt: r.at}, store.GuardLock)
		if err != nil || seq != int64(i+1) {
			t.Fatalf("insert %d: seq %d, %v", i, seq, err)
		}
	}
	cutoff := now.Add(-time.Hour)
	for _, tc := range []struct {
		name  string
		sweep func() (store.SweepResult, error)
	}{
		{"tenant sweep", func() (store.SweepResult, error) { return a.Sweep(ctx, cutoff, 100, 10) }},
		{"shared sweep", func() (store.SweepResult, error) { return store.SweepShared(ctx, db, cutoff, 100, 10) }},
	} {
		if _, err := tc.sweep(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, swept, err := a.Bounds(ctx)
		if err != nil || swept != 2 {
			t.Fatalf("%s: tenant a's mark %d (%v), want 2 (just below its kept seq 3; the old rows above it wait; an uncapped mark was 6)", tc.name, swept, err)
		}
		evs, err := a.EventsSince(ctx, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, e := range evs {
			seqs = append(seqs, e.Seq)
		}
		if len(seqs) != 3 || seqs[0] != 3 || seqs[1] != 4 || seqs[2] != 6 {
			t.Fatalf("%s: tenant a keeps seqs %v, want [3 4 6]", tc.name, seqs)
		}
	}
	// b has no young row: the shared sweep took all of it.
	if _, swept, _ := b.Bounds(ctx); swept != 5 {
		t.Fatalf("tenant b's mark %d, want 5", swept)
	}
	// The young row ages out: everything of a goes, the mark follows.
	if _, err := a.Sweep(ctx, now.Add(time.Minute), 100, 10); err != nil {
		t.Fatal(err)
	}
	if _, swept, _ := a.Bounds(ctx); swept != 6 {
		t.Fatalf("tenant a's mark %d after the young row aged out, want 6", swept)
	}
}
