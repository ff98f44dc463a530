package api

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seqgate/seqgate/reference-impl/store"
)

type ctxKey int

// tenantKey is the context key of a request's *reqTenant (withTenant).
const tenantKey ctxKey = 0

// reqTenant is what withTenant learnt of a request's caller: its tenant's store and the hash of
// the API key it presented, as store.HashKey spells it (one context value, so a request is copied
// once for both; the hash in bytes, so a write never makes it a string).
type reqTenant struct {
	st   *store.TenantStore
	hash [store.KeyHashLen]byte
}

type authEntry struct {
	t   store.Tenant
	exp time.Time
	// st is the tenant's store as the last request built it (keepStore): the next request of the
	// key reuses it while its pool's handles are the same (storeFor), instead of building its own.
	st *store.TenantStore
}

type authItem struct {
	h string
	e authEntry
}

// authCache keeps recently seen key hashes so a stream or a write burst does not query the meta DB
// per request; a deleted tenant's key stops working within ttl. When the meta DB cannot answer, an
// entry up to staleMax old is still honoured, so a short meta-DB outage does not fail mutations of
// known tenants (the meta DB must not sit on the write path) while a revoked key can act for at most
// ttl + staleMax. Keys the meta DB did not know are remembered for negTTL, so a wrong key costs one
// meta query per negTTL, not one per request. At max entries the least recently used entry is
// evicted (never the whole cache: a flood of new keys must not forget the known tenants).
type authCache struct {
	ttl      time.Duration
	staleMax time.Duration
	negTTL   time.Duration
	max      int
	mu       sync.Mutex
	m        map[string]*list.Element // of *authItem; lru front = most recently used
	lru      *list.List
	neg      map[string]time.Time // wrong key hash -> remembered until
	inflight map[string]bool
}

func newAuthCache(ttl, staleMax, negTTL time.Duration, max int) *authCache {
	return &authCache{ttl: ttl, staleMax: staleMax, negTTL: negTTL, max: max, m: map[string]*list.Element{}, lru: list.New(),
		neg: map[string]time.Time{}}
}

// get returns the entry for h, whether it is still fresh, and whether there is one at all.
func (c *authCache) get(h string) (t store.Tenant, fresh, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.found(c.m[h])
}

// getBytes is get for a hash in bytes (the lookup allocates no string), with the entry's store.
func (c *authCache) getBytes(h []byte) (t store.Tenant, st *store.TenantStore, fresh, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[string(h)]
	if t, fresh, ok = c.found(el); ok {
		st = el.Value.(*authItem).e.st
	}
	return t, st, fresh, ok
}

// keepStore remembers st as the store of h's entry while the entry names st's tenant.
func (c *authCache) keepStore(h []byte, st *store.TenantStore) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[string(h)]; el != nil {
		if e := &el.Value.(*authItem).e; e.t.ID == st.TenantID && e.t.PoolID == st.PoolID {
			e.st = st
		}
	}
}

// found is get's answer for the entry el (nil: none); c.mu held.
func (c *authCache) found(el *list.Element) (t store.Tenant, fresh, ok bool) {
	if el == nil {
		return store.Tenant{}, false, false
	}
	e := el.Value.(*authItem).e
	now := time.Now()
	if now.After(e.exp.Add(c.staleMax)) {
		return store.Tenant{}, false, false
	}
	c.lru.MoveToFront(el)
	return e.t, now.Before(e.exp), true
}

func (c *authCache) put(h string, t store.Tenant) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.neg, h)
	e := authEntry{t: t, exp: time.Now().Add(c.ttl)}
	if el, ok := c.m[h]; ok {
		el.Value.(*authItem).e = e
		c.lru.MoveToFront(el)
		return
	}
	c.m[h] = c.lru.PushFront(&authItem{h: h, e: e})
	for len(c.m) > c.max {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.m, old.Value.(*authItem).h)
	}
}

