package api

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seqgate/seqgate/internal/defaults"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// Limits bound what one connection, one tenant or an unauthenticated caller can hold of a pod
// (docs/security.md). Zero values take the defaults in brackets, which sit far
// above what the shipped scenarios use.
type Limits struct {
	HeaderTimeout   time.Duration // reading a request's headers [10s]
	IdleTimeout     time.Duration // a keep-alive connection idle this long is closed [2m]
	BodyReadTimeout time.Duration // reading one request body (PUT content, provision) [60s]
	// MaxInflight caps concurrent requests other than event streams, /healthz and /metrics; past
	// it a request is answered 429 with Retry-After at once [512].
	MaxInflight int
	// MaxBodyBytes caps the request-body bytes being read at once across the pod, each body counted
	// at its Content-Length (the body limit when unknown); past it 429 [64 MiB: four bodies at the 16 MiB limit].
	MaxBodyBytes int64
	// MaxTenantInflight is one tenant's share of MaxInflight; requests not yet authenticated,
	// provisions and admin calls share one more such share, as the anonymous caller. Past it 429
	// (reason tenant_inflight), so no one caller can take every slot [MaxInflight/4, at least 1].
	MaxTenantInflight int
	// MaxTenantBodyBytes is one tenant's share of MaxBodyBytes (the anonymous caller has one too);
	// past it 429 (reason tenant_body_bytes) [MaxBodyBytes/4, at least one 64 KiB provision body].
	MaxTenantBodyBytes int64
	// ResponseWriteTimeout bounds the writing of one answer (event streams have their own per-write
	// deadline): a client that never reads its answer cannot hold the request's slot and the
	// answer's memory past it [30s].
	ResponseWriteTimeout time.Duration
	MaxStreams           int           // open event streams per pod; past it 429 [10000]
	MaxTenantStreams     int           // open event streams per tenant per pod; past it 429 [200]
	RetryAfter           time.Duration // the Retry-After of a 429 [1s]
	ProvisionRate        float64       // POST /v1/provision per second per pod (token bucket) [20]
	ProvisionBurst       int           // provision bucket size [100]
	// ProvisionToken is required on POST /v1/provision as "Authorization: Bearer TOKEN" or
	// "X-Provision-Token: TOKEN" (401 otherwise). New refuses a pod without one unless
	// OpenProvisioning is set.
	ProvisionToken string
	// OpenProvisioning lets anyone who reaches the port provision without a token (unsafe: one
	// client can then pose as any number of tenants). Even then an anonymous provision only ever
	// lands in a shared pool: dedicated pools are given to token holders alone.
	OpenProvisioning bool
	AuthNegativeTTL  time.Duration // a key the meta DB did not know is refused without a lookup this long [5s]
	AuthCacheMax     int           // cached keys; the least recently used is evicted past it [100000]
	// StreamAuthEvery is how often the keys of open event streams are revalidated (in bulk): a
	// deleted tenant's streams end within it [the auth cache TTL].
	StreamAuthEvery time.Duration
}

func (l *Limits) defaults(authTTL time.Duration) {
	defaults.Positive(&l.HeaderTimeout, 10*time.Second)
	defaults.Positive(&l.IdleTimeout, 2*time.Minute)
	defaults.Positive(&l.BodyReadTimeout, time.Minute)
	defaults.Positive(&l.MaxInflight, 512)
	defaults.Positive(&l.MaxBodyBytes, 64<<20)
	defaults.Positive(&l.MaxTenantInflight, max(1, l.MaxInflight/4))
	defaults.Positive(&l.MaxTenantBodyBytes, max(provisionBodyMax, l.MaxBodyBytes/4))
	defaults.Positive(&l.ResponseWriteTimeout, 30*time.Second)
	defaults.Positive(&l.MaxStreams, 10000)
	defaults.Positive(&l.MaxTenantStreams, 200)
	defaults.Positive(&l.RetryAfter, time.Second)
	if l.ProvisionRate <= 0 {
		l.ProvisionRate = 20
	}
	defaults.Positive(&l.ProvisionBurst, 100)
	defaults.Positive(&l.AuthNegativeTTL, 5*time.Second)
	defaults.Positive(&l.AuthCacheMax, 100000)
	defaults.Positive(&l.StreamAuthEvery, authTTL)
}

