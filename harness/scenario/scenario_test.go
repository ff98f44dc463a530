package scenario

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const base = `name: t
seed: 7
duration: 10s
tenants:
  - group: hot
    count: 2
  - group: cold
    count: 1
    cold: true
pods:
  count: 2
load:
  - tenants: hot
    executor: constant-arrival-rate
    rate: 5
consumers:
  - count: 2
`

func TestParseValid(t *testing.T) {
	s, err := Parse("t.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if s.DrainTimeout.D() != DefaultDrainTimeout || s.Budget != DefaultBudget {
		t.Errorf("defaults not applied: drain %v budget %g", s.DrainTimeout.D(), s.Budget)
	}
	if s.Load[0].Duration.D() != s.Duration.D() || s.Load[0].Mix["write"] != 1 || s.Load[0].MaxInFlight != DefaultMaxInFlight {
		t.Errorf("load defaults not applied: %+v", s.Load[0])
	}
	ts := s.Expand()
	if len(ts) != 3 || ts[2].Pool != "tenant_3" || !ts[2].Cold || ts[0].Mode != "dedicated" {
		t.Errorf("expand = %+v", ts)
	}
	// The resolved scenario round-trips.
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("resolved.yaml", out); err != nil {
		t.Fatalf("resolved scenario does not parse: %v\n%s", err, out)
	}
}

