package target

import (
	"strings"
	"testing"
)

func TestNewProfiles(t *testing.T) {
	tn := Tenant{ID: "3F2a-b9c1-x", Key: "k", Pool: "tenant_2"}
	for _, tc := range []struct {
		name   string
		o      Options
		audit  bool
		err    string // substring; "" = no error
		db     string
		column string
		ready  Readiness
	}{
		{name: "pooled", o: Options{Service: pooled}, db: "tenant_2", column: "tenant_id", ready: ReadyAtOnce},
		{name: "per tenant", o: Options{Service: perTenant}, audit: true, db: "drive9_3f2ab9c1x", column: "", ready: ReadyStatus},
		{name: "bare, per tenant", o: Options{Service: bare, AuditDB: "app_{tenant_nodash}", TenantColumn: "none"}, audit: true, db: "app_3F2ab9c1x", ready: ReadyStatusIfServed},
		{name: "bare, shared", o: Options{Service: bare, AuditDB: "events", TenantColumn: "owner"}, audit: true, db: "events", column: "owner", ready: ReadyStatusIfServed},
		{name: "bare without audit needs nothing", o: Options{Service: bare}, ready: ReadyStatusIfServed},
		{name: "pooled, overridden", o: Options{Service: pooled, AuditDB: "sg_{pool}", TenantColumn: "tid"}, audit: true, db: "sg_tenant_2", column: "tid"},
		{name: "no service", o: Options{Profile: "drive8"}, err: `target profile "drive8": no service given`},
		{name: "a template the service gives is checked", o: Options{Service: &Service{Name: "x", AuditDB: "db_{id}"}}, err: "target service x: --audit-db \"db_{id}\": unknown placeholder {id}"},
		{name: "bare needs --audit-db", o: Options{Service: bare, TenantColumn: "none"}, audit: true, err: "--audit-db TEMPLATE is required"},
		{name: "bare needs --tenant-column", o: Options{Service: bare, AuditDB: "x"}, audit: true, err: "--tenant-column is required"},
		{name: "unknown placeholder", o: Options{Service: pooled, AuditDB: "db_{tenantid}"}, err: "unknown placeholder {tenantid}"},
		{name: "unclosed placeholder", o: Options{Service: pooled, AuditDB: "db_{tenant"}, err: `unclosed "{tenant"`},
		{name: "bad column", o: Options{Service: pooled, TenantColumn: "a`b"}, err: "--tenant-column \"a`b\": not a column name"},
		{name: "bad database", o: Options{Service: pooled, AuditDB: "a/b"}, err: "not a database name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.o, tc.audit)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("New = %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.TenantColumn != tc.column || p.Ready != tc.ready {
				t.Errorf("column %q ready %v, want %q %v", p.TenantColumn, p.Ready, tc.column, tc.ready)
			}
			if p.database == nil {
				if tc.db != "" {
					t.Errorf("no database, want %s", tc.db)
				}
				return
			}
			if db, err := p.database(tn); err != nil || db != tc.db {
				t.Errorf("Database = %q, %v; want %q", db, err, tc.db)
			}
		})
	}
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"{pool}", "drive9_{tenant_nodash}", "x{", "{}", "{tenant}{tenant}", "a}b{pool}"} {
		f.Add(s, "t-1")
	}
	f.Fuzz(func(t *testing.T, tmpl, id string) {
		p := &Profile{}
		if err := p.setTemplate(tmpl); err != nil {
			return
		}
		name, err := p.database(Tenant{ID: id, Pool: "p"})
		if err != nil {
			return
		}
		for _, ph := range placeholders {
			if strings.Contains(tmpl, ph) && strings.Contains(name, ph) && !strings.Contains(id, ph) && !strings.Contains(id, "{") {
				t.Errorf("%q -> %q still holds %s", tmpl, name, ph)
			}
		}
	})
}
