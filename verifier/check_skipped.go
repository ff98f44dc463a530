package verifier

import (
	"fmt"

	"github.com/seqgate/seqgate/ledger"
)

// skippedCheck finds expected events a durable consumer's cursor passed without delivering them and
// without a seq_too_old reset telling it to resync (a late commit, a lost page). Events a seq_too_old
// reset covered are counted as reset_covered, which is not a failure. Each witness names the frame that
// moved the cursor over the event.
type skippedCheck struct {
	ix    *index
	w     *witnessSet
	jumps []jumpLog // by consumer index
}

type skippedWitness struct {
	Consumer     string   `json:"consumer"`
	Tenant       string   `json:"tenant"`
	Seq          int64    `json:"seq"`
	Path         string   `json:"path"`
	MID          string   `json:"mid,omitempty"`
	Conn         string   `json:"conn"`
	CursorBefore int64    `json:"cursor_before"`
	CursorAfter  int64    `json:"cursor_after"`
	FrameSeq     int64    `json:"frame_seq"`
	FrameKind    string   `json:"frame_kind"`
	FrameMs      float64  `json:"frame_ms"`
	AfterAckMs   *float64 `json:"frame_after_ack_ms,omitempty"`
	FinalCursor  int64    `json:"final_cursor"`
}

type resetCoveredWitness struct {
	Consumer     string  `json:"consumer"`
	Tenant       string  `json:"tenant"`
	Seq          int64   `json:"seq"`
	Path         string  `json:"path"`
	LastTooOldMs float64 `json:"last_seq_too_old_ms"`
	FirstCursor  int64   `json:"first_cursor"`
	FinalCursor  int64   `json:"final_cursor"`
}

func newSkippedCheck(ix *index, w *witnessSet) *skippedCheck { return &skippedCheck{ix: ix, w: w} }

func (c *skippedCheck) Observe(r *ledger.Record) {
	var kind byte
	switch r.K {
	case ledger.KindEv:
		kind = frameEv
	case ledger.KindReset:
		kind = frameReset
	case ledger.KindConn:
		kind = frameResume
	default:
		return
	}
	f := c.ix.cur
	if f.cons < 0 || f.after == f.before || (kind == frameEv && f.after == f.before+1) {
		return // nothing passed: an in-order event passes only itself
	}
	for int(f.cons) >= len(c.jumps) {
		c.jumps = append(c.jumps, jumpLog{})
	}
	c.jumps[f.cons].add(jump{kind: kind, before: f.before, after: f.after, t: r.T, conn: f.conn})
}

func (c *skippedCheck) Finish(s *Summary) {
	ix := c.ix
	for ci, cs := range ix.cons {
		var wits []skippedWitness
		var witRows []auditRow
		cst := s.consumer(cs.id)
		tst := s.tenant(ix.tenantName(cs.tenant))
		ix.unreceived(cs, func(row auditRow, class deliveryClass) {
			switch class {
			case classSkipped:
				s.Skipped++
				cst.Skipped++
				tst.Skipped++
				c.w.at(WitnessSkipped, ix.persistedAt(row))
				if len(wits)+len(c.w.byCk["skipped"]) < c.w.limit {
					m := ix.mutationAt(row.id)
					wits = append(wits, skippedWitness{Consumer: cs.id, Tenant: ix.tenantName(cs.tenant), Seq: row.seq,
						Path: c.ix.path(m), MID: c.ix.mid(m), FrameKind: "unseen (a heartbeat or the final cursor)", FinalCursor: cs.finalCursor})
					witRows = append(witRows, row)
				}
			case classResetCovered:
				s.ResetCovered++
				cst.ResetCovered++
				tst.ResetCovered++
				c.w.at(WitnessResetCovered, ix.persistedAt(row))
				c.w.add(WitnessResetCovered, resetCoveredWitness{Consumer: cs.id, Tenant: ix.tenantName(cs.tenant), Seq: row.seq, Path: ix.path(ix.mutationAt(row.id)),
					LastTooOldMs: ms(cs.lastTooOldT), FirstCursor: cs.firstCursor(), FinalCursor: cs.finalCursor})
			}
		})
		if len(wits) == 0 {
			continue
		}
		if ci < len(c.jumps) {
			c.locate(ci, wits, witRows)
		}
		for _, w := range wits {
			c.w.add(WitnessSkipped, w)
		}
	}
}

