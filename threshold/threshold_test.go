package threshold

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in     map[string][]string
		want   []string // names
		errHas []string
	}{
		{in: map[string][]string{"latency_ms.p99": {"< 500"}, "duplicates": {"== 0"}, "reorder.max_ms": {"<= 60000"}},
			want: []string{"threshold:duplicates==0", "threshold:latency_ms.p99<500", "threshold:reorder.max_ms<=60000"}},
		{in: map[string][]string{"event_loss_fraction": {"<1e-4", ">= 0"}},
			want: []string{"threshold:event_loss_fraction<1e-4", "threshold:event_loss_fraction>=0"}},
		{in: map[string][]string{"lost_by_reason.buffer_full": {"== 0"}}, want: []string{"threshold:lost_by_reason.buffer_full==0"}},
		{in: map[string][]string{"latency.p99": {"< 5"}}, errHas: []string{`"latency.p99"`, "valid paths", "latency_ms.p99", "reorder.max_ms", "lost_by_reason.<key>"}},
		{in: map[string][]string{"verdict": {"== 0"}}, errHas: []string{`"verdict"`}},
		{in: map[string][]string{"duplicates": {"=< 0"}}, errHas: []string{`"=< 0"`, "< <= > >= =="}},
		{in: map[string][]string{"duplicates": {"< abc"}}, errHas: []string{`"< abc"`}},
		{in: map[string][]string{"duplicates": {"< 1e999"}}, errHas: []string{"finite"}},
		{in: map[string][]string{"duplicates": {}}, errHas: []string{"no expressions"}},
	}
	for _, c := range cases {
		th, err := Parse(c.in)
		if c.errHas != nil {
			if err == nil {
				t.Errorf("%v: no error", c.in)
				continue
			}
			for _, h := range c.errHas {
				if !strings.Contains(err.Error(), h) {
					t.Errorf("%v: error %q lacks %q", c.in, err, h)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.in, err)
			continue
		}
		var names []string
		for _, x := range th {
			names = append(names, x.Name())
		}
		if !slices.Equal(names, c.want) {
			t.Errorf("%v: %v, want %v", c.in, names, c.want)
		}
	}
}

// TestParsePathScopesAndWindows: per-tenant and per-consumer paths (ids with dots included) and
// windowed paths parse to their parts; wrong ones are refused with a message naming them.
func TestParsePathScopesAndWindows(t *testing.T) {
	ok := []struct {
		path                     string
		scope, id, field, window string
	}{
		{"per_tenant.t1.duplicates", ScopeTenant, "t1", "duplicates", ""},
		{"per_consumer.t3.c1.latency_ms.p99", ScopeConsumer, "t3.c1", "latency_ms.p99", ""},
		{"per_tenant.t1.lost_by_reason.crash", ScopeTenant, "t1", "lost_by_reason.crash", ""},
		{"per_tenant.a.b.c.metrics.max.drive9_x", ScopeTenant, "a.b.c", "metrics.max.drive9_x", ""},
		{"per_consumer.7.seq_mismatch", ScopeConsumer, "7", "seq_mismatch", ""},
		{"latency_ms.p99@steady", "", "", "latency_ms.p99", "steady"},
		{"dropped_fraction@fault", "", "", "dropped_fraction", "fault"},
		{"event_loss_fraction@recovery", "", "", "event_loss_fraction", "recovery"},
		{"dropped_fraction", "", "", "dropped_fraction", ""},
		{"recovery_max_ms", "", "", "recovery_max_ms", ""},
		{"recovery_ms.f1", "", "", "recovery_ms.f1", ""},
		{"seq_mismatch", "", "", "seq_mismatch", ""},
		{"unresolved", "", "", "unresolved", ""},
	}
	for _, c := range ok {
		got, err := ParsePath(c.path)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if got.Scope != c.scope || got.ID != c.id || got.Field != c.field || got.Window != c.window || got.Path != c.path {
			t.Errorf("%s: parsed %+v", c.path, got)
		}
	}
	bad := []struct{ path, has string }{
		{"per_tenant.t1.nope", "per_tenant.<id>.<field>"},
		{"per_tenant.duplicates", "per_tenant.<id>.<field>"},
		{"per_consumer..", "per_consumer.<id>.<field>"},
		{"latency_ms.p99@weekend", "@steady, @fault, @recovery"},
		{"skipped@steady", "not computed per window"},
		{"per_tenant.t1.lost@steady", "not computed per window"},
		{"budget@fault", "not computed per window"},
		{"recovery_ms.f1@steady", "not computed per window"},
		{"lost_by_reason.a@b", "window \"b\""},
		{"per_tenant..duplicates", "per_tenant.<id>.<field>"},
	}
	for _, c := range bad {
		_, err := ParsePath(c.path)
		if err == nil || !strings.Contains(err.Error(), strconv.Quote(c.path)) || !strings.Contains(err.Error(), c.has) {
			t.Errorf("%s: error %v, want one naming it and saying %q", c.path, err, c.has)
		}
	}
}

func TestThresholdHolds(t *testing.T) {
	for _, c := range []struct {
		op   string
		v    float64
		want bool
	}{{"<", 1, false}, {"<", 0.5, true}, {"<=", 1, true}, {">", 1, false}, {">=", 1, true}, {"==", 1, true}, {"==", 2, false}} {
		if got := (Threshold{Op: c.op, Value: 1}).Holds(c.v); got != c.want {
			t.Errorf("%g %s 1 = %v, want %v", c.v, c.op, got, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"< 500", "== 0", "<= 1e-4", ">=-3.5E+2", "< .5", "=< 1", "", "<", "< 1 2"} {
		f.Add("latency_ms.p99", s)
	}
	f.Add("nope", "< 1")
	f.Add("per_consumer.t3.c1.latency_ms.p99", "< 1")
	f.Add("latency_ms.p99@steady", "< 1")
	f.Fuzz(func(t *testing.T, path, expr string) {
		th, err := Parse(map[string][]string{path: {expr}})
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(path)) {
				t.Errorf("error %q does not name the path %q", err, path)
			}
			return
		}
		if len(th) != 1 || th[0].Path != path || !ValidPath(path) {
			t.Fatalf("accepted %q %q as %+v", path, expr, th)
		}
		// A parsed threshold re-parses from its own name's parts to the same value.
		again, err := Parse(map[string][]string{path: {th[0].Op + " " + th[0].Num}})
		if err != nil || again[0].Value != th[0].Value {
			t.Fatalf("round trip of %+v: %v %+v", th[0], err, again)
		}
	})
}
