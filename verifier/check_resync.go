package verifier

import (
	"fmt"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/seqgate/seqgate/ledger"
)

// resyncCheck proves, in a run whose record says resync (its consumers list after a reset), that
// every event a reset passed reached the consumer in its next listing. For a reset r of durable
// consumer c with any reason but structural_change, k is c's cursor just before r (the highest seq
// of any ev or reset c received, on any connection; none yet: the since of r's connection) and s is
// r's seq. Every persisted event of c's tenant with k < seq <= s that c never received is
// reset-covered, and exactly one of:
//   - resync_proven: its path is among the listed records of c's first resync after r on r's
//     connection (an ok one), or a mutation that removes or moves its path (a delete of the path,
//     a rename from it, or either of a folder above it) was sent, with any outcome, before that
//     listing ended;
//   - resync_missed: that listing is ok and does not show it (a failure, with a witness naming the
//     reset, the listing and the event);
//   - resync_unproven: there is no such listing (none before the connection closed), or it failed
//     (ok false): the run cannot pass while any event is unproven.
//
// An event several resets passed is missed when any of their listings missed it, else proven when
// any proved it, else unproven. reset_covered is the sum of the three. With the run record's
// resync absent or false, this check does nothing: only seq_too_old covers, as in older ledgers.
//
// Its Finish runs before skipped's: it gives the index the covered events (index.covers), so that
// an event a reset covers is never also skipped or undelivered.
type resyncCheck struct {
	ix      *index
	w       *witnessSet
	on      bool
	sawRun  bool
	cons    []resyncConsumer // by consumer index
	resets  []resyncReset
	lists   []resyncListing
	pending map[int32][]int32 // connection -> resets on it still waiting for a resync
	removed map[int32][]removal
	covered []coveredSet // by consumer index, filled by Finish
}

// resyncConsumer is what the check follows per consumer while it reads the ledger.
type resyncConsumer struct {
	seen    bool
	maxSeen int64
	since   map[int32]int64 // open connection -> its since
	listing *roaring.Bitmap // mutation ids of the listed records since the consumer's last resync
	entries int64
}

// resyncReset is one reset that obliges a listing.
type resyncReset struct {
	cons         int32
	conn         int32
	k, s, t      int64
	reason       string
	listing      int32 // index in lists; -1: none
	noneAtCursor bool  // k came from the connection's since: the consumer had received nothing
}

// resyncListing is one resync record and the mutation ids its listed records named.
type resyncListing struct {
	t, tStart  int64
	ok         bool
	entries    int64 // the record's entries
	listed     int64 // listed records seen for it
	ids        *roaring.Bitmap
	err        string
	afterSeq   int64
	conn       int32
	mismatched bool // after_seq is not the seq of the reset it answers
}

// removal is a delete or a rename of a tenant's path, sent at t.
type removal struct {
	path string
	t    int64
}

// coveredSet is how the events the resets of one consumer passed ended.
type coveredSet struct {
	proven, missed, unproven *roaring.Bitmap
	seq                      map[int32]int64 // covered mutation id -> its row's seq
}

type resyncMissedWitness struct {
	Consumer       string   `json:"consumer"`
	Tenant         string   `json:"tenant"`
	Conn           string   `json:"conn"`
	ResetReason    string   `json:"reset_reason"`
	ResetSeq       int64    `json:"reset_seq"`
	ResetMs        float64  `json:"reset_ms"`
	CursorBefore   int64    `json:"cursor_before"`
	ListingStartMs float64  `json:"listing_start_ms"`
	ListingMs      float64  `json:"listing_ms"`
	ListingEntries int64    `json:"listing_entries"`
	Seq            int64    `json:"seq"`
	Path           string   `json:"path"`
	MID            string   `json:"mid,omitempty"`
	AckMs          *float64 `json:"ack_ms,omitempty"`
	PersistedMs    *float64 `json:"persisted_ms,omitempty"`
}

type resyncUnprovenWitness struct {
	Consumer     string  `json:"consumer"`
	Tenant       string  `json:"tenant"`
	Conn         string  `json:"conn"`
	ResetReason  string  `json:"reset_reason"`
	ResetSeq     int64   `json:"reset_seq"`
	ResetMs      float64 `json:"reset_ms"`
	CursorBefore int64   `json:"cursor_before"`
	Seq          int64   `json:"seq"`
	Path         string  `json:"path"`
	Why          string  `json:"why"`
}

func newResyncCheck(ix *index, w *witnessSet) *resyncCheck {
	return &resyncCheck{ix: ix, w: w, pending: map[int32][]int32{}, removed: map[int32][]removal{}}
}

func (c *resyncCheck) state(ci int32) *resyncConsumer {
	for int(ci) >= len(c.cons) {
		c.cons = append(c.cons, resyncConsumer{since: map[int32]int64{}})
	}
	return &c.cons[ci]
}