// locate finds, for each witness, the first frame that moved the cursor from below its seq to at or
// above it, and fills in that frame.
func (c *skippedCheck) locate(ci int, wits []skippedWitness, rows []auditRow) {
	left := len(wits)
	found := make([]bool, len(wits))
	c.jumps[ci].each(func(j jump) bool {
		for i := range wits {
			if found[i] || !(j.before < wits[i].Seq && wits[i].Seq <= j.after) {
				continue
			}
			found[i] = true
			left--
			w := &wits[i]
			w.Conn = c.ix.connNames[j.conn]
			w.CursorBefore, w.CursorAfter, w.FrameSeq, w.FrameMs = j.before, j.after, j.after, ms(j.t)
			w.FrameKind = map[byte]string{frameEv: "ev", frameReset: "reset", frameResume: "resume"}[j.kind]
			if m := c.ix.mutationAt(rows[i].id); m.flags&fHasMut != 0 {
				d := ms(j.t - c.ix.done(m))
				w.AfterAckMs = &d
			}
		}
		return left > 0
	})
}

// skippedCheckDesc describes expected events a durable consumer's cursor passed.
var skippedCheckDesc = descriptor{
	Meaning: "a consumer's cursor moved past a stored event it never received: a silent gap in the stream",
	Name:    CheckSkipped, File: "check_skipped.go", Path: "skipped",
	Value: func(s *Summary) float64 { return float64(s.Skipped) },
	Per:   func(st *Stats) float64 { return float64(st.Skipped) }, PerConsumer: true,
	Witness: WitnessSkipped, Anomaly: true, NeedsAudit: true, Gate: gateFails,
	Title:      "skipped",
	Doc:        "per durable consumer c: expected = audited event rows of c's tenant with seq > c's first cursor (first `since`, or its first frame's `initial_sync` seq). Not delivered (by path) is first **reset-covered** when a `seq_too_old` reset reached c after the row persisted (`created_unix_ns`, else the mutation's `done_t`), whether its seq is below or above `final_cursor` (decision of 2026-11-30); else skipped when seq ≤ `final_cursor`, else undelivered",
	WitnessDoc: "`skipped`: consumer, tenant, seq, path, mid, conn, cursor_before, cursor_after, frame_seq, frame_kind (ev, reset, resume = a reconnect whose `since` jumped; \"unseen\" when a heartbeat moved it), frame_ms, frame_after_ack_ms (the passing frame's time minus the mutation's ack), final_cursor. `reset_covered`: consumer, tenant, seq, path, last_seq_too_old_ms, first_cursor, final_cursor",
	build:      func(e *checkEnv) checker { return newSkippedCheck(e.ix, e.w) },
}

// resetCoveredCheck describes expected events a seq_too_old reset covered.
var resetCoveredCheck = descriptor{
	Meaning: "events a consumer missed but was told to resync for by a reset (not a failure by itself)",
	Name:    "reset_covered", File: "check_skipped.go", Path: "reset_covered",
	Value:   func(s *Summary) float64 { return float64(s.ResetCovered) },
	Witness: WitnessResetCovered, Anomaly: true, NeedsAudit: true,
	Report: func(s *Summary) string { return fmt.Sprintf("reset_covered %d", s.ResetCovered) },
	Title:  "skipped",
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *skippedCheck) observedKinds() []string {
	return []string{ledger.KindEv, ledger.KindReset, ledger.KindConn}
}