// limiter is a pod's admission state: the request and body-byte budgets, the open streams by
// tenant and key, the provision bucket, and their metrics.
type limiter struct {
	l        Limits
	maxBody  int64
	inflight chan struct{}
	reqPre   string
	reqSeq   atomic.Uint64

	mu        sync.Mutex
	bodyUsed  int64
	bodyBy    map[string]int64 // body bytes reserved by owner (tenant id, or anonymous)
	held      map[string]int   // request slots held by owner
	streams   int
	perTenant map[string]int
	byKey     map[string]map[uint64]context.CancelFunc
	nextID    uint64
	tokens    float64
	last      time.Time

	rejected     *prometheus.CounterVec
	inflightG    prometheus.Gauge
	authClosed   *prometheus.CounterVec
	errorsHidden prometheus.Counter
}

func newLimiter(l Limits, maxBody int64, reg prometheus.Registerer) *limiter {
	var b [4]byte
	_, _ = rand.Read(b[:])
	lim := &limiter{l: l, maxBody: maxBody, inflight: make(chan struct{}, l.MaxInflight), reqPre: hex.EncodeToString(b[:]),
		perTenant: map[string]int{}, bodyBy: map[string]int64{}, held: map[string]int{}, byKey: map[string]map[uint64]context.CancelFunc{}, tokens: float64(l.ProvisionBurst), last: time.Now(),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_requests_rejected_total",
			Help: "Requests answered 429 by an admission limit, by reason (inflight, tenant_inflight, body_bytes, tenant_body_bytes, streams_pod, streams_tenant, provision_rate)."}, []string{"reason"}),
		inflightG: prometheus.NewGauge(prometheus.GaugeOpts{Name: "eventlogd_requests_inflight",
			Help: "Requests in flight that count against --max-inflight (every request but event streams, /healthz and /metrics)."}),
		authClosed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_streams_closed_by_auth_total",
			Help: "Event streams ended because their key was revoked (key_revoked) or could not be revalidated within the stale bound (key_unverified)."}, []string{"reason"}),
		errorsHidden: prometheus.NewCounter(prometheus.CounterOpts{Name: "eventlogd_error_details_hidden_total",
			Help: "Error answers whose internal detail was replaced by a generic message and a request id (the detail is logged)."}),
	}
	reg.MustRegister(lim.rejected, lim.inflightG, lim.authClosed, lim.errorsHidden)
	return lim
}

func (lim *limiter) requestID() string {
	var b [40]byte // the prefix (8), '-' and a uint64: one allocation, the string's
	return string(strconv.AppendUint(append(append(b[:0], lim.reqPre...), '-'), lim.reqSeq.Add(1), 10))
}

// anonymous is the owner of the slots and body bytes of requests not (yet) tied to a tenant: every
// request before its key is checked, provisions and admin calls. It has one share, like a tenant.
const anonymous = ""

// provisionBodyMax is what handleProvision reads of a body, and so all a provision reserves.
const provisionBodyMax = 64 << 10

// slot is one request's place under MaxInflight, held by an owner (anonymous until moveTo).
type slot struct {
	lim   *limiter
	owner string
}

// enter takes a request slot for the anonymous caller into sl (the request's own, so a request
// allocates none), or reports why not: "inflight" when all MaxInflight are taken,
// "tenant_inflight" when the anonymous share is.
func (lim *limiter) enter(sl *slot) string {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if lim.held[anonymous] >= lim.l.MaxTenantInflight {
		return "tenant_inflight"
	}
	select {
	case lim.inflight <- struct{}{}:
	default:
		return "inflight"
	}
	lim.held[anonymous]++
	lim.inflightG.Inc()
	*sl = slot{lim: lim, owner: anonymous}
	return ""
}

// moveTo hands the slot from its owner to tenant once the request is authenticated, or reports
// false when tenant already holds its share (the slot stays with its owner, released by leave).
func (sl *slot) moveTo(tenant string) bool {
	lim := sl.lim
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if tenant == sl.owner {
		return true
	}
	if lim.held[tenant] >= lim.l.MaxTenantInflight {
		return false
	}
	lim.drop(sl.owner)
	lim.held[tenant]++
	sl.owner = tenant
	return true
}

func (sl *slot) leave() {
	lim := sl.lim
	lim.mu.Lock()
	lim.drop(sl.owner)
	lim.mu.Unlock()
	<-lim.inflight
	lim.inflightG.Dec()
}

// drop takes one slot from owner's count (lim.mu held).
func (lim *limiter) drop(owner string) {
	if lim.held[owner]--; lim.held[owner] <= 0 {
		delete(lim.held, owner)
	}
}

