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
		{name: "default is eventlogd", o: Options{}, db: "tenant_2", column: "tenant_id", ready: ReadyAtOnce},
		{name: "drive9", o: Options{Profile: Drive9}, audit: true, db: "drive9_3f2ab9c1x", column: "", ready: ReadyStatus},
		{name: "generic per tenant", o: Options{Profile: Generic, AuditDB: "app_{tenant_nodash}", TenantColumn: "none"}, audit: true, db: "app_3F2ab9c1x", ready: ReadyStatusIfServed},
		{name: "generic shared", o: Options{Profile: Generic, AuditDB: "events", TenantColumn: "owner"}, audit: true, db: "events", column: "owner", ready: ReadyStatusIfServed},
		{name: "generic without audit needs nothing", o: Options{Profile: Generic}, ready: ReadyStatusIfServed},
		{name: "eventlogd override", o: Options{AuditDB: "sg_{pool}", TenantColumn: "tid"}, audit: true, db: "sg_tenant_2", column: "tid"},
		{name: "unknown profile", o: Options{Profile: "drive8"}, err: `--target-profile "drive8": unknown (allowed: eventlogd, drive9, generic)`},
		{name: "generic needs --audit-db", o: Options{Profile: Generic, TenantColumn: "none"}, audit: true, err: "--audit-db TEMPLATE is required"},
		{name: "generic needs --tenant-column", o: Options{Profile: Generic, AuditDB: "x"}, audit: true, err: "--tenant-column is required"},
		{name: "unknown placeholder", o: Options{AuditDB: "db_{tenantid}"}, err: "unknown placeholder {tenantid}"},
		{name: "unclosed placeholder", o: Options{AuditDB: "db_{tenant"}, err: `unclosed "{tenant"`},
		{name: "bad column", o: Options{TenantColumn: "a`b"}, err: "--tenant-column \"a`b\": not a column name"},
		{name: "bad database", o: Options{AuditDB: "a/b"}, err: "not a database name"},
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

// drive9's own cases (pkg/tenant/local/provisioner_test.go): ids become drive9_<lower, no dashes>, cut to 64.
func TestDrive9Database(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct{ id, want, err string }{
		{id: "0b7cbd1e-6f0a-4e7d-9c0a-1b2c3d4e5f60", want: "drive9_0b7cbd1e6f0a4e7d9c0a1b2c3d4e5f60"},
		{id: " Tenant-A.b ", want: "drive9_tenantab"},
		{id: long, want: ("drive9_" + long)[:64]},
		{id: "--", err: "gives no drive9 database name"},
	} {
		got, err := drive9Database(Tenant{ID: tc.id})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %q, %v; want error %q", tc.id, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.id, got, err, tc.want)
		}
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
