package verifier

import "github.com/seqgate/seqgate/verifier/ledger"

// reorderCheck finds, per consumer and in delivery order, events overtaken by an event of a mutation
// sent after their ack (done_t): reorder_ms = that latest send time minus the overtaken one's done_t.
type reorderCheck struct {
	ix    *index
	w     *witnessSet
	state map[int32]*reorderState
	per   map[int32]*Reorder
}

type reorderState struct {
	maxSendT int64
	maxID    int32
	pending  []int32 // delivered before their mut record arrived: send time not known yet
}

type reorderWitness struct {
	Consumer      string  `json:"consumer"`
	MID           string  `json:"mid"`
	Path          string  `json:"path"`
	Seq           int64   `json:"seq"`
	AckMs         float64 `json:"ack_ms"`
	DeliveredMs   float64 `json:"delivered_ms"`
	OvertakenBy   string  `json:"overtaken_by_mid"`
	OvertakerPath string  `json:"overtaken_by_path"`
	OvertakerSent float64 `json:"overtaker_sent_ms"`
	ReorderMs     float64 `json:"reorder_ms"`
}

func newReorderCheck(ix *index, w *witnessSet) *reorderCheck {
	return &reorderCheck{ix: ix, w: w, state: map[int32]*reorderState{}, per: map[int32]*Reorder{}}
}

func (c *reorderCheck) Observe(r *ledger.Record) {
	if r.K != ledger.KindEv || !c.ix.cur.first {
		return
	}
	f := c.ix.cur
	st, ok := c.state[f.cons]
	if !ok {
		st = &reorderState{maxSendT: noTime, maxID: -1}
		c.state[f.cons] = st
	}
	if len(st.pending) > 0 {
		kept := st.pending[:0]
		for _, id := range st.pending {
			if pm := c.ix.mutationAt(id); pm.flags&fHasMut != 0 {
				st.see(pm, id)
			} else {
				kept = append(kept, id)
			}
		}
		st.pending = kept
	}
	m := c.ix.mutationAt(f.id)
	if m.flags&fHasMut == 0 {
		// Its ack has not been recorded yet, so its done_t is later than every send time seen so far:
		// it cannot be overtaken; its own send time joins once known.
		st.pending = append(st.pending, f.id)
		return
	}
	if st.maxSendT != noTime && st.maxSendT > m.doneT {
		d := ms(st.maxSendT - m.doneT)
		p, ok := c.per[f.cons]
		if !ok {
			p = &Reorder{}
			c.per[f.cons] = p
		}
		p.Overtaken++
		if d > p.MaxMs {
			p.MaxMs = d
		}
		om := c.ix.mutationAt(st.maxID)
		c.w.add("reorder", reorderWitness{Consumer: r.Consumer, MID: m.mid, Path: r.Path, Seq: r.Seq, AckMs: ms(m.doneT),
			DeliveredMs: ms(r.T), OvertakenBy: om.mid, OvertakerPath: om.path(), OvertakerSent: ms(om.t), ReorderMs: d})
	}
	st.see(m, f.id)
}

func (st *reorderState) see(m *mutation, id int32) {
	if st.maxSendT == noTime || m.t > st.maxSendT {
		st.maxSendT, st.maxID = m.t, id
	}
}

func (c *reorderCheck) Finish(s *Summary) {
	for ci, p := range c.per {
		cs := c.ix.cons[ci]
		s.consumer(cs.id).Reorder = *p
		tst := s.tenant(c.ix.tenantName(cs.tenant))
		for _, st := range []*Reorder{&s.Reorder, &tst.Reorder} {
			st.Overtaken += p.Overtaken
			if p.MaxMs > st.MaxMs {
				st.MaxMs = p.MaxMs
			}
		}
	}
}
