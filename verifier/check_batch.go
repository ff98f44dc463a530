package verifier

import (
	"maps"
	"slices"
	"strings"

	"github.com/seqgate/seqgate/ledger"
)

// batchCheck judges batch atomicity per consumer (seed 003): a batch write's files commit in one
// transaction, so a consumer that sees one event of a batch must see every event of it (or a reset
// that tells it to resync), and never part of a batch followed by other events. A batch is the set
// of mut records sharing (tenant, batch); an event belongs to the batch its ev record names (the
// frame's batch field), because an event may be delivered before its mutation's record is written.
// Two shapes are torn, each counted once per (consumer, batch) with a witness:
//   - interleaved: an event of the batch arrives after an event outside it that followed the
//     batch's earlier events, with no resync reset (seq_too_old, initial_sync, server_restart) in
//     between: the consumer saw the batch in pieces;
//   - incomplete: a durable consumer got some of the batch's expected events and the others were
//     skipped or undelivered (not reset-covered).
//
// Memory: per consumer, one small entry per batch it saw (batches are a fraction of the events).
type batchCheck struct {
	ix      *index
	w       *witnessSet
	members map[string][]int32       // tenant "\x00" batch -> mutation ids
	per     map[int32]*batchConsumer // by consumer index
	torn    []batchWitness           // one per torn (consumer, batch), in the order found
}

// batchConsumer is one consumer's state: the batch of its last delivered event and each batch seen.
type batchConsumer struct {
	open  string // tenant "\x00" batch of the last delivered event, "" after an event outside any batch
	epoch int    // raised by every resync reset: a batch left before it cannot be torn by what follows
	seen  map[string]*batchSeen
}

type batchSeen struct {
	n         int   // events of the batch delivered
	firstT    int64 // first delivery
	left      bool  // an event outside the batch followed (leftEpoch: in which epoch)
	leftEpoch int
	foreign   string // that event's path, seq and time
	foreignS  int64
	foreignT  int64
	before    int // events of the batch delivered before it
	torn      bool
}

type batchWitness struct {
	Consumer  string  `json:"consumer"`
	Tenant    string  `json:"tenant"`
	Batch     string  `json:"batch"`
	Shape     string  `json:"shape"` // interleaved | incomplete
	Delivered int     `json:"delivered"`
	Expected  int     `json:"expected,omitempty"`
	Before    int     `json:"delivered_before_other,omitempty"`
	Other     string  `json:"other_path,omitempty"`
	OtherSeq  int64   `json:"other_seq,omitempty"`
	OtherMs   float64 `json:"other_ms,omitempty"`
	ResumedMs float64 `json:"resumed_ms,omitempty"`
	FirstMs   float64 `json:"first_ms"`
}

func newBatchCheck(ix *index, w *witnessSet) *batchCheck {
	return &batchCheck{ix: ix, w: w, members: map[string][]int32{}, per: map[int32]*batchConsumer{}}
}

func (c *batchCheck) Observe(r *ledger.Record) {
	switch r.K {
	case ledger.KindMut:
		if r.Batch != "" && c.ix.cur.id >= 0 {
			k := r.Tenant + "\x00" + r.Batch
			c.members[k] = append(c.members[k], c.ix.cur.id)
		}
	case ledger.KindEv:
		if st := c.state(r); st != nil {
			c.deliver(st, r)
		}
	case ledger.KindReset:
		st := c.state(r)
		switch {
		case st == nil:
		case r.Reason == "structural_change": // an event outside any batch
			c.leave(st, r)
		case r.Reason == "seq_too_old" || r.Reason == "initial_sync" || r.Reason == "server_restart":
			st.open = ""
			st.epoch++
		}
	}
}

func (c *batchCheck) state(r *ledger.Record) *batchConsumer {
	ci := c.ix.cur.cons
	if ci < 0 {
		return nil
	}
	st, ok := c.per[ci]
	if !ok {
		st = &batchConsumer{seen: map[string]*batchSeen{}}
		c.per[ci] = st
	}
	return st
}

// deliver notes an event: a batch's (its ev names one) or one outside any batch.
func (c *batchCheck) deliver(st *batchConsumer, r *ledger.Record) {
	if r.Batch == "" {
		c.leave(st, r)
		return
	}
	k := r.Tenant + "\x00" + r.Batch
	if k != st.open {
		c.leave(st, r)
	}
	b, ok := st.seen[k]
	if !ok {
		b = &batchSeen{firstT: r.T}
		st.seen[k] = b
	}
	if b.left && b.leftEpoch == st.epoch && !b.torn {
		b.torn = true
		cs := c.ix.cons[c.ix.cur.cons]
		c.tear(cs, r.Tenant, r.Batch, batchWitness{Shape: "interleaved", Delivered: b.n + 1, Before: b.before,
			Other: b.foreign, OtherSeq: b.foreignS, OtherMs: ms(b.foreignT), ResumedMs: ms(r.T), FirstMs: ms(b.firstT)})
	}
	b.n++
	st.open = k
}

