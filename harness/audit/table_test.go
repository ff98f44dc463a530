package audit

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/ledger"
)

// startServer starts a private server with the given databases, each set up by its statements.
func startServer(t *testing.T, dbs map[string][]string) map[string]*sql.DB {
	t.Helper()
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	srv, err := dbserver.Start(ctx, dbserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	root, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	out := map[string]*sql.DB{}
	for name, stmts := range dbs {
		if _, err := root.Exec("CREATE DATABASE " + name); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("mysql", srv.DSN(name)+"&parseTime=true")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		for _, q := range stmts {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %s: %v", name, q, err)
			}
		}
		out[name] = db
	}
	return out
}

// drive9's fs_events (pkg/tenant/schema/tidb_app.go): one database per tenant, no tenant column.
const drive9Table = `CREATE TABLE fs_events (seq BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, path TEXT NOT NULL,
	op VARCHAR(64) NOT NULL, actor VARCHAR(255), ts BIGINT NOT NULL, created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))`

func TestTableOnePerTenantDatabase(t *testing.T) {
	dbs := startServer(t, map[string][]string{
		"drive9_aaa": {drive9Table, "INSERT INTO fs_events (path, op, ts) VALUES ('/seqgate/r/a/m1','write',1), ('/other','write',2), ('/seqgate/r/a/m2','mkdir',3)"},
		"drive9_bbb": {drive9Table, "INSERT INTO fs_events (path, op, ts) VALUES ('/seqgate/r/b/m1','write',1)"},
		"drive9_ccc": {drive9Table},
	})
	ctx := context.Background()
	tables := map[string]Table{
		"a": {DB: dbs["drive9_aaa"], Database: "drive9_aaa"},
		"b": {DB: dbs["drive9_bbb"], Database: "drive9_bbb"},
		"c": {DB: dbs["drive9_ccc"], Database: "drive9_ccc"},
	}
	for _, tc := range []struct {
		tenant string
		seqs   []int64
		head   int64
	}{
		{"a", []int64{1, 3}, 3},
		{"b", []int64{1}, 1},
		{"c", nil, 0},
	} {
		tb := tables[tc.tenant]
		if err := tb.Check(ctx); err != nil {
			t.Fatalf("%s: Check: %v", tc.tenant, err)
		}
		s := &ledger.Memory{}
		n, err := tb.Rows(ctx, tc.tenant, "/seqgate/r/"+tc.tenant+"/", s)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, r := range s.Records() {
			if r.Tenant != tc.tenant || r.CreatedUnixNs <= 0 {
				t.Errorf("%s: record %+v", tc.tenant, r)
			}
			seqs = append(seqs, r.Seq)
		}
		if n != len(tc.seqs) || !equal(seqs, tc.seqs) {
			t.Errorf("%s: seqs %v (n=%d), want %v", tc.tenant, seqs, n, tc.seqs)
		}
		if h, err := tb.Head(ctx, tc.tenant); err != nil || h != tc.head {
			t.Errorf("%s: head %d, %v; want %d", tc.tenant, h, err, tc.head)
		}
	}
	o := Run(ctx, []string{"a", "b", "c"}, tables, func(id string) string { return "/seqgate/r/" + id + "/" }, &ledger.Memory{})
	if !o.OK() || o.Tenants != 3 || o.Rows != 3 {
		t.Errorf("Run = %+v, want ok, 3 tenants, 3 rows", o)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCheckNamesWhatIsMissing(t *testing.T) {
	dbs := startServer(t, map[string][]string{
		"shared":  {"CREATE TABLE fs_events (seq BIGINT AUTO_INCREMENT PRIMARY KEY, tenant_id VARCHAR(64), path VARCHAR(255), op VARCHAR(32), created_at DATETIME(6))"},
		"d9":      {drive9Table},
		"empty":   nil,
		"nocreat": {"CREATE TABLE fs_events (seq BIGINT AUTO_INCREMENT PRIMARY KEY, path VARCHAR(255), op VARCHAR(32))"},
	})
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		table   Table
		missing []string // nil: no error; empty: the table is missing
		noTable bool
	}{
		{"tenant column present", Table{DB: dbs["shared"], Database: "shared", TenantColumn: "tenant_id"}, nil, false},
		{"one tenant per database", Table{DB: dbs["d9"], Database: "d9"}, nil, false},
		{"no tenant column in drive9's table", Table{DB: dbs["d9"], Database: "d9", TenantColumn: "tenant_id"}, []string{"tenant_id"}, false},
		{"no table", Table{DB: dbs["empty"], Database: "empty"}, nil, true},
		{"no created_at", Table{DB: dbs["nocreat"], Database: "nocreat"}, []string{"created_at"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.table.Check(ctx)
			if tc.missing == nil && !tc.noTable {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("Check = %v, want a SchemaError", err)
			}
			if tc.noTable != (len(se.Missing) == 0) || !strings.Contains(err.Error(), tc.table.Database) {
				t.Errorf("error %q", err)
			}
			for _, m := range tc.missing {
				if !strings.Contains(err.Error(), "no column "+m) {
					t.Errorf("error %q does not name column %s", err, m)
				}
			}
		})
	}
}

func TestRunReportsADroppedTable(t *testing.T) {
	dbs := startServer(t, map[string][]string{
		"t1": {drive9Table, "INSERT INTO fs_events (path, op, ts) VALUES ('/p/1/x','write',1)"},
		"t2": {drive9Table, "INSERT INTO fs_events (path, op, ts) VALUES ('/p/2/x','write',1)"},
	})
	ctx := context.Background()
	tables := map[string]Table{"1": {DB: dbs["t1"], Database: "t1"}, "2": {DB: dbs["t2"], Database: "t2"}}
	prefix := func(id string) string { return "/p/" + id + "/" }
	if o := Run(ctx, []string{"1", "2"}, tables, prefix, &ledger.Memory{}); !o.OK() || o.Rows != 2 {
		t.Fatalf("control: %+v", o)
	}
	if _, err := dbs["t2"].Exec("DROP TABLE fs_events"); err != nil {
		t.Fatal(err)
	}
	o := Run(ctx, []string{"1", "2", "3"}, tables, prefix, &ledger.Memory{})
	if o.OK() || o.Tenants != 1 || o.Rows != 1 {
		t.Fatalf("after the drop: %+v, want not ok, 1 tenant, 1 row", o)
	}
	for _, want := range []string{"2 of 3 tenants", "database t2", "tenant 3: no database"} {
		if !strings.Contains(o.Err.Error(), want) {
			t.Errorf("error %q does not say %q", o.Err, want)
		}
	}
}
