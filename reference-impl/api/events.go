package api

import (
	"context"
	"net/http"
	"strconv"
)

// handleEvents serves GET /v1/events?since=N (missing = 0, garbage = 400).
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	var since int64
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeErr(w, http.StatusBadRequest, "since: want a non-negative integer seq, got "+strconv.Quote(v))
			return
		}
		since = n
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer s.streams.add(cancel)()                  // StopStreams closes it in its turn
	stop := context.AfterFunc(s.streamCtx, cancel) // the final, unpaced close
	defer stop()
	s.streamer.Serve(ctx, w, tenantStore(r), since)
}
