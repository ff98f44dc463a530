package shard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/harness/scenario"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Shard
		wantErr string // "" = valid
	}{
		{in: "1/1", want: Shard{1, 1}},
		{in: "2/4", want: Shard{2, 4}},
		{in: "1024/1024", want: Shard{1024, 1024}},
		{in: "0/3", wantErr: "K is 0, outside 1..3"},
		{in: "4/3", wantErr: "K is 4, outside 1..3"},
		{in: "a/b", wantErr: "whole numbers"},
		{in: "1/0", wantErr: "N is 0"},
		{in: "1/1025", wantErr: "N is 1025"},
		{in: "3", wantErr: "no /"},
		{in: "", wantErr: "no /"},
		{in: "-1/3", wantErr: "whole numbers"},
		{in: "+1/3", wantErr: "whole numbers"},
		{in: " 1/3", wantErr: "whole numbers"},
		{in: "1/3/4", wantErr: "whole numbers"},
		{in: "1/9999999", wantErr: "whole numbers"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.wantErr == "" {
			if err != nil || got != tt.want {
				t.Errorf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--shard "+fmt.Sprintf("%q", tt.in)) {
			t.Errorf("Parse(%q) error = %v, want one naming --shard %q and saying %q", tt.in, err, tt.in, tt.wantErr)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1/1", "2/4", "0/3", "4/3", "a/b", "1/", "/1", "01/002", "1024/1024"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := Parse(v)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--shard ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		if s.K < 1 || s.K > s.N || s.N > 1024 {
			t.Fatalf("Parse(%q) = %v accepted out of range", v, s)
		}
		again, err := Parse(s.String())
		if err != nil || again != s {
			t.Fatalf("round trip of %v: %v, %v", s, again, err)
		}
	})
}

func scenarioWith(t *testing.T, groups string, seed int64) *scenario.Scenario {
	t.Helper()
	src := fmt.Sprintf(`name: sh
seed: %d
duration: 10s
tenants:
%spods: {count: 1}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 5}
consumers:
  - {count: 1}
`, seed, groups)
	sc, err := scenario.Parse("sh.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

const groups = `  - {group: hot, count: 5, mode: dedicated}
  - {group: warm, count: 4, mode: shared}
  - {group: idle, count: 2, mode: dedicated, cold: true}
`

// TestAssign: every tenant goes to exactly one agent, agents' totals differ by at most one, every
// group is spread over the agents, and the same scenario and seed always give the same split.
func TestAssign(t *testing.T) {
	sc := scenarioWith(t, groups, 42)
	tenants := sc.Expand()
	for n := 1; n <= len(tenants); n++ {
		a := Assign(tenants, sc.Seed, n)
		if len(a) != len(tenants) {
			t.Fatalf("n=%d: %d tenants assigned, want %d", n, len(a), len(tenants))
		}
		total := map[int]int{}
		perGroup := map[string]map[int]int{}
		for _, tn := range tenants {
			k := a[tn.Index]
			if k < 1 || k > n {
				t.Fatalf("n=%d: tenant %d to agent %d", n, tn.Index, k)
			}
			total[k]++
			if perGroup[tn.Group] == nil {
				perGroup[tn.Group] = map[int]int{}
			}
			perGroup[tn.Group][k]++
		}
		lo, hi := len(tenants), 0
		for k := 1; k <= n; k++ {
			lo, hi = min(lo, total[k]), max(hi, total[k])
		}
		if hi-lo > 1 || lo == 0 {
			t.Errorf("n=%d: agents' totals %v, want every agent within one of the others and none empty", n, total)
		}
		for g, per := range perGroup {
			size := 0
			for _, c := range per {
				size += c
			}
			for k := 1; k <= n; k++ {
				if per[k] > (size+n-1)/n {
					t.Errorf("n=%d group %s: agent %d has %d of %d (more than its share)", n, g, k, per[k], size)
				}
			}
		}
		again := Assign(scenarioWith(t, groups, 42).Expand(), 42, n)
		for idx, k := range a {
			if again[idx] != k {
				t.Fatalf("n=%d: tenant %d went to %d, then to %d: not deterministic", n, idx, k, again[idx])
			}
		}
	}
	// The seed decides the split: some other seed gives another (a control that the shuffle happens).
	base := Assign(tenants, 42, 3)
	differs := false
	for seed := int64(1); seed < 20 && !differs; seed++ {
		for idx, k := range Assign(tenants, seed, 3) {
			differs = differs || base[idx] != k
		}
	}
	if !differs {
		t.Error("19 other seeds all gave seed 42's split: the seed is not used")
	}
}

func TestCheck(t *testing.T) {
	sc := scenarioWith(t, groups, 1)
	if err := Check(Shard{11, 11}, sc); err != nil {
		t.Errorf("11 agents for 11 tenants: %v", err)
	}
	err := Check(Shard{1, 12}, sc)
	if err == nil || !strings.Contains(err.Error(), "--shard 1/12") || !strings.Contains(err.Error(), "11 tenants") {
		t.Errorf("12 agents for 11 tenants: error %v, want one naming the flag and the tenant count", err)
	}
}

func TestRunID(t *testing.T) {
	a, err := RunID(scenarioWith(t, groups, 7))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RunID(scenarioWith(t, groups, 7))
	c, _ := RunID(scenarioWith(t, strings.Replace(groups, "count: 5", "count: 6", 1), 7))
	d, _ := RunID(scenarioWith(t, groups, 8))
	if a != b {
		t.Errorf("same scenario and seed: %q then %q", a, b)
	}
	if a == c || a == d {
		t.Errorf("another scenario (%q) or seed (%q) gave the same id %q", c, d, a)
	}
	if !strings.HasPrefix(a, "sh-s7-") || len(a) != len("sh-s7-")+8 {
		t.Errorf("run id %q, want sh-s7-<8 hex digits>", a)
	}
}
