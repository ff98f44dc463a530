package verifier

import "github.com/seqgate/seqgate/ledger"

// resetsCheck counts delivered resets by reason, overall, per tenant and per consumer.
type resetsCheck struct {
	ix  *index
	per map[int32]map[string]int64
}

func newResetsCheck(ix *index) *resetsCheck {
	return &resetsCheck{ix: ix, per: map[int32]map[string]int64{}}
}

func (c *resetsCheck) Observe(r *ledger.Record) {
	if r.K != ledger.KindReset {
		return
	}
	m, ok := c.per[c.ix.cur.cons]
	if !ok {
		m = map[string]int64{}
		c.per[c.ix.cur.cons] = m
	}
	m[r.Reason]++
}

func (c *resetsCheck) Finish(s *Summary) {
	for ci, m := range c.per {
		cs := c.ix.cons[ci]
		tst := s.tenant(c.ix.tenantName(cs.tenant))
		cst := s.consumer(cs.id)
		for reason, n := range m {
			s.ResetsByReason[reason] += n
			tst.ResetsByReason[reason] += n
			cst.ResetsByReason[reason] += n
		}
	}
}

// resetsCheckDesc describes delivered resets by reason.
var resetsCheckDesc = descriptor{
	Meaning: "the resets consumers received, by reason",
	Name:    "resets", File: "check_resets.go", Covers: []string{"resets_by_reason.<key>"},
	Title:      "resets",
	Doc:        "delivered resets by reason",
	WitnessDoc: "–",
	build:      func(e *checkEnv) checker { return newResetsCheck(e.ix) },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *resetsCheck) observedKinds() []string { return []string{ledger.KindReset} }
