package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/seqgate/seqgate/reference-impl/store"
)

type provisionRequest struct {
	Pool string `json:"pool"`
}

type provisionResponse struct {
	TenantID string `json:"tenant_id"`
	APIKey   string `json:"api_key"`
	Pool     string `json:"pool"`
}

// handleProvision creates a tenant in the named pool, or else in the first free dedicated pool,
// or else in the first shared pool. A caller without the provisioning token (a pod with open
// provisioning) is only ever given a shared pool: a dedicated pool holds one tenant for good, and
// anyone could otherwise claim them all with empty requests.
func (s *Server) handleProvision(w http.ResponseWriter, r *http.Request) {
	trusted, ok := s.provisionAllowed(w, r)
	if !ok {
		return
	}
	hold, ok := s.reserveBody(w, r, anonymous, provisionBodyMax)
	if !ok {
		return
	}
	defer hold.release()
	var req provisionRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, provisionBodyMax))
	if err != nil {
		writeErr(w, http.StatusBadRequest, "read body: "+err.Error()) // internals (a timeout's socket) are hidden by writeErr
		return
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			writeErr(w, http.StatusBadRequest, `body: want {"pool":"ID"} or nothing: `+err.Error())
			return
		}
	}
	var candidates []store.PoolSpec
	if req.Pool != "" {
		spec, ok := s.pools.Spec(req.Pool)
		if !ok {
			// The pod's pool ids are its operator's layout, not the caller's business: the answer names
			// only the caller's own input.
			writeErr(w, http.StatusBadRequest, "pool: unknown "+strconv.Quote(req.Pool))
			return
		}
		if spec.Role == store.RoleDedicated && !trusted {
			writeErr(w, http.StatusForbidden, "pool "+strconv.Quote(req.Pool)+" is dedicated: dedicated pools need the provisioning token")
			return
		}
		candidates = []store.PoolSpec{spec}
	} else {
		for _, p := range s.pools.Specs() {
			if p.Role == store.RoleDedicated && trusted {
				candidates = append(candidates, p)
			}
		}
		for _, p := range s.pools.Specs() {
			if p.Role == store.RoleShared {
				candidates = append(candidates, p)
			}
		}
	}
	for _, p := range candidates {
		t, key, err := s.meta.CreateTenant(r.Context(), p.ID, p.Role == store.RoleDedicated)
		if errors.Is(err, store.ErrPoolTaken) {
			continue
		}
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, "provision: "+err.Error())
			return
		}
		s.cfg.Log.Info("provisioned tenant", "tenant_id", t.ID, "pool", p.ID)
		writeJSON(w, http.StatusOK, provisionResponse{TenantID: t.ID, APIKey: key, Pool: p.ID})
		return
	}
	if req.Pool != "" {
		writeErr(w, http.StatusConflict, "pool "+req.Pool+" is dedicated and already holds a tenant")
		return
	}
	if !trusted {
		writeErr(w, http.StatusServiceUnavailable, "no shared pool: without the provisioning token a tenant can only go to a shared pool")
		return
	}
	writeErr(w, http.StatusServiceUnavailable, "no free pool: every dedicated pool holds a tenant and there is no shared pool")
}