func (c *resyncCheck) Observe(r *ledger.Record) {
	switch r.K {
	case ledger.KindRun:
		if !c.sawRun {
			c.sawRun, c.on = true, r.Resync
		}
		return
	}
	if !c.on {
		return
	}
	ix := c.ix
	if ix.cur.cons < 0 && (r.K == ledger.KindConn || r.K == ledger.KindEv || r.K == ledger.KindReset) {
		return
	}
	switch r.K {
	case ledger.KindMut:
		switch r.Op {
		case "delete":
			c.removed[ix.tenant(r.Tenant)] = append(c.removed[ix.tenant(r.Tenant)], removal{path: strings.Clone(r.Path), t: r.T})
		case "rename":
			p := r.Src
			if p == "" {
				p = r.Path
			}
			c.removed[ix.tenant(r.Tenant)] = append(c.removed[ix.tenant(r.Tenant)], removal{path: strings.Clone(p), t: r.T})
		}
	case ledger.KindConn:
		st := c.state(ix.cur.cons)
		switch r.Phase {
		case "open":
			st.since[ix.cur.conn] = r.Since
		case "close", "fail":
			delete(st.since, ix.cur.conn)
			delete(c.pending, ix.cur.conn) // its resets without a resync stay unproven
		}
	case ledger.KindEv:
		c.saw(ix.cur.cons, r.Seq)
	case ledger.KindReset:
		st := c.state(ix.cur.cons)
		if r.Reason != "structural_change" {
			k, none := st.maxSeen, !st.seen
			if none {
				k = st.since[ix.cur.conn]
			}
			c.pending[ix.cur.conn] = append(c.pending[ix.cur.conn], int32(len(c.resets)))
			c.resets = append(c.resets, resyncReset{cons: ix.cur.cons, conn: ix.cur.conn, k: k, s: r.Seq, t: r.T,
				reason: strings.Clone(r.Reason), listing: -1, noneAtCursor: none})
		}
		c.saw(ix.cur.cons, r.Seq)
	case ledger.KindListed:
		ci, ok := ix.consIDs[r.Consumer]
		if !ok {
			ix.warnf("listed record of consumer %q, which has no ev, reset or conn record before it: ignored", r.Consumer)
			return
		}
		st := c.state(ci)
		st.entries++
		if id := ix.lookup(ix.tenantNames[ix.cons[ci].tenant], r.Path); id >= 0 {
			if st.listing == nil {
				st.listing = roaring.New()
			}
			st.listing.Add(uint32(id))
		}
	case ledger.KindResync:
		ci, ok := ix.consIDs[r.Consumer]
		if !ok {
			ix.warnf("resync record of consumer %q, which has no ev, reset or conn record before it: ignored", r.Consumer)
			return
		}
		st := c.state(ci)
		conn := ix.conn(r.Conn)
		l := resyncListing{t: r.T, tStart: int64(r.TStart), ok: r.OK, entries: int64(r.Entries), listed: st.entries, ids: st.listing,
			err: strings.Clone(r.Error), afterSeq: int64(r.AfterSeq), conn: conn}
		if l.ids == nil {
			l.ids = roaring.New()
		}
		st.listing, st.entries = nil, 0
		if l.ok && l.listed != l.entries {
			ix.warnf("resync of consumer %s on %s at %.3f ms: entries %d, but %d listed records before it", r.Consumer, r.Conn, ms(r.T), l.entries, l.listed)
		}
		li := int32(len(c.lists))
		for _, ri := range c.pending[conn] {
			if c.resets[ri].cons == ci && c.resets[ri].listing < 0 {
				c.resets[ri].listing = li
				if c.resets[ri].s != l.afterSeq {
					l.mismatched = true
				}
			}
		}
		delete(c.pending, conn)
		c.lists = append(c.lists, l)
	}
}

func (c *resyncCheck) saw(ci int32, seq int64) {
	st := c.state(ci)
	if !st.seen || seq > st.maxSeen {
		st.seen, st.maxSeen = true, seq
	}
}

// outcome of one reset for one event.
const (
	outProven = iota
	outMissed
	outUnproven
)

