package api_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// lockedBuffer is a log sink safe for the pod's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// raw sends one request and returns its status, Retry-After and body.
func (p *pod) raw(t *testing.T, method, path, key string, body io.Reader, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), method, p.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func want429(t *testing.T, what string, code int, h http.Header, body string) {
	t.Helper()
	if code != http.StatusTooManyRequests {
		t.Fatalf("%s: %d %s, want 429", what, code, body)
	}
	if n, err := strconv.Atoi(h.Get("Retry-After")); err != nil || n < 1 {
		t.Fatalf("%s: Retry-After %q, want whole seconds >= 1", what, h.Get("Retry-After"))
	}
}

// TestStreamCaps: past --max-tenant-streams a tenant's next stream is 429 (other tenants are not
// affected); past --max-streams any stream is; a closed stream frees its slot.
func TestStreamCaps(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", func(c *api.Config) { c.Limits.MaxTenantStreams = 2; c.Limits.MaxStreams = 3 })
	_, ka := p.provision(t, "")
	_, kb := p.provision(t, "")
	a1 := p.subscribe(t, ka, 0)
	p.subscribe(t, ka, 0)
	code, h, body := p.raw(t, "GET", "/v1/events", ka, nil, nil)
	want429(t, "tenant A's third stream", code, h, body)
	if !strings.Contains(body, "max-tenant-streams") {
		t.Fatalf("the answer does not name the limit: %s", body)
	}
	p.subscribe(t, kb, 0) // another tenant is not held back by A's cap (3 of 3 now)
	code, h, body = p.raw(t, "GET", "/v1/events", kb, nil, nil)
	want429(t, "a stream past the pod cap", code, h, body)
	if got := counter(t, p, "eventlogd_requests_rejected_total", map[string]string{"reason": "streams_tenant"}); got != 1 {
		t.Fatalf("streams_tenant rejections = %v, want 1", got)
	}
	if got := counter(t, p, "eventlogd_requests_rejected_total", map[string]string{"reason": "streams_pod"}); got != 1 {
		t.Fatalf("streams_pod rejections = %v, want 1", got)
	}
	a1.close()
	wait.For(t, 10*time.Second, "the closed stream's slot to be free for tenant B", func() bool {
		req, _ := http.NewRequestWithContext(testCtx(t), "GET", p.url+"/v1/events", nil)
		req.Header.Set("X-API-Key", kb)
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		resp, err := p.client.Do(req.WithContext(ctx))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == 200
	})
}

// holdPut starts a PUT whose body stays open until the returned func is called; it returns the
// answer's status on done.
func holdPut(t *testing.T, p *pod, key, path string, length int64) (finish func(), done <-chan int) {
	pr, pw := io.Pipe()
	req, _ := http.NewRequestWithContext(testCtx(t), "PUT", p.url+"/v1/fs"+path, pr)
	req.Header.Set("X-API-Key", key)
	req.ContentLength = length
	out := make(chan int, 1)
	go func() {
		resp, err := p.client.Do(req)
		if err != nil {
			out <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		out <- resp.StatusCode
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			_, _ = pw.Write(bytes.Repeat([]byte("x"), int(max(length, 1))))
			_ = pw.Close()
		})
	}, out
}