// takeBody reserves n body bytes for owner, or names the budget that cannot hold them: the pod's
// (body_bytes) or the owner's share (tenant_body_bytes).
func (lim *limiter) takeBody(owner string, n int64) string {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	switch {
	case lim.bodyBy[owner]+n > lim.l.MaxTenantBodyBytes:
		return "tenant_body_bytes"
	case lim.bodyUsed+n > lim.l.MaxBodyBytes:
		return "body_bytes"
	}
	lim.bodyUsed += n
	lim.bodyBy[owner] += n
	return ""
}

func (lim *limiter) giveBody(owner string, n int64) {
	lim.mu.Lock()
	lim.bodyUsed -= n
	if lim.bodyBy[owner] -= n; lim.bodyBy[owner] <= 0 {
		delete(lim.bodyBy, owner)
	}
	lim.mu.Unlock()
}

// openStream admits a stream of tenant with key hash (cancel ends it), or names the cap it hit.
func (lim *limiter) openStream(tenant, hash string, cancel context.CancelFunc) (release func(), reason string) {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	switch {
	case lim.streams >= lim.l.MaxStreams:
		return nil, "streams_pod"
	case lim.perTenant[tenant] >= lim.l.MaxTenantStreams:
		return nil, "streams_tenant"
	}
	lim.streams++
	lim.perTenant[tenant]++
	lim.nextID++
	id := lim.nextID
	if lim.byKey[hash] == nil {
		lim.byKey[hash] = map[uint64]context.CancelFunc{}
	}
	lim.byKey[hash][id] = cancel
	return func() {
		lim.mu.Lock()
		defer lim.mu.Unlock()
		lim.streams--
		if lim.perTenant[tenant]--; lim.perTenant[tenant] <= 0 {
			delete(lim.perTenant, tenant)
		}
		delete(lim.byKey[hash], id)
		if len(lim.byKey[hash]) == 0 {
			delete(lim.byKey, hash)
		}
	}, ""
}

// streamKeys returns the key hashes of the open streams.
func (lim *limiter) streamKeys() []string {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	out := make([]string, 0, len(lim.byKey))
	for h := range lim.byKey {
		out = append(out, h)
	}
	return out
}

// closeKey ends every open stream of key hash.
func (lim *limiter) closeKey(hash, reason string) {
	lim.mu.Lock()
	var cancels []context.CancelFunc
	for _, c := range lim.byKey[hash] {
		cancels = append(cancels, c)
	}
	lim.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	if len(cancels) > 0 {
		lim.authClosed.WithLabelValues(reason).Add(float64(len(cancels)))
	}
}

// provisionToken takes a token from the provision bucket, or returns how long until one is there.
func (lim *limiter) provisionToken() (ok bool, wait time.Duration) {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	now := time.Now()
	lim.tokens = math.Min(float64(lim.l.ProvisionBurst), lim.tokens+now.Sub(lim.last).Seconds()*lim.l.ProvisionRate)
	lim.last = now
	if lim.tokens >= 1 {
		lim.tokens--
		return true, 0
	}
	return false, time.Duration((1 - lim.tokens) / lim.l.ProvisionRate * float64(time.Second))
}

// reject answers 429 with Retry-After and counts reason. It closes the connection after the
// answer: the server then does not wait for the rest of a body the pod refused to read (a dripped
// body would hold the answer until --body-read-timeout).
func (s *Server) reject(w http.ResponseWriter, reason string, retryAfter time.Duration, msg string) {
	s.lim.rejected.WithLabelValues(reason).Inc()
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(retryAfter.Seconds())))))
	writeErr(w, http.StatusTooManyRequests, msg)
}

// HTTPServer is the pod's http.Server with its connection limits (header and idle timeouts);
// cmd/eventlogd serves it. Body reads are bounded per request by Handler.
func (s *Server) HTTPServer() *http.Server {
	l := s.cfg.Limits
	return &http.Server{Handler: s.Handler(), ReadHeaderTimeout: l.HeaderTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(s.cfg.Log.Handler(), slog.LevelDebug)}
}

