package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

type ctxKey int

const storeKey ctxKey = 0

type authEntry struct {
	t   store.Tenant
	exp time.Time
}

// authCache keeps recently seen key hashes so a stream or a write burst does not query the meta DB
// per request; a deleted tenant's key stops working within ttl.
type authCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]authEntry
}

func (c *authCache) get(h string) (store.Tenant, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[h]
	if !ok || time.Now().After(e.exp) {
		return store.Tenant{}, false
	}
	return e.t, true
}

func (c *authCache) put(h string, t store.Tenant) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 100000 {
		c.m = map[string]authEntry{}
	}
	c.m[h] = authEntry{t: t, exp: time.Now().Add(c.ttl)}
}

// apiKey returns the key from "Authorization: Bearer K" or "X-API-Key: K".
func apiKey(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if k, ok := strings.CutPrefix(a, "Bearer "); ok {
			return strings.TrimSpace(k)
		}
		return ""
	}
	return strings.TrimSpace(r.Header.Get("X-API-Key"))
}

// withTenant authenticates the request and puts the tenant's store in its context; a wrong or
// missing key is 401 and the handler never runs.
func (s *Server) withTenant(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := apiKey(r)
		if key == "" {
			writeErr(w, http.StatusUnauthorized, "missing API key (Authorization: Bearer KEY or X-API-Key: KEY)")
			return
		}
		hash := store.HashKey(key)
		t, ok := s.auth.get(hash)
		if !ok {
			var err error
			actx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			t, err = s.meta.TenantByKey(actx, hash)
			cancel()
			if errors.Is(err, store.ErrNotFound) {
				writeErr(w, http.StatusUnauthorized, "invalid API key")
				return
			}
			if err != nil {
				writeErr(w, http.StatusServiceUnavailable, "meta DB unavailable: "+err.Error())
				return
			}
			s.auth.put(hash, t)
		}
		st, err := s.storeFor(r.Context(), t)
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, "tenant DB unavailable: "+err.Error())
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), storeKey, st)))
	}
}

func tenantStore(r *http.Request) *store.TenantStore {
	return r.Context().Value(storeKey).(*store.TenantStore)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
