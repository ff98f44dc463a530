package verifier

import "github.com/seqgate/seqgate/ledger"

// leaksCheck counts deliveries of another tenant's mutation to a consumer: a cross-tenant leak, a
// security failure.
type leaksCheck struct {
	ix *index
	w  *witnessSet
}

type leakWitness struct {
	Consumer       string  `json:"consumer"`
	ConsumerTenant string  `json:"consumer_tenant"`
	OwnerTenant    string  `json:"owner_tenant"`
	Path           string  `json:"path"`
	MID            string  `json:"mid"`
	Conn           string  `json:"conn"`
	Seq            int64   `json:"seq"`
	Ms             float64 `json:"t_ms"`
}

func newLeaksCheck(ix *index, w *witnessSet) *leaksCheck { return &leaksCheck{ix: ix, w: w} }

func (c *leaksCheck) Observe(*ledger.Record) {}

func (c *leaksCheck) Finish(s *Summary) {
	ix := c.ix
	ix.unmatched(func(o orphan, owner *mutation) {
		if owner == nil {
			return
		}
		cs := ix.cons[o.cons]
		s.Leaks++
		s.consumer(cs.id).Leaks++
		s.tenant(ix.tenantName(cs.tenant)).Leaks++
		c.w.add(WitnessLeaks, leakWitness{Consumer: cs.id, ConsumerTenant: ix.tenantName(cs.tenant),
			OwnerTenant: ix.tenantName(c.ix.muts.tenantOf(owner)), Path: c.ix.path(owner), MID: c.ix.mid(owner), Conn: ix.connNames[o.conn],
			Seq: o.seq, Ms: ms(o.t)})
	})
}

// leaksCheckDesc describes deliveries of another tenant's path.
var leaksCheckDesc = descriptor{
	Meaning: "a consumer received an event of another tenant: a cross-tenant leak, a security failure",
	Name:    CheckLeaks, File: "check_leaks.go", Path: "leaks",
	Value: func(s *Summary) float64 { return float64(s.Leaks) },
	Per:   func(st *Stats) float64 { return float64(st.Leaks) }, PerConsumer: true,
	Witness: WitnessLeaks, Anomaly: true, Gate: gateFails,
	Title:      "leaks",
	Doc:        "an `ev` whose path matches no mutation of the consumer's tenant but one of another tenant",
	WitnessDoc: "consumer, consumer_tenant, owner_tenant, path, mid, conn, seq, t_ms",
	build:      func(e *checkEnv) checker { return newLeaksCheck(e.ix, e.w) },
}

// observedKinds reads no record: its work is in Finish (dispatch.go).
func (c *leaksCheck) observedKinds() []string { return nil }