// protect is the admission layer in front of every route: a request id (X-Request-Id, and in
// every error answer), an anonymous request slot (handed to the tenant once its key is checked:
// admitTenant), the body read deadline and the answer's write deadline. Body bytes are reserved
// only once the owner is known (admitTenant, handleProvision), at most what the handler will read.
// Event streams are admitted by guardStream instead (they live long by design).
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &reqWriter{ResponseWriter: w, id: s.lim.requestID(), s: s}
		rw.idHeader[0] = rw.id
		w.Header()["X-Request-Id"] = rw.idHeader[:] // Header.Set's key and value, without its allocation
		// A keep-alive connection keeps the absolute write deadline of its previous answer: clear it,
		// so that deadline cannot cut this answer short.
		_ = setWriteDeadline(w, time.Time{})
		switch r.URL.Path {
		case "/healthz", "/metrics", "/v1/events":
			next.ServeHTTP(rw, r)
			return
		}
		ctx := r.Context()
		if isFSPath(r.URL.Path) {
			// A stalled tenant DB must not hold a request (and its goroutine) forever.
			rw.ctx.init(ctx, s.cfg.RequestTimeout)
			defer rw.ctx.stop()
			ctx = &rw.ctx
		}
		var body io.ReadCloser
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			// A body dripped byte by byte must not hold the request (and its slot) forever, nor the
			// server's discard of an unread rest after a refusal. The deadline is lifted once the body
			// is read, so it never cuts the answer short.
			if setReadDeadline(rw, time.Now().Add(s.cfg.Limits.BodyReadTimeout)) == nil {
				rw.body = deadlineBody{ReadCloser: r.Body, w: rw}
				body = &rw.body
			}
		}
		if body != nil || ctx != r.Context() {
			r = r.WithContext(ctx) // a copy: the server keeps its own r.Body (and its discard of an unread rest)
			if body != nil {
				r.Body = body
			}
		}
		switch reason := s.lim.enter(&rw.held); reason {
		case "inflight":
			s.reject(rw, reason, s.cfg.Limits.RetryAfter, fmt.Sprintf("too many requests in flight on this pod (--max-inflight %d); retry later", s.cfg.Limits.MaxInflight))
			return
		case "tenant_inflight":
			s.reject(rw, reason, s.cfg.Limits.RetryAfter, fmt.Sprintf("too many unauthenticated requests in flight on this pod (--max-tenant-inflight %d); retry later", s.cfg.Limits.MaxTenantInflight))
			return
		}
		defer rw.held.leave()
		rw.writeTimeout = s.cfg.Limits.ResponseWriteTimeout
		rw.slot = &rw.held
		next.ServeHTTP(rw, r)
	})
}

// isFSPath reports whether p is served by handleFS (bounded by --request-timeout).
func isFSPath(p string) bool { return strings.HasPrefix(p, "/v1/fs/") || p == "/v1/fs" }

// admitTenant moves the request's slot to tenant (its share of --max-inflight) and reserves its
// body, at most the body limit, from the tenant's share and the pod's budget; it answers 429 itself
// when it returns false. hold.release gives the body bytes back.
func (s *Server) admitTenant(w http.ResponseWriter, r *http.Request, tenant string) (hold bodyHold, ok bool) {
	if rw, _ := w.(*reqWriter); rw != nil && rw.slot != nil && !rw.slot.moveTo(tenant) {
		s.reject(w, "tenant_inflight", s.cfg.Limits.RetryAfter, fmt.Sprintf("too many requests of this tenant in flight on this pod (--max-tenant-inflight %d); retry later", s.cfg.Limits.MaxTenantInflight))
		return bodyHold{}, false
	}
	return s.reserveBody(w, r, tenant, s.lim.maxBody)
}

// reserveBody reserves r's body for owner, counted at its Content-Length (limit when unknown), at
// most limit: what the handler reads. It answers 429 itself when it returns false; the caller
// releases what it holds.
func (s *Server) reserveBody(w http.ResponseWriter, r *http.Request, owner string, limit int64) (hold bodyHold, ok bool) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return bodyHold{}, true
	}
	n := r.ContentLength
	if n < 0 || n > limit {
		n = limit
	}
	switch s.lim.takeBody(owner, n) {
	case "tenant_body_bytes":
		s.reject(w, "tenant_body_bytes", s.cfg.Limits.RetryAfter, "too many request-body bytes of this caller in flight on this pod (--max-tenant-body-bytes); retry later")
		return bodyHold{}, false
	case "body_bytes":
		s.reject(w, "body_bytes", s.cfg.Limits.RetryAfter, "too many request-body bytes in flight on this pod (--max-body-bytes-inflight); retry later")
		return bodyHold{}, false
	}
	return bodyHold{lim: s.lim, owner: owner, n: n}, true
}