func (c *resyncCheck) Finish(s *Summary) {
	if !c.on {
		return
	}
	ix := c.ix
	c.covered = make([]coveredSet, len(ix.cons))
	for i := range c.covered {
		c.covered[i] = coveredSet{proven: roaring.New(), missed: roaring.New(), unproven: roaring.New(), seq: map[int32]int64{}}
	}
	ix.covers = func(cs *consumerState, row auditRow) bool {
		if int(cs.idx) >= len(c.covered) {
			return false
		}
		_, ok := c.covered[cs.idx].seq[row.id]
		return ok
	}
	byCons := map[int32][]int32{}
	for ri, r := range c.resets {
		byCons[r.cons] = append(byCons[r.cons], int32(ri))
	}
	for ci, cs := range ix.cons {
		if !cs.durable || !cs.hasRecord {
			continue
		}
		resets := byCons[int32(ci)]
		outcome := make([]int, len(resets)) // per reset: the worst outcome of the events it passed
		for i := range outcome {
			outcome[i] = -1
		}
		cov := &c.covered[ci]
		a := ix.auditOf(cs.tenant)
		a.sort()
		a.rows.each(func(row auditRow) bool {
			if row.op != opEvent || cs.deliveredID.Contains(uint32(row.id)) {
				return true
			}
			for i, ri := range resets {
				r := &c.resets[ri]
				if !(r.k < row.seq && row.seq <= r.s) {
					continue
				}
				out := c.judge(r, cs, row)
				outcome[i] = max(outcome[i], out)
				cov.seq[row.id] = row.seq
				switch out {
				case outProven:
					cov.proven.Add(uint32(row.id))
				case outMissed:
					if !cov.missed.Contains(uint32(row.id)) {
						c.witnessMissed(r, cs, row)
					}
					cov.missed.Add(uint32(row.id))
				default:
					if !cov.unproven.Contains(uint32(row.id)) && !cov.proven.Contains(uint32(row.id)) {
						c.witnessUnproven(r, cs, row)
					}
					cov.unproven.Add(uint32(row.id))
				}
			}
			return true
		})
		for i := range resets {
			s.Resyncs.Resets++
			switch {
			case outcome[i] == outMissed:
				s.Resyncs.ResetsMissed++
			case outcome[i] == outUnproven:
				s.Resyncs.ResetsUnproven++
			default: // every event it passed is proven, or it passed none (it needs no listing)
				s.Resyncs.ResetsProven++
			}
		}
		c.count(s, cs, cov)
	}
	for _, l := range c.lists {
		s.Resyncs.Listings++
		if !l.ok {
			s.Resyncs.Failed++
		}
		s.Resyncs.Entries += l.entries
		s.Resyncs.ListingMs += ms(l.t - l.tStart)
		if l.mismatched {
			ix.warnf("resync on %s at %.3f ms: after_seq %d is not the seq of the reset it follows", ix.connNames[l.conn], ms(l.t), l.afterSeq)
		}
	}
}

// judge decides one reset's outcome for one event it passed.
func (c *resyncCheck) judge(r *resyncReset, cs *consumerState, row auditRow) int {
	if r.listing < 0 || !c.lists[r.listing].ok {
		return outUnproven
	}
	l := &c.lists[r.listing]
	if l.ids.Contains(uint32(row.id)) || c.removedBefore(cs.tenant, c.ix.path(c.ix.mutationAt(row.id)), l.t) {
		return outProven
	}
	return outMissed
}

// removedBefore reports whether a delete or rename of path, or of a folder above it, was sent
// before t.
func (c *resyncCheck) removedBefore(tenant int32, path string, t int64) bool {
	for _, rm := range c.removed[tenant] {
		if rm.t < t && (rm.path == path || strings.HasPrefix(path, strings.TrimSuffix(rm.path, "/")+"/")) {
			return true
		}
	}
	return false
}

// count resolves each covered event to one class (missed over proven over unproven) and adds it
// to the summary. Events a reset covered at or below the consumer's first cursor are outside its
// expected events, so reset_covered is counted here for them (skipped counts the others).
func (c *resyncCheck) count(s *Summary, cs *consumerState, cov *coveredSet) {
	ix := c.ix
	cst := s.consumer(cs.id)
	tst := s.tenant(ix.tenantName(cs.tenant))
	first := cs.firstCursor()
	for id, seq := range cov.seq {
		var p, m, u int64
		switch {
		case cov.missed.Contains(uint32(id)):
			m = 1
		case cov.proven.Contains(uint32(id)):
			p = 1
		default:
			u = 1
		}
		for _, st := range []*Stats{&s.Stats, cst, tst} {
			st.ResyncProven += p
			st.ResyncMissed += m
			st.ResyncUnproven += u
			if seq <= first {
				st.ResetCovered++
			}
		}
	}
}

func (c *resyncCheck) witnessMissed(r *resyncReset, cs *consumerState, row auditRow) {
	c.w.at(WitnessResyncMissed, r.t)
	if c.w.full(WitnessResyncMissed) {
		return
	}
	ix := c.ix
	l := &c.lists[r.listing]
	m := ix.mutationAt(row.id)
	w := resyncMissedWitness{Consumer: cs.id, Tenant: ix.tenantName(cs.tenant), Conn: ix.connNames[r.conn], ResetReason: r.reason,
		ResetSeq: r.s, ResetMs: ms(r.t), CursorBefore: r.k, ListingStartMs: ms(l.tStart), ListingMs: ms(l.t), ListingEntries: l.entries,
		Seq: row.seq, Path: ix.path(m), MID: ix.mid(m)}
	if m.flags&fHasMut != 0 {
		a := ms(c.ix.done(m))
		w.AckMs = &a
	}
	if row.persistedT != noTime {
		p := ms(row.persistedT)
		w.PersistedMs = &p
	}
	c.w.add(WitnessResyncMissed, w)
}