// TestBacklogExpands: a group's backlog reaches each of its tenant slots, and the resolved scenario
// (run directory's copy) keeps it.
func TestBacklogExpands(t *testing.T) {
	s, err := Parse("b.yaml", []byte(strings.Replace(base, "    count: 2\n", "    count: 2\n    backlog: {rows: 600000, age: 2h}\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	ts := s.Expand()
	for i, want := range []bool{true, true, false} {
		if got := ts[i].Backlog != nil; got != want {
			t.Fatalf("slot %d backlog %v, want %v", i, ts[i].Backlog, want)
		}
	}
	if b := ts[0].Backlog; b.Rows != 600000 || b.Age.D() != 2*time.Hour {
		t.Errorf("backlog = %+v", *b)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse("resolved.yaml", out)
	if err != nil || r.Tenants[0].Backlog == nil || r.Tenants[0].Backlog.Rows != 600000 {
		t.Fatalf("resolved backlog lost: %v\n%s", err, out)
	}
}

func TestPullConsumerDefaults(t *testing.T) {
	for _, tc := range []struct {
		extra    string
		interval string
		page     int
	}{
		{"    kind: pull\n", "1s", 100},
		{"    kind: pull\n    interval: 250ms\n    page_size: 1000\n", "250ms", 1000},
		{"    kind: pull\n    page_size: 1\n", "1s", 1},
	} {
		s, err := Parse("t.yaml", []byte(base+tc.extra))
		if err != nil {
			t.Fatal(err)
		}
		c := s.Consumers[0]
		if !c.IsPull() || c.Interval.D().String() != tc.interval || c.PageSize != tc.page {
			t.Errorf("%q: %+v, want pull every %s, page %d", tc.extra, c, tc.interval, tc.page)
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if r, err := Parse("resolved.yaml", out); err != nil || !r.Consumers[0].IsPull() {
			t.Fatalf("resolved pull scenario: %v\n%s", err, out)
		}
	}
	if s, err := Parse("t.yaml", []byte(base)); err != nil || s.Consumers[0].IsPull() || s.Consumers[0].Kind != "" {
		t.Fatalf("no kind: %+v %v, want an sse consumer written as before", s.Consumers, err)
	}
}

func TestConsumerResyncAndPullThenStream(t *testing.T) {
	for _, tc := range []struct {
		extra              string
		resync, structural bool
		kind               string
		page               int
	}{
		{"", true, false, "", 0},
		{"    resync: false\n", false, false, "", 0},
		{"    resync_structural: true\n", true, true, "", 0},
		{"    durable: false\n", false, false, "", 0},
		{"    kind: pull\n    resync: false\n", false, false, "pull", 100},
		{"    kind: pull-then-stream\n", true, false, "pull-then-stream", 100},
		{"    kind: pull-then-stream\n    page_size: 7\n    rcvbuf: 4096\n", true, false, "pull-then-stream", 7},
	} {
		s, err := Parse("t.yaml", []byte(base+tc.extra))
		if err != nil {
			t.Fatalf("%q: %v", tc.extra, err)
		}
		c := s.Consumers[0]
		if c.IsResync() != tc.resync || c.ResyncStructural != tc.structural || c.Kind != tc.kind || c.PageSize != tc.page ||
			c.IsPullThenStream() != (tc.kind == KindPullThenStream) {
			t.Errorf("%q: %+v (resync %v), want resync %v structural %v kind %q page %d", tc.extra, c, c.IsResync(), tc.resync, tc.structural, tc.kind, tc.page)
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		r, err := Parse("resolved.yaml", out)
		if err != nil || r.Consumers[0].IsResync() != tc.resync || r.Consumers[0].Kind != tc.kind {
			t.Fatalf("%q: resolved scenario: %v\n%s", tc.extra, err, out)
		}
	}
}

func TestSmokeScenarioParses(t *testing.T) {
	s, err := ReadFile("../../scenarios/smoke.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ts := s.Expand()
	shared, cold := 0, 0
	for _, x := range ts {
		if x.Mode == "shared" {
			shared++
		}
		if x.Cold {
			cold++
		}
	}
	if len(ts) != 6 || shared != 2 || cold != 1 || s.Pods.Count != 3 {
		t.Errorf("smoke: %d tenants, %d shared, %d cold, %d pods", len(ts), shared, cold, s.Pods.Count)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(string) string
		line    int
		field   string
		contain string
	}{
		{"unknown top field", func(s string) string { return s + "colour: red\n" }, 18, "colour", "allowed: budget, consumers"},
		{"unknown nested field", func(s string) string { return strings.Replace(s, "    rate: 5\n", "    rate: 5\n    vus: 3\n", 1) }, 16, "load[0].vus", "executor"},
		{"bad duration", func(s string) string { return strings.Replace(s, "duration: 10s", "duration: 10 seconds", 1) }, 3, "duration", "Go duration"},
		{"unknown executor", func(s string) string { return strings.Replace(s, "constant-arrival-rate", "per-vu-iterations", 1) }, 14, "load[0].executor", "ramping-arrival-rate"},
		{"cold shared", func(s string) string {
			return strings.Replace(s, "    cold: true", "    cold: true\n    mode: shared", 1)
		}, 9, "tenants[1].cold", "cannot be cold"},
		{"load on cold", func(s string) string { return strings.Replace(s, "  - tenants: hot", "  - tenants: cold", 1) }, 13, "load[0].tenants", "is cold"},
		{"unknown group", func(s string) string { return strings.Replace(s, "  - tenants: hot", "  - tenants: warm", 1) }, 13, "load[0].tenants", "allowed: cold, hot"},
		{"stages on constant", func(s string) string {
			return strings.Replace(s, "    rate: 5\n", "    rate: 5\n    stages:\n      - {target: 3, duration: 1s}\n", 1)
		}, 16, "load[0].stages", "ramping"},
		{"ramp too long", func(s string) string {
			return strings.Replace(strings.Replace(s, "constant-arrival-rate", "ramping-arrival-rate", 1), "    rate: 5\n", "    stages:\n      - {target: 3, duration: 11s}\n", 1)
		}, 13, "load[0].duration", "start + duration"},
		{"ramp duration disagrees with its stages", func(s string) string {
			return strings.Replace(strings.Replace(s, "constant-arrival-rate", "ramping-arrival-rate", 1), "    rate: 5\n", "    duration: 5s\n    stages:\n      - {target: 3, duration: 4s}\n", 1)
		}, 15, "load[0].duration", "sum of the stages"},
		{"unknown op", func(s string) string {
			return strings.Replace(s, "    rate: 5\n", "    rate: 5\n    mix: {write: 1, truncate: 2}\n", 1)
		}, 16, "load[0].mix.truncate", "chmod"},
		{"too many pods", func(s string) string { return strings.Replace(s, "  count: 2\nload", "  count: 65\nload", 1) }, 11, "pods.count", "1..64"},
		{"negative pods", func(s string) string { return strings.Replace(s, "  count: 2\nload", "  count: -1\nload", 1) }, 11, "pods.count", "0 or absent (only with --target)"},
		{"harness flag", func(s string) string {
			return strings.Replace(s, "  count: 2\nload", "  count: 2\n  eventlogd:\n    flags: {listen: \":1\"}\nload", 1)
		}, 13, "pods.eventlogd.flags.listen", "set by the harness"},
		{"flag key smuggling a reserved flag", func(s string) string {
			return strings.Replace(s, "  count: 2\nload", "  count: 2\n  eventlogd:\n    flags: {\"meta-dsn=root@tcp(127.0.0.1:3306)/hijack?timeout\": \"5s\"}\nload", 1)
		}, 13, "pods.eventlogd.flags.meta-dsn=root@tcp(127.0.0.1:3306)/hijack?timeout", "is not a flag name"},
		{"flag key with dashes", func(s string) string {
			return strings.Replace(s, "  count: 2\nload", "  count: 2\n  eventlogd:\n    flags: {\"--pod\": x}\nload", 1)
		}, 13, "pods.eventlogd.flags.--pod", "is not a flag name"},
		{"flag key upper case", func(s string) string {
			return strings.Replace(s, "  count: 2\nload", "  count: 2\n  eventlogd:\n    flags: {Admin: \"true\"}\nload", 1)
		}, 13, "pods.eventlogd.flags.Admin", "is not a flag name"},
		{"test-defects is the harness's", func(s string) string {
			return strings.Replace(s, "  count: 2\nload", "  count: 2\n  eventlogd:\n    flags: {test-defects: \"true\"}\nload", 1)
		}, 13, "pods.eventlogd.flags.test-defects", "set by the harness"},
		{"admin-token is the harness's (its own admin calls would get 401)", func(s string) string {
			return strings.Replace(s, "  count: 2\nload", "  count: 2\n  eventlogd:\n    flags: {admin-token: \"x\"}\nload", 1)
		}, 13, "pods.eventlogd.flags.admin-token", "set by the harness"},
		{"a good name passes the name check", func(s string) string {
			// sse-queue-size is fine, so the error is the reserved-name check's for pod: proof the
			// name check let a good name through.
			return strings.Replace(s, "  count: 2\nload", "  count: 2\n  eventlogd:\n    flags: {sse-queue-size: \"64\", pod: x}\nload", 1)
		}, 13, "pods.eventlogd.flags.pod", "set by the harness"},
		{"bad jitter", func(s string) string { return s + "    jitter: 2\n" }, 18, "consumers[0].jitter", "0..1"},
		{"late consumer past the run", func(s string) string { return s + "    start: 10s\n" }, 18, "consumers[0].start", "start < duration"},
		{"since without durable", func(s string) string { return s + "    since: 5\n    durable: false\n" }, 18, "consumers[0].since", "durable: true"},
		{"negative since", func(s string) string { return s + "    since: -1\n" }, 18, "consumers[0].since", ">= 0"},
		{"huge rcvbuf", func(s string) string { return s + "    rcvbuf: 100000000\n" }, 18, "consumers[0].rcvbuf", "67108864"},
		{"unknown consumer kind", func(s string) string { return s + "    kind: watch\n" }, 18, "consumers[0].kind", "pull"},
		{"interval on sse", func(s string) string { return s + "    interval: 1s\n" }, 18, "consumers[0].interval", "only with kind: pull"},
		{"page_size on sse", func(s string) string { return s + "    kind: sse\n    page_size: 5\n" }, 19, "consumers[0].page_size", "only with kind: pull"},
		{"negative interval", func(s string) string { return s + "    kind: pull\n    interval: -1s\n" }, 19, "consumers[0].interval", "positive"},
		{"page_size over the endpoint's max", func(s string) string { return s + "    kind: pull\n    page_size: 1001\n" }, 19, "consumers[0].page_size", "1..1000"},
		{"negative page_size", func(s string) string { return s + "    kind: pull\n    page_size: -3\n" }, 19, "consumers[0].page_size", "1..1000"},
		{"pull not durable", func(s string) string { return s + "    kind: pull\n    durable: false\n" }, 19, "consumers[0].durable", "durable checkpoint"},
		{"rcvbuf on pull", func(s string) string { return s + "    kind: pull\n    rcvbuf: 4096\n" }, 19, "consumers[0].rcvbuf", "only with kind: sse"},
		{"pull-then-stream not durable", func(s string) string { return s + "    kind: pull-then-stream\n    durable: false\n" }, 19, "consumers[0].durable", "durable checkpoint"},
		{"pull-then-stream page_size over the max", func(s string) string { return s + "    kind: pull-then-stream\n    page_size: 2000\n" }, 19, "consumers[0].page_size", "1..1000"},
		{"resync without durable", func(s string) string { return s + "    durable: false\n    resync: true\n" }, 19, "consumers[0].resync", "only with durable: true"},
		{"resync_structural without resync", func(s string) string { return s + "    resync: false\n    resync_structural: true\n" }, 19, "consumers[0].resync_structural", "only with resync on"},
		{"resync not a bool", func(s string) string { return s + "    resync: often\n" }, 18, "", "into bool"},
		{"batch_size without batch", func(s string) string {
			return strings.Replace(s, "    rate: 5\n", "    rate: 5\n    batch_size: 3\n", 1)
		}, 16, "load[0].batch_size", "only with a batch op"},
		{"batch_size too big", func(s string) string {
			return strings.Replace(s, "    rate: 5\n", "    rate: 5\n    mix: {write: 1, batch: 1}\n    batch_size: 101\n", 1)
		}, 17, "load[0].batch_size", "1..100"},
		{"bad threshold path", func(s string) string { return s + "thresholds:\n  p99: [\"< 5\"]\n" }, 19, "thresholds.p99", "latency_ms.p99"},
		{"bad threshold expr", func(s string) string { return s + "thresholds:\n  duplicates: [\"about 0\"]\n" }, 19, "thresholds.duplicates", "about 0"},
		{"name escapes the runs directory", func(s string) string { return strings.Replace(s, "name: t", "name: ../../x", 1) }, 1, "name", "not one path segment"},
		{"name with a separator", func(s string) string { return strings.Replace(s, "name: t", "name: a/b", 1) }, 1, "name", `"a/b"`},
		{"name is ..", func(s string) string { return strings.Replace(s, "name: t", `name: ".."`, 1) }, 1, "name", "not . or .."},
		{"name with a space", func(s string) string { return strings.Replace(s, "name: t", `name: "a b"`, 1) }, 1, "name", "one path segment"},
		{"name too long", func(s string) string { return strings.Replace(s, "name: t", "name: "+strings.Repeat("a", 101), 1) }, 1, "name", "at most 100"},
		{"backlog without rows", func(s string) string {
			return strings.Replace(s, "    count: 2\n", "    count: 2\n    backlog: {age: 2h}\n", 1)
		}, 7, "tenants[0].backlog.rows", "1..5000000"},
		{"backlog too large", func(s string) string {
			return strings.Replace(s, "    count: 2\n", "    count: 2\n    backlog:\n      rows: 5000001\n      age: 2h\n", 1)
		}, 8, "tenants[0].backlog.rows", "1..5000000"},
		{"backlog without age", func(s string) string {
			return strings.Replace(s, "    count: 2\n", "    count: 2\n    backlog:\n      rows: 10\n", 1)
		}, 7, "tenants[0].backlog.age", "0s < age"},
		{"backlog too old", func(s string) string {
			return strings.Replace(s, "    count: 2\n", "    count: 2\n    backlog:\n      rows: 10\n      age: 9000h\n", 1)
		}, 9, "tenants[0].backlog.age", "8784h"},
		{"backlog on a cold group", func(s string) string {
			return strings.Replace(s, "    cold: true\n", "    cold: true\n    backlog: {rows: 10, age: 2h}\n", 1)
		}, 10, "tenants[1].backlog", "never be swept"},
		{"backlog with an unknown field", func(s string) string {
			return strings.Replace(s, "    count: 2\n", "    count: 2\n    backlog: {rows: 10, age: 2h, size: 3}\n", 1)
		}, 0, "tenants[0].backlog.size", "age, rows"},
		{"not yaml", func(s string) string { return s + "  - : [\n" }, 0, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tc.edit(base)))
			if err == nil {
				t.Fatal("no error")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not a *scenario.Error", err, err)
			}
			if e.File != "s.yaml" {
				t.Errorf("file = %q", e.File)
			}
			if tc.line != 0 && e.Line != tc.line {
				t.Errorf("line = %d, want %d (%v)", e.Line, tc.line, err)
			}
			if e.Field != tc.field {
				t.Errorf("field = %q, want %q (%v)", e.Field, tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.contain) {
				t.Errorf("%q does not contain %q", err.Error(), tc.contain)
			}
		})
	}
}

func TestParseFaults(t *testing.T) {
	ok := base + "faults:\n  - at: 2s\n    for: 3s\n    kind: pod_crash\n    target: random\n"
	if _, err := Parse("f.yaml", []byte(ok)); err != nil {
		t.Fatalf("valid faults block: %v", err)
	}
	bad := base + "faults:\n  - at: 2s\n    kind: no_such_fault\n"
	_, err := Parse("f.yaml", []byte(bad))
	var e *Error
	if !errors.As(err, &e) || e.Line != 19 || !strings.Contains(err.Error(), "no_such_fault") {
		t.Fatalf("unknown fault kind: %v (want a line-19 error naming it)", err)
	}
}

// Every scenario shipped anywhere under scenarios/ (CI variants, power, capacity, incidents, external)
// must lint; scenarios/power/matrix.yaml is the power matrix, not a scenario.
func TestShippedScenariosParse(t *testing.T) {
	var files []string
	err := filepath.WalkDir("../../scenarios", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".yaml") && p != filepath.Join("../../scenarios", "power", "matrix.yaml") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil || len(files) < 20 {
		t.Fatalf("scenarios found: %d (%v)", len(files), err)
	}
	for _, f := range files {
		if _, err := ReadFile(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// A scenario for an external target may leave pods out: the service runs its own.
func TestParseWithoutPods(t *testing.T) {
	s, err := Parse("ext.yaml", []byte(strings.Replace(base, "pods:\n  count: 2\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Pods.Count != 0 {
		t.Errorf("pods.count %d, want 0", s.Pods.Count)
	}
}

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"smoke", true}, {"ci-pod-crash", true}, {"gate.v2", true}, {"Tenant_DB_stall", true}, {strings.Repeat("a", 100), true},
		{"", false}, {".", false}, {"..", false}, {"../../x", false}, {"a/b", false}, {`a\b`, false}, {"/abs", false},
		{"a b", false}, {"a\x00b", false}, {"é", false}, {strings.Repeat("a", 101), false},
	} {
		if got := validName(tc.name); got != tc.ok {
			t.Errorf("validName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
	// Every scenario shipped in scenarios/ keeps passing.
	files, _ := filepath.Glob(filepath.Join("..", "..", "scenarios", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no scenarios found")
	}
	for _, f := range files {
		if _, err := ReadFile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestBudgetZeroIsZeroTolerance: an absent budget is the default 1e-4; `budget: 0` is kept (any loss
// fails) and survives the resolved scenario's round trip; a negative budget is refused, named.
func TestBudgetZeroIsZeroTolerance(t *testing.T) {
	for _, c := range []struct {
		add  string
		want float64
		err  string
	}{
		{"", DefaultBudget, ""},
		{"budget: 0\n", 0, ""},
		{"budget: 0.5\n", 0.5, ""},
		{"budget: -0.1\n", 0, "budget"},
		{"budget: 1\n", 0, "0 <= budget < 1"},
	} {
		s, err := Parse("b.yaml", []byte(base+c.add))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.add, err, c.err)
			}
			continue
		}
		if err != nil || s.Budget != c.want {
			t.Errorf("%q: budget %v (%v), want %g", c.add, s, err, c.want)
			continue
		}
		b, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("resolved.yaml", b)
		if err != nil || again.Budget != c.want {
			t.Errorf("%q: resolved scenario gives budget %v (%v), want %g\n%s", c.add, again, err, c.want, b)
		}
	}
}
