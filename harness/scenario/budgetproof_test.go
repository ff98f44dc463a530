package scenario

import (
	"slices"
	"strings"
	"testing"
)

func TestBudgetProof(t *testing.T) {
	base := "name: b\nduration: 5s\ntenants: [{count: 1}]\npods: {count: 1}\n"
	for _, c := range []struct {
		name, extra string
		threshold   []string // budget_provable's expressions after Parse (nil: none)
		setting     string
		err         string
	}{
		{name: "default", setting: BudgetProofOptional},
		{name: "optional", extra: "budget_proof: optional\n", setting: BudgetProofOptional},
		{name: "required", extra: "budget_proof: required\n", setting: BudgetProofRequired, threshold: []string{"== 1"}},
		{name: "required beside other thresholds", extra: "budget_proof: required\nthresholds: {duplicates: [\"== 0\"], budget_provable: [\">= 0\"]}\n",
			setting: BudgetProofRequired, threshold: []string{">= 0", "== 1"}},
		{name: "unknown value", extra: "budget_proof: always\n", err: `b.yaml:5: budget_proof: unknown value "always" (allowed: optional, required)`},
		{name: "zero budget cannot be proven", extra: "budget: 0\nbudget_proof: required\n", err: "b.yaml:6: budget_proof: budget: 0 can never be proven"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("b.yaml", []byte(base+c.extra))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.BudgetProof != c.setting || !slices.Equal(s.Thresholds[BudgetProvablePath], c.threshold) {
				t.Errorf("budget_proof %q, thresholds %v; want %q and budget_provable %v", s.BudgetProof, s.Thresholds, c.setting, c.threshold)
			}
			// The resolved scenario (scenario.yaml of a run) parses to the same thresholds: no second "== 1".
			out, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse("scenario.yaml", out)
			if err != nil || !slices.Equal(again.Thresholds[BudgetProvablePath], c.threshold) {
				t.Errorf("reparsed: %v %v", again, err)
			}
		})
	}
}
