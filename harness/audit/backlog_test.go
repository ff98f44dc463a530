package audit

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// eventlogdTable is eventlogd's fs_events (reference-impl/store/schema.go), shared by its tenants.
const eventlogdTable = `CREATE TABLE fs_events (seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, tenant_id VARCHAR(64) NOT NULL,
	path VARBINARY(1024) NOT NULL, op VARCHAR(32) NOT NULL, actor VARCHAR(64) NOT NULL DEFAULT '', created_at DATETIME(6) NOT NULL,
	KEY idx_fs_events_tenant_seq (tenant_id, seq), KEY idx_fs_events_created (created_at))`

// TestBacklogWritesOldRowsTheAuditIgnores: a backlog has exactly the rows asked for (odd counts and 1
// included), each with its own path under BacklogPrefix, all of the tenant, all at the given time;
// another tenant's rows are untouched, and the run's audit reads none of them.
func TestBacklogWritesOldRowsTheAuditIgnores(t *testing.T) {
	dbs := startServer(t, map[string][]string{"shared_pool": {eventlogdTable,
		"INSERT INTO fs_events (tenant_id, path, op, created_at) VALUES ('t_2','/seqgate/r1/t_2/m1','write',NOW(6))"}})
	db := dbs["shared_pool"]
	ctx := context.Background()
	tb := Table{DB: db, Database: "shared_pool", TenantColumn: "tenant_id"}
	at := time.Date(2026, 11, 30, 1, 2, 3, 456000000, time.UTC)
	tests := []struct {
		tenant string
		rows   int
		want   int // the tenant's backlog rows after this step
	}{
		{"t_1", 1, 1},
		{"t_1", 1000, 1001}, // a second backlog adds rows (its paths repeat the first one's)
		{"t_3", 4097, 4097}, // two full statements and one row
		{"t_4", 0, 0},
	}
	for _, tc := range tests {
		if err := tb.Backlog(ctx, tc.tenant, tc.rows, at); err != nil {
			t.Fatal(err)
		}
		var n, paths int
		var oldest, newest sql.NullTime
		err := db.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT path), MIN(created_at), MAX(created_at)
			FROM fs_events WHERE tenant_id = ? AND path LIKE '/seqgate-backlog/%'`, tc.tenant).Scan(&n, &paths, &oldest, &newest)
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Fatalf("%s: %d backlog rows, want %d", tc.tenant, n, tc.want)
		}
		if n > 0 && (!oldest.Time.Equal(at) || !newest.Time.Equal(at)) {
			t.Errorf("%s: created_at %v..%v, want %v", tc.tenant, oldest, newest, at)
		}
		if tc.tenant == "t_3" && paths != n {
			t.Errorf("%s: %d distinct paths for %d rows", tc.tenant, paths, n)
		}
	}
	var other int
	if err := db.QueryRow(`SELECT COUNT(*) FROM fs_events WHERE tenant_id = 't_2'`).Scan(&other); err != nil || other != 1 {
		t.Fatalf("t_2 has %d rows (%v), want its 1", other, err)
	}
	for _, tenant := range []string{"t_1", "t_3"} {
		s := &ledger.Memory{}
		if n, err := eventlogdRows(ctx, db, tenant, "/seqgate/r1/", s); err != nil || n != 0 {
			t.Fatalf("audit of %s read %d rows (%v): a backlog row is not the run's", tenant, n, err)
		}
	}
}
