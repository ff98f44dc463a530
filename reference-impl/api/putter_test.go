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
// without the wait: its connection cleaner is still there while a connection is pooled, and ends only
// at its next wake, so the wait is what ends it in time.
func TestPutterLeavesNoGoroutine(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer ts.Close()
	before := goleak.IgnoreCurrent()

	p := newPutter("fasthttp", ts.URL, 4)
	if code, err := p.put(context.Background(), []byte(ts.URL+"/v1/fs/a"), "Bearer k"); err != nil || code != http.StatusOK {
		t.Fatalf("put: %d %v", code, err)
	}
	p.close()
	if goroutineRuns("valyala/fasthttp.") {
		t.Error("a fasthttp goroutine outlives close")
	}
	if err := goleak.Find(before); err != nil {
		t.Errorf("after close: %v", err)
	}

	// The control: the same client's connection cleaner, seen while a connection sits in its pool
	// (the cleaner cannot end before the pool is empty), so goroutineRuns does see fasthttp's
	// goroutines and the check above is not vacuous. It is looked for before CloseIdleConnections:
	// after it, the cleaner may end at its first run, however late the scheduler starts it. Its
	// idle period (controlIdle) is long enough that no scheduling delay empties the pool first.
	const controlIdle = 5 * time.Second
	d := &net.Dialer{Timeout: 5 * time.Second}
	c := &fasthttp.HostClient{Addr: strings.TrimPrefix(ts.URL, "http://"), MaxConns: 4, MaxIdleConnDuration: controlIdle,
		Dial: func(addr string) (net.Conn, error) { return d.Dial("tcp", addr) }}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.SetRequestURI(ts.URL + "/v1/fs/a")
	if err := c.Do(req, resp); err != nil {
		t.Fatal(err)
	}
	fasthttp.ReleaseRequest(req)
	fasthttp.ReleaseResponse(resp)
	if !goroutineRuns("fasthttp.(*HostClient).connsCleaner") {
		t.Error("control: no connection cleaner while a connection is pooled, so the check above proves nothing")
	}
	// Without a wait the cleaner outlives the client until its next wake (one controlIdle); it
	// must be gone before TestMain's goleak, whose retries do not wait that long (which is why
	// close waits).
	c.CloseIdleConnections()
	for deadline := time.Now().Add(6 * controlIdle); goroutineRuns("fasthttp.(*HostClient).connsCleaner") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := goleak.Find(before); err != nil {
		t.Errorf("control: the connection cleaner did not end: %v", err)
	}
}
