package api_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"go.uber.org/goleak"
)

// TestPutterLeavesNoGoroutine: the benchmark's fasthttp putter, once closed, has no fasthttp
// goroutine left at all (neither the DNS-cache cleaner, which its plain dialer never starts, nor the
// connection cleaner, which close waits out). The control closes the same client's idle connections
// without the wait: its connection cleaner is still there, so the wait is what ends it.
func TestPutterLeavesNoGoroutine(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer ts.Close()
	before := goleak.IgnoreCurrent()

	p := newPutter("fasthttp", ts.URL, 4)
	if code, err := p.put(context.Background(), "/v1/fs/a", "k"); err != nil || code != http.StatusOK {
		t.Fatalf("put: %d %v", code, err)
	}
	p.close()
	if goroutineRuns("valyala/fasthttp.") {
		t.Error("a fasthttp goroutine outlives close")
	}
	if err := goleak.Find(before); err != nil {
		t.Errorf("after close: %v", err)
	}

	d := &net.Dialer{Timeout: 5 * time.Second}
	c := &fasthttp.HostClient{Addr: strings.TrimPrefix(ts.URL, "http://"), MaxConns: 4, MaxIdleConnDuration: fastIdle,
		Dial: func(addr string) (net.Conn, error) { return d.Dial("tcp", addr) }}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.SetRequestURI(ts.URL + "/v1/fs/a")
	if err := c.Do(req, resp); err != nil {
		t.Fatal(err)
	}
	fasthttp.ReleaseRequest(req)
	fasthttp.ReleaseResponse(resp)
	c.CloseIdleConnections()
	if !goroutineRuns("fasthttp.(*HostClient).connsCleaner") {
		t.Error("control: no connection cleaner right after CloseIdleConnections, so the check above proves nothing")
	}
	// The control's cleaner ends at its next wake (one fastIdle); it must be gone before TestMain's
	// goleak, whose retries do not wait that long (which is why close waits).
	for deadline := time.Now().Add(30 * fastIdle); goroutineRuns("fasthttp.(*HostClient).connsCleaner") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := goleak.Find(before); err != nil {
		t.Errorf("control: the connection cleaner did not end: %v", err)
	}
}
