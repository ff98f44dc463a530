package verifier

import "github.com/seqgate/seqgate/verifier/ledger"

// reorderCheck finds, per consumer and in delivery order, events overtaken by an event of a mutation
// sent after their ack (done_t): reorder_ms = the latest such send time minus the overtaken one's
// done_t. An event delivered before its own mut record (delivered before the ack) has no send time
// yet; deliveries that come after it are judged at the end, when every send time is known.
type reorderCheck struct {
	ix       *index
	w        *witnessSet
	state    map[int32]*reorderState
	deferred []deferredDelivery
	per      map[int32]*Reorder
}

type reorderState struct {
	maxSendT int64
	maxID    int32
	pending  []int32 // delivered before their mut record arrived: send time not known yet
}

// deferredDelivery is a delivery judged at Finish: the resolved maximum at its time and the ids
// still unresolved then.
type deferredDelivery struct {
	cons, id, maxID int32
	t, seq, maxSend int64
	pending         []int32
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
	known := m.flags&fHasMut != 0
	if !known || len(st.pending) > 0 {
		c.deferred = append(c.deferred, deferredDelivery{cons: f.cons, id: f.id, maxID: st.maxID, t: r.T, seq: r.Seq,
			maxSend: st.maxSendT, pending: append([]int32(nil), st.pending...)})
	} else {
		c.judge(f.cons, m, st.maxSendT, st.maxID, r.T, r.Seq)
	}
	if known {
		st.see(m, f.id)
	} else {
		st.pending = append(st.pending, f.id)
	}
}

func (st *reorderState) see(m *mutation, id int32) {
	if st.maxSendT == noTime || m.t > st.maxSendT {
		st.maxSendT, st.maxID = m.t, id
	}
}

// judge decides whether m, delivered at t after events whose latest send time is maxSend (of mutation
// maxID), was overtaken.
func (c *reorderCheck) judge(cons int32, m *mutation, maxSend int64, maxID int32, t, seq int64) {
	if maxSend == noTime || maxSend <= m.doneT {
		return
	}
	d := ms(maxSend - m.doneT)
	p, ok := c.per[cons]
	if !ok {
		p = &Reorder{}
		c.per[cons] = p
	}
	p.Overtaken++
	if d > p.MaxMs {
		p.MaxMs = d
	}
	om := c.ix.mutationAt(maxID)
	c.w.add("reorder", reorderWitness{Consumer: c.ix.cons[cons].id, MID: m.mid, Path: m.path(), Seq: seq, AckMs: ms(m.doneT),
		DeliveredMs: ms(t), OvertakenBy: om.mid, OvertakerPath: om.path(), OvertakerSent: ms(om.t), ReorderMs: d})
}

func (c *reorderCheck) Finish(s *Summary) {
	for _, d := range c.deferred {
		m := c.ix.mutationAt(d.id)
		if m.flags&fHasMut == 0 {
			continue // never matched a mutation: unexpected or a leak, not a reorder
		}
		maxSend, maxID := d.maxSend, d.maxID
		for _, id := range d.pending {
			if pm := c.ix.mutationAt(id); pm.flags&fHasMut != 0 && (maxSend == noTime || pm.t > maxSend) {
				maxSend, maxID = pm.t, id
			}
		}
		c.judge(d.cons, m, maxSend, maxID, d.t, d.seq)
	}
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
