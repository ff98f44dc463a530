package synth

import (
	"strconv"

	"github.com/seqgate/seqgate/ledger"
)

type armKind uint8

const (
	armSkip armKind = iota
	armDup
	armReorder
	armSeqTooOld
	armSpurious
	armLeak
	armUnexpected
	armSeqMismatch
	armMaskedSkip
	armResyncMissed
)

// arm is one consumer anomaly waiting for its event: the first suitable event committed at or after at.
type arm struct {
	at   int64
	kind armKind
}

// consumer is one durable SSE subscriber: it receives its tenant's rows in seq order, a few ms after
// commit, on one connection (two if its pod crashes), and carries its injected anomalies.
type consumer struct {
	g  *gen
	t  *tenantState
	id string

	conns            [2]string
	pods             [2]int
	failAt, reopenAt int64 // its pod crashed: connection 1 fails, connection 2 opens
	cursorAtFail     int64

	openT  int64
	cursor int64 // max seq over every frame received
	lastT  int64 // deliveries are in order and never earlier than the previous one

	arms     []arm
	next     int
	pending  *evInfo // reorder: held back until the next event has been delivered
	cover    *evInfo // seq-too-old: missed; a seq_too_old reset follows the next frame
	stall    int     // misses its tenant's last stall closing events (undelivered)
	lastLeak string
}

func (c *consumer) open(at int64) {
	g := c.g
	c.openT = at
	r := g.q.rec()
	*r = ledger.Record{K: ledger.KindConn, Consumer: c.id, Tenant: c.t.id, Conn: c.conns[0], T: at, Phase: "open",
		Pod: g.pods[c.pods[0]], Since: 0}
	g.push(at, r)
	// Connecting with since=0 gets initial_sync at the head (nothing written yet: 0).
	c.reset(at+ms/2, 0, "initial_sync", "", "")
	if !c.t.cold { // a cold tenant's listing would read its DB: its reset at 0 passes nothing anyway
		c.listing(at+ms/2, 0, "initial_sync", "")
	}
}

// listing writes, in a run whose consumers resync, the listing after a reset at seq: one listed
// record when path is set, then the resync record, both at t on the reset's connection.
func (c *consumer) listing(t, seq int64, reason, path string) {
	g := c.g
	if !g.cfg.Resync {
		return
	}
	var n int64
	if path != "" {
		r := g.q.rec()
		*r = ledger.Record{K: ledger.KindListed, Consumer: c.id, T: t, Path: path}
		g.push(t, r)
		n = 1
	}
	r := g.q.rec()
	*r = ledger.Record{K: ledger.KindResync, Consumer: c.id, Tenant: c.t.id, Conn: c.conns[c.connAt(t)], T: t, TStart: t,
		AfterSeq: seq, Reason: reason, OK: true, Entries: n}
	g.push(t, r)
}

// resyncCover passes e with a server_restart reset at its seq (a jump over it) and lists after it:
// the listing shows e (proven) unless miss.
func (c *consumer) resyncCover(e *evInfo, miss bool) {
	t := max(c.when(e.commit), e.done+ms)
	c.reset(t, e.seq, "server_restart", "", "")
	in := &c.g.truth.Instances
	ce := ConsumerEv{Consumer: c.id, Tenant: c.t.id, Seq: e.seq, Path: e.path}
	in.ResetCovered = append(in.ResetCovered, ce)
	if miss {
		c.listing(t, e.seq, "server_restart", "")
		c.g.truth.misses = append(c.g.truth.misses, missCand{ev: ce, t: t})
		return
	}
	c.listing(t, e.seq, "server_restart", e.path)
	in.ResyncProven = append(in.ResyncProven, ce)
}

// connAt is the connection (index) a frame delivered at t arrives on.
func (c *consumer) connAt(t int64) int {
	if t >= c.failAt {
		return 1
	}
	return 0
}

