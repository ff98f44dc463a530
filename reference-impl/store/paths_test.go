package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestEventPathsRoundTripByteForByte: fs_events.path holds exactly what files.path holds (both
// binary-safe), so any path the files table accepted has an event that can be inserted and read
// back unchanged.
func TestEventPathsRoundTripByteForByte(t *testing.T) {
	ctx := testCtx(t)
	db := tenantDB(t)
	st := &store.TenantStore{DB: db, TenantID: "t"}
	paths := []string{"/plain", "/日本", "/dir/café/😀", "/bad\xffname", "/x\xe6\x97"}
	for _, p := range paths {
		if _, err := st.WriteFile(ctx, p, []byte("x")); err != nil {
			t.Fatalf("write file %q: %v", p, err)
		}
		if _, err := st.InsertEvent(ctx, store.Event{Path: p, Op: "write", CreatedAt: time.Now()}, store.GuardLock); err != nil {
			t.Fatalf("insert event %q: %v", p, err)
		}
	}
	evs, err := st.EventsSince(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(paths) {
		t.Fatalf("read %d events, want %d", len(evs), len(paths))
	}
	for i, e := range evs {
		if e.Path != paths[i] {
			t.Fatalf("event %d path %q, want %q byte for byte", i, e.Path, paths[i])
		}
	}
}

// TestMigrateTenantMakesOldEventPathBinary: a tenant DB created by an older eventlogd (fs_events.path
// a VARCHAR in the server's default charset) is migrated so that its events take non-ASCII paths.
func TestMigrateTenantMakesOldEventPathBinary(t *testing.T) {
	ctx := testCtx(t)
	db := tenantDB(t)
	if _, err := db.ExecContext(ctx, `ALTER TABLE fs_events MODIFY COLUMN path VARCHAR(1024) CHARACTER SET latin1 NOT NULL`); err != nil {
		t.Fatal(err)
	}
	st := &store.TenantStore{DB: db, TenantID: "t"}
	_, err := st.InsertEvent(ctx, store.Event{Path: "/日本", Op: "write", CreatedAt: time.Now()}, store.GuardLock)
	if err == nil {
		t.Fatal("negative control: the old latin1 column took /日本")
	}
	if !store.IsPermanent(err) {
		t.Fatalf("IsPermanent(%v) = false for a string the column cannot hold", err)
	}
	if err := store.MigrateTenant(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := st.InsertEvent(ctx, store.Event{Path: "/日本", Op: "write", CreatedAt: time.Now()}, store.GuardLock); err != nil {
		t.Fatalf("after migration: %v", err)
	}
	var typ string
	if err := db.QueryRowContext(ctx, `SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'fs_events' AND COLUMN_NAME = 'path'`).Scan(&typ); err != nil || typ != "varbinary" {
		t.Fatalf("fs_events.path is %q (%v), want varbinary", typ, err)
	}
}

func TestIsPermanent(t *testing.T) {
	ctx := testCtx(t)
	db := tenantDB(t)
	_, dataErr := db.ExecContext(ctx, `INSERT INTO fs_events (tenant_id, path, op, created_at) VALUES ('t', '/p', REPEAT('x', 100), NOW())`)
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"data too long (real)", dataErr, true},
		{"wrapped data error", fmt.Errorf("insert: %w", dataErr), true},
		{"nil", nil, false},
		{"deadline", ctxErr(), false},
		{"other", errors.New("connection refused"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := store.IsPermanent(c.err); got != c.want {
				t.Fatalf("IsPermanent(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

func ctxErr() error {
	return fmt.Errorf("query: %w", errors.New("context deadline exceeded"))
}

// TestMigrateTenantAddsSourcePath: a pool created before tenant schema 3 has no fs_events.src_path,
// so an insert carrying a rename's source fails; MigrateTenant adds the column (twice is a no-op)
// and the source then round-trips through EventsPage.
func TestMigrateTenantAddsSourcePath(t *testing.T) {
	ctx := testCtx(t)
	db := tenantDB(t)
	if _, err := db.ExecContext(ctx, `ALTER TABLE fs_events DROP COLUMN src_path`); err != nil {
		t.Fatal(err)
	}
	st := &store.TenantStore{DB: db, TenantID: "t"}
	ev := store.Event{Path: "/new", Op: "rename", Src: "/old", CreatedAt: time.Now()}
	if _, err := st.InsertEvent(ctx, ev, store.GuardLock); err == nil {
		t.Fatal("negative control: a schema-2 table took src_path")
	}
	for i := 0; i < 2; i++ {
		if err := store.MigrateTenant(ctx, db); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	seq, err := st.InsertEvent(ctx, ev, store.GuardLock)
	if err != nil {
		t.Fatalf("after migration: %v", err)
	}
	evs, _, err := st.EventsPage(ctx, seq-1, 10)
	if err != nil || len(evs) != 1 || evs[0].Src != "/old" || evs[0].Path != "/new" {
		t.Fatalf("read back %+v (%v), want src /old", evs, err)
	}
}