// leave closes the open batch: r is the first event after it that is not one of its own.
func (c *batchCheck) leave(st *batchConsumer, r *ledger.Record) {
	if st.open == "" {
		return
	}
	if b := st.seen[st.open]; b != nil && !b.left {
		b.left, b.leftEpoch, b.before = true, st.epoch, b.n
		b.foreign, b.foreignS, b.foreignT = strings.Clone(r.Path), r.Seq, r.T // the record's path may be lent
	}
	st.open = ""
}

// tear counts one torn (consumer, batch) and keeps its witness.
func (c *batchCheck) tear(cs *consumerState, tenant, batch string, w batchWitness) {
	w.Consumer, w.Tenant, w.Batch = cs.id, tenant, batch
	c.torn = append(c.torn, w)
}

func (c *batchCheck) Finish(s *Summary) {
	ix := c.ix
	batchOf := map[int32]string{}
	for k, ids := range c.members {
		counted := false
		for _, id := range ids {
			if ix.mutationAt(id).inW() {
				batchOf[id] = k
				counted = true
			}
		}
		if counted {
			s.Batches++
		}
	}
	for _, ci := range slices.Sorted(maps.Keys(c.per)) {
		st, cs := c.per[ci], ix.cons[ci]
		if len(st.seen) == 0 || len(batchOf) == 0 {
			continue // the walk below would find no batch this consumer saw part of
		}
		missing, expected := map[string]int{}, map[string]int{}
		ix.expected(cs, func(row auditRow, class deliveryClass) {
			k, ok := batchOf[row.id]
			if !ok || st.seen[k] == nil {
				return // not a batch's, or a batch this consumer saw nothing of (skipped/undelivered say so)
			}
			expected[k]++
			if class == classSkipped || class == classUndelivered {
				missing[k]++
			}
		})
		for _, k := range slices.Sorted(maps.Keys(missing)) {
			if b := st.seen[k]; !b.torn {
				b.torn = true
				t, batch := splitKey(k)
				c.tear(cs, t, batch, batchWitness{Shape: "incomplete", Delivered: b.n, Expected: expected[k], FirstMs: ms(b.firstT),
					Other: b.foreign, OtherSeq: b.foreignS, OtherMs: ms(b.foreignT), Before: b.before})
			}
		}
	}
	for _, w := range c.torn {
		s.BatchTorn++
		s.consumer(w.Consumer).BatchTorn++
		s.tenant(w.Tenant).BatchTorn++
		c.w.add(WitnessBatchAtomicity, w) // the check's name: its witnesses come first where it failed
	}
}

// splitKey returns the tenant and batch of a tenant "\x00" batch key.
func splitKey(k string) (tenant, batch string) {
	tenant, batch, _ = strings.Cut(k, "\x00")
	return tenant, batch
}

// batchCheckDesc describes batch writes a consumer saw in pieces.
var batchCheckDesc = descriptor{
	Meaning: "a batch write must reach each consumer whole and together, never in pieces",
	Name:    CheckBatchAtomicity, File: "check_batch.go", Path: "batch_torn", Covers: []string{"batches"},
	Value: func(s *Summary) float64 { return float64(s.BatchTorn) },
	Per:   func(st *Stats) float64 { return float64(st.BatchTorn) }, PerConsumer: true,
	Witness: WitnessBatchAtomicity, Anomaly: true, NeedsAudit: true, Gate: gateFails,
	FailsDoc:   "when batch_torn > 0",
	Title:      "batch atomicity",
	Doc:        "(seed 003) a batch is the `mut` records sharing (tenant, `batch`); an event belongs to the batch its `ev` names (eventlogd's frames carry it; an event may be delivered before its mutation's record exists). Per consumer, a (consumer, batch) pair is **torn** once, either **interleaved**: an event of the batch arrives after an event outside it (an `ev` of another or no batch, a `reset(structural_change)`) that followed the batch's earlier events, with no resync reset (`seq_too_old`, `initial_sync`, `server_restart`) in between; or **incomplete**: a durable consumer got some of the batch's expected events (as for skipped) and others are skipped or undelivered (reset-covered ones are fine). `batches` counts the batches with an acked file; `batch_torn` the torn pairs, per consumer and tenant. Memory: one small entry per (consumer, batch seen)",
	WitnessDoc: "`batch_atomicity`: consumer, tenant, batch, shape (interleaved, incomplete), delivered, expected, delivered_before_other, other_path, other_seq, other_ms (the event that came between), resumed_ms (when the batch resumed), first_ms",
	build:      func(e *checkEnv) checker { return newBatchCheck(e.ix, e.w) },
}
