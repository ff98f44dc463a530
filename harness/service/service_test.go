package service

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/target"
)

// Each shipped service resolves, by its name, to the target profile it has always had: its
// readiness, its wire, where a tenant's events live and what the command line must add.
func TestShippedProfiles(t *testing.T) {
	tn := target.Tenant{ID: "3F2a-b9c1-x", Key: "k", Pool: "tenant_2"}
	for _, tc := range []struct {
		name   string
		o      target.Options
		audit  bool
		err    string // substring; "" = no error
		db     string
		column string
		ready  target.Readiness
	}{
		{name: "default is eventlogd", o: target.Options{}, audit: true, db: "tenant_2", column: "tenant_id", ready: target.ReadyAtOnce},
		{name: "eventlogd", o: target.Options{Profile: Eventlogd}, audit: true, db: "tenant_2", column: "tenant_id", ready: target.ReadyAtOnce},
		{name: "drive9", o: target.Options{Profile: Drive9}, audit: true, db: "drive9_3f2ab9c1x", ready: target.ReadyStatus},
		{name: "generic per tenant", o: target.Options{Profile: Generic, AuditDB: "app_{tenant_nodash}", TenantColumn: "none"}, audit: true, db: "app_3F2ab9c1x", ready: target.ReadyStatusIfServed},
		{name: "generic shared", o: target.Options{Profile: Generic, AuditDB: "events", TenantColumn: "owner"}, audit: true, db: "events", column: "owner", ready: target.ReadyStatusIfServed},
		{name: "generic without audit needs nothing", o: target.Options{Profile: Generic}, ready: target.ReadyStatusIfServed},
		{name: "eventlogd override", o: target.Options{AuditDB: "sg_{pool}", TenantColumn: "tid"}, audit: true, db: "sg_tenant_2", column: "tid"},
		{name: "unknown profile", o: target.Options{Profile: "drive8"}, err: `--target-profile "drive8": unknown (allowed: eventlogd, drive9, generic)`},
		{name: "generic needs --audit-db", o: target.Options{Profile: Generic, TenantColumn: "none"}, audit: true, err: "--target-profile generic: --audit-db TEMPLATE is required"},
		{name: "generic needs --tenant-column", o: target.Options{Profile: Generic, AuditDB: "x"}, audit: true, err: "--target-profile generic: --tenant-column is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Shipped.Profile(tc.o, tc.audit)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Profile = %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.TenantColumn != tc.column || p.Ready != tc.ready || p.Wire() != target.Drive9Wire {
				t.Errorf("column %q ready %v wire %p, want %q %v drive9's", p.TenantColumn, p.Ready, p.Wire(), tc.column, tc.ready)
			}
			if tc.db == "" {
				return
			}
			if db, err := p.Database(tn); err != nil || db != tc.db {
				t.Errorf("Database = %q, %v; want %q", db, err, tc.db)
			}
		})
	}
}

