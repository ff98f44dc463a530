package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/ledger"
)

// recoveredCheck counts ambiguous mutations (res err or timeout) whose event appeared anyway. They
// are never lost; recovered says how often an error answer still committed.
type recoveredCheck struct {
	ix *index
	w  *witnessSet
}

type recoveredWitness struct {
	MID    string  `json:"mid"`
	Tenant string  `json:"tenant"`
	Path   string  `json:"path"`
	Res    string  `json:"res"`
	Status int32   `json:"status,omitempty"`
	SentMs float64 `json:"sent_ms"`
	DoneMs float64 `json:"done_ms"`
}

func newRecoveredCheck(ix *index, w *witnessSet) *recoveredCheck {
	return &recoveredCheck{ix: ix, w: w}
}

func (c *recoveredCheck) Observe(*ledger.Record) {}

func (c *recoveredCheck) Finish(s *Summary) {
	for id := range c.ix.muts.len() {
		m := c.ix.muts.at(int32(id))
		if m.flags&fHasMut == 0 || m.op() != opEvent || (m.res() != resErr && m.res() != resTimeout) || !m.persisted() {
			continue
		}
		s.Recovered++
		s.tenant(c.ix.tenantName(c.ix.muts.tenantOf(m))).Recovered++
		res := ledger.ResErr
		if m.res() == resTimeout {
			res = ledger.ResTimeout
		}
		c.w.add(WitnessRecovered, recoveredWitness{MID: c.ix.mid(m), Tenant: c.ix.tenantName(c.ix.muts.tenantOf(m)), Path: c.ix.path(m),
			Res: res, Status: int32(c.ix.muts.status(m)), SentMs: ms(c.ix.sent(m)), DoneMs: ms(c.ix.done(m))})
	}
}

// recoveredCheckDesc describes mutations that failed but whose event appeared.
var recoveredCheckDesc = descriptor{
	Meaning: "writes that answered an error or timed out but whose event appeared anyway (not a failure)",
	Name:    "recovered", File: "check_recovered.go", Path: "recovered",
	Value:   func(s *Summary) float64 { return float64(s.Recovered) },
	Witness: WitnessRecovered, Anomaly: true,
	Report:     func(s *Summary) string { return fmt.Sprintf("recovered %d", s.Recovered) },
	Title:      "recovered",
	Doc:        "an event-producing mutation with `res` err/timeout whose event appeared anyway (never counted as lost)",
	WitnessDoc: "mid, tenant, path, res, status, sent_ms, done_ms",
	build:      func(e *checkEnv) checker { return newRecoveredCheck(e.ix, e.w) },
}

// observedKinds reads no record: its work is in Finish (dispatch.go).
func (c *recoveredCheck) observedKinds() []string { return nil }
