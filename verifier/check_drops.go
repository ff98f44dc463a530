package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/ledger"
)

// DefaultMaxDroppedFraction is the spec's bound on dropped_fraction when no threshold sets one.
const DefaultMaxDroppedFraction = 0.01

// dropsCheck counts the arrivals the open model did not send (drop records) against the mutations it
// sent: dropped_fraction = drops / (drops + mutations), overall and per tenant, and the write
// outcomes: offered = mutations + drops, and the mutations by their answer (ok, err, timeout). A run that did not
// apply its load has not tested it. Witnesses name each drop's tenant, time and load block.
type dropsCheck struct {
	ix     *index
	w      *witnessSet
	drops  map[int32]int64
	muts   []int64    // by tenant index
	res    [][3]int64 // by tenant index: mut records answered ok, err, timeout
	dropT  []int64    // intended_t of every drop, kept only when a threshold names a window
	mutT   []int64    // intended_t of every mut record, likewise
	firstT map[int32]int64
	lastT  map[int32]int64
}

type dropWitness struct {
	Tenant     string  `json:"tenant"`
	IntendedMs float64 `json:"intended_ms"`
	Block      string  `json:"block,omitempty"`
}

// dropTenantWitness sums one tenant's drops: how many and over which span of the run.
type dropTenantWitness struct {
	Tenant  string  `json:"tenant"`
	Drops   int64   `json:"drops"`
	FirstMs float64 `json:"first_intended_ms"`
	LastMs  float64 `json:"last_intended_ms"`
}

func newDropsCheck(ix *index, w *witnessSet) *dropsCheck {
	return &dropsCheck{ix: ix, w: w, drops: map[int32]int64{}, firstT: map[int32]int64{}, lastT: map[int32]int64{}}
}

func (c *dropsCheck) Observe(r *ledger.Record) {
	switch r.K {
	case ledger.KindMut:
		ti := c.ix.muts.tenantOf(c.ix.muts.at(c.ix.cur.id))
		for int(ti) >= len(c.muts) {
			c.muts = append(c.muts, 0)
		}
		c.muts[ti]++
		for int(ti) >= len(c.res) {
			c.res = append(c.res, [3]int64{})
		}
		switch r.Res {
		case ledger.ResOK:
			c.res[ti][0]++
		case ledger.ResErr:
			c.res[ti][1]++
		case ledger.ResTimeout:
			c.res[ti][2]++
		}
		if c.ix.windows {
			c.mutT = append(c.mutT, r.IntendedT)
		}
	case ledger.KindDrop:
		ti := c.ix.tenant(r.Tenant)
		if c.drops[ti] == 0 || r.IntendedT < c.firstT[ti] {
			c.firstT[ti] = r.IntendedT
		}
		if c.drops[ti] == 0 || r.IntendedT > c.lastT[ti] {
			c.lastT[ti] = r.IntendedT
		}
		c.drops[ti]++
		if !c.w.full(WitnessDrops) {
			c.w.add(WitnessDrops, dropWitness{Tenant: c.ix.tenantName(ti), IntendedMs: ms(r.IntendedT), Block: r.Block})
		}
		if c.ix.windows {
			c.dropT = append(c.dropT, r.IntendedT)
		}
	}
}

func (c *dropsCheck) Finish(s *Summary) {
	for ti, n := range c.muts {
		if n > 0 {
			s.Mutations += n
			s.tenant(c.ix.tenantName(int32(ti))).Mutations += n
		}
	}
	for ti, n := range c.drops {
		s.Drops += n
		s.tenant(c.ix.tenantName(ti)).Drops += n
	}
	for ti, n := range c.res {
		for _, st := range []*Stats{&s.Stats, s.tenant(c.ix.tenantName(int32(ti)))} {
			st.OK, st.Err, st.Timeout = st.OK+n[0], st.Err+n[1], st.Timeout+n[2]
		}
	}
	for ti := range int32(len(c.ix.tenantNames)) {
		if n := c.drops[ti]; n > 0 {
			c.w.add(WitnessDropsByTenant, dropTenantWitness{Tenant: c.ix.tenantName(ti), Drops: n, FirstMs: ms(c.firstT[ti]), LastMs: ms(c.lastT[ti])})
		}
	}
	for _, st := range append([]*Stats{&s.Stats}, statsOf(s.PerTenant)...) {
		st.DroppedFraction = fraction(st.Drops, st.Drops+st.Mutations)
		st.Offered = st.Mutations + st.Drops
	}
}

