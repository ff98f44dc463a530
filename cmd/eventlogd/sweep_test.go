package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

func TestParseBefore(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	cases := []struct {
		in, want, err string
	}{
		{"2026-11-24T00:00:00Z", "2026-11-24T00:00:00Z", ""},
		{"2026-11-24T01:00:00+01:00", "2026-11-24T00:00:00Z", ""},
		{"168h", "2026-11-24T03:00:00Z", ""},
		{"1h", "2026-12-01T02:00:00Z", ""},
		{"", "", "--before is required"},
		{"yesterday", "", `--before "yesterday": not an RFC 3339 time`},
		{"-1h", "", `--before "-1h": not an RFC 3339 time`},
		{"0s", "", `--before "0s"`},
	}
	for _, c := range cases {
		got, err := parseBefore(c.in, now)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got.Format(time.RFC3339) != c.want {
			t.Errorf("%q: %v %v, want %s", c.in, got, err, c.want)
		}
	}
}

// TestSweepCommand runs `eventlogd sweep` against a private MariaDB: two dedicated pools and a
// shared one hold rows from 3 h and 10 min ago; `--before 1h` deletes exactly the old ones in several
// passes (batch 2, 1 batch per pass), raises each tenant's sweep mark (so a stream behind it gets
// seq_too_old); a pool whose database does not exist is reported, not created, and one without
// the schema is reported.
func TestSweepCommand(t *testing.T) {
	ctx, srv := privateDB(t)
	specs := []store.PoolSpec{
		{ID: "d1", Role: store.RoleDedicated, DSN: srv.DSN("sweep_d1")},
		{ID: "d2", Role: store.RoleDedicated, DSN: srv.DSN("sweep_d2")},
		{ID: "sh", Role: store.RoleShared, DSN: srv.DSN("sweep_sh")},
		{ID: "gone", Role: store.RoleDedicated, DSN: srv.DSN("sweep_never_created")},
		{ID: "empty", Role: store.RoleDedicated, DSN: srv.DSN("sweep_empty")},
	}
	old, recent := time.Now().Add(-3*time.Hour), time.Now().Add(-10*time.Minute)
	seed := map[string][]string{"d1": {"t1"}, "d2": {"t2"}, "sh": {"t3", "t4"}}
	for _, spec := range specs[:3] {
		db, err := store.OpenDB(ctx, spec.DSN)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.MigrateTenant(ctx, db); err != nil {
			t.Fatal(err)
		}
		for _, tenant := range seed[spec.ID] {
			st := &store.TenantStore{DB: db, TenantID: tenant}
			for i, at := range []time.Time{old, old, old, recent, old, recent} {
				if _, err := st.InsertEvent(ctx, store.Event{Path: "/f" + string(rune('a'+i)), Op: "write", CreatedAt: at}, store.GuardLock); err != nil {
					t.Fatal(err)
				}
			}
		}
		db.Close()
	}
	if db, err := store.OpenDB(ctx, specs[4].DSN); err != nil { // a database without the schema
		t.Fatal(err)
	} else {
		db.Close()
	}
	dir := t.TempDir()
	poolsFile := filepath.Join(dir, "pools.json")
	b, _ := json.Marshal(map[string]any{"pools": specs})
	if err := os.WriteFile(poolsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := run([]string{"sweep", "--before", "1h", "--pools", poolsFile, "--batch", "2", "--max-batches", "1"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("sweep: %v\n%s", err, out.String())
	}
	for _, want := range []string{"pool d1: pass 1 deleted 2 rows in 1 batches", "pool d1: pass 3", "pool gone: no database, nothing to sweep",
		"pool empty: no fs_events table, nothing to sweep", "done: 16 rows deleted in 5 pool(s)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	for _, spec := range specs[:3] {
		db, err := store.OpenExisting(ctx, spec.DSN)
		if err != nil {
			t.Fatal(err)
		}
		for _, tenant := range seed[spec.ID] {
			var left, oldLeft int
			var mark int64
			_ = db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(created_at < ?), 0) FROM fs_events WHERE tenant_id = ?`, time.Now().UTC().Add(-time.Hour), tenant).Scan(&left, &oldLeft)
			_ = db.QueryRowContext(ctx, `SELECT COALESCE(MAX(swept_through), 0) FROM fs_events_sweep_mark WHERE tenant_id = ?`, tenant).Scan(&mark)
			if left != 2 || oldLeft != 0 || mark == 0 {
				t.Errorf("pool %s tenant %s: %d rows left (%d old), sweep mark %d; want the 2 recent rows and a raised mark", spec.ID, tenant, left, oldLeft, mark)
			}
		}
		db.Close()
	}
	if _, err := store.OpenExisting(ctx, specs[3].DSN); err == nil {
		t.Error("the sweep created the missing pool's database")
	}

	// Bad input is named.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--pools", poolsFile}, "--before is required"},
		{[]string{"sweep", "--before", "1h"}, "give --pools FILE or --meta-dsn DSN"},
		{[]string{"sweep", "--before", "1h", "--pools", poolsFile, "--pool", "nope"}, `--pool "nope": not in the pools (allowed: [d1 d2 sh gone empty])`},
		{[]string{"sweep", "--before", "1h", "--pools", poolsFile, "--batch", "0"}, "--batch 0, --max-batches 20: both must be positive"},
		{[]string{"sweep", "--before", "1h", "--pools", poolsFile, "extra"}, `sweep: unexpected argument "extra"`},
	} {
		if err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
