package verifier

import (
	"strings"

	"github.com/seqgate/seqgate/ledger"
)

// structuralCheck judges structural ops (rename, delete, mkdir, copy: design 000 item 5). Each one the
// audit holds must reach every durable consumer whose window covers its seq, in either form the
// service may send during its dual-emit window: reset(structural_change) or the detailed
// file_changed (an ev with the structural op). Deliveries match by (tenant, op, path), never by seq
// (a delete shares its file's path, not its op). It counts which form each delivery took; a missing
// one fails (CheckStructural) with witnesses, unless a seq_too_old reset told the consumer to resync
// after the row was persisted.
//
// Paths are the index's interned (tenant, path) ids (structural ops have mut records, so their paths
// are known when delivered); a delivery of a path not interned yet is kept by its path instead.
type structuralCheck struct {
	ix   *index
	w    *witnessSet
	rows map[int32][]structuralRow // by tenant index, from the audit
	// got is the forms delivered, by consumer and path id (the key cons<<32 | id): two bits a
	// structural op, at 2*its code.
	got    map[uint64]uint8
	byPath map[structuralPathKey]uint8
}

type structuralRow struct {
	seq, persistedT int64
	id              int32
	op              uint8 // its code (structuralOps)
}

// structuralOps are the structural ops by code (classifyOp's opStructural).
var structuralOps = [...]string{ledger.OpRename, ledger.OpDelete, ledger.OpMkdir, ledger.OpCopy}

// structuralCode returns op's code; op is one of structuralOps.
func structuralCode(op string) uint8 {
	for i, o := range structuralOps {
		if o == op {
			return uint8(i)
		}
	}
	panic("verifier: " + op + " is not a structural op")
}

type structuralPathKey struct {
	cons     int32
	op, path string
}

const (
	formReset uint8 = 1 << iota
	formFileChanged
)

type structuralWitness struct {
	Consumer    string `json:"consumer"`
	Tenant      string `json:"tenant"`
	Seq         int64  `json:"seq"`
	Op          string `json:"op"`
	Path        string `json:"path"`
	FirstCursor int64  `json:"first_cursor"`
	FinalCursor int64  `json:"final_cursor"`
}

func newStructuralCheck(ix *index, w *witnessSet) *structuralCheck {
	return &structuralCheck{ix: ix, w: w, rows: map[int32][]structuralRow{}, got: map[uint64]uint8{}, byPath: map[structuralPathKey]uint8{}}
}

func (c *structuralCheck) Observe(r *ledger.Record) {
	switch r.K {
	case ledger.KindPersisted:
		if classifyOp(r.Op) != opStructural {
			return
		}
		ti := c.ix.tenantIDs[r.Tenant]
		pt := int64(noTime)
		if r.CreatedUnixNs > 0 && c.ix.run.StartUnixNs > 0 {
			pt = r.CreatedUnixNs - c.ix.run.StartUnixNs
		}
		// the driver interned every persisted record's (tenant, path)
		c.rows[ti] = append(c.rows[ti], structuralRow{seq: r.Seq, persistedT: pt, op: structuralCode(r.Op), id: c.ix.lookup(r.Tenant, r.Path)})
	case ledger.KindReset:
		if r.Reason == "structural_change" && c.ix.cur.cons >= 0 {
			c.mark(r, formReset)
		}
	case ledger.KindEv:
		if classifyOp(r.Op) == opStructural && c.ix.cur.cons >= 0 {
			c.mark(r, formFileChanged)
		}
	}
}

// mark records the form of a delivery, by its path's id, or by a copy of its path (the record's may
// be lent, and assigning to a map entry also replaces its key) when the path is not interned.
func (c *structuralCheck) mark(r *ledger.Record, form uint8) {
	if id := c.ix.lookup(r.Tenant, r.Path); id >= 0 {
		c.got[uint64(c.ix.cur.cons)<<32|uint64(id)] |= form << (2 * structuralCode(r.Op))
		return
	}
	c.byPath[structuralPathKey{c.ix.cur.cons, r.Op, strings.Clone(r.Path)}] |= form
}

// forms returns the forms in which row reached consumer cons.
func (c *structuralCheck) forms(cons int32, row structuralRow) uint8 {
	f := c.got[uint64(cons)<<32|uint64(row.id)] >> (2 * row.op) & (formReset | formFileChanged)
	if len(c.byPath) > 0 {
		f |= c.byPath[structuralPathKey{cons, structuralOps[row.op], c.ix.path(c.ix.mutationAt(row.id))}]
	}
	return f
}

func (c *structuralCheck) Finish(s *Summary) {
	st := &s.Structural
	for _, cs := range c.ix.cons {
		if !cs.durable || !cs.hasRecord {
			continue
		}
		fc := cs.firstCursor()
		for _, row := range c.rows[cs.tenant] {
			if row.seq <= fc {
				continue
			}
			st.Expected++
			switch c.forms(cs.idx, row) {
			case formReset:
				st.Reset++
			case formFileChanged:
				st.FileChanged++
			case formReset | formFileChanged:
				st.Both++
			default:
				if cs.hasTooOld && (row.persistedT == noTime || cs.lastTooOldT >= row.persistedT) {
					st.ResetCovered++
					continue
				}
				st.Missing++
				c.w.add(WitnessStructural, structuralWitness{Consumer: cs.id, Tenant: c.ix.tenantName(cs.tenant), Seq: row.seq,
					Op: structuralOps[row.op], Path: c.ix.path(c.ix.mutationAt(row.id)), FirstCursor: fc, FinalCursor: cs.finalCursor})
			}
		}
	}
}

// structuralCheckDesc describes structural ops a durable consumer received in neither form.
var structuralCheckDesc = descriptor{
	Meaning: "every rename, delete, mkdir and copy must reach each consumer as a reset or a detailed event",
	Name:    CheckStructural, File: "check_structural.go", Path: "structural.missing",
	Covers:  []string{"structural.expected", "structural.reset", "structural.file_changed", "structural.both", "structural.reset_covered"},
	Value:   func(s *Summary) float64 { return float64(s.Structural.Missing) },
	Witness: WitnessStructural, Anomaly: true, NeedsAudit: true, Gate: gateFails,
	Title:      "structural ops",
	Doc:        "seqgate's addition for design 000 item 5: each structural row (rename, delete, mkdir, copy) of a tenant's audit above a durable consumer's first cursor must reach that consumer as `reset(structural_change)` or as the detailed `file_changed` (an `ev` with the structural op), matched by (tenant, op, path); counted per form (`structural.reset`, `structural.file_changed`, `structural.both`); one received in neither form is reset-covered after a `seq_too_old`, else missing (a failure)",
	WitnessDoc: "consumer, tenant, seq, op, path, first_cursor, final_cursor",
	build:      func(e *checkEnv) checker { return newStructuralCheck(e.ix, e.w) },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *structuralCheck) observedKinds() []string {
	return []string{ledger.KindPersisted, ledger.KindReset, ledger.KindEv}
}
