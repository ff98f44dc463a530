package podprofile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/faults"
)

const goodYAML = `name: my-eventlogd
binary: /usr/local/bin/eventlogd
args: ["--listen", "{listen}", "--pod", "{pod}", "--pools", "{pools_file}", "--fs-events-retention", "{retention}"]
env:
  EVENTLOGD_META_DSN: "{meta_dsn}"
  EVENTLOGD_PROVISION_TOKEN: "{provision_token}"
ready: {address_line: "listening on ", health: /healthz, timeout: 20s}
loss_counters: [drive9_sse_event_retry_dropped_total]
layout: pools
target: eventlogd
`

// targets are the target profiles the tests' profiles may name (the registry's are package
// harness/service's, whose tests read the shipped profiles).
var targets = []string{"eventlogd", "drive9"}

func TestParse(t *testing.T) {
	cases := []struct {
		name, yaml, want string // want: "" parses, else a substring of the error
	}{
		{"good", goodYAML, ""},
		{"unknown field", goodYAML + "colour: red\n", "p.yaml:11: field colour not found"},
		{"unknown placeholder names it and its line", strings.Replace(goodYAML, "{pod}", "{pod_id}", 1), "p.yaml:3: args.3: unknown placeholder {pod_id}"},
		{"unknown placeholder in env", strings.Replace(goodYAML, `"{meta_dsn}"`, `"{metadsn}"`, 1), "p.yaml:5: env.EVENTLOGD_META_DSN: unknown placeholder {metadsn}"},
		{"unclosed placeholder", strings.Replace(goodYAML, "{pod}", "{pod", 1), "args.3: unclosed"},
		{"secret in args", strings.Replace(goodYAML, `"{pod}"`, `"{meta_dsn}"`, 1), "args.3: {meta_dsn} carries a secret"},
		{"no listen", strings.Replace(goodYAML, `"{listen}"`, `"127.0.0.1:7000"`, 1), "no arg or env uses {listen}"},
		{"bad layout", strings.Replace(goodYAML, "layout: pools", "layout: shards", 1), `p.yaml:9: layout: "shards": unknown`},
		{"no layout", strings.Replace(goodYAML, "layout: pools\n", "", 1), "layout: required"},
		{"bad target", strings.Replace(goodYAML, "target: eventlogd", "target: drive8", 1), `p.yaml:10: target: "drive8": unknown (allowed: eventlogd, drive9)`},
		{"no target", strings.Replace(goodYAML, "target: eventlogd\n", "", 1), `target: required: the wire API the pods speak (allowed: eventlogd, drive9)`},
		{"bad tenants timeout", strings.Replace(goodYAML, "timeout: 20s", "timeout: 20s, tenants: -1s", 1), "ready.tenants: want a positive duration"},
		{"tenant_dsn with pools", strings.Replace(goodYAML, `"{provision_token}"`, `"{tenant_dsn}"`, 1), "{tenant_dsn} is for layout admin_dsn"},
		{"bad health", strings.Replace(goodYAML, "health: /healthz", "health: healthz", 1), "ready.health"},
		{"bad duration", strings.Replace(goodYAML, "timeout: 20s", "timeout: soon", 1), "p.yaml:7"},
		{"bad counter", strings.Replace(goodYAML, "drive9_sse_event_retry_dropped_total", "drop-count", 1), "loss_counters.0"},
		{"counter the verifier never reads", strings.Replace(goodYAML, "drive9_sse_event_retry_dropped_total", "mysvc_events_lost_total", 1), "never explain a loss"},
		{"no name", strings.Replace(goodYAML, "name: my-eventlogd\n", "", 1), "name: required"},
		{"empty", "", "empty pod profile"},
		{"not yaml", "args: [", "p.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(c.yaml), targets)
			if c.want == "" {
				if err != nil {
					t.Fatalf("want it to parse: %v", err)
				}
				if p.Ready.Timeout.String() != "20s" || p.Metrics != "/metrics" || p.File() != "p.yaml" {
					t.Errorf("decoded %+v", p)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	p, err := Parse("p.yaml", []byte(goodYAML), targets)
	if err != nil {
		t.Fatal(err)
	}
	vars := Vars{PhListen: "127.0.0.1:0", PhPod: "pod-2", PhPoolsFile: "/r/pools.json", PhRetention: "10m0s", PhMetaDSN: "u:pw@tcp(h:1)/meta", PhProvisionToken: "tok"}
	args, env, err := p.Expand(vars)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--listen", "127.0.0.1:0", "--pod", "pod-2", "--pools", "/r/pools.json", "--fs-events-retention", "10m0s"}; !slices.Equal(args, want) {
		t.Errorf("args %q, want %q", args, want)
	}
	if want := []string{"EVENTLOGD_META_DSN=u:pw@tcp(h:1)/meta", "EVENTLOGD_PROVISION_TOKEN=tok"}; !slices.Equal(env, want) {
		t.Errorf("env %q, want %q", env, want)
	}
	delete(vars, PhPoolsFile)
	if _, _, err := p.Expand(vars); err == nil || !strings.Contains(err.Error(), "args[5]: placeholder {pools_file} has no value") {
		t.Errorf("a placeholder without a value: %v", err)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(goodYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path, targets); err != nil {
		t.Errorf("good file: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing.yaml"), targets); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodYAML))
	f.Add([]byte("name: x\nargs: ['{'] \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.yaml", data, targets)
		if err != nil {
			return
		}
		vars := Vars{}
		for _, ph := range Placeholders {
			vars[ph] = "v"
		}
		if _, _, err := p.Expand(vars); err != nil {
			t.Fatalf("a checked profile does not expand with every placeholder set: %v", err)
		}
	})
}

func TestRefuses(t *testing.T) {
	e := &Profile{Name: "with-hooks", AdminHooks: true}
	d := &Profile{Name: "without"}
	for _, c := range []struct {
		p      *Profile
		kind   string
		refuse bool
	}{
		{e, "outbox_poller_stall", false}, {e, "pod_crash", false},
		{d, "outbox_poller_stall", true}, {d, "event_insert_fail", true}, {d, "tenant_delete", true},
		{d, "pod_crash", false}, {d, "tenant_db_stall", false}, {d, "meta_db_down", false},
	} {
		why := c.p.Refuses(c.kind)
		if (why != "") != c.refuse || c.refuse && (!strings.Contains(why, c.kind) || !strings.Contains(why, "admin hook") || !strings.Contains(why, c.p.Name)) {
			t.Errorf("%s refuses %s: %q, want refused %v", c.p.Name, c.kind, why, c.refuse)
		}
	}
}

// Every kind made through eventlogd's admin endpoints is in AdminHookKinds, and only those.
func TestAdminHookKindsMatchTheCatalog(t *testing.T) {
	var got []string
	for _, name := range faults.KindNames() {
		k, _ := faults.Lookup(name)
		if strings.Contains(k.Mechanism, "(--admin)") {
			got = append(got, name)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, AdminHookKinds) {
		t.Errorf("kinds made by an admin hook %v, AdminHookKinds %v", got, AdminHookKinds)
	}
}

// The profile docs/external.md shows is a valid one, and the placeholder table there lists every
// placeholder.
func TestDocExample(t *testing.T) {
	b, err := os.ReadFile("../../docs/external.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, rest, ok := strings.Cut(doc, "# my-eventlogd.yaml")
	if !ok {
		t.Fatal("docs/external.md has no my-eventlogd.yaml example")
	}
	_, rest, _ = strings.Cut(rest, "\n") // the rest of the comment line
	example, _, _ := strings.Cut(rest, "```")
	if _, err := Parse("my-eventlogd.yaml", []byte(example), targets); err != nil {
		t.Fatalf("the docs' example profile: %v", err)
	}
	for _, ph := range Placeholders {
		if !strings.Contains(doc, "| `"+ph+"` |") {
			t.Errorf("docs/external.md has no row for %s", ph)
		}
	}
}