// unknown reports whether h was a wrong key less than negTTL ago.
func (c *authCache) unknown(h []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.neg[string(h)]
	if ok && time.Now().After(until) {
		delete(c.neg, string(h))
		return false
	}
	return ok
}

// notFound drops h and remembers it as a wrong key for negTTL (at most max remembered: expired
// ones go first, then arbitrary ones).
func (c *authCache) notFound(h string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[h]; ok {
		c.lru.Remove(el)
		delete(c.m, h)
	}
	if c.negTTL <= 0 {
		return
	}
	now := time.Now()
	if len(c.neg) >= c.max {
		for k, until := range c.neg {
			if now.After(until) || len(c.neg) >= c.max {
				delete(c.neg, k)
			}
		}
	}
	c.neg[h] = now.Add(c.negTTL)
}

// len is the number of cached keys (tests).
func (c *authCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
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
			c.notFound(hash)
		case err == nil:
			c.put(hash, t)
		}
		c.mu.Lock()
		delete(c.inflight, hash)
		c.mu.Unlock()
	}()
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
		var rt reqTenant
		store.HashKeyTo(&rt.hash, key)
		t, kept, fresh, cached := s.auth.getBytes(rt.hash[:])
		switch {
		case fresh:
		case cached:
			// Serve the known tenant now and revalidate in the background: a slow or failing meta DB
			// never sits on the request path of a tenant we already know.
			s.revalidate(string(rt.hash[:]))
		case s.auth.unknown(rt.hash[:]):
			writeErr(w, http.StatusUnauthorized, "invalid API key")
			return
		default:
			hash := string(rt.hash[:])
			actx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			got, err := s.meta.TenantByKey(actx, hash)
			cancel()
			if errors.Is(err, store.ErrNotFound) {
				s.auth.notFound(hash)
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
		// Only now is the request the tenant's: its slot and body bytes count against the tenant's
		// share, so an unauthenticated caller or another tenant cannot spend them.
		hold, ok := s.admitTenant(w, r, t.ID)
		if !ok {
			return
		}
		defer hold.release()
		st, err := s.storeFor(r.Context(), t, kept)
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, "tenant DB unavailable: "+err.Error())
			return
		}
		if st != kept {
			s.auth.keepStore(rt.hash[:], st)
		}
		rt.st = st
		if rc, ok := r.Context().(*reqCtx); ok && rc.tenant == nil {
			// A filesystem request's own context (protect's) carries the tenant: no copy of the request.
			rc.t = rt
			rc.tenant = &rc.t
			h(w, r)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), tenantKey, ptrTo(rt))))
	}
}

// ptrTo is a heap copy of t (so that taking it does not move withTenant's own to the heap).
func ptrTo(t reqTenant) *reqTenant { return &t }

func tenantStore(r *http.Request) *store.TenantStore {
	return r.Context().Value(tenantKey).(*reqTenant).st
}

// jsonType is the Content-Type value of a JSON answer, shared by every answer (the header map
// holds it as Header.Set would; the server copies it when it sends the headers, nothing writes
// into it).
var jsonType = []string{"application/json"}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeRevision answers a write: {"revision":N,"status":"ok"}, the bytes writeJSON writes for that
// map, appended without reflection (every PUT answers it).
func writeRevision(w http.ResponseWriter, rev int64) {
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(http.StatusOK)
	var b []byte
	if rw, ok := w.(*reqWriter); ok {
		b = rw.answer[:0] // the request's own bytes: Write copies them
	}
	b = append(b, `{"revision":`...)
	b = strconv.AppendInt(b, rev, 10)
	b = append(b, `,"status":"ok"}`+"\n"...)
	_, _ = w.Write(b)
}

// writeErr answers {"error": msg, "request_id": ID}; a server error, or a message that names the
// pod's internals (addresses, driver errors), is answered generically and its detail logged under
// the request id (publicError).
func writeErr(w http.ResponseWriter, code int, msg string) {
	msg, id := publicError(w, code, msg)
	body := map[string]string{"error": msg}
	if id != "" {
		body["request_id"] = id
	}
	writeJSON(w, code, body)
}
