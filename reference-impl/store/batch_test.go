package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestBatchEventsTakeConsecutiveSeqs: under each guard, a batch's events take consecutive seqs even
// while single inserts of the same tenant run beside it (under GuardHorizon nothing serialises
// them), so no reader ever sees another event of the tenant inside a batch; every page read of the
// guards carries the batch id. The control inserts each event of a batch with its own statement in
// one transaction (the shape BatchWrite had): how often a single insert lands inside such a batch
// depends on scheduling, so its count is logged, not asserted.
func TestBatchEventsTakeConsecutiveSeqs(t *testing.T) {
	const batches, size, writers = 40, 4, 6
	for _, g := range []store.Guard{store.GuardLock, store.GuardHorizon} {
		t.Run(g.String(), func(t *testing.T) {
			ctx := testCtx(t)
			st := &store.TenantStore{DB: tenantDB(t), TenantID: "a"}
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := st.InsertEvent(ctx, store.Event{Path: fmt.Sprintf("/w%d/%d", w, i), Op: "write", CreatedAt: time.Now()}, g); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			want := map[string][]int64{}
			for b := 0; b < batches; b++ {
				files := make([]store.FileWrite, size)
				for i := range files {
					files[i] = store.FileWrite{Path: fmt.Sprintf("/b%d/%d", b, i), Content: []byte("x")}
				}
				id := fmt.Sprintf("B%d", b)
				r, err := st.BatchWrite(ctx, files, id, g == store.GuardLock)
				if err != nil {
					t.Fatal(err)
				}
				want[id] = r.Seqs
			}
			control := tornControl(ctx, t, st, batches, size)
			close(stop)
			wg.Wait()
			t.Logf("control (one statement per event): %d of %d batches had another event inside", control, batches)

			reads := map[string]func() ([]store.Event, error){
				"EventsPage": func() ([]store.Event, error) { evs, _, err := st.EventsPage(ctx, 0, 1_000_000); return evs, err },
				"EventsPageLocked": func() ([]store.Event, error) {
					evs, _, err := st.EventsPageLocked(ctx, 0, 1_000_000)
					return evs, err
				},
				"EventsAfter": func() ([]store.Event, error) {
					p, err := st.EventsAfter(ctx, 0, 1_000_000)
					var evs []store.Event
					for _, r := range p.Rows {
						if r.Mine {
							evs = append(evs, r.Event)
						}
					}
					return evs, err
				},
			}
			for name, read := range reads {
				evs, err := read()
				if err != nil {
					t.Fatal(err)
				}
				got := map[string][]int64{}
				for i, e := range evs {
					if e.Batch == "" || e.Batch[0] != 'B' {
						continue
					}
					if l := got[e.Batch]; len(l) > 0 && evs[i-1].Batch != e.Batch {
						t.Fatalf("%s: batch %s torn: seq %d (%s) inside it", name, e.Batch, evs[i-1].Seq, evs[i-1].Path)
					}
					got[e.Batch] = append(got[e.Batch], e.Seq)
				}
				for id, seqs := range want {
					if !slices.Equal(got[id], seqs) || seqs[size-1]-seqs[0] != size-1 {
						t.Fatalf("%s: batch %s read with seqs %v, BatchWrite answered %v (want %d consecutive)", name, id, got[id], seqs, size)
					}
				}
			}
		})
	}
}

// tornControl writes batches the way BatchWrite did before its events were one statement (one
// INSERT per event in one transaction, ids "C<n>") and counts those another event landed inside.
func tornControl(ctx context.Context, t *testing.T, st *store.TenantStore, batches, size int) int {
	t.Helper()
	torn := 0
	for b := 0; b < batches; b++ {
		tx, err := st.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for i := 0; i < size; i++ {
			seq, err := store.InsertEventTx(ctx, tx, st.TenantID, store.Event{Path: fmt.Sprintf("/c%d/%d", b, i), Op: "write", Batch: fmt.Sprintf("C%d", b), CreatedAt: time.Now()}, false)
			if err != nil {
				_ = tx.Rollback()
				t.Fatal(err)
			}
			seqs = append(seqs, seq)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if seqs[size-1]-seqs[0] != int64(size-1) {
			torn++
		}
	}
	return torn
}
