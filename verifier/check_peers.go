package verifier

import (
	"maps"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/seqgate/seqgate/ledger"
)

// peersCheck adds the peers' evidence to what persisted: for a (tenant, seq) that no persisted
// record names, an ev of any consumer of the tenant that carries that seq and the path of one of
// the tenant's mutations says the service stored that row, so the row is expected of every durable
// consumer of the tenant like an audited one (a consumer whose cursor passed a seq its peer
// received has skipped it, with or without an audit: the fan-out skip). The rows it adds carry no
// persisted time (the mutation's ack stands in) and are not "still in the audit" for the
// spurious-reset rules.
//
// Two paths delivered at one seq the audit does not name are seq_mismatch for both: every frame
// that carried either path at that seq (and a frame whose path has no audit row at a seq where the
// audit has another path's row). Its Finish runs first, before every check that reads the rows.
type peersCheck struct {
	ix *index
	w  *witnessSet
	mm *seqMismatchCheck // for its split of a path's deliveries among consumers
}

type peerMismatchWitness struct {
	Consumer string `json:"consumer"`
	Tenant   string `json:"tenant"`
	Seq      int64  `json:"frame_seq"`
	Path     string `json:"path"`
	MID      string `json:"mid,omitempty"`
	Other    string `json:"other_path"` // the path another source gives that seq
	Source   string `json:"other_source"`
	Frames   uint32 `json:"frames"`
}

func newPeersCheck(ix *index, w *witnessSet) *peersCheck {
	return &peersCheck{ix: ix, w: w, mm: &seqMismatchCheck{ix: ix, w: w}}
}

func (c *peersCheck) Observe(*ledger.Record) {}

func (c *peersCheck) Finish(s *Summary) {
	ix := c.ix
	nt := len(ix.audit)
	// named: the seqs a persisted record names, by tenant, made when first asked for (a run whose
	// delivered events all have their rows never asks).
	named := make([]*roaring64.Bitmap, nt)
	names := func(ti int32, seq int64) bool {
		a := ix.audit[ti]
		if a == nil {
			return false // no rows: names nothing
		}
		if named[ti] == nil {
			named[ti] = roaring64.New()
			a.rows.each(func(row auditRow) bool {
				named[ti].Add(uint64(row.seq))
				return true
			})
		}
		return named[ti].Contains(uint64(seq))
	}
	pathAt := make([]map[int64]int32, nt) // audited seq -> the id of its event row, for mismatches
	// peer: tenant -> seq -> the ids delivered with that seq that no row names.
	peer := map[int32]map[int64][]int32{}
	for id := range int32(ix.muts.len()) {
		m := ix.muts.at(id)
		if m.flags&fDelivered == 0 || m.flags&fHasMut == 0 || m.op() != opEvent {
			continue
		}
		seq := ix.muts.evSeq(m)
		if seq == noTime || m.flags&fEventRow != 0 { // an event row of its tenant's audit names it
			continue
		}
		if names(c.ix.muts.tenantOf(m), seq) {
			c.againstAudit(s, id, m, seq, pathAt, c.ix.muts.tenantOf(m))
			continue
		}
		if peer[c.ix.muts.tenantOf(m)] == nil {
			peer[c.ix.muts.tenantOf(m)] = map[int64][]int32{}
		}
		peer[c.ix.muts.tenantOf(m)][seq] = append(peer[c.ix.muts.tenantOf(m)][seq], id)
	}
	// In tenant and seq order: the rows added and the witnesses between peers must not depend on a
	// map's iteration order (the same ledger gives the same summary).
	for _, ti := range slices.Sorted(maps.Keys(peer)) {
		bySeq := peer[ti]
		a := ix.auditFor(ti)
		for _, seq := range slices.Sorted(maps.Keys(bySeq)) {
			ids := bySeq[seq]
			for _, id := range ids {
				a.rows.add(auditRow{seq: seq, persistedT: noTime, id: id, op: opEvent})
			}
			if len(ids) > 1 {
				c.between(s, ti, seq, ids)
			}
		}
		a.sorted = false
	}
}

// between counts the frames of two or more paths delivered at one seq: each disagrees with another.
func (c *peersCheck) between(s *Summary, ti int32, seq int64, ids []int32) {
	ix := c.ix
	for i, id := range ids {
		other := ids[(i+1)%len(ids)]
		c.frames(s, id, ix.muts.at(id), seq, ix.path(ix.muts.at(other)), "a peer's frame", ti)
	}
}

// againstAudit counts the frames of a path with no audit row at a seq where the audit has a row
// of another path.
func (c *peersCheck) againstAudit(s *Summary, id int32, m *mutation, seq int64, pathAt []map[int64]int32, ti int32) {
	ix := c.ix
	if pathAt[ti] == nil {
		pathAt[ti] = map[int64]int32{}
		ix.auditOf(ti).rows.each(func(row auditRow) bool {
			if _, ok := pathAt[ti][row.seq]; !ok {
				pathAt[ti][row.seq] = row.id
			}
			return true
		})
	}
	other, ok := pathAt[ti][seq]
	if !ok || other == id {
		return
	}
	c.frames(s, id, m, seq, ix.path(ix.muts.at(other)), "an audit row", ti)
}

// frames counts every delivery of path id at seq as seq_mismatch, split among its consumers.
func (c *peersCheck) frames(s *Summary, id int32, m *mutation, seq int64, otherPath, source string, ti int32) {
	ix := c.ix
	add := func(cons int32, n uint32) {
		cs := ix.cons[cons]
		s.SeqMismatch += int64(n)
		s.consumer(cs.id).SeqMismatch += int64(n)
		s.tenant(ix.tenantName(cs.tenant)).SeqMismatch += int64(n)
		c.w.add(WitnessSeqMismatch, peerMismatchWitness{Consumer: cs.id, Tenant: ix.tenantName(ti), Seq: seq, Path: ix.path(m), MID: ix.mid(m),
			Other: otherPath, Source: source, Frames: n})
	}
	if ix.muts.evSeq(m) == seq && c.ix.muts.evN(m) > 0 {
		for _, sh := range c.mm.shares(id, m, c.ix.muts.evN(m)) {
			add(sh.cons, sh.n)
		}
	}
	for _, o := range ix.oddSeq {
		if o.id == id && o.seq == seq {
			add(o.cons, 1)
		}
	}
}

// peersCheckDesc builds the peers' evidence first: the rows it adds to the audit are read by every
// check after it (loss, skipped, undelivered, seq_mismatch).
var peersCheckDesc = descriptor{
	Meaning: "an event a consumer's peer of the same tenant received counts as stored, so a consumer that passed it has skipped it",
	Name:    "peers", File: "check_peers.go",
	build: func(e *checkEnv) checker { return newPeersCheck(e.ix, e.w) },
}

// observedKinds reads no record: its work is in Finish (dispatch.go).
func (c *peersCheck) observedKinds() []string { return nil }
