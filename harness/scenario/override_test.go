package scenario

import (
	"strings"
	"testing"
)

const overrideBase = `# header comment
name: o
seed: 5
duration: 10s
drain_timeout: 5s
tenants:
  - {group: a, count: 1, mode: dedicated}
pods:
  count: 2
load:
  - {tenants: a, executor: constant-arrival-rate, rate: 10}
  - {tenants: a, executor: constant-arrival-rate, rate: 20}
consumers:
  - count: 1
faults:
  - {at: 1s, for: 2s, kind: tenant_db_stall, target: tenant_1}
`

func TestOverride(t *testing.T) {
	for _, c := range []struct {
		sets  []string
		check func(*Scenario) bool
		err   string
	}{
		{sets: []string{"load[1].rate=600", "seed=9", "duration=20s"}, check: func(s *Scenario) bool {
			return s.Load[1].Rate == 600 && s.Load[0].Rate == 10 && s.Seed == 9 && s.Duration.D().Seconds() == 20 && len(s.Faults) == 1
		}},
		{sets: []string{"pods.eventlogd.defect=late-commit-skip", "pods.eventlogd.flags.retry-tenant-cap=3"}, check: func(s *Scenario) bool {
			return s.Pods.Eventlogd.Defect == "late-commit-skip" && s.Pods.Eventlogd.Flags["retry-tenant-cap"] == "3" && s.Pods.Count == 2
		}},
		{sets: []string{"pods.eventlogd.defect=x", "pods.eventlogd.defect="}, check: func(s *Scenario) bool { return s.Pods.Eventlogd.Defect == "" }},
		{sets: []string{"load[0].mix={write: 3, mkdir: 1}"}, check: func(s *Scenario) bool { return s.Load[0].Mix["mkdir"] == 1 }},
		{sets: []string{"load[2].rate=1"}, err: "load[2]: the list has 2 entries"},
		{sets: []string{"seed"}, err: "want PATH=VALUE"},
		{sets: []string{"=3"}, err: "want PATH=VALUE"},
		{sets: []string{"pods.count.x=1"}, err: "pods.count is not a mapping"},
		{sets: []string{"lod[0].rate=1"}, err: "has no list lod"},
		{sets: []string{"load.0.rate=1"}, err: `path step "0"`},
		{sets: []string{"seed=[unclosed"}, err: "is not YAML"},
	} {
		out, err := Override([]byte(overrideBase), c.sets)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.sets, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.sets, err)
			continue
		}
		s, err := Parse("override.yaml", out)
		if err != nil {
			t.Errorf("%v: result does not parse: %v\n%s", c.sets, err, out)
			continue
		}
		if !c.check(s) {
			t.Errorf("%v: wrong result %+v", c.sets, s)
		}
		if !strings.Contains(string(out), "# header comment") {
			t.Errorf("%v: comments lost", c.sets)
		}
	}
	// An override that names an unknown field is caught by Parse, naming it.
	out, err := Override([]byte(overrideBase), []string{"load[0].rat=5"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("o.yaml", out); err == nil || !strings.Contains(err.Error(), "rat") {
		t.Errorf("unknown field through --set: %v", err)
	}
	if _, err := Override([]byte(overrideBase), make([]string, maxOverrides+1)); err == nil {
		t.Error("too many assignments accepted")
	}
}

func FuzzOverride(f *testing.F) {
	for _, s := range []string{"seed=1", "load[0].rate=600", "pods.eventlogd.flags.a=b", "a[99]=1", "x.y.z={", "=", "load[0]=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, set string) {
		out, err := Override([]byte(overrideBase), []string{set})
		if err != nil {
			return
		}
		// Whatever Override accepts is YAML that Parse can judge without panicking.
		_, _ = Parse("fuzz.yaml", out)
	})
}
