package verifier

import "github.com/seqgate/seqgate/ledger"

// reorderCheck finds, per consumer and in delivery order, events overtaken by an event of a mutation
// sent after their ack (done_t): reorder_ms = the latest such send time minus the overtaken one's
// done_t. An event delivered before its own mut record (delivered before the ack) has no send time
// yet, so the deliveries after it wait in a short per-consumer log until its mut arrives; one whose mut
// never comes within maxUnknownWait of ledger time (an unexpected event, a leak) stops holding the log.
type reorderCheck struct {
	ix    *index
	w     *witnessSet
	state map[int32]*reorderState
	per   map[int32]*Reorder
}

// maxUnknownWait bounds how long (ledger time) a delivery without a mut record holds back the judging
// of later deliveries: longer than any request timeout the harness uses.
const maxUnknownWait = int64(10 * 60 * 1e9)

type reorderState struct {
	maxSendT int64
	maxID    int32
	log      []logged // first deliveries not judged yet; the head's mut is not known yet
}

type logged struct {
	id     int32
	t, seq int64
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
	st.log = append(st.log, logged{id: f.id, t: r.T, seq: r.Seq})
	c.drain(f.cons, st, r.T, false)
}

// drain judges logged deliveries in order while their send times are known. At the end (final) or
// once a head has waited longer than maxUnknownWait, a head without a mut record is passed over.
func (c *reorderCheck) drain(cons int32, st *reorderState, now int64, final bool) {
	i := 0
	for ; i < len(st.log); i++ {
		e := st.log[i]
		m := c.ix.mutationAt(e.id)
		if m.flags&fHasMut == 0 {
			if final || now-e.t > maxUnknownWait {
				continue
			}
			break
		}
		c.judge(cons, m, st.maxSendT, st.maxID, e.t, e.seq)
		st.see(m, e.id)
	}
	if i > 0 {
		st.log = append(st.log[:0], st.log[i:]...)
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
	for ci := range int32(len(c.ix.cons)) {
		if st, ok := c.state[ci]; ok {
			c.drain(ci, st, 0, true)
		}
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
