package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/ledger"
)

// spuriousCheck counts seq_too_old resets sent for nothing: one that moved a
// consumer's cursor from k to s while the audit still holds a row in (k, s], or one sent when every
// acked mutation of the tenant persisted before the reset is still in the audit (nothing of the run
// was swept, so nothing could be too old; a tenant with no rows at all is the plain case).
type spuriousCheck struct {
	ix     *index
	w      *witnessSet
	resets []tooOld
	// counted: the resets this rule counted, so check_spurious_cursor.go does not count them again.
	counted map[resetKey]bool
}

// resetKey names one reset record: its consumer, time and seq.
type resetKey struct {
	cons   int32
	t, seq int64
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
	// NothingSwept: every acked mutation of the tenant persisted before the reset is in the audit.
	NothingSwept bool `json:"nothing_swept"`
}

func newSpuriousCheck(ix *index, w *witnessSet) *spuriousCheck {
	return &spuriousCheck{ix: ix, w: w, counted: map[resetKey]bool{}}
}

func (c *spuriousCheck) Observe(r *ledger.Record) {
	if r.K != ledger.KindReset || r.Reason != "seq_too_old" {
		return
	}
	f := c.ix.cur
	c.resets = append(c.resets, tooOld{cons: f.cons, conn: f.conn, before: f.before, after: r.Seq, t: r.T})
}

func (c *spuriousCheck) Finish(s *Summary) {
	ix := c.ix
	if len(c.resets) == 0 {
		return
	}
	// The earliest ack of an acked event mutation of each tenant that is not in the audit (swept, or
	// lost): a reset after it may have been told the truth.
	firstMissing := make(map[int32]int64)
	for id := range int32(ix.muts.len()) {
		m := ix.muts.at(id)
		if !m.inW() || m.flags&fPersisted != 0 {
			continue
		}
		if t, ok := firstMissing[c.ix.muts.tenantOf(m)]; !ok || c.ix.done(m) < t {
			firstMissing[c.ix.muts.tenantOf(m)] = c.ix.done(m)
		}
	}
	for _, r := range c.resets {
		cs := ix.cons[r.cons]
		seqs := ix.auditOf(cs.tenant).seqs
		var n uint64
		if r.after > r.before && r.before >= 0 {
			n = seqs.Rank(uint64(r.after)) - seqs.Rank(uint64(r.before))
		}
		fm, missing := firstMissing[cs.tenant]
		nothingSwept := !missing || fm >= r.t
		if n == 0 && !nothingSwept {
			continue
		}
		c.counted[resetKey{r.cons, r.t, r.after}] = true
		s.SpuriousResets++
		s.consumer(cs.id).SpuriousResets++
		s.tenant(ix.tenantName(cs.tenant)).SpuriousResets++
		c.w.add(WitnessSpurious, spuriousWitness{Consumer: cs.id, Conn: ix.connNames[r.conn], ResetMs: ms(r.t),
			CursorBefore: r.before, ResetSeq: r.after, RowsInGap: n, NothingSwept: nothingSwept})
	}
}

// spuriousCheckDesc describes resets that claimed rows were gone while they were not.
var spuriousCheckDesc = descriptor{
	Meaning: "resets that told a consumer to resync although nothing it needed had been swept (counted, not a failure)",
	Name:    "spurious_resets", File: "check_spurious.go", Path: "spurious_resets",
	Value:   func(s *Summary) float64 { return float64(s.SpuriousResets) },
	Witness: WitnessSpurious, Anomaly: true, NeedsAudit: true,
	Report:     func(s *Summary) string { return fmt.Sprintf("spurious_resets %d", s.SpuriousResets) },
	Title:      "spurious resets",
	Doc:        "a `seq_too_old` reset that moved c's cursor from k to s while the audit still holds a row in (k, s], or one sent when every acked event mutation of c's tenant acked before it is in the audit (nothing of the run was swept, so nothing could be too old; a tenant with no rows is the plain case) (decision of 2026-11-30)",
	WitnessDoc: "consumer, conn, reset_ms, cursor_before, reset_seq, rows_still_in_audit, nothing_swept",
	build:      func(e *checkEnv) checker { e.spurious = newSpuriousCheck(e.ix, e.w); return e.spurious },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *spuriousCheck) observedKinds() []string { return []string{ledger.KindReset} }
