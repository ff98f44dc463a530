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
type structuralCheck struct {
	ix   *index
	w    *witnessSet
	rows map[int32][]structuralRow // by tenant index, from the audit
	got  map[structuralKey]uint8   // forms delivered, by consumer and op
}

type structuralRow struct {
	seq, persistedT int64
	op, path        string
}

type structuralKey struct {
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
	return &structuralCheck{ix: ix, w: w, rows: map[int32][]structuralRow{}, got: map[structuralKey]uint8{}}
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
		c.rows[ti] = append(c.rows[ti], structuralRow{seq: r.Seq, persistedT: pt, op: r.Op, path: strings.Clone(r.Path)}) // the record's path may be lent
	case ledger.KindReset:
		if r.Reason == "structural_change" && c.ix.cur.cons >= 0 {
			c.mark(structuralKey{c.ix.cur.cons, r.Op, r.Path}, formReset)
		}
	case ledger.KindEv:
		if classifyOp(r.Op) == opStructural && c.ix.cur.cons >= 0 {
			c.mark(structuralKey{c.ix.cur.cons, r.Op, r.Path}, formFileChanged)
		}
	}
}

// mark records a delivery's form under a copy of the path (the record's may be lent, and assigning
// to a map entry also replaces its key).
func (c *structuralCheck) mark(k structuralKey, form uint8) {
	k.path = strings.Clone(k.path)
	c.got[k] |= form
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
			switch c.got[structuralKey{cs.idx, row.op, row.path}] {
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
				c.w.add(CheckStructural, structuralWitness{Consumer: cs.id, Tenant: c.ix.tenantName(cs.tenant), Seq: row.seq,
					Op: row.op, Path: row.path, FirstCursor: fc, FinalCursor: cs.finalCursor})
			}
		}
	}
}