// when is the delivery time of a frame committed at commit: a few ms later, never before the
// previous frame, and not while the consumer is reconnecting.
func (c *consumer) when(commit int64) int64 {
	g := c.g
	lat := g.jitter(ms, 9*ms)
	if g.rng.IntN(200) == 0 {
		lat += 50 * ms
	}
	// Never before what was already written (a held-back event released late).
	t := max(commit+lat, c.lastT, g.flushed)
	if t >= c.failAt && t < c.reopenAt {
		t = c.reopenAt + g.jitter(ms, 5*ms)
	}
	return t
}

func (c *consumer) frameSent(t, seq int64) {
	c.lastT = t
	c.cursor = max(c.cursor, seq)
	if t < c.failAt {
		c.cursorAtFail = c.cursor
	}
}

func (c *consumer) ev(t, seq int64, op, path string) {
	g := c.g
	k := c.connAt(t)
	r := g.q.rec()
	*r = ledger.Record{K: ledger.KindEv, Consumer: c.id, Tenant: c.t.id, Conn: c.conns[k], T: t, Seq: seq, Op: op,
		Path: path, Pod: g.pods[c.pods[k]]}
	g.push(t, r)
	c.frameSent(t, seq)
}

func (c *consumer) reset(t, seq int64, reason, path, op string) {
	g := c.g
	r := g.q.rec()
	*r = ledger.Record{K: ledger.KindReset, Consumer: c.id, Tenant: c.t.id, Conn: c.conns[c.connAt(t)], T: t, Seq: seq,
		Reason: reason, Path: path, Op: op}
	g.push(t, r)
	c.frameSent(t, seq)
}

// deliver sends e at its natural time.
func (c *consumer) deliver(e *evInfo) int64 {
	t := c.when(e.commit)
	c.ev(t, e.seq, e.op, e.path)
	return t
}

// releasePending delivers a held-back event in order (no reorder happened) and re-arms the reorder.
func (c *consumer) releasePending() {
	if c.pending == nil {
		return
	}
	c.deliver(c.pending)
	c.pending = nil
	c.next--
}

// coverAfter: the frame after a seq-too-old miss is followed by the seq_too_old reset, at the
// cursor (no jump; spurious only when nothing of its tenant is missing from the audit) and after the missed event's ack (so it "reached c after e was
// persisted" whichever persist time a verifier uses).
func (c *consumer) coverAfter() {
	if c.cover == nil {
		return
	}
	e := c.cover
	c.cover = nil
	t := max(c.lastT, e.done+ms)
	c.reset(t, c.cursor, "seq_too_old", "", "")
	c.g.truth.tooOld = append(c.g.truth.tooOld, tooOldReset{consumer: c.id, tenant: c.t.id, cursor: c.cursor, t: t})
	c.g.truth.Instances.ResetCovered = append(c.g.truth.Instances.ResetCovered,
		ConsumerEv{Consumer: c.id, Tenant: c.t.id, Seq: e.seq, Path: e.path})
}

// onStructural delivers a structural row as reset(structural_change).
func (c *consumer) onStructural(e *evInfo) {
	c.releasePending()
	t := c.when(e.commit)
	c.reset(t, e.seq, "structural_change", e.path, e.op)
	c.coverAfter()
}

