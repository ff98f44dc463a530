package sse

import (
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// horizon is the delivery horizon of a stream under store.GuardHorizon. Inserts are not serialised
// there, so seq N+1 can commit before seq N; a stream reads every tenant's seqs in order
// (store.EventsAfter) and delivers only up to the first missing one. A missing seq is an insert in
// flight, a row a sweep deleted (at or below some tenant's sweep mark: passed at once), or a hole
// (an insert that rolled back, or whose client gave up): a gap still open after wait is given up,
// so a hole holds the stream for at most wait, once per page of gaps.
type horizon struct {
	settled int64     // every seq <= settled was visible to a read of the stream, or given up
	since   time.Time // when the gap the stream is held at was first seen (zero: not held)
	upTo    int64     // the highest seq visible then: gaps below it are given up once wait passed
}

// advance judges one page read after h.settled, in seq order, and returns how many leading rows
// may be delivered, whether the stream is held at a gap (it must read again soon, even if no write
// wakes it), and whether it gave a gap up as a hole. gone (the reader's own sweep mark, Streamer.gone)
// bounds the seqs that may be missing because they were deleted.
func (h *horizon) advance(rows []store.Row, gone int64, now time.Time, wait time.Duration) (n int, held, gaveUp bool) {
	pos := h.settled
	for i, r := range rows {
		if r.Seq > pos+1 && r.Seq-1 > gone { // pos+1 .. r.Seq-1 are not visible
			if h.since.IsZero() || pos+1 > h.upTo {
				h.since, h.upTo = now, rows[len(rows)-1].Seq
			}
			if now.Sub(h.since) < wait {
				h.settled = pos
				return i, true, gaveUp
			}
			gaveUp = true
		}
		pos = r.Seq
	}
	h.settled = pos
	h.since = time.Time{}
	return len(rows), false, gaveUp
}
