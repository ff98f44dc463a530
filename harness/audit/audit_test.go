package audit

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/ledger"
)

func TestAuditReadsOnlyTheRunsRows(t *testing.T) {
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	srv, err := dbserver.Start(ctx, dbserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	root, _ := sql.Open("mysql", srv.DSN(""))
	defer root.Close()
	if _, err := root.Exec("CREATE DATABASE shared_pool"); err != nil {
		t.Fatal(err)
	}
	db, _ := sql.Open("mysql", srv.DSN("shared_pool"))
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE fs_events (seq BIGINT AUTO_INCREMENT PRIMARY KEY, tenant_id VARCHAR(64), path VARCHAR(1024), op VARCHAR(32), actor VARCHAR(64), created_at DATETIME(6))",
		"INSERT INTO fs_events (tenant_id, path, op, created_at) VALUES ('t_1','/seqgate/r_1/t_1/m1','write',NOW(6)), ('t_2','/seqgate/r_1/t_2/m1','write',NOW(6)), ('t_1','/seqgate/rX1/t_1/m2','write',NOW(6)), ('t_1','/seqgate/r_1/t_1/m3','mkdir',NOW(6)), ('t_1','/other','write',NOW(6))",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		tenant string
		seqs   []int64
		head   int64
	}{
		{"t_1", []int64{1, 4}, 5}, // the underscore of r_1 must not match rX1 (LIKE escaping)
		{"t_2", []int64{2}, 2},
		{"t_9", nil, 0},
	}
	for _, tc := range tests {
		s := &ledger.Memory{}
		n, err := eventlogdRows(ctx, db, tc.tenant, "/seqgate/r_1/", s)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, r := range s.Records() {
			if r.K != ledger.KindPersisted || r.Tenant != tc.tenant || r.CreatedUnixNs <= 0 {
				t.Errorf("record %+v", r)
			}
			seqs = append(seqs, r.Seq)
		}
		if n != len(tc.seqs) || len(seqs) != len(tc.seqs) {
			t.Errorf("%s: seqs %v, want %v", tc.tenant, seqs, tc.seqs)
			continue
		}
		for i := range seqs {
			if seqs[i] != tc.seqs[i] {
				t.Errorf("%s: seqs %v, want %v", tc.tenant, seqs, tc.seqs)
			}
		}
		h, err := eventlogdHead(ctx, db, tc.tenant)
		if err != nil || h != tc.head {
			t.Errorf("%s head = %d, %v; want %d", tc.tenant, h, err, tc.head)
		}
	}
	if !Wait(ctx, time.Second, time.Millisecond, func(context.Context) bool { return true }) {
		t.Error("Wait on a reached condition returned false")
	}
	if Wait(ctx, 20*time.Millisecond, time.Millisecond, func(context.Context) bool { return false }) {
		t.Error("Wait on an unreachable condition returned true")
	}
}

// eventlogdHead is Table.Head for a database that names tenants in a tenant_id column (eventlogd's
// layout).
func eventlogdHead(ctx context.Context, db *sql.DB, tenant string) (int64, error) {
	return Table{DB: db, TenantColumn: "tenant_id"}.Head(ctx, tenant)
}

// eventlogdRows is Table.Rows for a database that names tenants in a tenant_id column (eventlogd's
// layout).
func eventlogdRows(ctx context.Context, db *sql.DB, tenant, prefix string, sink ledger.Sink) (int, error) {
	return Table{DB: db, TenantColumn: "tenant_id"}.Rows(ctx, tenant, prefix, sink)
}