// onEvent delivers one persisted event (or does not, as injected).
func (c *consumer) onEvent(e *evInfo) {
	g := c.g
	in := &g.truth.Instances
	if e.tailK >= 0 && e.tailK >= c.t.tail-c.stall {
		// A stalled stream: the consumer never gets there.
		in.Undelivered = append(in.Undelivered, ConsumerEv{Consumer: c.id, Tenant: c.t.id, Seq: e.seq, Path: e.path})
		return
	}
	if a := c.pending; a != nil {
		if !e.recovered && e.sendT > a.done {
			t := c.deliver(e)
			c.ev(t, a.seq, a.op, a.path)
			c.pending = nil
			in.Reorder = append(in.Reorder, Overtaken{Consumer: c.id, Path: a.path, By: e.path})
			return
		}
		c.releasePending()
	}
	if c.cover != nil {
		c.deliver(e)
		c.coverAfter()
		return
	}
	if g.inTail || c.next >= len(c.arms) || c.arms[c.next].at > e.commit || e.recovered {
		c.deliver(e)
		return
	}
	switch c.arms[c.next].kind {
	case armSkip:
		in.Skipped = append(in.Skipped, ConsumerEv{Consumer: c.id, Tenant: c.t.id, Seq: e.seq, Path: e.path})
	case armSeqTooOld:
		if c.g.cfg.Resync {
			c.resyncCover(e, false)
			break
		}
		c.cover = e
	case armResyncMissed:
		c.resyncCover(e, true)
	case armReorder:
		c.pending = e
	case armDup:
		t := c.deliver(e)
		c.ev(t, e.seq, e.op, e.path)
		in.Duplicates = append(in.Duplicates, ConsumerPath{Consumer: c.id, Path: e.path})
	case armSpurious:
		t := c.when(e.commit)
		from := c.cursor
		c.reset(t, e.seq, "seq_too_old", "", "")
		c.listing(t, e.seq, "seq_too_old", "") // e is delivered after it: the listing owes nothing
		c.ev(t, e.seq, e.op, e.path)
		in.SpuriousResets = append(in.SpuriousResets, Spurious{Consumer: c.id, From: from, To: e.seq})
	case armLeak:
		t := c.deliver(e)
		other := g.leakSource(c.t)
		if other == nil || other.lastPath == c.lastLeak {
			return // nothing new to leak yet: keep the arm
		}
		c.lastLeak = other.lastPath
		c.ev(t, c.cursor, "write", other.lastPath)
		in.Leaks = append(in.Leaks, Leak{Consumer: c.id, Tenant: c.t.id, Path: other.lastPath, Owner: other.id})
	case armUnexpected:
		t := c.deliver(e)
		g.nghost++
		p := "/" + prefix + "/" + g.runID + "/" + c.t.id + "/ghost" + strconv.Itoa(g.nghost)
		c.ev(t, c.cursor, "write", p)
		in.Unexpected = append(in.Unexpected, ConsumerPath{Consumer: c.id, Path: p})
	case armSeqMismatch:
		// e's path at the seq of the consumer's previous frame: delivered (matching is by path),
		// with the wrong seq; the cursor does not move.
		if c.cursor == e.seq {
			c.deliver(e)
			return // keep the arm for the next event
		}
		c.ev(c.when(e.commit), c.cursor, e.op, e.path)
		in.SeqMismatch = append(in.SeqMismatch, SeqMismatch{Consumer: c.id, Path: e.path, FrameSeq: c.cursor, RowSeq: e.seq})
	case armMaskedSkip:
		// e is not delivered, but a frame at e's seq carries a path no mutation wrote: a skip
		// behind a corrupted frame (and that frame is unexpected).
		g.nghost++
		p := "/" + prefix + "/" + g.runID + "/" + c.t.id + "/ghost" + strconv.Itoa(g.nghost)
		c.ev(c.when(e.commit), e.seq, "write", p)
		in.Skipped = append(in.Skipped, ConsumerEv{Consumer: c.id, Tenant: c.t.id, Seq: e.seq, Path: e.path})
		in.Unexpected = append(in.Unexpected, ConsumerPath{Consumer: c.id, Path: p})
	}
	c.next++
}

// leakSource is the next active tenant after t (in order) that has delivered an event.
func (g *gen) leakSource(t *tenantState) *tenantState {
	for i := 1; i < len(g.active); i++ {
		o := g.active[(t.active+i)%len(g.active)]
		if o.lastPath != "" {
			return o
		}
	}
	return nil
}
