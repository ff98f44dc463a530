package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/ledger"
)

// confidenceCheck bounds the loss fraction from above (one-sided 95% Clopper-Pearson) and says whether
// |W| was large enough for that bound to be at or under the budget: a pass on 100 events proves little.
type confidenceCheck struct{}

func newConfidenceCheck() confidenceCheck { return confidenceCheck{} }

func (confidenceCheck) Observe(*ledger.Record) {}

func (confidenceCheck) Finish(s *Summary) {
	for _, st := range append([]*Stats{&s.Stats}, statsOf(s.PerTenant)...) {
		if st.Acked > 0 {
			st.LossUpper95 = LossUpper95(st.Lost, st.Acked)
		}
	}
	s.BoundWithinBudget = s.Acked > 0 && s.LossUpper95 <= s.Budget
	s.MinAckedForBudget = minAckedFor(s.Budget)
	if s.BoundWithinBudget {
		s.BudgetProvable = 1
	}
}

// PathBudgetProvable is the summary path of BudgetProvable: a threshold on it that does not hold makes
// the verdict inconclusive instead of failing it (the run has not shown a loss; it is too small to
// prove there was none).
const PathBudgetProvable = "budget_provable"

// maxProofAcked bounds the search for the acked count that would prove a budget.
const maxProofAcked = int64(1) << 40

// ProofNeeded is the acked count at which the run's own loss count would bound the loss fraction at
// or under the budget (one-sided 95%), or 0 when no count can (a budget of 0, or past maxProofAcked).
func ProofNeeded(lost int64, budget float64) int64 {
	if budget <= 0 || budget >= 1 {
		return 0
	}
	if lost == 0 {
		return minAckedFor(budget)
	}
	hi := max(lost, 1)
	for LossUpper95(lost, hi) > budget {
		if hi >= maxProofAcked {
			return 0
		}
		hi *= 2
	}
	lo := hi / 2
	for lo+1 < hi { // LossUpper95 falls as acked grows: the smallest hi that proves it
		mid := lo + (hi-lo)/2
		if LossUpper95(lost, mid) <= budget {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// ProofShort says why the budget is not proven and how much more load would prove it: the acked
// events needed with this run's loss count, how many more, and how many more minutes of load that is
// at this run's acked rate, e.g. "loss budget not provable: 12826 acked, 29956 needed; 17130 more,
// about 4.4 more minutes at 64.9 acked/s".
func ProofShort(s *Summary) string {
	need := ProofNeeded(s.Lost, s.Budget)
	if need == 0 {
		return fmt.Sprintf("loss budget %g not provable by any load: %d acked, %d lost", s.Budget, s.Acked, s.Lost)
	}
	msg := fmt.Sprintf("loss budget not provable: %d acked, %d needed", s.Acked, need)
	if s.Lost > 0 {
		msg += fmt.Sprintf(" with %d lost", s.Lost)
	}
	more := need - s.Acked
	if more <= 0 {
		return msg
	}
	msg += fmt.Sprintf("; %d more", more)
	if r := s.Projection.AckedPerSecond; r > 0 {
		msg += fmt.Sprintf(", about %.1f more minutes at %.1f acked/s", float64(more)/r/60, r)
	}
	return msg
}

// confidenceCheckDesc describes the upper bound of the loss fraction.
var confidenceCheckDesc = descriptor{
	Meaning: "the 95% upper bound of the loss fraction: whether the run had enough writes to prove the budget",
	Name:    "confidence", File: "check_confidence.go", Path: "loss_upper_95", Covers: []string{"min_acked_for_budget", "budget_provable"},
	Value:      func(s *Summary) float64 { return s.LossUpper95 },
	NeedsAudit: true,
	Report: func(s *Summary) string {
		return fmt.Sprintf("loss_upper_95 %g with acked %d (budget %g; provable from acked %d with no loss)", s.LossUpper95, s.Acked, s.Budget, s.MinAckedForBudget)
	},
	Title:      "confidence",
	Doc:        "Clopper-Pearson bound (regularized incomplete beta, inverted by bisection; zero losses: 1 − 0.05^(1/n) ≈ 3/n)",
	WitnessDoc: "–",
	build:      func(*checkEnv) checker { return newConfidenceCheck() },
}