func fraction(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// evidenceCheck summarises the audit records: whether an audit that the run record says is part of
// the run succeeded. The first successful attempt rules; without one, the
// last attempt is shown with its error.
type evidenceCheck struct {
	ix *index
	a  Audit
}

func newEvidenceCheck(ix *index) *evidenceCheck { return &evidenceCheck{ix: ix} }

func (c *evidenceCheck) Observe(r *ledger.Record) {
	if r.K != ledger.KindAudit {
		return
	}
	c.a.Attempts++
	if c.a.OK {
		return
	}
	c.a.OK, c.a.Tenants, c.a.Rows, c.a.Error = r.OK, r.AuditTenants, r.Rows, r.Error
}

func (c *evidenceCheck) Finish(s *Summary) {
	s.Audit = c.a
	s.Audit.Required = c.ix.run.Audit
}

// droppedFractionCheck describes the share of arrivals the open model did not send.
var droppedFractionCheck = descriptor{
	Meaning: "the share of scheduled writes the load generator could not send: above 1% the run did not apply its load",
	Name:    CheckDroppedFraction, File: "check_drops.go", Path: "dropped_fraction",
	Value: func(s *Summary) float64 { return s.DroppedFraction },
	Per:   func(st *Stats) float64 { return float64(st.Drops) },
	Gate:  gateFails, Max: func(*Summary) float64 { return DefaultMaxDroppedFraction }, Replaceable: true,
	FailsDoc:   "when > 0.01 and no threshold bounds it",
	Title:      "drops",
	Doc:        "`drop` records against `mut` records: dropped_fraction = drops / (drops + mutations)",
	WitnessDoc: "`drops`: tenant, intended_ms, block; `drops_by_tenant`: tenant, drops, first_intended_ms, last_intended_ms",
	build:      func(e *checkEnv) checker { e.drops = newDropsCheck(e.ix, e.w); return e.drops },
}

// loadCheck describes the arrivals: sent, by answer, and dropped.
var loadCheck = descriptor{
	Meaning: "the writes the load generator offered, sent and how they were answered",
	Name:    "load", File: "check_drops.go", Path: "drops", Covers: []string{"mutations", "offered", "ok", "err", "timeout"},
	Value:   func(s *Summary) float64 { return float64(s.Drops) },
	Witness: WitnessDrops, Anomaly: true,
	Report: func(s *Summary) string {
		return fmt.Sprintf("mutations %d, drops %d, dropped_fraction %g", s.Mutations, s.Drops, s.DroppedFraction)
	},
	Title: "drops",
}

// evidenceCheckDesc describes whether the audit the run promised succeeded.
var evidenceCheckDesc = descriptor{
	Meaning: "the database audit the run promised must have succeeded, or a pass proves nothing",
	Name:    "audit", File: "check_drops.go", Path: "audit.attempts", Covers: []string{"audit.rows", "audit.tenants"},
	Value:      func(s *Summary) float64 { return float64(s.Audit.Attempts) },
	NeedsAudit: true, Gate: gateInconclusive,
	Report:     func(s *Summary) string { return auditLine(s.Audit) },
	Title:      "evidence",
	Doc:        "the `audit` records (first success, else the last attempt) and the run record's `audit`",
	WitnessDoc: "– (`audit` in the summary)",
	build:      func(e *checkEnv) checker { return newEvidenceCheck(e.ix) },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *dropsCheck) observedKinds() []string { return []string{ledger.KindMut, ledger.KindDrop} }

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *evidenceCheck) observedKinds() []string { return []string{ledger.KindAudit} }
