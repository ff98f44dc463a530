package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
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
	"github.com/seqgate/seqgate/internal/wait"
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
	return groupTenants(t, "")
}

// roundTrips counts the commands clients send on connections dialled through the "counted" network
// (a DSN's tcp(...) renamed counted(...)): the driver writes each command in one Write.
var roundTrips atomic.Int64

type countedConn struct{ net.Conn }

func (c countedConn) Write(p []byte) (int, error) {
	roundTrips.Add(1)
	return c.Conn.Write(p)
}

func init() {
	mysql.RegisterDialContext("counted", func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return countedConn{c}, nil
	})
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
// path twice is refused before any statement. The same for both ways a group commits: its
// statements one by one in a transaction (WriteFilesTx in CommitJoinedMany) and multi-statement
// round trips on the group handle (CommitGroup), under each guard: one round trip for a group
// without a directory, three when the round trip's check finds one (nodir: the group without /d).
func TestWriteFilesTxRevisions(t *testing.T) {
	for _, c := range []struct {
		commit string
		g      store.Guard
		nodir  bool
	}{{"tx", store.GuardHorizon, false}, {"group", store.GuardHorizon, false}, {"group", store.GuardLock, false}, {"group", store.GuardNone, false},
		{"tx", store.GuardHorizon, true}, {"group", store.GuardHorizon, true}, {"group", store.GuardLock, true}, {"group", store.GuardNone, true}} {
		t.Run(fmt.Sprintf("%s/%s/nodir=%v", c.commit, c.g, c.nodir), func(t *testing.T) {
			ctx, db, a, b := countedTenants(t)
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
			wantRevs := []int64{3, 0, 1, 2}
			if c.nodir {
				files = slices.Delete(files, 1, 2)
				wantRevs = slices.Delete(wantRevs, 1, 2)
			}
			var revs []int64
			var errs []error
			var r store.Joined
			var err error
			if c.commit == "group" {
				if err := a.GroupDB.PingContext(ctx); err != nil { // its connection opened, idle in the pool
					t.Fatal(err)
				}
				n0 := roundTrips.Load()
				revs, errs, r, err = a.CommitGroup(ctx, files, groupEvents(files), c.g)
				// One round trip unless the group has a directory (its check stops the first: the
				// revisions, then the events and the COMMIT) or the late-commit defect's guard (the
				// upsert and the revisions, the events, the COMMIT).
				want := int64(1)
				if !c.nodir || c.g == store.GuardNone {
					want = 3
				}
				if n := roundTrips.Load() - n0; n != want {
					t.Errorf("%d round trips, want %d", n, want)
				}
			} else {
				r, err = a.CommitJoinedMany(ctx, func(ctx context.Context, tx *sql.Tx) ([]store.Event, error) {
					var err error
					if revs, errs, err = a.WriteFilesTx(ctx, tx, files); err != nil {
						return nil, err
					}
					return owed(files, errs), nil
				}, c.g)
			}
			if err != nil || r.EventErr != nil {
				t.Fatal(err, r.EventErr)
			}
			for i, f := range files {
				if dir := f.Path == "/d"; revs[i] != wantRevs[i] || dir != errors.Is(errs[i], store.ErrIsDir) || !dir && errs[i] != nil {
					t.Fatalf("revisions %v errors %v, want %v and ErrIsDir for /d only", revs, errs, wantRevs)
				}
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
			openTransactions(ctx, t, db, 0)
			if c.commit == "group" {
				if _, _, _, err := a.CommitGroup(ctx, []store.FileWrite{{Path: "/x"}, {Path: "/x"}}, nil, c.g); err == nil || !strings.Contains(err.Error(), "/x twice") {
					t.Fatalf("a path twice: %v, want refused", err)
				}
				return
			}
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck
			if _, _, err := a.WriteFilesTx(ctx, tx, []store.FileWrite{{Path: "/x"}, {Path: "/x"}}); err == nil || !strings.Contains(err.Error(), "/x twice") {
				t.Fatalf("a path twice: %v, want refused", err)
			}
		})
	}
}

// groupEvents is the events a write group owes, one write per file (CommitGroup inserts those of
// the files written).
func groupEvents(files []store.FileWrite) []store.Event {
	evs := make([]store.Event, len(files))
	for i, f := range files {
		evs[i] = store.Event{Path: f.Path, Op: "write", CreatedAt: time.Now()}
	}
	return evs
}

// owed is the events a group of files owes: one write per file written (no error).
func owed(files []store.FileWrite, errs []error) []store.Event {
	var evs []store.Event
	for i, f := range files {
		if errs[i] == nil {
			evs = append(evs, store.Event{Path: f.Path, Op: "write", CreatedAt: time.Now()})
		}
	}
	return evs
}

// TestCommitGroupFailures: what a write group committed in two round trips leaves when a statement
// fails, and that its connection goes back to the pool with no transaction open.
//   - The events' insert fails with the transaction alive (a lock wait on the tenant's sequence row
//     under the lock guard, held by another transaction): the files commit alone, with the error in
//     EventErr and no event row (the caller buffers the events). Control: with the row free, the
//     same group commits its events.
//   - The upsert fails (a path longer than the column): nothing of the group is written.
func TestCommitGroupFailures(t *testing.T) {
	// A dedicated pool: its group connections read in blocking system calls (the other tests of
	// groups run on a shared pool's, on the poller).
	ctx, db, a, _ := groupTenantsOn(t, store.RoleDedicated, "&innodb_lock_wait_timeout=1", func(dsn string) string { return dsn })
	files := []store.FileWrite{{Path: "/a", Content: []byte("1")}, {Path: "/b", Content: []byte("2")}}
	if _, err := a.InsertEvent(ctx, store.Event{Path: "/first", Op: "write", CreatedAt: time.Now()}, store.GuardLock); err != nil {
		t.Fatal(err) // creates the tenant's sequence row
	}
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, `UPDATE fs_event_seq_lock SET n = n + 1 WHERE tenant_id = ?`, a.TenantID); err != nil {
		t.Fatal(err)
	}
	revs, errs, r, err := a.CommitGroup(ctx, files, groupEvents(files), store.GuardLock)
	if err != nil || !store.IsLockConflict(r.EventErr) || r.Seq != 0 || !slices.Equal(revs, []int64{1, 1}) || errs[0] != nil || errs[1] != nil {
		t.Fatalf("events' insert held: revs %v errs %v joined %+v err %v; want the files committed, EventErr a lock wait", revs, errs, r, err)
	}
	checkFiles(ctx, t, []fileWant{{a, "/a", "1", 1, false}, {a, "/b", "2", 1, false}})
	openTransactions(ctx, t, db, 1) // the holder's only
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if evs, _ := a.EventsSince(ctx, 0, 10); len(evs) != 1 {
		t.Fatalf("%d event rows after the failed insert, want 1 (/first)", len(evs))
	}
	revs, _, r, err = a.CommitGroup(ctx, files, groupEvents(files), store.GuardLock)
	if err != nil || r.EventErr != nil || r.Seq == 0 || !slices.Equal(revs, []int64{2, 2}) {
		t.Fatalf("control, row free: revs %v joined %+v err %v; want revisions 2 and the events", revs, r, err)
	}
	if evs, _ := a.EventsSince(ctx, 0, 10); len(evs) != 3 {
		t.Fatalf("%d event rows after the control, want 3", len(evs))
	}

	long := []store.FileWrite{{Path: "/c", Content: []byte("3")}, {Path: "/" + strings.Repeat("x", 2000), Content: []byte("4")}}
	if _, _, _, err := a.CommitGroup(ctx, long, groupEvents(long), store.GuardLock); err == nil {
		t.Fatal("a path longer than the column: committed, want refused")
	}
	if _, err := a.ReadFile(ctx, "/c"); !errors.Is(err, store.ErrNoSuchPath) {
		t.Fatalf("/c after the failed group: %v, want not found (nothing of the group written)", err)
	}
	openTransactions(ctx, t, db, 0)
}