// bodyHold is a body reservation (a value, not a closure: a request allocates nothing for it).
type bodyHold struct {
	lim   *limiter // nil: nothing reserved
	owner string
	n     int64
}

// release gives the reserved bytes back.
func (h bodyHold) release() {
	if h.lim != nil {
		h.lim.giveBody(h.owner, h.n)
	}
}

// deadlineBody lifts the connection's read deadline when the body was read to its end (on any
// other error it stays, so the server's discard of an unread rest cannot block either).
type deadlineBody struct {
	io.ReadCloser
	w    http.ResponseWriter // whose connection's read deadline
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = setReadDeadline(b.w, time.Time{})
	}
	return n, err
}

// guardStream admits an event stream under the pod and tenant caps, registers it under its key
// (so a revoked key's streams can be ended) and gives it the pool's stream-read handle, so streams
// can never hold the connections the pool's mutations need.
func (s *Server) guardStream(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rt := r.Context().Value(tenantKey).(*reqTenant)
		st, hash := rt.st, string(rt.hash[:])
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		release, reason := s.lim.openStream(st.TenantID, hash, cancel)
		switch reason {
		case "streams_pod":
			s.reject(w, reason, s.cfg.Limits.RetryAfter, fmt.Sprintf("too many event streams on this pod (--max-streams %d); retry later", s.cfg.Limits.MaxStreams))
			return
		case "streams_tenant":
			s.reject(w, reason, s.cfg.Limits.RetryAfter, fmt.Sprintf("too many event streams of this tenant on this pod (--max-tenant-streams %d); close one or retry later", s.cfg.Limits.MaxTenantStreams))
			return
		}
		defer release()
		sst, err := s.onStreamHandle(ctx, st)
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, "tenant DB unavailable: "+err.Error())
			return
		}
		h(w, r.WithContext(context.WithValue(ctx, tenantKey, &reqTenant{st: sst, hash: rt.hash})))
	}
}

// onStreamHandle returns a copy of st that reads through its pool's stream-read handle under its
// tenant's read gate: the reads of event streams and of pulls, which can then never hold the
// connections the pool's mutations need, and of which one tenant runs at most
// --db-stream-tenant-max at once.
func (s *Server) onStreamHandle(ctx context.Context, st *store.TenantStore) (*store.TenantStore, error) {
	db, err := s.pools.AcquireStream(ctx, st.PoolID)
	if err != nil {
		return nil, err
	}
	sst := *st
	sst.DB, sst.Gate = db, s.pools.StreamGate(st.PoolID, st.TenantID)
	return &sst, nil
}

// resolveStream is resolve for a stream: the tenant's store over the stream-read handle.
func (s *Server) resolveStream(ctx context.Context, tenant string) (*store.TenantStore, error) {
	st, err := s.resolve(ctx, tenant)
	if err != nil {
		return nil, err
	}
	return s.onStreamHandle(ctx, st)
}

// watchStreamKeys revalidates the keys of open streams every StreamAuthEvery, in bulk: a key the
// meta DB no longer knows ends its streams; while the meta DB fails, a key past its cache entry's
// stale bound (--auth-stale-max) ends them too, so a revoked key cannot read for longer than a
// write could.
func (s *Server) watchStreamKeys(ctx context.Context) {
	t := time.NewTicker(s.cfg.Limits.StreamAuthEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var check []string
		for _, h := range s.lim.streamKeys() {
			if _, fresh, _ := s.auth.get(h); !fresh {
				check = append(check, h)
			}
		}
		if len(check) == 0 {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		found, err := s.meta.ActiveKeys(qctx, check)
		cancel()
		for _, h := range check {
			switch t, ok := found[h]; {
			case err == nil && ok:
				s.auth.put(h, t)
			case err == nil:
				s.auth.notFound(h)
				s.lim.closeKey(h, "key_revoked")
			default:
				if _, _, cached := s.auth.get(h); !cached {
					s.lim.closeKey(h, "key_unverified")
				}
			}
		}
		if err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("stream key revalidation failed; streams of keys past --auth-stale-max were ended", "err", err)
		}
	}
}

