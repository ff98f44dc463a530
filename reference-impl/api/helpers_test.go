package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/seqgate/seqgate/internal/eventstream"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

var dbCounter atomic.Int64

// env is one test's databases: a meta DB and the pools, each optionally behind a proxy.
type env struct {
	t         *testing.T
	metaProxy *toxiproxy.Proxy // set by withMetaProxy
	prefix    string
	metaDSN   string
	pools     []store.PoolSpec
	proxies   map[string]*toxiproxy.Proxy
	counts    map[string]*countingProxy
}

type poolDef struct {
	id, role string
	proxy    bool // behind an in-process toxiproxy proxy
	count    bool // behind a byte-counting proxy
}

func newEnv(t *testing.T, defs ...poolDef) *env {
	t.Helper()
	e := &env{t: t, prefix: fmt.Sprintf("t%d_", dbCounter.Add(1)), proxies: map[string]*toxiproxy.Proxy{}, counts: map[string]*countingProxy{}}
	e.metaDSN = db.DSN(e.prefix + "meta")
	if len(defs) == 0 {
		defs = []poolDef{{id: "shared", role: store.RoleShared}}
	}
	var tox *toxiproxy.ApiServer
	for _, d := range defs {
		addr := db.Addr
		switch {
		case d.proxy:
			if tox == nil {
				tox = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
			}
			p := toxiproxy.NewProxy(tox, e.prefix+d.id, "127.0.0.1:0", db.Addr)
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Stop)
			e.proxies[d.id] = p
			addr = p.Listen
		case d.count:
			c := newCountingProxy(t, db.Addr)
			e.counts[d.id] = c
			addr = c.addr
		}
		e.pools = append(e.pools, store.PoolSpec{ID: d.id, Role: d.role, DSN: db.DSNAt(addr, e.prefix+d.id)})
	}
	return e
}

// withMetaProxy puts an in-process toxiproxy proxy in front of the meta DB.
func (e *env) withMetaProxy() *env {
	tox := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(tox, e.prefix+"meta", "127.0.0.1:0", db.Addr)
	if err := p.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(p.Stop)
	e.metaProxy = p
	e.metaDSN = db.DSNAt(p.Listen, e.prefix+"meta")
	return e
}

// pod is one running eventlogd pod on an httptest server.
type pod struct {
	srv    *api.Server
	ts     *httptest.Server
	url    string
	client *http.Client
	closed atomic.Bool
}

