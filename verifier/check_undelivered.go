package verifier

import "github.com/seqgate/seqgate/ledger"

// undeliveredCheck finds expected events beyond a durable consumer's final cursor: its stream never
// got there (a stall). When the consumer's tenant was deleted during the run they are counted as
// tenant_gone instead: nothing could deliver them after the deletion.
type undeliveredCheck struct {
	ix *index
	w  *witnessSet
}

type undeliveredWitness struct {
	Consumer    string  `json:"consumer"`
	Tenant      string  `json:"tenant"`
	FinalCursor int64   `json:"final_cursor"`
	Seq         int64   `json:"seq"`
	Path        string  `json:"path"`
	MID         string  `json:"mid,omitempty"`
	AckMs       float64 `json:"ack_ms,omitempty"`
}

func newUndeliveredCheck(ix *index, w *witnessSet) *undeliveredCheck {
	return &undeliveredCheck{ix: ix, w: w}
}

func (c *undeliveredCheck) Observe(*ledger.Record) {}

func (c *undeliveredCheck) Finish(s *Summary) {
	ix := c.ix
	for _, cs := range ix.cons {
		cst := s.consumer(cs.id)
		tst := s.tenant(ix.tenantName(cs.tenant))
		ix.unreceived(cs, func(row auditRow, class deliveryClass) {
			if class == classGone {
				s.TenantGone++
				cst.TenantGone++
				tst.TenantGone++
				c.w.at(WitnessTenantGone, ix.persistedAt(row))
				return
			}
			if class != classUndelivered {
				return
			}
			s.Undelivered++
			cst.Undelivered++
			tst.Undelivered++
			c.w.at(WitnessUndelivered, ix.persistedAt(row))
			if c.w.full(WitnessUndelivered) {
				return
			}
			m := ix.mutationAt(row.id)
			w := undeliveredWitness{Consumer: cs.id, Tenant: ix.tenantName(cs.tenant), FinalCursor: cs.finalCursor,
				Seq: row.seq, Path: c.ix.path(m), MID: c.ix.mid(m)}
			if m.flags&fHasMut != 0 {
				w.AckMs = ms(c.ix.done(m))
			}
			c.w.add(WitnessUndelivered, w)
		})
	}
}

// undeliveredCheckDesc describes expected events the stream never reached.
var undeliveredCheckDesc = descriptor{
	Meaning: "stored events a consumer never reached by the end of the run: its stream stalled",
	Name:    CheckUndelivered, File: "check_undelivered.go", Path: "undelivered",
	Value: func(s *Summary) float64 { return float64(s.Undelivered) },
	Per:   func(st *Stats) float64 { return float64(st.Undelivered) }, PerConsumer: true,
	Witness: WitnessUndelivered, Anomaly: true, NeedsAudit: true, Gate: gateFails,
	Title:      "undelivered",
	Doc:        "expected, not delivered, not reset-covered, seq > `final_cursor`: the stream never got there; when the consumer's tenant was deleted during the run (a `tenant_delete` fault, docs/ledger-v1.md §4) it is counted `tenant_gone` instead, not a failure",
	WitnessDoc: "consumer, tenant, final_cursor, seq, path, mid, ack_ms",
	build:      func(e *checkEnv) checker { return newUndeliveredCheck(e.ix, e.w) },
}

// tenantGoneCheck describes expected events a deleted tenant could no longer receive.
var tenantGoneCheck = descriptor{
	Meaning: "events a consumer could no longer receive because a fault deleted its tenant (not a failure)",
	Name:    "tenant_gone", File: "check_undelivered.go", Path: "tenant_gone",
	Value:   func(s *Summary) float64 { return float64(s.TenantGone) },
	Anomaly: true, Title: "undelivered",
}

// observedKinds reads no record: its work is in Finish (dispatch.go).
func (c *undeliveredCheck) observedKinds() []string { return nil }
