package verifier

import "github.com/seqgate/seqgate/ledger"

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