// testConfig is a pod configuration with short intervals so tests finish quickly.
func (e *env) testConfig(name string) api.Config {
	return api.Config{
		PodID: name, MetaDSN: e.metaDSN, Pools: e.pools, Admin: true, Limits: api.Limits{ProvisionToken: testProvisionToken},
		OutboxCoalesce: 20 * time.Millisecond, OutboxPoll: 50 * time.Millisecond, PodHeartbeat: 200 * time.Millisecond,
		ShutdownBudget: 2 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func (e *env) pod(name string, mod func(*api.Config)) *pod {
	return e.podWith(name, mod, nil)
}

func (e *env) podWith(name string, mod func(*api.Config), wrapListener func(net.Listener) net.Listener) *pod {
	e.t.Helper()
	cfg := e.testConfig(name)
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := api.New(ctx, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	srv.Start()
	ts := httptest.NewUnstartedServer(srv.Handler())
	if wrapListener != nil {
		ts.Listener = wrapListener(ts.Listener)
	}
	ts.Start()
	p := &pod{srv: srv, ts: ts, url: ts.URL, client: &http.Client{Transport: &http.Transport{}}}
	t := e.t
	t.Cleanup(func() {
		within(t, time.Minute, "pod "+name+" to close (streams, HTTP server, background loops)", p.close)
	})
	return p
}

func (p *pod) close() {
	if p.closed.Swap(true) {
		return
	}
	p.srv.StopStreams()
	p.ts.Close()
	_ = p.srv.Close()
	p.client.CloseIdleConnections()
}

func (p *pod) do(t *testing.T, method, path, key string, body io.Reader, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	code, m, err := p.try(method, path, key, body, hdr)
	if err != nil {
		t.Fatal(err)
	}
	return code, m
}

// try is do without the test: safe from any goroutine. Every request is bounded (a minute), so a
// stuck pod becomes an error naming the request, never a hung test.
func (p *pod) try(method, path, key string, body io.Reader, hdr map[string]string) (int, map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, p.url+path, body)
	if err != nil {
		return 0, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m, nil
}

// testProvisionToken is the provisioning token of every test pod (testConfig); provisionHdr carries it.
const testProvisionToken = "test-provision-token"

var provisionHdr = map[string]string{"X-Provision-Token": testProvisionToken}

func (p *pod) provision(t *testing.T, pool string) (tenant, key string) {
	t.Helper()
	body := ""
	if pool != "" {
		body = `{"pool":"` + pool + `"}`
	}
	code, m := p.do(t, "POST", "/v1/provision", "", strings.NewReader(body), provisionHdr)
	if code != 200 {
		t.Fatalf("provision %q: %d %v", pool, code, m)
	}
	return m["tenant_id"].(string), m["api_key"].(string)
}

func (p *pod) write(t *testing.T, key, path, content string) {
	t.Helper()
	if code, m := p.do(t, "PUT", "/v1/fs"+path, key, strings.NewReader(content), nil); code != 200 {
		t.Fatalf("write %s: %d %v", path, code, m)
	}
}

// frame is one received SSE event, decoded.
type frame struct {
	Type   string
	Seq    int64  `json:"seq"`
	Reason string `json:"reason"`
	Path   string `json:"path"`
	Op     string `json:"op"`
	Data   string `json:"-"` // the raw data line
	Batch  string `json:"batch"`
}

// subscriber is one SSE client collecting frames on a channel.
type subscriber struct {
	t       *testing.T
	ctx     context.Context
	started bool
	frames  chan frame
	resp    *http.Response
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
	cursor  int64
	seen    []frame // every frame read by until
}

func (p *pod) subscribe(t *testing.T, key string, since int64) *subscriber {
	return p.subscribeWith(t, key, since, p.client)
}

func (p *pod) subscribeWith(t *testing.T, key string, since int64, client *http.Client) *subscriber {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/v1/events?since=%d", p.url, since), nil)
	req.Header.Set("X-API-Key", key)
	// The response headers must come within 30 s (the stream itself may last: no client timeout).
	headers := time.AfterFunc(30*time.Second, cancel)
	resp, err := client.Do(req)
	if !headers.Stop() {
		cancel()
		t.Fatalf("subscribe since=%d: no response headers within 30s (%v)", since, err)
	}
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		cancel()
		resp.Body.Close()
		t.Fatalf("subscribe: %d", resp.StatusCode)
	}
	s := &subscriber{t: t, ctx: ctx, frames: make(chan frame, 100000), resp: resp, cancel: cancel, done: make(chan struct{})}
	t.Cleanup(s.close)
	return s
}

// start reads frames in the background (a slow consumer test delays this).
func (s *subscriber) start() *subscriber {
	s.started = true
	go func() {
		defer close(s.done)
		defer close(s.frames)
		r := eventstream.NewReader(s.resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				s.err = err
				return
			}
			f := frame{Type: ev.Type, Data: ev.Data}
			_ = json.Unmarshal([]byte(ev.Data), &f)
			select { // a full channel must not pin this goroutine past close
			case s.frames <- f:
			case <-s.ctx.Done():
				s.err = s.ctx.Err()
				return
			}
		}
	}()
	return s
}

func (s *subscriber) close() {
	s.cancel()
	s.resp.Body.Close()
	if s.started {
		within(s.t, 30*time.Second, "the subscriber's reader goroutine to end after close", func() { <-s.done })
	}
}

// until reads frames until pred holds or timeout passes; it returns every frame read.
func (s *subscriber) until(t *testing.T, timeout time.Duration, pred func(frame) bool) ([]frame, bool) {
	t.Helper()
	var got []frame
	deadline := time.After(timeout)
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				return got, false
			}
			got = append(got, f)
			s.seen = append(s.seen, f)
			s.cursor = max(s.cursor, f.Seq)
			if pred(f) {
				return got, true
			}
		case <-deadline:
			return got, false
		}
	}
}

