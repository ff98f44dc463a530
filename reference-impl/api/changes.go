package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/seqgate/seqgate/reference-impl/sse"
)

// Pull limits (seed 003: default 100, max 1000).
const (
	changesDefaultLimit = 100
	changesMaxLimit     = 1000
)

// handleChanges serves GET /v1/events/changes?since=N&limit=L: one page of the tenant's events after
// since, {events, next_since, has_more}; 410 with the oldest retained seq when rows after since were
// swept; 400 naming the parameter for a bad since or limit.
func (s *Server) handleChanges(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	since, err := intParam(q.Get("since"), "since", 0, 0, -1)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	limit, err := intParam(q.Get("limit"), "limit", changesDefaultLimit, 1, changesMaxLimit)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	// A pull reads as a stream does: on the stream-read handle, under the tenant's read gate, so
	// one tenant's many pullers queue on their own gate and the mutations' connections stay free.
	st, err := s.onStreamHandle(r.Context(), tenantStore(r))
	if err != nil {
		writeErr(w, http.StatusServiceUnavailable, "tenant DB unavailable: "+err.Error())
		return
	}
	page, err := s.streamer.Changes(r.Context(), st, since, int(limit))
	var gone *sse.CompactedError
	switch {
	case errors.As(err, &gone):
		writeJSON(w, http.StatusGone, map[string]any{"error": gone.Error(), "reason": sse.ReasonSeqTooOld,
			"oldest_seq": gone.OldestSeq(), "next_since": gone.SweptThrough})
		return
	case err != nil:
		writeErr(w, http.StatusServiceUnavailable, "events: "+err.Error())
		return
	}
	evs := make([]sse.Change, len(page.Events))
	for i, e := range page.Events {
		evs[i] = sse.ChangeWithPayload(e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": evs, "next_since": page.NextSince, "has_more": page.HasMore})
}

// intParam parses a query parameter: absent is def; otherwise an integer in [lo, hi] (hi < 0: no
// upper bound), or an error naming the parameter, the value and the allowed range.
func intParam(v, name string, def, lo, hi int64) (int64, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || (hi >= 0 && n > hi) {
		want := "an integer >= " + strconv.FormatInt(lo, 10)
		if hi >= 0 {
			want = "an integer in " + strconv.FormatInt(lo, 10) + ".." + strconv.FormatInt(hi, 10)
		}
		return 0, errors.New(name + ": want " + want + ", got " + strconv.Quote(v))
	}
	return n, nil
}
