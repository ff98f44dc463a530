package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/ledger"
)

// unexpectedCheck counts deliveries whose path matches no mutation at all (of any tenant): events the
// harness never caused.
type unexpectedCheck struct {
	ix *index
	w  *witnessSet
}

type unexpectedWitness struct {
	Consumer string  `json:"consumer"`
	Tenant   string  `json:"tenant"`
	Conn     string  `json:"conn"`
	Seq      int64   `json:"seq"`
	Path     string  `json:"path"`
	Ms       float64 `json:"t_ms"`
}

func newUnexpectedCheck(ix *index, w *witnessSet) *unexpectedCheck {
	return &unexpectedCheck{ix: ix, w: w}
}

func (c *unexpectedCheck) Observe(*ledger.Record) {}

func (c *unexpectedCheck) Finish(s *Summary) {
	ix := c.ix
	ix.unmatched(func(o orphan, owner *mutation) {
		if owner != nil {
			return
		}
		cs := ix.cons[o.cons]
		s.Unexpected++
		s.consumer(cs.id).Unexpected++
		s.tenant(ix.tenantName(cs.tenant)).Unexpected++
		c.w.add(WitnessUnexpected, unexpectedWitness{Consumer: cs.id, Tenant: ix.tenantName(cs.tenant), Conn: ix.connNames[o.conn],
			Seq: o.seq, Path: ix.path(ix.muts.at(o.id)), Ms: ms(o.t)})
	})
}

// unexpectedCheckDesc describes deliveries of a path no mutation wrote.
var unexpectedCheckDesc = descriptor{
	Meaning: "an event that matches no write of any tenant in the run",
	Name:    "unexpected", File: "check_unexpected.go", Path: "unexpected",
	Value:   func(s *Summary) float64 { return float64(s.Unexpected) },
	Witness: WitnessUnexpected, Anomaly: true,
	Report:     func(s *Summary) string { return fmt.Sprintf("unexpected %d", s.Unexpected) },
	Title:      "unexpected",
	Doc:        "an `ev` whose path matches no mutation of any tenant",
	WitnessDoc: "consumer, tenant, conn, seq, path, t_ms",
	build:      func(e *checkEnv) checker { return newUnexpectedCheck(e.ix, e.w) },
}

// observedKinds reads no record: its work is in Finish (dispatch.go).
func (c *unexpectedCheck) observedKinds() []string { return nil }