// The shipped pod profiles check, are named after their service, and say what their pods have and
// lack: eventlogd's admin hooks and pools, drive9's admin DSN and its own wait for tenants.
func TestShippedPods(t *testing.T) {
	if got := Shipped.PodNames(); !slices.Equal(got, []string{Eventlogd, Drive9}) {
		t.Errorf("PodNames %v", got)
	}
	for _, name := range Shipped.PodNames() {
		p, err := Shipped.Pods(name)
		if err != nil || p.Name != name || p.Target != name || !p.Uses(podprofile.PhListen) || !p.Uses(podprofile.PhMetaDSN) ||
			p.HealthPath() != "/healthz" || p.MetricsPath() != "/metrics" || p.ReadyTimeout() != 30*time.Second ||
			!slices.Contains(p.LossCounters, "drive9_sse_event_retry_dropped_total") {
			t.Errorf("%s: %+v %v", name, p, err)
		}
	}
	e, _ := Shipped.Pods("") // the default
	d, _ := Shipped.Pods(Drive9)
	if e.Name != Eventlogd || !e.AdminHooks || !e.EventlogdFlags || d.AdminHooks || d.EventlogdFlags || e.Layout != podprofile.LayoutPools ||
		d.Layout != podprofile.LayoutAdminDSN || !d.Uses(podprofile.PhTenantDSN) || d.Binary != "drive9-server" {
		t.Errorf("eventlogd %+v, drive9 %+v", e, d)
	}
	// drive9 takes minutes to make a tenant active; eventlogd's are active at once (no wait: 0).
	if e.Ready.Tenants != 0 || d.Ready.Tenants != 3*time.Minute {
		t.Errorf("tenants ready timeout: eventlogd %v, drive9 %v", e.Ready.Tenants, d.Ready.Tenants)
	}
	for _, name := range []string{Generic, "drive8"} {
		if _, err := Shipped.Pods(name); err == nil || !strings.Contains(err.Error(), `"`+name+`": no pod profile of that name (built in: eventlogd, drive9; or --pods-profile FILE)`) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A copy: what a caller changes is not the registry's.
	e.Ready.Health = "/elsewhere"
	if again, _ := Shipped.Pods(Eventlogd); again.HealthPath() != "/healthz" {
		t.Error("Pods handed out the registry's own profile")
	}
}

// A service added to a registry (one value) is everywhere the registry's names are: its lists, the
// errors that list what is allowed, the target profile and the pod profile it resolves to, and the
// target a pod profile file may name. The shipped registry (the control) has none of it.
func TestWith(t *testing.T) {
	extra := &Def{Name: "mysvc", Target: target.Service{Ready: target.ReadyStatus, AuditDB: "svc_{tenant}"},
		Pods: &podprofile.Profile{Args: []string{"--at", podprofile.PhListen}, Layout: podprofile.LayoutAdminDSN}}
	reg := Shipped.With(extra)
	if !slices.Equal(reg.Names(), []string{Eventlogd, Drive9, Generic, "mysvc"}) || !slices.Equal(reg.PodNames(), []string{Eventlogd, Drive9, "mysvc"}) {
		t.Errorf("names %v, pod names %v", reg.Names(), reg.PodNames())
	}
	if len(Shipped) != 3 || slices.Contains(Shipped.Names(), "mysvc") {
		t.Fatalf("With changed the shipped registry: %v", Shipped.Names())
	}
	if _, err := reg.Lookup("drive8"); err == nil || !strings.Contains(err.Error(), "(allowed: eventlogd, drive9, generic, mysvc)") {
		t.Errorf("unknown name: %v", err)
	}
	p, err := reg.Profile(target.Options{Profile: "mysvc"}, true)
	if err != nil || p.Name != "mysvc" || p.Ready != target.ReadyStatus || !p.NeedsTenantID() {
		t.Fatalf("profile %+v %v", p, err)
	}
	if db, _ := p.Database(target.Tenant{ID: "t1"}); db != "svc_t1" {
		t.Errorf("database %q", db)
	}
	pods, err := reg.Pods("mysvc")
	if err != nil || pods.Name != "mysvc" || pods.Target != "mysvc" || pods.Ready.Timeout != 30*time.Second {
		t.Errorf("pods %+v %v", pods, err)
	}
	if _, err := Shipped.Profile(target.Options{Profile: "mysvc"}, false); err == nil || !strings.Contains(err.Error(), `"mysvc": unknown`) {
		t.Errorf("the shipped registry resolves mysvc: %v", err)
	}
	file := t.TempDir() + "/p.yaml"
	if err := os.WriteFile(file, []byte("name: mine\nargs: ['{listen}']\nlayout: admin_dsn\ntarget: mysvc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.ReadPods(file); err != nil {
		t.Errorf("a pod profile naming mysvc: %v", err)
	}
	if _, err := Shipped.ReadPods(file); err == nil || !strings.Contains(err.Error(), `target: "mysvc": unknown (allowed: eventlogd, drive9, generic)`) {
		t.Errorf("the shipped registry reads a pod profile naming mysvc: %v", err)
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
		got, err := drive9Database(target.Tenant{ID: tc.id})
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

// docs/external.md lists every shipped service: a row of the profiles table each, the pod profile's
// target field names them all, its example pod profile is the shipped eventlogd one, and "Adding a
// service" names the file a newcomer writes and this registry.
func TestDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/external.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, name := range Shipped.Names() {
		if !strings.Contains(doc, "| `"+name+"` |") {
			t.Errorf("docs/external.md has no row for service %s", name)
		}
	}
	_, row, _ := strings.Cut(doc, "| `target` |")
	row, _, _ = strings.Cut(row, "\n")
	for _, name := range Shipped.Names() {
		if !strings.Contains(row, "`"+name+"`") {
			t.Errorf("the pod profile's target row does not name %s: %s", name, row)
		}
	}
	_, rest, ok := strings.Cut(doc, "# my-eventlogd.yaml")
	if !ok {
		t.Fatal("docs/external.md has no my-eventlogd.yaml example")
	}
	_, rest, _ = strings.Cut(rest, "\n")
	example, _, _ := strings.Cut(rest, "```")
	p, err := podprofile.Parse("my-eventlogd.yaml", []byte(example), Shipped.Names())
	if err != nil {
		t.Fatalf("the docs' example profile: %v", err)
	}
	e, _ := Shipped.Pods(Eventlogd)
	if !slices.Equal(p.Args, e.Args) || p.Layout != e.Layout || !p.AdminHooks || !p.EventlogdFlags || !slices.Equal(p.LossCounters, e.LossCounters) {
		t.Errorf("the docs' example is not the shipped eventlogd profile: %+v", p)
	}
	_, adding, _ := strings.Cut(doc, "## Adding a service")
	adding, _, _ = strings.Cut(adding, "\n## ")
	for _, s := range []string{"harness/service/<name>.go", "`Shipped`", "harness/service/drive9.go"} {
		if !strings.Contains(adding, s) {
			t.Errorf(`"Adding a service" does not say %s`, s)
		}
	}
}

// TestShipKeepsTheDefaultFirst: each file ships its own service; whatever the order of the inits,
// the default leads and the rest follow by name, and a second service of one name is refused.
func TestShipKeepsTheDefaultFirst(t *testing.T) {
	saved := Shipped
	t.Cleanup(func() { Shipped = saved })
	for _, order := range [][]*Def{{&generic, &drive9, &eventlogd}, {&drive9, &eventlogd, &generic}, {&eventlogd, &generic, &drive9}} {
		Shipped = nil
		for _, d := range order {
			ship(d)
		}
		if got := Shipped.Names(); !slices.Equal(got, []string{Eventlogd, Drive9, Generic}) {
			t.Errorf("shipped in %v: names %v, want eventlogd first then by name", names(order), got)
		}
		if d, err := Shipped.Lookup(""); err != nil || d.Name != Eventlogd {
			t.Errorf("default = %v, %v; want eventlogd", d, err)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "two services named drive9") {
			t.Errorf("a second drive9: recovered %v, want a panic naming it", r)
		}
	}()
	ship(&Def{Name: Drive9})
}

func names(ds []*Def) []string { return Registry(ds).Names() }