// TestInflightCap: with --max-inflight 2 and two requests in flight, a third is 429 with
// Retry-After and counted; /healthz is exempt; once the two finish, requests pass again.
func TestInflightCap(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", func(c *api.Config) {
		c.Limits.MaxInflight = 2
		c.Limits.MaxTenantInflight = 2
		c.Limits.MaxTenantBodyBytes = 64 << 20
	})
	_, k := p.provision(t, "")
	f1, d1 := holdPut(t, p, k, "/a", -1)
	f2, d2 := holdPut(t, p, k, "/b", -1)
	defer f1()
	defer f2()
	wait.For(t, 10*time.Second, "two requests in flight", func() bool {
		return counter(t, p, "eventlogd_requests_inflight", nil) == 2
	})
	code, h, body := p.raw(t, "PUT", "/v1/fs/c", k, strings.NewReader("x"), nil)
	want429(t, "a third request", code, h, body)
	if code, _, _ := p.raw(t, "GET", "/healthz", "", nil, nil); code != 200 {
		t.Fatalf("/healthz under the cap: %d", code)
	}
	if got := counter(t, p, "eventlogd_requests_rejected_total", map[string]string{"reason": "inflight"}); got != 1 {
		t.Fatalf("inflight rejections = %v, want 1", got)
	}
	f1()
	f2()
	for _, d := range []<-chan int{d1, d2} {
		if c := <-d; c != 200 {
			t.Fatalf("held write answered %d, want 200", c)
		}
	}
	p.write(t, k, "/c", "x")
}

// TestBodyBytesBudget: a body that would take the pod past --max-body-bytes-inflight is 429; one
// that fits is served.
func TestBodyBytesBudget(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", func(c *api.Config) { c.Limits.MaxBodyBytes = 1000; c.Limits.MaxTenantBodyBytes = 2000 })
	_, k := p.provision(t, "")
	f, d := holdPut(t, p, k, "/big", 800)
	defer f()
	wait.For(t, 10*time.Second, "the 800-byte write in flight", func() bool {
		return counter(t, p, "eventlogd_requests_inflight", nil) == 1
	})
	code, h, body := p.raw(t, "PUT", "/v1/fs/more", k, strings.NewReader(strings.Repeat("y", 300)), nil)
	want429(t, "300 more bytes", code, h, body)
	if got := counter(t, p, "eventlogd_requests_rejected_total", map[string]string{"reason": "body_bytes"}); got != 1 {
		t.Fatalf("body_bytes rejections = %v, want 1", got)
	}
	p.write(t, k, "/small", strings.Repeat("z", 100)) // fits beside the 800
	f()
	if c := <-d; c != 200 {
		t.Fatalf("held write answered %d", c)
	}
	p.write(t, k, "/more", strings.Repeat("y", 300))
}

