package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/ledger"
)

// seqMismatchCheck counts deliveries of a persisted row's path in a frame whose seq is not that row's
// seq: the frame delivered the event (matching is by path) but carried the
// wrong position. Counted per consumer with witnesses; a failure only where a threshold says so.
type seqMismatchCheck struct {
	ix *index
	w  *witnessSet
}

type seqMismatchWitness struct {
	Consumer string   `json:"consumer"`
	Tenant   string   `json:"tenant"`
	Path     string   `json:"path"`
	MID      string   `json:"mid,omitempty"`
	FrameSeq int64    `json:"frame_seq"`
	RowSeq   int64    `json:"row_seq"`
	Frames   uint32   `json:"frames"` // deliveries to this consumer with this frame seq
	Conn     string   `json:"conn,omitempty"`
	Ms       *float64 `json:"t_ms,omitempty"` // the frame's time (of the first, when several)
}

type share struct {
	cons int32
	n    uint32
}

// shares splits the n deliveries that carried a path's first seq among the consumers that got them:
// all to the first consumer, unless another consumer got the same seq too (fEvMulti). Then each
// consumer of the tenant that received the path and has no delivery of it with another seq is
// given one, and the first consumer the rest: exact unless a consumer also got duplicates of it.
func (c *seqMismatchCheck) shares(id int32, m *mutation, n uint32) []share {
	if m.flags&fEvMulti == 0 {
		return []share{{c.ix.muts.evCons(m), n}}
	}
	odd := map[int32]bool{}
	for _, o := range c.ix.oddSeq {
		if o.id == id {
			odd[o.cons] = true
		}
	}
	out := []share{{c.ix.muts.evCons(m), n}}
	for _, cs := range c.ix.cons {
		if cs.idx == c.ix.muts.evCons(m) || cs.tenant != c.ix.muts.tenantOf(m) || odd[cs.idx] || !cs.deliveredID.Contains(uint32(id)) || out[0].n <= 1 {
			continue
		}
		out = append(out, share{cs.idx, 1})
		out[0].n--
	}
	return out
}

func newSeqMismatchCheck(ix *index, w *witnessSet) *seqMismatchCheck {
	return &seqMismatchCheck{ix: ix, w: w}
}

func (c *seqMismatchCheck) Observe(*ledger.Record) {}

func (c *seqMismatchCheck) Finish(s *Summary) {
	ix := c.ix
	// odd: the row seq of each path that also had deliveries with another seq than its first (its
	// event row, the first when there are several; noTime until the audit shows one).
	odd := map[int32]int64{}
	for _, o := range ix.oddSeq {
		odd[o.id] = noTime
	}
	count := func(cons int32, n int64) {
		cs := ix.cons[cons]
		s.SeqMismatch += n
		s.consumer(cs.id).SeqMismatch += n
		s.tenant(ix.tenantName(cs.tenant)).SeqMismatch += n
	}
	for ti, a := range ix.audit {
		if a == nil {
			continue
		}
		a.sort()
		a.rows.each(func(row auditRow) bool {
			if row.op != opEvent {
				return true
			}
			m := ix.muts.at(row.id)
			if len(odd) > 0 {
				if v, ok := odd[row.id]; ok && v == noTime {
					odd[row.id] = row.seq
				}
			}
			if ix.muts.evSeq(m) == noTime || ix.muts.evSeq(m) == row.seq || c.ix.muts.evN(m) == 0 {
				return true
			}
			n := c.ix.muts.evN(m)
			c.ix.muts.setEvN(m, 0) // a second event row on the path does not count its deliveries again
			for _, share := range c.shares(row.id, m, uint32(n)) {
				count(share.cons, int64(share.n))
				c.w.add(WitnessSeqMismatch, seqMismatchWitness{Consumer: ix.cons[share.cons].id, Tenant: ix.tenantName(int32(ti)), Path: c.ix.path(m),
					MID: c.ix.mid(m), FrameSeq: ix.muts.evSeq(m), RowSeq: row.seq, Frames: share.n})
			}
			return true
		})
	}
	for _, o := range ix.oddSeq {
		rs, ok := odd[o.id]
		if !ok || rs == noTime || o.seq == rs {
			continue
		}
		count(o.cons, 1)
		m := ix.muts.at(o.id)
		t := ms(o.t)
		c.w.add(WitnessSeqMismatch, seqMismatchWitness{Consumer: ix.cons[o.cons].id, Tenant: ix.tenantName(c.ix.muts.tenantOf(m)), Path: c.ix.path(m),
			MID: c.ix.mid(m), FrameSeq: o.seq, RowSeq: rs, Frames: 1, Conn: ix.connNames[o.conn], Ms: &t})
	}
}

// seqMismatchCheckDesc describes frames whose seq is not their row's.
var seqMismatchCheckDesc = descriptor{
	Meaning: "an event delivered with a sequence number other than the one its row has",
	Name:    "seq_mismatch", File: "check_seqmismatch.go", Path: "seq_mismatch",
	Value:   func(s *Summary) float64 { return float64(s.SeqMismatch) },
	Witness: WitnessSeqMismatch, Anomaly: true, NeedsAudit: true,
	Report:     func(s *Summary) string { return fmt.Sprintf("seq_mismatch %d", s.SeqMismatch) },
	Title:      "seq mismatch",
	Doc:        "an `ev` whose path is a persisted event row's path but whose seq is not that row's. Per consumer: exact, except that when two consumers received the same wrong seq for a path first, each gets one and the first the rest (seqgate's approximation: it keeps one seq per path, not one per delivery)",
	WitnessDoc: "consumer, tenant, path, mid, frame_seq, row_seq, frames, conn and t_ms (of a delivery that disagreed with an earlier one)",
	build:      func(e *checkEnv) checker { return newSeqMismatchCheck(e.ix, e.w) },
}

// observedKinds reads no record: its work is in Finish (dispatch.go).
func (c *seqMismatchCheck) observedKinds() []string { return nil }
