package api

import (
	"net/http"
	"time"
)

// adminRoutes are test-only (off unless Config.Admin): they let the harness stall the outbox
// poller, fail hot-path event inserts, hold outbox transactions open, inspect the retry buffer, run
// a sweep now, and delete a tenant.
func (s *Server) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/admin/poller/stall", func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query().Get("for")
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			writeErr(w, http.StatusBadRequest, "for: want a positive Go duration such as 30s, got "+v)
			return
		}
		s.poller.Stall(d)
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "stalled_for": d.String()})
	})
	mux.HandleFunc("POST /v1/admin/poller/resume", func(w http.ResponseWriter, r *http.Request) {
		s.poller.Resume()
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	})
	mux.HandleFunc("GET /v1/admin/poller", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"stalled": s.poller.Stalled(), "cursor": s.poller.Cursor(), "pod": s.cfg.PodID})
	})
	mux.HandleFunc("POST /v1/admin/failpoint/event-insert", func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query().Get("for")
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			writeErr(w, http.StatusBadRequest, "for: want a Go duration such as 10s (0s disarms), got "+v)
			return
		}
		tenant := r.URL.Query().Get("tenant")
		s.publisher.FailHotInserts(tenant, d)
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "for": d.String(), "tenant": tenant})
	})
	mux.HandleFunc("POST /v1/admin/failpoint/outbox-hold", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		span, err := time.ParseDuration(q.Get("for"))
		if err != nil || span < 0 {
			writeErr(w, http.StatusBadRequest, "for: want a Go duration such as 10s (0s disarms), got "+q.Get("for"))
			return
		}
		delay, err := time.ParseDuration(q.Get("delay"))
		if span > 0 && (err != nil || delay <= 0 || delay > time.Minute) {
			writeErr(w, http.StatusBadRequest, "delay: want a Go duration in (0s, 1m] such as 300ms, got "+q.Get("delay"))
			return
		}
		s.meta.HoldOutboxCommits(delay, span)
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "for": span.String(), "delay": delay.String()})
	})
	mux.HandleFunc("GET /v1/admin/buffer", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.buffer.Snapshot())
	})
	mux.HandleFunc("POST /v1/admin/sweep", func(w http.ResponseWriter, r *http.Request) {
		tenant := r.URL.Query().Get("tenant")
		st, err := s.resolve(r.Context(), tenant)
		if err != nil {
			writeErr(w, http.StatusNotFound, "tenant: "+tenant+": "+err.Error())
			return
		}
		res, err := s.sweeper.SweepNow(r.Context(), st)
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, "sweep: "+err.Error())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"deleted": res.Deleted, "batches": res.Batches, "done": res.Done})
	})
	mux.HandleFunc("DELETE /v1/admin/tenants/{id}", func(w http.ResponseWriter, r *http.Request) {
		if err := s.meta.DeleteTenant(r.Context(), r.PathValue("id")); err != nil {
			writeErr(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	})
}
