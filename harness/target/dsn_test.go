package target

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/ledger"
)

func TestServerDSNAddsWhatTheAuditNeeds(t *testing.T) {
	for _, tc := range []struct {
		dsn       string
		read, dia time.Duration
	}{
		{dsn: "root@tcp(127.0.0.1:4000)/", read: IOTimeout, dia: DialTimeout},
		{dsn: "u:p@tcp(h:1)/other?readTimeout=2s&timeout=1s&parseTime=false", read: 2 * time.Second, dia: time.Second},
	} {
		s, err := ParseServer(tc.dsn)
		if err != nil {
			t.Fatal(err)
		}
		c, err := mysql.ParseDSN(s.DSN("drive9_x"))
		if err != nil {
			t.Fatal(err)
		}
		if !c.ParseTime || c.DBName != "drive9_x" || c.ReadTimeout != tc.read || c.WriteTimeout != IOTimeout || c.Timeout != tc.dia {
			t.Errorf("%s -> %+v", tc.dsn, c)
		}
	}
	if _, err := ParseServer("not a dsn"); err == nil || !strings.Contains(err.Error(), `--dsn "not a dsn"`) {
		t.Errorf("bad --dsn: %v", err)
	}
}

const drive9Table = `CREATE TABLE fs_events (seq BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, path TEXT NOT NULL,
	op VARCHAR(64) NOT NULL, actor VARCHAR(255), ts BIGINT NOT NULL, created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))`

const eventlogdTable = `CREATE TABLE fs_events (seq BIGINT AUTO_INCREMENT PRIMARY KEY, tenant_id VARCHAR(64) NOT NULL,
	path VARCHAR(1024) NOT NULL, op VARCHAR(32) NOT NULL, actor VARCHAR(64) NOT NULL DEFAULT '', created_at DATETIME(6) NOT NULL)`

func TestOpenChecksEachTenantsDatabase(t *testing.T) {
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	srv, err := dbserver.Start(ctx, dbserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	root, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, q := range []string{
		"CREATE DATABASE drive9_aa", "CREATE DATABASE drive9_bb", "CREATE DATABASE pool_1", "CREATE DATABASE drive9_empty",
		"CREATE TABLE drive9_aa." + strings.TrimPrefix(drive9Table, "CREATE TABLE "),
		"CREATE TABLE drive9_bb." + strings.TrimPrefix(drive9Table, "CREATE TABLE "),
		"CREATE TABLE pool_1." + strings.TrimPrefix(eventlogdTable, "CREATE TABLE "),
		"INSERT INTO drive9_aa.fs_events (path, op, ts) VALUES ('/s/r/a-a/1','write',1)",
		"INSERT INTO pool_1.fs_events (tenant_id, path, op, created_at) VALUES ('x','/s/r/x/1','write',NOW(6)), ('y','/s/r/y/1','write',NOW(6))",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The user types no parseTime: the DSN seqgate builds has it, or the created_at scan fails.
	server, err := ParseServer(srv.UserDSN())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		o       Options
		tenants []Tenant
		err     []string
		rows    map[string]int
	}{
		{name: "drive9: a database per tenant", o: Options{Service: perTenant}, tenants: []Tenant{{ID: "a-a"}, {ID: "b-b"}},
			rows: map[string]int{"a-a": 1, "b-b": 0}},
		{name: "drive9: tenant database without fs_events", o: Options{Service: perTenant}, tenants: []Tenant{{ID: "a-a"}, {ID: "empty"}},
			err: []string{"target profile per-tenant", "tenant empty", "database drive9_empty has no table fs_events"}},
		{name: "drive9: tenant database missing", o: Options{Service: perTenant}, tenants: []Tenant{{ID: "zz"}},
			err: []string{"tenant zz", "there is no database drive9_zz"}},
		{name: "eventlogd: one pool, a tenant column", o: Options{Service: pooled}, tenants: []Tenant{{ID: "x", Pool: "pool_1"}, {ID: "y", Pool: "pool_1"}},
			rows: map[string]int{"x": 1, "y": 1}},
		{name: "generic with a tenant column on drive9's table", o: Options{Service: bare, AuditDB: "drive9_aa", TenantColumn: "tenant_id"}, tenants: []Tenant{{ID: "a-a"}},
			err: []string{"target profile bare", "drive9_aa.fs_events has no column tenant_id", "it has: actor, created_at, op, path, seq, ts"}},
		{name: "generic, no tenant column", o: Options{Service: bare, AuditDB: "drive9_{tenant_nodash}", TenantColumn: "none"}, tenants: []Tenant{{ID: "a-a"}},
			rows: map[string]int{"a-a": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.o, true)
			if err != nil {
				t.Fatal(err)
			}
			ts, err := p.Open(ctx, server, tc.tenants)
			if tc.err != nil {
				if err == nil {
					ts.Close()
					t.Fatal("Open succeeded")
				}
				for _, want := range tc.err {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			for id, want := range tc.rows {
				s := &ledger.Memory{}
				n, err := ts.ByTenant[id].Rows(ctx, id, "/s/r/"+id+"/", s)
				if err != nil || n != want {
					t.Errorf("tenant %s: %d rows, %v; want %d", id, n, err, want)
				}
				for _, r := range s.Records() {
					if r.CreatedUnixNs <= 0 {
						t.Errorf("tenant %s: no created_unix_ns in %+v", id, r)
					}
				}
			}
		})
	}
}
