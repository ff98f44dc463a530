package verifier

import "github.com/seqgate/seqgate/ledger"

// spuriousCheck counts seq_too_old resets that jumped a consumer's cursor from k to s although the
// audit still holds a row in (k, s]: nothing had been swept, the consumer resynced for nothing.
type spuriousCheck struct {
	ix     *index
	w      *witnessSet
	resets []tooOld
}

type tooOld struct {
	cons          int32
	conn          int32
	before, after int64
	t             int64
}

type spuriousWitness struct {
	Consumer     string  `json:"consumer"`
	Conn         string  `json:"conn"`
	ResetMs      float64 `json:"reset_ms"`
	CursorBefore int64   `json:"cursor_before"`
	ResetSeq     int64   `json:"reset_seq"`
	RowsInGap    uint64  `json:"rows_still_in_audit"`
}

func newSpuriousCheck(ix *index, w *witnessSet) *spuriousCheck { return &spuriousCheck{ix: ix, w: w} }

func (c *spuriousCheck) Observe(r *ledger.Record) {
	if r.K != ledger.KindReset || r.Reason != "seq_too_old" {
		return
	}
	f := c.ix.cur
	c.resets = append(c.resets, tooOld{cons: f.cons, conn: f.conn, before: f.before, after: r.Seq, t: r.T})
}

func (c *spuriousCheck) Finish(s *Summary) {
	ix := c.ix
	for _, r := range c.resets {
		cs := ix.cons[r.cons]
		seqs := ix.audit[cs.tenant].seqs
		if r.after <= r.before || r.before < 0 {
			continue
		}
		n := seqs.Rank(uint64(r.after)) - seqs.Rank(uint64(r.before))
		if n == 0 {
			continue
		}
		s.SpuriousResets++
		s.consumer(cs.id).SpuriousResets++
		s.tenant(ix.tenantName(cs.tenant)).SpuriousResets++
		c.w.add("spurious_resets", spuriousWitness{Consumer: cs.id, Conn: ix.connNames[r.conn], ResetMs: ms(r.t),
			CursorBefore: r.before, ResetSeq: r.after, RowsInGap: n})
	}
}
