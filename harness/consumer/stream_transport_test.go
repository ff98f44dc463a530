package consumer

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestStreamTransport: through NewClient, an SSE stream gets a connection of its own that closes
// with its body (two streams one after the other: two connections, each closed), while other
// requests go through net/http's transport and reuse its keep-alive connection (two GETs: one
// connection, left open). A stream's headers reach the server, its body reads what the server
// flushes, and cancelling the request ends a read blocked on a silent stream with the context's
// error.
func TestStreamTransport(t *testing.T) {
	var mu sync.Mutex
	newConns, closed := 0, 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "text/event-stream" {
			io.WriteString(w, "listing")
			return
		}
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: reset\ndata: {\"seq\":0,\"reason\":\"initial_sync\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // then silent until the client goes
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			newConns++
		case http.StateClosed:
			closed++
		}
	}
	srv.Start()
	defer srv.Close()
	counts := func() (int, int) { mu.Lock(); defer mu.Unlock(); return newConns, closed }
	waitClosed := func(want int) {
		t.Helper()
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) { // pacing the poll
			if _, c := counts(); c >= want {
				return
			}
		}
		n, c := counts()
		t.Fatalf("%d connections, %d closed; want %d closed", n, c, want)
	}
	cl := NewClient(0)
	defer cl.CloseIdleConnections()

	for range 2 {
		resp, err := cl.Get(srv.URL + "/v1/fs/x/?list")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "listing" {
			t.Fatalf("listing answered %q", b)
		}
	}
	if n, c := counts(); n != 1 || c != 0 {
		t.Fatalf("two plain GETs: %d connections, %d closed; want one kept-alive connection", n, c)
	}

	for i := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/events", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer k")
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream answered %s", resp.Status)
		}
		buf := make([]byte, 4096)
		n, err := resp.Body.Read(buf)
		if err != nil || n == 0 {
			t.Fatalf("first read: %d bytes, %v", n, err)
		}
		done := make(chan error, 1)
		go func() { _, err := resp.Body.Read(buf); done <- err }()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("a read blocked on a cancelled stream returned %v, want context.Canceled", err)
		}
		resp.Body.Close()
		waitClosed(i + 1)
	}
	if n, _ := counts(); n != 3 {
		t.Fatalf("%d connections in all, want 3: the listings' one and one per stream", n)
	}
}
