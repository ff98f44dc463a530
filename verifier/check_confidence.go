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
}

// confidenceCheckDesc describes the upper bound of the loss fraction.
var confidenceCheckDesc = descriptor{
	Name: "confidence", File: "check_confidence.go", Path: "loss_upper_95", Covers: []string{"min_acked_for_budget"},
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