// countedTenants is twoTenantsWithDir on connections that count their round trips (roundTrips).
func countedTenants(t *testing.T) (context.Context, *sql.DB, *store.TenantStore, *store.TenantStore) {
	return groupTenantsAt(t, "", func(dsn string) string { return strings.Replace(dsn, "@tcp(", "@counted(", 1) })
}

// groupTenants is twoTenantsWithDir on a pool's handles (the group handle too), its DSN with
// params appended.
func groupTenants(t *testing.T, params string) (context.Context, *sql.DB, *store.TenantStore, *store.TenantStore) {
	return groupTenantsAt(t, params, func(dsn string) string { return dsn })
}

func groupTenantsAt(t *testing.T, params string, dsnOf func(string) string) (context.Context, *sql.DB, *store.TenantStore, *store.TenantStore) {
	return groupTenantsOn(t, store.RoleShared, params, dsnOf)
}

// groupTenantsOn is groupTenantsAt on a pool of role.
func groupTenantsOn(t *testing.T, role, params string, dsnOf func(string) string) (context.Context, *sql.DB, *store.TenantStore, *store.TenantStore) {
	t.Helper()
	ctx := testCtx(t)
	name := fmt.Sprintf("st%d", n.Add(1))
	pools := store.NewPools([]store.PoolSpec{{ID: name, Role: role, DSN: dsnOf(srv.DSN(name)) + params}}, store.PoolOptions{MaxOpen: 4, GroupMaxOpen: 1})
	t.Cleanup(pools.Close)
	db, err := pools.Acquire(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	gdb, err := pools.AcquireGroup(ctx, name)
	if err != nil || gdb == nil {
		t.Fatalf("group handle: %v %v", gdb, err)
	}
	a := &store.TenantStore{DB: db, GroupDB: gdb, TenantID: "a"}
	b := &store.TenantStore{DB: db, GroupDB: gdb, TenantID: "b"}
	if err := a.Mkdir(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	return ctx, db, a, b
}

// openTransactions fails t unless the server has want transactions open in db's database. The
// server refreshes information_schema.innodb_trx only when it was not read for 0.1 s: it is read
// every 0.15 s until it says want, for up to 1.5 s (a transaction left open on an idle pooled
// connection stays open).
func openTransactions(ctx context.Context, t *testing.T, db *sql.DB, want int) {
	t.Helper()
	var got int
	if wait.UntilEvery(1500*time.Millisecond, 150*time.Millisecond, func() bool {
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.innodb_trx t JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id WHERE p.db = DATABASE()`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got == want
	}) {
		return
	}
	var open []string
	rows, err := db.QueryContext(ctx, `SELECT CONCAT('thread ', p.id, ' since ', t.trx_started, ', ', t.trx_rows_modified, ' rows modified, query: ', COALESCE(t.trx_query, '-')) FROM information_schema.innodb_trx t JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id WHERE p.db = DATABASE()`)
	for err == nil && rows.Next() {
		var s string
		_ = rows.Scan(&s)
		open = append(open, s)
	}
	t.Fatalf("%d transactions open, want %d (this check's thread %d): %v", got, want, threadID(ctx, t, db), open)
}

func threadID(ctx context.Context, t *testing.T, db *sql.DB) int64 {
	var id int64
	if err := db.QueryRowContext(ctx, `SELECT CONNECTION_ID()`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestGroupConnectionsReadBlocking: a dedicated pool's write-group connections read in blocking
// system calls (blockingconn_linux.go), a shared pool's do not, and the driver still works them as
// it does its own:
//   - a pooled connection the server closed (KILL) is found dead before the next group's
//     statements and replaced, so the group commits (without the liveness check the group would be
//     written to the dead connection and fail);
//   - a group blocked on a row lock ends when its context does, with the context's error, long
//     before the server's lock wait would (the driver closes the connection, which wakes the read);
//     control: the next group commits.
func TestGroupConnectionsReadBlocking(t *testing.T) {
	files := []store.FileWrite{{Path: "/a", Content: []byte("1")}, {Path: "/b", Content: []byte("2")}}
	for _, role := range []string{store.RoleShared, store.RoleDedicated} {
		ctx, _, a, _ := groupTenantsOn(t, role, "", func(dsn string) string { return dsn })
		n0 := store.BlockingOpen()
		if _, _, _, err := a.CommitGroup(ctx, files, groupEvents(files), store.GuardHorizon); err != nil {
			t.Fatal(err)
		}
		if n, want := store.BlockingOpen()-n0, map[string]int64{store.RoleShared: 0, store.RoleDedicated: 1}[role]; n != want {
			t.Fatalf("%s pool: %d blocking connections opened by its group handle, want %d", role, n, want)
		}
	}
	ctx, db, a, _ := groupTenantsOn(t, store.RoleDedicated, "", func(dsn string) string { return dsn })
	if _, _, _, err := a.CommitGroup(ctx, files, groupEvents(files), store.GuardHorizon); err != nil {
		t.Fatal(err)
	}
	victim := threadID(ctx, t, a.GroupDB) // the handle's one connection (GroupMaxOpen 1)
	if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL %d", victim)); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "the killed connection gone", func() bool {
		var n int
		return db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?`, victim).Scan(&n) == nil && n == 0
	})
	revs, _, _, err := a.CommitGroup(ctx, files, groupEvents(files), store.GuardHorizon)
	if err != nil || !slices.Equal(revs, []int64{2, 2}) {
		t.Fatalf("group after its connection was killed: revs %v err %v, want committed on a new connection", revs, err)
	}

	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback() //nolint:errcheck
	if _, err := holder.ExecContext(ctx, `UPDATE files SET content = 'h' WHERE tenant_id = ? AND path = '/a'`, a.TenantID); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, _, _, err = a.CommitGroup(short, files, groupEvents(files), store.GuardHorizon)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("group held on a row lock past its context (%v later): %v, want the context's deadline", time.Since(t0), err)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The cancelled group's answer was lost, not its statements: the server runs its round trip to
	// the COMMIT once the lock is free, so the next group's revisions are 3 or 4 (an unanswered
	// write may have committed, as after any answer lost on the way; docs/eventlogd.md).
	if revs, _, _, err := a.CommitGroup(ctx, files, groupEvents(files), store.GuardHorizon); err != nil || len(revs) != 2 || revs[0] < 3 || revs[0] > 4 || revs[1] != revs[0] {
		t.Fatalf("group after the cancelled one: revs %v err %v, want revisions 3 or 4", revs, err)
	}
}