// provisionAllowed checks the provisioning token and the provision rate; it answers the request
// itself when ok is false. trusted reports that the caller showed the token: only then may it be
// given a dedicated pool (a pod without a token runs with OpenProvisioning, where no caller is).
func (s *Server) provisionAllowed(w http.ResponseWriter, r *http.Request) (trusted, ok bool) {
	if want := s.cfg.Limits.ProvisionToken; want != "" {
		got := r.Header.Get("X-Provision-Token")
		if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && got == "" {
			got = strings.TrimSpace(k)
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			writeErr(w, http.StatusUnauthorized, "provisioning needs the pod's provisioning token (Authorization: Bearer TOKEN or X-Provision-Token: TOKEN)")
			return false, false
		}
		trusted = true
	}
	if ok, wait := s.lim.provisionToken(); !ok {
		s.reject(w, "provision_rate", wait, fmt.Sprintf("provisioning is limited to %g per second per pod (--provision-rate); retry later", s.cfg.Limits.ProvisionRate))
		return trusted, false
	}
	return trusted, true
}

// reqWriter carries a request's id, so error answers can name it instead of internals, and arms
// the answer's write deadline (writeTimeout, 0 for event streams) when the answer starts.
type reqWriter struct {
	http.ResponseWriter
	id           string
	s            *Server
	slot         *slot // the request's place under --max-inflight (admitTenant moves it to the tenant)
	writeTimeout time.Duration
	armed        bool

	// What a request needs of its own lives here, allocated once with the writer: its
	// X-Request-Id value, its slot, its body's deadline wrapper, a filesystem request's context
	// (reqCtx) and the bytes of a write's answer (writeRevision).
	idHeader [1]string
	held     slot
	body     deadlineBody
	ctx      reqCtx
	answer   [48]byte
}

// arm sets the connection's write deadline once, when the answer starts: a client that does not
// read the answer makes the write fail after writeTimeout, so the handler returns and its slot and
// buffers are freed.
func (w *reqWriter) arm() {
	if w.armed || w.writeTimeout <= 0 {
		return
	}
	w.armed = true
	_ = setWriteDeadline(w.ResponseWriter, time.Now().Add(w.writeTimeout))
}

func (w *reqWriter) WriteHeader(code int) {
	w.arm()
	w.ResponseWriter.WriteHeader(code)
}

func (w *reqWriter) Write(p []byte) (int, error) {
	w.arm()
	return w.ResponseWriter.Write(p)
}

func (w *reqWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush keeps the writer an http.Flusher for code that asserts the interface.
func (w *reqWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// internals matches error text that describes the pod's insides: socket addresses, driver and
// server error codes, DSN fragments.
var internals = regexp.MustCompile(`(?i)\b(read|write|dial|accept) (tcp|tcp4|tcp6|udp|unix)\b|\d+\.\d+\.\d+\.\d+:\d+|\[[0-9a-f:]+\]:\d+|\bError \d{4}\b|@tcp\(|\bbroken pipe\b|connection reset|i/o timeout|invalid connection|driver: bad connection`)

// publicError returns the message an answer may carry: msg itself, unless it is a server error or
// names internals; then its own leading words (the text before the first ':') and the request id,
// with the detail logged under that id.
func publicError(w http.ResponseWriter, code int, msg string) (string, string) {
	rw, _ := w.(*reqWriter)
	id := ""
	if rw != nil {
		id = rw.id
	}
	if code < 500 && !internals.MatchString(msg) {
		return msg, id
	}
	head, _, found := strings.Cut(msg, ":")
	if !found || internals.MatchString(head) {
		head = strings.ToLower(http.StatusText(code))
	}
	if rw != nil {
		rw.s.lim.errorsHidden.Inc()
		rw.s.cfg.Log.Warn("request failed", "request_id", id, "status", code, "detail", msg)
	}
	return head + " (details in the pod log under request id " + id + ")", id
}

// warnUnsafeCharsets logs every DSN whose charset keeps it off client-side interpolation
// (store.InterpolationSafe): it works, one round trip slower per statement.
func warnUnsafeCharsets(cfg Config) {
	if ok, why := store.InterpolationSafe(cfg.MetaDSN); !ok {
		cfg.Log.Warn("meta DSN: connection charset not known safe for client-side interpolation; using server-side prepared statements", "reason", why)
	}
	for _, p := range cfg.Pools {
		if ok, why := store.InterpolationSafe(p.DSN); !ok {
			cfg.Log.Warn("pool DSN: connection charset not known safe for client-side interpolation; using server-side prepared statements", "pool", p.ID, "reason", why)
		}
	}
}
