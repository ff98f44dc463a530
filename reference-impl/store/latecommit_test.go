package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// pageFunc reads one page of a tenant after since.
type pageFunc func(ctx context.Context, st *store.TenantStore, since int64) ([]store.Event, error)

func plainPage(ctx context.Context, st *store.TenantStore, since int64) ([]store.Event, error) {
	evs, _, err := st.EventsPage(ctx, since, 1000)
	return evs, err
}

func lockedPage(ctx context.Context, st *store.TenantStore, since int64) ([]store.Event, error) {
	evs, _, err := st.EventsPageLocked(ctx, since, 1000)
	return evs, err
}

// readFunc reads the ids after `after`, in order (a page of events, or of outbox rows).
type readFunc func(after int64) ([]int64, error)

// race runs writers, each calling write `each` times, while every reader follows the ids at
// > cursor as fast as it can (and once more after the last write, to reach the head); it returns
// the ids each reader saw.
func race(t *testing.T, writers, each int, write func(w int) error, readers []readFunc) []map[int64]bool {
	t.Helper()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := write(w); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	seen := make([]map[int64]bool, len(readers))
	var rwg sync.WaitGroup
	for r, read := range readers {
		seen[r] = map[int64]bool{}
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			var cursor int64
			for last := false; ; {
				select {
				case <-done:
					last = true
				default:
				}
				ids, err := read(cursor)
				if err != nil {
					t.Error(err)
					return
				}
				for _, id := range ids {
					seen[r][id] = true
					cursor = id
				}
				if last && len(ids) == 0 {
					return
				}
			}
		}()
	}
	rwg.Wait()
	return seen
}

// missed returns the ids of all that seen lacks: a reader that passed them never reads them again.
func missed(all []int64, seen map[int64]bool) []int64 {
	var out []int64
	for _, id := range all {
		if !seen[id] {
			out = append(out, id)
		}
	}
	return out
}

// hammer runs writers inserting events of one tenant under guard g (each `each` times) while every
// reader pages the tenant at seq > cursor; it returns, per reader, the seqs it skipped.
func hammer(t *testing.T, g store.Guard, writers, each int, readers []pageFunc) (skipped [][]int64) {
	t.Helper()
	ctx := testCtx(t)
	db := tenantDB(t)
	db.SetMaxOpenConns(writers + len(readers))
	st := &store.TenantStore{DB: db, TenantID: "hot"}
	var reads []readFunc
	for _, page := range readers {
		reads = append(reads, func(after int64) ([]int64, error) {
			evs, err := page(ctx, st, after)
			ids := make([]int64, len(evs))
			for i, e := range evs {
				ids[i] = e.Seq
			}
			return ids, err
		})
	}
	seen := race(t, writers, each, func(int) error {
		_, err := st.InsertEvent(ctx, store.Event{Path: "/p", Op: "write", CreatedAt: time.Now()}, g)
		return err
	}, reads)
	all := allSeqs(t, db)
	if len(all) != writers*each {
		t.Fatalf("table holds %d events, %d written", len(all), writers*each)
	}
	for r := range readers {
		skipped = append(skipped, missed(all, seen[r]))
	}
	return skipped
}