// never fails t when a frame matching pred arrives within window: the negative half of a pair whose
// control sees the frame it waits for within the same window.
func (s *subscriber) never(t *testing.T, window time.Duration, what string, pred func(frame) bool) {
	t.Helper()
	if got, ok := s.until(t, window, pred); ok {
		t.Fatalf("%s within %v: %+v", what, window, got[len(got)-1])
	}
}

// untilClosed reads frames until the server ends the stream (the frame channel closes) or
// timeout passes; it returns every frame read and whether the stream ended.
func (s *subscriber) untilClosed(t *testing.T, timeout time.Duration) ([]frame, bool) {
	t.Helper()
	var got []frame
	deadline := time.After(timeout)
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				return got, true
			}
			got = append(got, f)
			s.seen = append(s.seen, f)
			s.cursor = max(s.cursor, f.Seq)
		case <-deadline:
			return got, false
		}
	}
}

func counter(t *testing.T, p *pod, name string, labels map[string]string) float64 {
	t.Helper()
	return metricSum(t, p.srv, name, labels)
}

// metricSum is the sum of srv's series of family name that carry labels (counters and gauges by
// value, histograms by sample count).
func metricSum(t testing.TB, srv *api.Server, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := srv.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				total += m.GetCounter().GetValue()
			case m.Gauge != nil:
				total += m.GetGauge().GetValue()
			case m.Histogram != nil:
				total += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return total
}

// testCtx bounds every database call and request a test makes directly: a stuck statement ends
// with a deadline error instead of hanging the package.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// within runs fn and fails the test, naming what it awaited, if fn has not returned after d (the
// goroutine is left behind; goleak then reports it too). Every wait of these tests that is not a
// select with a timeout goes through it: a hang becomes a failure with a message, not a CI timeout.
func within(t testing.TB, d time.Duration, what string, fn func()) bool {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		t.Errorf("timed out after %v waiting for %s", d, what)
		return false
	}
}

// mustWithin is within that stops the test (not for cleanups, which use within).
func mustWithin(t testing.TB, d time.Duration, what string, fn func()) {
	t.Helper()
	if !within(t, d, what, fn) {
		t.FailNow()
	}
}

// countingProxy is a TCP relay that counts the bytes clients send to the DB: any query a pod
// issues against the DB behind it shows up here.
type countingProxy struct {
	addr  string
	ln    net.Listener
	bytes atomic.Int64
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func newCountingProxy(t *testing.T, upstream string) *countingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &countingProxy{addr: ln.Addr().String(), ln: ln}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			cl, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				cl.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, cl, up)
			c.mu.Unlock()
			c.wg.Add(2)
			go func() {
				defer c.wg.Done()
				r := bufio.NewReader(cl)
				buf := make([]byte, 32<<10)
				for {
					n, err := r.Read(buf)
					if n > 0 {
						c.bytes.Add(int64(n))
						if _, werr := up.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				up.Close()
			}()
			go func() {
				defer c.wg.Done()
				_, _ = io.Copy(cl, up)
				cl.Close()
			}()
		}
	}()
	t.Cleanup(func() { within(t, 30*time.Second, "the counting proxy's relays to end", c.close) })
	return c
}

func (c *countingProxy) close() {
	c.ln.Close()
	c.mu.Lock()
	for _, x := range c.conns {
		x.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

var _ = testutil.CollectAndLint