func (c *resyncCheck) witnessUnproven(r *resyncReset, cs *consumerState, row auditRow) {
	c.w.at(WitnessResyncUnproven, r.t)
	if c.w.full(WitnessResyncUnproven) {
		return
	}
	ix := c.ix
	why := "no resync record on the reset's connection before it closed"
	if r.listing >= 0 {
		why = "the listing failed: " + c.lists[r.listing].err
	}
	c.w.add(WitnessResyncUnproven, resyncUnprovenWitness{Consumer: cs.id, Tenant: ix.tenantName(cs.tenant), Conn: ix.connNames[r.conn],
		ResetReason: r.reason, ResetSeq: r.s, ResetMs: ms(r.t), CursorBefore: r.k, Seq: row.seq, Path: ix.path(ix.mutationAt(row.id)), Why: why})
}

// resyncBuild builds the resync check before skipped: it decides which events a reset covered.
var resyncBuild = descriptor{
	Meaning: "consumers list the tenant's files after a reset; the listing must show every event the reset passed",
	Name:    "resync", File: "check_resync.go",
	build: func(e *checkEnv) checker { return newResyncCheck(e.ix, e.w) },
}

// resyncMissedCheck fails a run whose consumer's listing after a reset lacked an event the reset
// passed.
var resyncMissedCheck = descriptor{
	Meaning: "a consumer's listing after a reset lacked an event the reset passed: the resync lost it",
	Name:    CheckResyncMissed, File: "check_resync.go", Path: "resync_missed",
	Value: func(s *Summary) float64 { return float64(s.ResyncMissed) },
	Per:   func(st *Stats) float64 { return float64(st.ResyncMissed) }, PerConsumer: true,
	Witness: WitnessResyncMissed, Anomaly: true, NeedsAudit: true, Gate: gateFails,
	Title:      "resync",
	Doc:        "with `run.resync` true, for each reset r of a durable consumer c but `structural_change`: k = the highest seq c received before r (or its connection's `since`); every persisted event of c's tenant with k < seq <= seq(r) that c had not received is reset-covered, and exactly one of **resync_proven** (its path is among the `listed` entries of c's first `resync` after r on r's connection, or a delete or rename of its path or a folder above it was sent before that listing ended), **resync_missed** (the listing lacked it) or **resync_unproven** (no `ok` listing answered r before the connection closed). Without `run.resync` only `seq_too_old` covers, as before, and the three counts are 0",
	WitnessDoc: "`resync_missed`: consumer, tenant, conn, the reset's reason, seq and time, the listing's start, end and entry count, the event's seq, path, mid and ack time. `resync_unproven`: consumer, tenant, conn, the reset and why no listing proves it",
}

// resyncProvenCheck counts the events a reset passed that the listing after it showed.
var resyncProvenCheck = descriptor{
	Meaning: "events a reset passed that the consumer's listing afterwards showed (the resync worked)",
	Name:    "resync_proven", File: "check_resync.go", Path: "resync_proven",
	Value:      func(s *Summary) float64 { return float64(s.ResyncProven) },
	NeedsAudit: true, Covers: []string{"resyncs.*"},
	Report: func(s *Summary) string {
		r := s.Resyncs
		return fmt.Sprintf("resync_proven %d; %d resets (%d proven, %d missed, %d unproven), %d listings (%d failed), %d entries in %.0f ms",
			s.ResyncProven, r.Resets, r.ResetsProven, r.ResetsMissed, r.ResetsUnproven, r.Listings, r.Failed, r.Entries, r.ListingMs)
	},
	Title: "resync",
}

// resyncUnprovenCheck holds the verdict while a reset passed events that no ok listing answered.
var resyncUnprovenCheck = descriptor{
	Meaning: "events a reset passed that no successful listing answered: the run cannot pass on them",
	Name:    "resync_unproven", File: "check_resync.go", Path: "resync_unproven",
	Value:   func(s *Summary) float64 { return float64(s.ResyncUnproven) },
	Witness: WitnessResyncUnproven, Anomaly: true, NeedsAudit: true, Gate: gateInconclusive,
	Unproven: func(s *Summary) string {
		if s.ResyncUnproven == 0 {
			return ""
		}
		return fmt.Sprintf("resync: %d events a reset passed have no ok listing after it to prove them (resync_unproven)", s.ResyncUnproven)
	},
	Title: "resync",
}
