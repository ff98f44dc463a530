package sse

import (
	"context"
	"fmt"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// Pull: GET /v1/events/changes reads the same rows through the same read as a stream page (seed 003's
// pull access beside the push stream), one page per request.

// ChangesPage is one answer of the pull endpoint: the events after since in seq order, the since of
// the next request, and whether more rows were already committed past this page.
type ChangesPage struct {
	Events    []store.Event
	NextSince int64
	HasMore   bool
}

// CompactedError says that rows after since were swept: the client must resync and resume from
// SweptThrough (no retained row has a seq at or below it). It is the pull form of seq_too_old.
type CompactedError struct {
	Since        int64
	SweptThrough int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("since %d: events through seq %d were swept by retention; resync, then resume from since=%d", e.Since, e.SweptThrough, e.SweptThrough)
}

// OldestSeq is the lowest seq a retained row can have.
func (e *CompactedError) OldestSeq() int64 { return e.SweptThrough + 1 }

// Changes reads at most limit events of st's tenant after since. It reads one row past the limit to
// learn has_more. A page read past swept rows (since below the tenant's sweep mark) is a
// *CompactedError, exactly where a stream would send reset(seq_too_old). A since above the head is
// valid and answers an empty page until the tenant gets there (seed 003, section 7).
//
// It never passes a seq still in flight for the same reason a stream never does: it reads through
// the stream's read, and a tenant's events commit in seq order (store.InsertEventTx's guard), so a
// row not yet visible has no committed successor this page could return.
func (s *Streamer) Changes(ctx context.Context, st *store.TenantStore, since int64, limit int) (ChangesPage, error) {
	evs, swept, _, err := s.read(ctx, st, since, limit+1)
	if err != nil {
		return ChangesPage{}, err
	}
	if since < swept {
		s.m.Resets.WithLabelValues(st.TenantID, ReasonSeqTooOld).Inc()
		return ChangesPage{}, &CompactedError{Since: since, SweptThrough: swept}
	}
	p := ChangesPage{NextSince: since}
	if len(evs) > limit {
		evs, p.HasMore = evs[:limit], true
	}
	p.Events = evs
	if len(evs) > 0 {
		p.NextSince = evs[len(evs)-1].Seq
	}
	return p, nil
}
