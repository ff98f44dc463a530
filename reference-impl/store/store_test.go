package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/reference-impl/store"
)

var srv *dbserver.Server

func TestMain(m *testing.M) {
	s, err := dbserver.Start(context.Background(), dbserver.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "store tests need a MySQL-compatible server binary:", err)
		os.Exit(1)
	}
	srv = s
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	code := m.Run()
	_ = s.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var n atomic.Int64

// testCtx bounds every database call of a test: a stuck statement ends with a deadline error naming
// itself instead of hanging the package.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// tenantDB opens a fresh, migrated tenant database (created by OpenDB).
func tenantDB(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := store.OpenDB(context.Background(), srv.DSN(fmt.Sprintf("st%d", n.Add(1))))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	for i := 0; i < 2; i++ { // idempotent
		if err := store.MigrateTenant(context.Background(), db); err != nil {
			tb.Fatal(err)
		}
	}
	return db
}

func TestSweepBatchesCapAndMark(t *testing.T) {
	ctx := testCtx(t)
	db := tenantDB(t)
	a := &store.TenantStore{DB: db, TenantID: "a"}
	b := &store.TenantStore{DB: db, TenantID: "b"}
	old := time.Now().Add(-2 * time.Hour)
	for i := 0; i < 7; i++ {
		for _, st := range []*store.TenantStore{a, b} {
			if _, err := st.InsertEvent(ctx, store.Event{Path: "/p", Op: "write", CreatedAt: old}, store.GuardLock); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := a.InsertEvent(ctx, store.Event{Path: "/new", Op: "write", CreatedAt: time.Now()}, store.GuardLock); err != nil {
		t.Fatal(err)
	}
	cutoff := time.Now().Add(-time.Hour)
	res, err := a.Sweep(ctx, cutoff, 3, 2)
	if err != nil || res.Deleted != 6 || res.Batches != 2 || res.Done {
		t.Fatalf("capped sweep: %+v %v, want 6 deleted in 2 batches, not done", res, err)
	}
	head, swept, err := a.Bounds(ctx)
	if err != nil || head != 15 || swept != 11 { // a's rows: 1,3,...,13 old, 15 new; 6 deleted -> through 11
		t.Fatalf("bounds head %d swept %d (%v), want 15 and 11", head, swept, err)
	}
	res, err = a.Sweep(ctx, cutoff, 3, 2)
	if err != nil || res.Deleted != 1 || !res.Done {
		t.Fatalf("second sweep: %+v %v", res, err)
	}
	if _, swept, _ := b.Bounds(ctx); swept != 0 {
		t.Fatalf("tenant b marked swept %d by a's sweep", swept)
	}
	res, err = store.SweepShared(ctx, db, cutoff, 100, 10)
	if err != nil || res.Deleted != 7 || !res.Done {
		t.Fatalf("shared sweep: %+v %v, want b's 7", res, err)
	}
	if _, swept, _ := b.Bounds(ctx); swept != 14 {
		t.Fatalf("tenant b mark %d after the shared sweep, want 14", swept)
	}
	if _, err := store.EstimateRows(ctx, db); err != nil {
		t.Fatal(err)
	}
}

func TestOrderedInsertsCommitInSeqOrder(t *testing.T) {
	// Many concurrent writers of one tenant: with the sequence-row lock, a reader that polls with
	// seq > cursor sees every seq (no committed row below the cursor appears later).
	ctx := testCtx(t)
	db := tenantDB(t)
	db.SetMaxOpenConns(16)
	st := &store.TenantStore{DB: db, TenantID: "t"}
	const writers, each = 8, 100
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := st.InsertEvent(ctx, store.Event{Path: "/p", Op: "write", CreatedAt: time.Now()}, store.GuardLock); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	seen := map[int64]bool{}
	var cursor int64
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		evs, err := st.EventsSince(ctx, cursor, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			seen[e.Seq] = true
			cursor = e.Seq
		}
	}
	for {
		evs, _ := st.EventsSince(ctx, cursor, 1000)
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			seen[e.Seq] = true
			cursor = e.Seq
		}
	}
	var total int
	_ = db.QueryRow(`SELECT COUNT(*) FROM fs_events`).Scan(&total)
	if len(seen) != total || total != writers*each {
		t.Fatalf("reader saw %d of %d rows (%d written)", len(seen), total, writers*each)
	}
}

