package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/ledger"
)

// reorderCheck finds, per consumer and in delivery order, events overtaken by an event of a mutation
// sent after their ack (done_t): reorder_ms = the latest such send time minus the overtaken one's
// done_t. There is no time horizon: an event delivered before its own mut
// record (delivered before the ack) has no send time until that record arrives, however late. Memory
// stays bounded without a horizon: a later delivery waits for such a pending one only when it could be
// overtaken by it, that is when it was acked before the pending one was delivered (a mutation is sent
// before it is delivered); every other delivery is judged on arrival. A delivery whose mut never comes
// (an unexpected event, a leak) keeps waiting only those acked before it arrived.
type reorderCheck struct {
	ix      *index
	w       *witnessSet
	state   map[int32]*reorderState
	per     map[int32]*Reorder
	pending map[int32][]int32 // mutation id -> consumers holding its delivery unresolved
	causal  bool              // warned that a mutation was sent after its delivery
}

type reorderState struct {
	maxSendT int64 // latest send time among resolved deliveries so far
	maxID    int32
	open     []openDelivery // deliveries whose verdict may still change, in delivery order
	nPending int            // entries of open without a mut record yet
	maxPendT int64          // latest delivery time among those (an upper bound of their send times)
}

type openDelivery struct {
	id       int32
	t, seq   int64
	bestSend int64 // latest known send time among deliveries before this one
	bestID   int32
	resolved bool // its own mut record is known
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
	return &reorderCheck{ix: ix, w: w, state: map[int32]*reorderState{}, per: map[int32]*Reorder{}, pending: map[int32][]int32{}}
}

func (c *reorderCheck) Observe(r *ledger.Record) {
	switch {
	case r.K == ledger.KindMut:
		id := c.ix.cur.id
		if cons, ok := c.pending[id]; ok && id >= 0 {
			delete(c.pending, id)
			for _, ci := range cons {
				c.resolve(ci, id)
			}
		}
		return
	case r.K != ledger.KindEv || !c.ix.cur.first:
		return
	}
	f := c.ix.cur
	st, ok := c.state[f.cons]
	if !ok {
		st = &reorderState{maxSendT: noTime, maxID: -1, maxPendT: noTime}
		c.state[f.cons] = st
	}
	m := c.ix.mutationAt(f.id)
	if m.flags&fHasMut == 0 {
		st.open = append(st.open, openDelivery{id: f.id, t: r.T, seq: r.Seq, bestSend: st.maxSendT, bestID: st.maxID})
		st.nPending++
		st.maxPendT = max(st.maxPendT, r.T)
		c.pending[f.id] = append(c.pending[f.id], f.cons)
		return
	}
	if st.nPending > 0 && st.maxPendT > c.ix.done(m) {
		// a delivery still without its mut came before this one and after this one's ack: it may
		// yet turn out to have been sent after the ack
		st.open = append(st.open, openDelivery{id: f.id, t: r.T, seq: r.Seq, bestSend: st.maxSendT, bestID: st.maxID, resolved: true})
	} else {
		c.judge(f.cons, m, st.maxSendT, st.maxID, r.T, r.Seq)
	}
	st.see(c.ix.sent(m), f.id)
}

// resolve: the mut record of a delivery held as pending has arrived. Its send time counts for every
// delivery after it; deliveries no pending one can change any more are judged.
func (c *reorderCheck) resolve(cons, id int32) {
	st := c.state[cons]
	m := c.ix.mutationAt(id)
	i := -1
	for k := range st.open {
		if !st.open[k].resolved && st.open[k].id == id {
			i = k
			break
		}
	}
	if i < 0 {
		return
	}
	e := &st.open[i]
	e.resolved = true
	st.nPending--
	if c.ix.sent(m) > e.t && !c.causal {
		c.causal = true
		c.ix.warnf("reorder: mut %s was sent (t %d) after it was delivered to %s (t %d); reorder counts assume a send precedes its delivery", c.ix.mid(m), c.ix.sent(m), c.ix.cons[cons].id, e.t)
	}
	for j := i + 1; j < len(st.open); j++ {
		if o := &st.open[j]; o.bestSend == noTime || c.ix.sent(m) > o.bestSend {
			o.bestSend, o.bestID = c.ix.sent(m), id
		}
	}
	st.see(c.ix.sent(m), id)
	c.settle(cons, st, false)
}

// settle judges and drops the open deliveries whose verdict is final: resolved, with no unresolved
// delivery before them that arrived after their ack (final: at the end, every resolved one).
func (c *reorderCheck) settle(cons int32, st *reorderState, final bool) {
	keep := st.open[:0]
	pendT := int64(noTime)
	for _, o := range st.open {
		if !o.resolved {
			if !final {
				keep = append(keep, o)
			}
			pendT = max(pendT, o.t)
			continue
		}
		m := c.ix.mutationAt(o.id)
		if !final && pendT > c.ix.done(m) {
			keep = append(keep, o)
			continue
		}
		c.judge(cons, m, o.bestSend, o.bestID, o.t, o.seq)
	}
	clear(st.open[len(keep):])
	st.open = keep
	st.maxPendT = noTime
	for _, o := range st.open {
		if !o.resolved {
			st.maxPendT = max(st.maxPendT, o.t)
		}
	}
}

func (st *reorderState) see(sent int64, id int32) {
	if st.maxSendT == noTime || sent > st.maxSendT {
		st.maxSendT, st.maxID = sent, id
	}
}

// judge decides whether m, delivered at t after events whose latest send time is maxSend (of mutation
// maxID), was overtaken.
func (c *reorderCheck) judge(cons int32, m *mutation, maxSend int64, maxID int32, t, seq int64) {
	if maxSend == noTime || maxSend <= c.ix.done(m) {
		return
	}
	d := ms(subSat(maxSend, c.ix.done(m)))
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
	c.w.add(WitnessReorder, reorderWitness{Consumer: c.ix.cons[cons].id, MID: c.ix.mid(m), Path: c.ix.path(m), Seq: seq, AckMs: ms(c.ix.done(m)),
		DeliveredMs: ms(t), OvertakenBy: c.ix.mid(om), OvertakerPath: c.ix.path(om), OvertakerSent: ms(c.ix.sent(om)), ReorderMs: d})
}

func (c *reorderCheck) Finish(s *Summary) {
	for ci := range int32(len(c.ix.cons)) {
		if st, ok := c.state[ci]; ok {
			c.settle(ci, st, true)
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

// reorderCheckDesc describes events overtaken by later writes' events.
var reorderCheckDesc = descriptor{
	Meaning: "an event delivered after one of a later write (counted, not a failure)",
	Name:    "reorder", File: "check_reorder.go", Path: "reorder.overtaken", Covers: []string{"reorder.max_ms"},
	Value:   func(s *Summary) float64 { return float64(s.Reorder.Overtaken) },
	Witness: WitnessReorder, Anomaly: true,
	Report: func(s *Summary) string {
		return fmt.Sprintf("overtaken %d, max %g ms", s.Reorder.Overtaken, s.Reorder.MaxMs)
	},
	Title:      "reorder",
	Doc:        "per consumer in delivery order, m is overtaken when an event delivered before it belongs to a mutation sent after m's `done_t`; reorder_ms = that latest send time − m's `done_t`",
	WitnessDoc: "consumer, mid, path, seq, ack_ms, delivered_ms, overtaken_by_mid, overtaken_by_path, overtaker_sent_ms, reorder_ms",
	build:      func(e *checkEnv) checker { return newReorderCheck(e.ix, e.w) },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *reorderCheck) observedKinds() []string { return []string{ledger.KindMut, ledger.KindEv} }
