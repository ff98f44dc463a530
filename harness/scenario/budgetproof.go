package scenario

import "slices"

// Budget proof settings: whether a pass must prove the loss budget at 95%.
const (
	BudgetProofOptional = "optional" // the default: a pass that cannot prove the budget says so in its verdict line
	BudgetProofRequired = "required" // a run too small to prove the budget is inconclusive (exit 2)
)

// BudgetProvablePath is the verifier's summary path that says whether the run proved its budget
// (1) or not (0); a threshold on it that does not hold makes the verdict inconclusive, not a fail.
const BudgetProvablePath = "budget_provable"

// budgetProof validates budget_proof and, when it is required, carries it to the verifier the way
// every limit of a scenario is carried: as the threshold budget_provable == 1 in the run record.
func (v *validator) budgetProof(s *Scenario) error {
	switch s.BudgetProof {
	case "":
		s.BudgetProof = BudgetProofOptional
	case BudgetProofOptional:
	case BudgetProofRequired:
		if s.Budget == 0 {
			return v.err("budget_proof", v.at("budget_proof"), []string{"optional with budget: 0"},
				"budget: 0 can never be proven by a finite run (any sample leaves a positive upper bound)")
		}
		if s.Thresholds == nil {
			s.Thresholds = map[string][]string{}
		}
		if !slices.Contains(s.Thresholds[BudgetProvablePath], "== 1") {
			s.Thresholds[BudgetProvablePath] = append(s.Thresholds[BudgetProvablePath], "== 1")
		}
	default:
		return v.err("budget_proof", v.at("budget_proof"), []string{BudgetProofOptional, BudgetProofRequired}, "unknown value %q", s.BudgetProof)
	}
	return nil
}
