package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/ledger"
)

// duplicatesCheck counts event paths delivered more than once to the same consumer (every delivery
// after the first is one duplicate).
type duplicatesCheck struct {
	ix      *index
	w       *witnessSet
	perCons []int64
}

type duplicateWitness struct {
	Consumer string  `json:"consumer"`
	Conn     string  `json:"conn"`
	Seq      int64   `json:"seq"`
	Path     string  `json:"path"`
	Ms       float64 `json:"t_ms"`
}

func newDuplicatesCheck(ix *index, w *witnessSet) *duplicatesCheck {
	return &duplicatesCheck{ix: ix, w: w}
}

func (c *duplicatesCheck) Observe(r *ledger.Record) {
	if r.K != ledger.KindEv || c.ix.cur.first || c.ix.cur.id < 0 {
		return // a first delivery, or a structural op's file_changed (check_structural.go)
	}
	for int(c.ix.cur.cons) >= len(c.perCons) {
		c.perCons = append(c.perCons, 0)
	}
	c.perCons[c.ix.cur.cons]++
	if c.w.full(WitnessDuplicates) {
		return
	}
	c.w.add(WitnessDuplicates, duplicateWitness{Consumer: r.Consumer, Conn: r.Conn, Seq: r.Seq, Path: c.ix.path(c.ix.mutationAt(c.ix.cur.id)), Ms: ms(r.T)}) // not r.Path: it may be lent
}

func (c *duplicatesCheck) Finish(s *Summary) {
	for ci, n := range c.perCons {
		cs := c.ix.cons[ci]
		s.Duplicates += n
		s.consumer(cs.id).Duplicates += n
		s.tenant(c.ix.tenantName(cs.tenant)).Duplicates += n
	}
}

// duplicatesCheckDesc describes deliveries of a path after its first.
var duplicatesCheckDesc = descriptor{
	Meaning: "an event delivered to the same consumer more than once",
	Name:    "duplicates", File: "check_duplicates.go", Path: "duplicates",
	Value:   func(s *Summary) float64 { return float64(s.Duplicates) },
	Witness: WitnessDuplicates, Anomaly: true,
	Report:     func(s *Summary) string { return fmt.Sprintf("duplicates %d", s.Duplicates) },
	Title:      "duplicates",
	Doc:        "every delivery of a path to a consumer after its first (three deliveries = 2)",
	WitnessDoc: "consumer, conn, seq, path, t_ms",
	build:      func(e *checkEnv) checker { return newDuplicatesCheck(e.ix, e.w) },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *duplicatesCheck) observedKinds() []string { return []string{ledger.KindEv} }