func TestClaimMaintenanceOncePerInterval(t *testing.T) {
	ctx := testCtx(t)
	db, err := store.OpenDB(ctx, srv.DSN(fmt.Sprintf("meta%d", n.Add(1))))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := store.MigrateMeta(ctx, db); err != nil {
		t.Fatal(err)
	}
	m := &store.Meta{DB: db}
	for i, want := range []bool{true, false, false} {
		got, err := m.ClaimMaintenance(ctx, "fs_events_sweep:p", time.Hour)
		if err != nil || got != want {
			t.Fatalf("claim %d: %v %v, want %v", i, got, err, want)
		}
	}
	if got, _ := m.ClaimMaintenance(ctx, "fs_events_sweep:p", time.Nanosecond); !got {
		t.Fatal("claim after the interval refused")
	}
}

func TestLoadPoolsNamesTheBadEntry(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ body, want string }{
		{`{"pools":[]}`, "at least one pool"},
		{`{"pools":[{"id":"a","role":"shared","dsn":"root@tcp(127.0.0.1:1)/a"},{"id":"a","role":"shared","dsn":"root@tcp(127.0.0.1:1)/b"}]}`, `pools[1].id: duplicate "a"`},
		{`{"pools":[{"id":"a","role":"x","dsn":"root@tcp(127.0.0.1:1)/a"}]}`, `pools[0].role: "x" (allowed: dedicated, shared)`},
		{`{"pools":[{"id":"a","role":"shared","dsn":"::bad"}]}`, `pools[0].dsn`},
		{`{"pools":`, `unexpected end of JSON`},
	}
	for i, c := range cases {
		p := fmt.Sprintf("%s/p%d.json", dir, i)
		_ = os.WriteFile(p, []byte(c.body), 0o644)
		_, err := store.LoadPools(p)
		if err == nil || !contains(err.Error(), c.want) || !contains(err.Error(), p) {
			t.Fatalf("%s: got %v, want the file and %q", c.body, err, c.want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// BenchmarkEventInsert compares the insert of each guard (GuardLock: sequence-row lock; GuardHorizon:
// one autocommit INSERT); run both and read the ratio of ns/op.
func BenchmarkEventInsert(b *testing.B) {
	for _, g := range []store.Guard{store.GuardLock, store.GuardHorizon} {
		b.Run("guard="+g.String(), func(b *testing.B) {
			db := tenantDB(b)
			db.SetMaxOpenConns(8)
			st := &store.TenantStore{DB: db, TenantID: "t"}
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := st.InsertEvent(context.Background(), store.Event{Path: "/p", Op: "write", CreatedAt: time.Now()}, g); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// TestMigrateMetaAddsColumnsToOldTables: a meta DB made by an older eventlogd (outbox without
// pod_id) gets the column, concurrently from several pods, and a second run changes nothing.
func TestMigrateMetaAddsColumnsToOldTables(t *testing.T) {
	ctx := testCtx(t)
	db, err := store.OpenDB(ctx, srv.DSN(fmt.Sprintf("old%d", n.Add(1))))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE tenant_notify_outbox (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		tenant_id VARCHAR(64) NOT NULL, work VARCHAR(16) NOT NULL, created_at DATETIME(6) NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO tenant_notify_outbox (tenant_id, work, created_at) VALUES ('t', 'sse', NOW(6))`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- store.MigrateMeta(ctx, db) }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for three concurrent MigrateMeta calls")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	m := &store.Meta{DB: db}
	rows, err := m.OutboxSince(ctx, 0, 10)
	if err != nil || len(rows) != 1 || rows[0].PodID != "" {
		t.Fatalf("old row after migration: %+v %v", rows, err)
	}
	if err := m.InsertNotify(ctx, "p1", []string{"t"}); err != nil {
		t.Fatal(err)
	}
	if rows, _ := m.OutboxSince(ctx, 1, 10); len(rows) != 1 || rows[0].PodID != "p1" {
		t.Fatalf("new row: %+v", rows)
	}
}

// TestWriteFileRevisions: the one-statement upsert answers revision 1 for a new file, counts up on
// every overwrite, keeps files apart by tenant, and refuses a directory (ErrIsDir), leaving it as
// it was.
func TestWriteFileRevisions(t *testing.T) {
	ctx, _, a, b := twoTenantsWithDir(t)
	steps := []struct {
		st      *store.TenantStore
		path    string
		body    string
		wantRev int64
		wantErr error
	}{
		{a, "/f", "one", 1, nil},
		{a, "/f", "two", 2, nil},
		{b, "/f", "b1", 1, nil},
		{a, "/f", "three", 3, nil},
		{a, "/d", "x", 0, store.ErrIsDir},
		{a, "/g", "", 1, nil},
	}
	for i, s := range steps {
		rev, err := s.st.WriteFile(ctx, s.path, []byte(s.body))
		if rev != s.wantRev || !errors.Is(err, s.wantErr) {
			t.Fatalf("step %d %s %s: rev %d err %v, want %d %v", i, s.st.TenantID, s.path, rev, err, s.wantRev, s.wantErr)
		}
	}
	checkFiles(ctx, t, []fileWant{{a, "/f", "three", 3, false}, {b, "/f", "b1", 1, false}, {a, "/d", "", 1, true}})
}

// twoTenantsWithDir opens a fresh tenant database holding tenants a and b, where a has the
// directory /d.
func twoTenantsWithDir(t *testing.T) (context.Context, *sql.DB, *store.TenantStore, *store.TenantStore) {
	t.Helper()
	ctx := testCtx(t)
	db := tenantDB(t)
	a := &store.TenantStore{DB: db, TenantID: "a"}
	b := &store.TenantStore{DB: db, TenantID: "b"}
	if err := a.Mkdir(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	return ctx, db, a, b
}

// fileWant is what one file of a tenant should read back as.
type fileWant struct {
	st   *store.TenantStore
	path string
	body string
	rev  int64
	dir  bool
}

func checkFiles(ctx context.Context, t *testing.T, want []fileWant) {
	t.Helper()
	for _, c := range want {
		f, err := c.st.ReadFile(ctx, c.path)
		if err != nil || string(f.Content) != c.body || f.Revision != c.rev || f.IsDir != c.dir {
			t.Fatalf("%s %s: %+v %v, want %q rev %d dir %v", c.st.TenantID, c.path, f, err, c.body, c.rev, c.dir)
		}
	}
}

// TestWriteFilesTxRevisions: a write group's multi-row upsert returns each file's own revision (new,
// overwritten, the other tenant's same path untouched), refuses a directory with ErrIsDir and leaves
// it unchanged, and commits with events at consecutive seqs in the order given; a group naming a
// path twice is refused before any statement.
func TestWriteFilesTxRevisions(t *testing.T) {
	ctx, db, a, b := twoTenantsWithDir(t)
	for _, p := range []string{"/f", "/g"} {
		if _, err := a.WriteFile(ctx, p, []byte("old")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.WriteFile(ctx, "/g", []byte("old2")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WriteFile(ctx, "/new", []byte("b")); err != nil {
		t.Fatal(err)
	}
	files := []store.FileWrite{{Path: "/g", Content: []byte("g3")}, {Path: "/d", Content: []byte("x")}, {Path: "/new", Content: []byte("n")}, {Path: "/f", Content: []byte("f2")}}
	var revs []int64
	var errs []error
	r, err := a.CommitJoinedMany(ctx, func(ctx context.Context, tx *sql.Tx) ([]store.Event, error) {
		var err error
		if revs, errs, err = a.WriteFilesTx(ctx, tx, files); err != nil {
			return nil, err
		}
		var evs []store.Event
		for i, f := range files {
			if errs[i] == nil {
				evs = append(evs, store.Event{Path: f.Path, Op: "write", CreatedAt: time.Now()})
			}
		}
		return evs, nil
	}, store.GuardHorizon)
	if err != nil || r.EventErr != nil {
		t.Fatal(err, r.EventErr)
	}
	if want := []int64{3, 0, 1, 2}; !slices.Equal(revs, want) || !errors.Is(errs[1], store.ErrIsDir) || errs[0] != nil || errs[2] != nil || errs[3] != nil {
		t.Fatalf("revisions %v errors %v, want %v and ErrIsDir for /d only", revs, errs, want)
	}
	checkFiles(ctx, t, []fileWant{{a, "/g", "g3", 3, false}, {a, "/f", "f2", 2, false}, {a, "/new", "n", 1, false}, {b, "/new", "b", 1, false}, {a, "/d", "", 1, true}})
	evs, err := a.EventsSince(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, ev := range evs {
		got = append(got, ev.Path)
		if ev.Seq != r.Seq+int64(i) {
			t.Fatalf("event %d seq %d, want %d (consecutive from %d)", i, ev.Seq, r.Seq+int64(i), r.Seq)
		}
	}
	if want := []string{"/g", "/new", "/f"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck
	if _, _, err := a.WriteFilesTx(ctx, tx, []store.FileWrite{{Path: "/x"}, {Path: "/x"}}); err == nil || !strings.Contains(err.Error(), "/x twice") {
		t.Fatalf("a path twice: %v, want refused", err)
	}
}