// rawConn sends a request by hand on a fresh connection to addr.
func rawConn(t *testing.T, addr, req string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBodyReadTimeout: a PUT whose body stops arriving is ended after --body-read-timeout (the
// client never finishes it), and the answer names no socket; a complete body is served.
func TestBodyReadTimeout(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", func(c *api.Config) { c.Limits.BodyReadTimeout = 200 * time.Millisecond })
	_, k := p.provision(t, "")
	addr := strings.TrimPrefix(p.url, "http://")
	for _, tc := range []struct {
		name     string
		sent     string
		wantCode int
	}{
		{"dripped body", "0123456789", 0},
		{"complete body", strings.Repeat("x", 100), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := rawConn(t, addr, fmt.Sprintf("PUT /v1/fs/drip HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Length: 100\r\n\r\n%s", k, tc.sent))
			var resp *http.Response
			var err error
			mustWithin(t, 30*time.Second, "the pod to answer", func() { resp, err = http.ReadResponse(bufio.NewReader(c), nil) })
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.wantCode == 200 {
				if resp.StatusCode != 200 {
					t.Fatalf("complete body: %d %s", resp.StatusCode, b)
				}
				return
			}
			if resp.StatusCode == 200 {
				t.Fatalf("dripped body accepted: %s", b)
			}
			if strings.Contains(string(b), "127.0.0.1") || strings.Contains(string(b), "tcp") {
				t.Fatalf("the answer names a socket: %s", b)
			}
		})
	}
}

// TestIdleTimeout: HTTPServer closes a keep-alive connection idle for --idle-timeout.
func TestIdleTimeout(t *testing.T) {
	e := newEnv(t)
	p := e.pod("p", func(c *api.Config) { c.Limits.IdleTimeout = 200 * time.Millisecond })
	hs := p.srv.HTTPServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); _ = hs.Serve(ln) }()
	defer func() { _ = hs.Close(); <-served }()
	c := rawConn(t, ln.Addr().String(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var rerr error
	mustWithin(t, 30*time.Second, "the idle connection to be closed by the pod", func() { _, rerr = br.ReadByte() })
	if rerr != io.EOF {
		t.Fatalf("idle connection: read %v, want EOF", rerr)
	}
}

// TestProvisionRateAndToken: provisioning past the bucket is 429 with Retry-After; with a token
// configured, a request without it or with a wrong one is 401 and does not spend the bucket.
func TestProvisionRateAndToken(t *testing.T) {
	e := newEnv(t, poolDef{id: "shared", role: store.RoleShared})
	p := e.pod("p", func(c *api.Config) {
		c.Limits.ProvisionRate = 0.001
		c.Limits.ProvisionBurst = 2
		c.Limits.ProvisionToken = "s3cret-token"
	})
	for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"X-Provision-Token": "s3cret-tokenX"}} {
		if code, _, body := p.raw(t, "POST", "/v1/provision", "", nil, hdr); code != 401 {
			t.Fatalf("provision with %v: %d %s, want 401", hdr, code, body)
		}
	}
	for _, hdr := range []map[string]string{{"Authorization": "Bearer s3cret-token"}, {"X-Provision-Token": "s3cret-token"}} {
		if code, _, body := p.raw(t, "POST", "/v1/provision", "", nil, hdr); code != 200 {
			t.Fatalf("provision with %v: %d %s, want 200", hdr, code, body)
		}
	}
	code, h, body := p.raw(t, "POST", "/v1/provision", "", nil, map[string]string{"X-Provision-Token": "s3cret-token"})
	want429(t, "a third provision", code, h, body)
	if got := counter(t, p, "eventlogd_requests_rejected_total", map[string]string{"reason": "provision_rate"}); got != 1 {
		t.Fatalf("provision_rate rejections = %v, want 1", got)
	}
}

// TestErrorAnswersHideInternals: a tenant DB that refuses connections gives a 503 whose answer
// names the request id, not the socket; the detail is in the log under that id. A client error
// keeps its precise message (negative control).
func TestErrorAnswersHideInternals(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated, proxy: true})
	var logs lockedBuffer
	p := e.pod("p", func(c *api.Config) { c.Log = slog.New(slog.NewTextHandler(&logs, nil)) })
	_, k := p.provision(t, "ded")
	p.write(t, k, "/a", "x")
	e.proxies["ded"].Stop()
	p.srv.Pools().ClosePool("ded") // the next request dials the stopped proxy
	code, h, body := p.raw(t, "PUT", "/v1/fs/b", k, strings.NewReader("x"), nil)
	if code != 503 {
		t.Fatalf("write with the tenant DB down: %d %s", code, body)
	}
	id := h.Get("X-Request-Id")
	if id == "" || !strings.Contains(body, id) {
		t.Fatalf("answer %s does not name the request id %q", body, id)
	}
	for _, leak := range []string{"127.0.0.1", "tcp", "dial", "refused"} {
		if strings.Contains(body, leak) {
			t.Fatalf("answer leaks %q: %s", leak, body)
		}
	}
	if log := logs.String(); !strings.Contains(log, "request_id="+id) || !strings.Contains(log, "127.0.0.1") {
		t.Fatalf("the detail is not logged under the request id %s:\n%s", id, log)
	}
	if err := e.proxies["ded"].Start(); err != nil {
		t.Fatal(err)
	}
	if code, _, body := p.raw(t, "PUT", "/v1/fs/a//b", k, strings.NewReader("x"), nil); code != 400 || !strings.Contains(body, "/a//b") {
		t.Fatalf("a client error lost its message: %d %s", code, body)
	}
}
