package verifier

import (
	"sort"

	"github.com/seqgate/seqgate/ledger"
)

// spuriousCursorCheck counts the other spurious resets: a server_restart or seq_too_old on a
// connection whose since was a cursor the service gave this consumer (the highest seq of a frame it
// delivered, or the checkpoint a pull connection ended with: its close record's final_cursor),
// while every row of the tenant at or below that cursor is still in the audit and no pod of the run
// started, crashed or exited between that cursor's delivery and the reset. The service then told
// the consumer to resync from a position it had handed out itself, with nothing gone and no
// restart to excuse it (a pull answer's next_since above the tenant's head is the known cause).
//
// "Still in the audit" needs evidence: a successful audit record, or, in a ledger without audit
// records, its persisted records; a row the audit saw during the run and no longer holds (persisted
// absent) or a delivered row it never held (a peer's evidence) is gone, and so is any acked
// mutation missing from the audit that was acked before the cursor was given (its seq is unknown).
// A reset the seq_too_old rule already counted is not counted again.
type spuriousCursorCheck struct {
	ix      *index
	w       *witnessSet
	older   *spuriousCheck
	given   []givenCursor         // by consumer index: the highest cursor the service gave it
	opened  map[int32]givenCursor // open connection -> the given cursor it resumed from
	cands   []cursorReset
	podT    []int64 // times of pod start, crash and exit records
	persist bool    // the ledger has persisted records
}

type givenCursor struct {
	ok  bool
	seq int64
	t   int64 // when it was given
}

type cursorReset struct {
	cons, conn int32
	from       givenCursor
	seq, t     int64
	reason     string
}

type spuriousCursorWitness struct {
	Consumer     string  `json:"consumer"`
	Conn         string  `json:"conn"`
	Reason       string  `json:"reason"`
	ResetMs      float64 `json:"reset_ms"`
	ResetSeq     int64   `json:"reset_seq"`
	Since        int64   `json:"since"`
	SinceGivenMs float64 `json:"since_given_ms"`
	Rule         string  `json:"rule"`
}

func newSpuriousCursorCheck(ix *index, w *witnessSet, older *spuriousCheck) *spuriousCursorCheck {
	return &spuriousCursorCheck{ix: ix, w: w, older: older, opened: map[int32]givenCursor{}}
}

func (c *spuriousCursorCheck) give(ci int32, seq, t int64) {
	for int(ci) >= len(c.given) {
		c.given = append(c.given, givenCursor{})
	}
	if g := &c.given[ci]; !g.ok || seq > g.seq {
		*g = givenCursor{ok: true, seq: seq, t: t}
	}
}

func (c *spuriousCursorCheck) Observe(r *ledger.Record) {
	ix := c.ix
	switch r.K {
	case ledger.KindPersisted:
		c.persist = true
	case ledger.KindPod:
		switch r.Phase {
		case "start", "crash", "exit":
			c.podT = append(c.podT, r.T)
		}
	case ledger.KindEv:
		if ix.cur.cons >= 0 {
			c.give(ix.cur.cons, r.Seq, r.T)
		}
	case ledger.KindReset:
		ci := ix.cur.cons
		if ci < 0 {
			return
		}
		if g, ok := c.opened[ix.cur.conn]; ok && (r.Reason == "server_restart" || r.Reason == "seq_too_old") {
			c.cands = append(c.cands, cursorReset{cons: ci, conn: ix.cur.conn, from: g, seq: r.Seq, t: r.T, reason: r.Reason})
		}
		c.give(ci, r.Seq, r.T)
	case ledger.KindConn:
		ci := ix.cur.cons
		if ci < 0 {
			return
		}
		switch r.Phase {
		case "open":
			if int(ci) < len(c.given) && c.given[ci].ok && c.given[ci].seq == r.Since && r.Since > 0 {
				c.opened[ix.cur.conn] = c.given[ci]
			}
		case "close", "fail":
			delete(c.opened, ix.cur.conn)
			if r.Phase == "close" && r.FinalCursor > 0 {
				c.give(ci, r.FinalCursor, r.T) // a pull connection's last checkpoint (seqgate's addition)
			}
		}
	}
}

func (c *spuriousCursorCheck) Finish(s *Summary) {
	ix := c.ix
	if len(c.cands) == 0 || !(s.Audit.OK || (s.Audit.Attempts == 0 && c.persist)) {
		return
	}
	sort.Slice(c.podT, func(i, j int) bool { return c.podT[i] < c.podT[j] })
	firstMissing := map[int32]int64{} // earliest ack of an acked mutation the audit does not hold, by tenant
	for id := range int32(ix.muts.len()) {
		m := ix.muts.at(id)
		if !m.inW() || m.flags&fPersisted != 0 {
			continue
		}
		if t, ok := firstMissing[c.ix.muts.tenantOf(m)]; !ok || c.ix.done(m) < t {
			firstMissing[c.ix.muts.tenantOf(m)] = c.ix.done(m)
		}
	}
	for _, r := range c.cands {
		if c.older.counted[resetKey{r.cons, r.t, r.seq}] {
			continue
		}
		cs := ix.cons[r.cons]
		if fm, ok := firstMissing[cs.tenant]; ok && fm <= r.t {
			continue // an acked row is not in the audit: it may have been swept below the cursor
		}
		if !c.allStillIn(cs.tenant, r.from.seq) || c.podBetween(r.from.t, r.t) {
			continue
		}
		s.SpuriousResets++
		s.consumer(cs.id).SpuriousResets++
		s.tenant(ix.tenantName(cs.tenant)).SpuriousResets++
		c.w.add(WitnessSpurious, spuriousCursorWitness{Consumer: cs.id, Conn: ix.connNames[r.conn], Reason: r.reason, ResetMs: ms(r.t),
			ResetSeq: r.seq, Since: r.from.seq, SinceGivenMs: ms(r.from.t), Rule: "since was a cursor the service gave this consumer"})
	}
}

// allStillIn reports whether every row of the tenant at or below seq is still in the audit.
func (c *spuriousCursorCheck) allStillIn(ti int32, seq int64) bool {
	a := c.ix.auditOf(ti)
	var rows uint64
	a.rows.each(func(row auditRow) bool {
		if row.seq <= seq && row.seq >= 0 {
			rows++
		}
		return true
	})
	return rows == a.seqs.Rank(uint64(seq))
}

// podBetween reports whether a pod started, crashed or exited in [from, to].
func (c *spuriousCursorCheck) podBetween(from, to int64) bool {
	i := sort.Search(len(c.podT), func(i int) bool { return c.podT[i] >= from })
	return i < len(c.podT) && c.podT[i] <= to
}

// spuriousCursorCheckDesc builds the given-cursor check after the evidence check (it needs the
// audit's outcome); its resets count in spurious_resets.
var spuriousCursorCheckDesc = descriptor{
	Meaning: "resets sent on a cursor the service itself had given, with every row still there (counted, not a failure)",
	Name:    "spurious_cursor", File: "check_spurious_cursor.go",
	build: func(e *checkEnv) checker { return newSpuriousCursorCheck(e.ix, e.w, e.spurious) },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *spuriousCursorCheck) observedKinds() []string {
	return []string{ledger.KindPersisted, ledger.KindPod, ledger.KindEv, ledger.KindReset, ledger.KindConn}
}
