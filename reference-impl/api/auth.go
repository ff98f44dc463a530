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
// per request; a deleted tenant's key stops working within ttl. When the meta DB cannot answer, an
// entry up to staleMax old is still honoured, so a meta-DB outage does not fail mutations of known
// tenants (the meta DB must not sit on the write path).
type authCache struct {
	ttl      time.Duration
	staleMax time.Duration
	mu       sync.Mutex
	m        map[string]authEntry
	inflight map[string]bool
}

// get returns the entry for h, whether it is still fresh, and whether there is one at all.
func (c *authCache) get(h string) (t store.Tenant, fresh, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[h]
	if !ok {
		return store.Tenant{}, false, false
	}
	now := time.Now()
	if now.After(e.exp.Add(c.staleMax)) {
		return store.Tenant{}, false, false
	}
	return e.t, now.Before(e.exp), true
}

func (c *authCache) put(h string, t store.Tenant) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 100000 {
		c.m = map[string]authEntry{}
	}
	c.m[h] = authEntry{t: t, exp: time.Now().Add(c.ttl)}
}

// revalidate refreshes hash's cache entry in the background (one lookup per key at a time).
func (s *Server) revalidate(hash string) {
	c := s.auth
	c.mu.Lock()
	if c.inflight == nil {
		c.inflight = map[string]bool{}
	}
	if c.inflight[hash] || s.bgCtx.Err() != nil {
		c.mu.Unlock()
		return
	}
	c.inflight[hash] = true
	s.authWG.Add(1)
	c.mu.Unlock()
	go func() {
		defer s.authWG.Done()
		ctx, cancel := context.WithTimeout(s.bgCtx, 5*time.Second)
		t, err := s.meta.TenantByKey(ctx, hash)
		cancel()
		switch {
		case errors.Is(err, store.ErrNotFound):
			c.drop(hash)
		case err == nil:
			c.put(hash, t)
		}
		c.mu.Lock()
		delete(c.inflight, hash)
		c.mu.Unlock()
	}()
}

func (c *authCache) drop(h string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, h)
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
		t, fresh, cached := s.auth.get(hash)
		switch {
		case fresh:
		case cached:
			// Serve the known tenant now and revalidate in the background: a slow or failing meta DB
			// never sits on the request path of a tenant we already know.
			s.revalidate(hash)
		default:
			actx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			got, err := s.meta.TenantByKey(actx, hash)
			cancel()
			if errors.Is(err, store.ErrNotFound) {
				writeErr(w, http.StatusUnauthorized, "invalid API key")
				return
			}
			if err != nil {
				writeErr(w, http.StatusServiceUnavailable, "meta DB unavailable: "+err.Error())
				return
			}
			t = got
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