func allSeqs(t *testing.T, db *sql.DB) []int64 {
	t.Helper()
	rows, err := db.QueryContext(testCtx(t), `SELECT seq FROM fs_events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestLockedPagesNeverPassALowerSeq: 64 writers of one tenant under the sequence-row lock, so the
// tenant's seqs commit in seq order, and readers paging at seq > cursor. A plain page (one
// autocommit SELECT) still passes lower seqs now and then on MariaDB: its read view is built by
// walking the active transactions without a global latch, and a commit of seq N followed by the
// commit of seq N+1 can fall between two steps of the walk, so the view holds N+1 without N (the
// open finding of docs/power.md, reproduced here without eventlogd or the harness). The locked page
// takes the sequence row in share mode before its view and never passes one.
//
// The plain readers are the control: how often they skip depends on the machine's scheduling (most
// runs here skip a few seqs of 6,400), so their count is logged, not asserted.
func TestLockedPagesNeverPassALowerSeq(t *testing.T) {
	if testing.Short() {
		t.Skip("64 writers for ~15 s")
	}
	skipped := hammer(t, store.GuardLock, 64, 100, []pageFunc{plainPage, plainPage, plainPage, lockedPage, lockedPage, lockedPage})
	for r, s := range skipped[:3] {
		t.Logf("control: plain reader %d skipped %d seqs %v", r, len(s), s)
	}
	for r, s := range skipped[3:] {
		if len(s) > 0 {
			t.Errorf("locked reader %d skipped %d seqs: %v", r, len(s), s)
		}
	}
}

// TestEventsAfterShowsAnInsertInFlightAsAGap: an insert whose transaction is still open has its
// seq but no visible row; EventsAfter lists every tenant's visible seqs in order, so the higher
// seq a later insert committed shows with the gap before it (a plain tenant page shows the higher
// seq alone: the reader passes the late one). Once the late insert commits the gap is filled.
func TestEventsAfterShowsAnInsertInFlightAsAGap(t *testing.T) {
	ctx := testCtx(t)
	db := tenantDB(t)
	a := &store.TenantStore{DB: db, TenantID: "a"}
	b := &store.TenantStore{DB: db, TenantID: "b"}
	first, err := b.InsertEvent(ctx, store.Event{Path: "/b1", Op: "write", CreatedAt: time.Now()}, store.GuardHorizon)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	late, err := store.InsertEventTx(ctx, tx, "a", store.Event{Path: "/late", Op: "write", CreatedAt: time.Now()}, false)
	if err != nil {
		t.Fatal(err)
	}
	next, err := a.InsertEvent(ctx, store.Event{Path: "/next", Op: "write", CreatedAt: time.Now()}, store.GuardHorizon)
	if err != nil {
		t.Fatal(err)
	}
	if evs, _ := a.EventsSince(ctx, 0, 10); len(evs) != 1 || evs[0].Seq != next {
		t.Fatalf("control: plain page = %+v, want only seq %d (the late one %d passed)", evs, next, late)
	}
	p, err := a.EventsAfter(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		seq  int64
		mine bool
		path string
	}
	var got []row
	for _, r := range p.Rows {
		got = append(got, row{r.Seq, r.Mine, r.Path})
	}
	want := []row{{first, false, ""}, {next, true, "/next"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] || next != late+1 || late != first+1 {
		t.Fatalf("in flight: rows %+v, want %+v with the gap at %d", got, want, late)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	p, err = a.EventsAfter(ctx, first, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 2 || p.Rows[0].Seq != late || p.Rows[0].Path != "/late" || !p.Rows[0].Mine {
		t.Fatalf("after the late commit: %+v", p.Rows)
	}
}

// TestOutboxReadsNeverPassALowerID is TestLockedPagesNeverPassALowerSeq for the outbox: 32 pods'
// notifiers commit hints in id order (the order row), pollers read id > cursor. OutboxSince takes the
// order row in share mode first and never passes an id; a plain read (the control, logged: it
// depends on the machine's scheduling) can, on MariaDB, and a passed id is a lost wake.
func TestOutboxReadsNeverPassALowerID(t *testing.T) {
	if testing.Short() {
		t.Skip("32 writers for a few seconds")
	}
	ctx := testCtx(t)
	db, err := store.OpenDB(ctx, srv.DSN(fmt.Sprintf("outbox%d", n.Add(1))))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := store.MigrateMeta(ctx, db); err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(40)
	m := &store.Meta{DB: db}
	const writers, each = 32, 60
	plain := func(after int64) ([]int64, error) {
		rows, err := db.QueryContext(ctx, `SELECT id FROM tenant_notify_outbox WHERE id > ? ORDER BY id LIMIT 1000`, after)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, rows.Err()
	}
	locked := func(after int64) ([]int64, error) {
		rs, err := m.OutboxSince(ctx, after, 1000)
		var ids []int64
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids, err
	}
	var heads [writers]int64
	seen := race(t, writers, each, func(w int) error {
		pod := fmt.Sprintf("p%d", w)
		heads[w]++
		return m.InsertNotifyHeads(ctx, pod, []string{pod}, map[string]int64{pod: heads[w]})
	}, []readFunc{plain, plain, plain, locked, locked, locked})
	var all []int64
	for after := int64(0); ; {
		ids, err := plain(after)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 {
			break
		}
		all, after = append(all, ids...), ids[len(ids)-1]
	}
	if len(all) != writers*each {
		t.Fatalf("outbox holds %d rows, %d written", len(all), writers*each)
	}
	for r := range seen {
		m := missed(all, seen[r])
		if r < 3 {
			t.Logf("control: plain reader %d passed %d ids %v", r, len(m), m)
		} else if len(m) > 0 {
			t.Errorf("OutboxSince reader %d passed %d ids: %v", r, len(m), m)
		}
	}
}

// TestEventsAfterReadsEveryField: a horizon page gives this tenant's rows every field as stored
// (actor, source and batch when set, empty when not: they come as NULL where empty) and another
// tenant's rows none, whatever the op (a known op and one the store does not name).
func TestEventsAfterReadsEveryField(t *testing.T) {
	ctx := testCtx(t)
	db := tenantDB(t)
	a := &store.TenantStore{DB: db, TenantID: "a"}
	b := &store.TenantStore{DB: db, TenantID: "b"}
	at := time.Date(2026, 12, 3, 7, 0, 0, 123456000, time.UTC)
	evs := []struct {
		st *store.TenantStore
		ev store.Event
	}{
		{a, store.Event{Path: "/plain", Op: store.OpWrite, CreatedAt: at}},
		{a, store.Event{Path: "/to", Op: store.OpRename, Actor: "alice", Src: "/from", Batch: "b-1", CreatedAt: at}},
		{b, store.Event{Path: "/other", Op: store.OpCopy, Actor: "bob", Src: "/x", Batch: "b-2", CreatedAt: at}},
		{a, store.Event{Path: "/odd", Op: "unnamed-op", CreatedAt: at}},
	}
	var want []store.Row
	for _, e := range evs {
		seq, err := e.st.InsertEvent(ctx, e.ev, store.GuardHorizon)
		if err != nil {
			t.Fatal(err)
		}
		r := store.Row{Event: e.ev, Mine: e.st == a}
		r.Seq = seq
		if !r.Mine {
			r.Event = store.Event{Seq: seq, CreatedAt: at}
		}
		want = append(want, r)
	}
	p, err := a.EventsAfter(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != len(want) {
		t.Fatalf("rows %+v, want %+v", p.Rows, want)
	}
	for i, r := range p.Rows {
		if !r.CreatedAt.Equal(want[i].CreatedAt) {
			t.Errorf("row %d: created_at %v, want %v", i, r.CreatedAt, want[i].CreatedAt)
		}
		r.CreatedAt = want[i].CreatedAt
		if r != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, r, want[i])
		}
	}
}
