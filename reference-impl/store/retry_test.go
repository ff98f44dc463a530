package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestInsertEventSurvivesDeadlock makes an event insert the victim of a real InnoDB deadlock on
// purpose: a heavier transaction holds the gap the insert needs and then asks for the tenant's
// fs_event_seq_lock row the insert holds. InnoDB rolls the insert's transaction back (1213); the
// insert must run again and succeed rather than fail (a failed hot insert goes to the retry buffer
// and a failed mutation statement answers 503).
func TestInsertEventSurvivesDeadlock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := tenantDB(t)
	// Two stores of one process with their own counters (as two pods have): only the one whose
	// insert is the deadlock victim counts a retry.
	var mine, theirs store.RetryCount
	st := &store.TenantStore{DB: db, TenantID: "a", Retries: &mine}
	bystander := &store.TenantStore{DB: db, TenantID: "b", Retries: &theirs}
	if _, err := st.InsertEvent(ctx, store.Event{Path: "/first", Op: "write", CreatedAt: time.Now()}, store.GuardLock); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE heavy (id INT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	before := mine.Load()

	other, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	// Weight: InnoDB rolls back the transaction that changed fewer rows; make that the insert's.
	vals := make([]string, 300)
	for i := range vals {
		vals[i] = "(" + itoa(i+1) + ")"
	}
	if _, err := other.ExecContext(ctx, `INSERT INTO heavy (id) VALUES `+strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
	// Gap lock after tenant a's last event: the next insert of tenant a waits for it.
	rows, err := other.QueryContext(ctx, `SELECT seq FROM fs_events WHERE tenant_id = 'a' AND seq > 0 FOR UPDATE`)
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()

	type result struct {
		seq int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		seq, err := st.InsertEvent(ctx, store.Event{Path: "/second", Op: "write", CreatedAt: time.Now()}, store.GuardLock)
		done <- result{seq, err}
	}()
	waitLockWait(t, ctx, db, done)
	// Now ask for the seq lock row the insert holds: a cycle, the insert is the victim.
	if _, err := other.ExecContext(ctx, `UPDATE fs_event_seq_lock SET n = n + 1 WHERE tenant_id = 'a'`); err != nil {
		t.Fatalf("the heavy transaction was the victim, the set-up did not work: %v", err)
	}
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("InsertEvent failed on a deadlock instead of retrying: %v", r.err)
		}
		if r.seq <= 1 {
			t.Fatalf("seq %d, want > 1", r.seq)
		}
	case <-ctx.Done():
		t.Fatal("timed out waiting for the retried InsertEvent")
	}
	if mine.Load() == before {
		t.Fatal("no retry was counted: the insert was never a deadlock victim (the test proves nothing)")
	}
	if _, err := bystander.InsertEvent(ctx, store.Event{Path: "/b", Op: "write", CreatedAt: time.Now()}, store.GuardLock); err != nil {
		t.Fatal(err)
	}
	if n := theirs.Load(); n != 0 {
		t.Fatalf("the bystander store counts %d retries: another store's retries leak into its count", n)
	}
}

// waitLockWait waits until the goroutine's fs_events insert has been waiting in the server for
// 100 ms (a lock wait: an unblocked insert takes well under a millisecond; if it was not a lock
// wait after all, no deadlock happens and the retry-count assertion fails the test).
func waitLockWait[T any](t *testing.T, ctx context.Context, db *sql.DB, done chan T) {
	t.Helper()
	for {
		var n int
		err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'INSERT INTO fs_events%' AND TIME_MS > 100`).Scan(&n)
		if err != nil {
			t.Fatalf("waiting for the insert to block on the gap lock: %v", err)
		}
		if n > 0 {
			return
		}
		select {
		case r := <-done:
			t.Fatalf("the insert did not block on the gap lock: %+v", r)
		case <-ctx.Done():
			t.Fatal("timed out waiting for the insert to block on the gap lock")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}

// TestMkdirSurvivesLockWaitTimeout holds, in another transaction, the row lock a mkdir needs for
// longer than the server's lock wait timeout (set to 1 s for this test): the mkdir's INSERT gets
// 1205 and must run again, succeeding once the holder rolls back, instead of failing the mutation.
func TestMkdirSurvivesLockWaitTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, `SET GLOBAL innodb_lock_wait_timeout = 1`); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(`SET GLOBAL innodb_lock_wait_timeout = 50`)
	db := tenantDB(t) // new connections: they take the 1 s timeout
	var retries store.RetryCount
	st := &store.TenantStore{DB: db, TenantID: "a", Retries: &retries}
	before := retries.Load()

	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	// An uncommitted insert of the same key: the mkdir's duplicate check waits for its lock.
	if _, err := holder.ExecContext(ctx, `INSERT INTO files (tenant_id, path, is_dir, mode, revision, content, updated_at) VALUES ('a', '/dir', 0, 420, 1, '', NOW())`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- st.Mkdir(ctx, "/dir") }()
	// Roll the holder back only after the mkdir's first attempt timed out (and was retried).
	deadline := time.Now().Add(20 * time.Second)
	for retries.Load() == before {
		select {
		case err := <-done:
			t.Fatalf("mkdir returned while the row was locked: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the mkdir's lock wait timeout to be retried")
		}
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mkdir failed after a lock wait timeout instead of retrying: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("timed out waiting for the retried mkdir")
	}
	f, err := st.ReadFile(ctx, "/dir")
	if err != nil || !f.IsDir {
		t.Fatalf("after mkdir: %+v %v", f, err)
	}
}

// TestIsAmbiguous: only an error the server did not send may have left a statement committed.
func TestIsAmbiguous(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"server error", &mysql.MySQLError{Number: 1062}, false},
		{"wrapped server error", fmt.Errorf("insert: %w", &mysql.MySQLError{Number: 1205}), false},
		{"timeout", context.DeadlineExceeded, true},
		{"lost connection", mysql.ErrInvalidConn, true},
		{"closed pool", sql.ErrConnDone, true},
	} {
		if got := store.IsAmbiguous(c.err); got != c.want {
			t.Errorf("%s: IsAmbiguous(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
