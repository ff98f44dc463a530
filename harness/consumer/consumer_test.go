package consumer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/ledger"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// script serves connection i (0-based) with frames[i], then holds it open (hold) or ends it.
type script struct {
	mu     sync.Mutex
	n      int
	since  []string
	frames [][]string
	hold   bool
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer key" {
		w.WriteHeader(401)
		return
	}
	s.mu.Lock()
	i := s.n
	s.n++
	s.since = append(s.since, r.URL.Query().Get("since"))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	if i < len(s.frames) {
		for _, f := range s.frames[i] {
			fmt.Fprint(w, f)
		}
	}
	w.(http.Flusher).Flush()
	if s.hold || i >= len(s.frames) {
		<-r.Context().Done()
	}
}

func (s *script) sinces() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.since...)
}

const (
	initSync = "event: reset\ndata: {\"seq\":0,\"reason\":\"initial_sync\"}\n\n"
	ev1      = "event: file_changed\r\ndata: {\"seq\":1,\"path\":\"/a\",\"op\":\"write\",\"ts\":1}\r\n\r\n"
	ev2      = "event: file_changed\ndata: {\"seq\":2,\"path\":\"/b\",\"op\":\"write\",\"ts\":1}\n\n"
	hb5      = ": keepalive\n\nevent: heartbeat\ndata: {\"seq\":5}\n\n"
	slow     = "event: reset\ndata: {\"seq\":2,\"reason\":\"slow_consumer\"}\n\n"
)

func run(t *testing.T, eps []Endpoint, cfg Config, until func(*Consumer) bool) (*Consumer, *ledger.Memory) {
	t.Helper()
	s := &ledger.Memory{}
	cfg.Name, cfg.Tenant, cfg.Key, cfg.Start, cfg.Sink = "c1", "ten", "key", time.Now(), s
	cfg.BackoffMin, cfg.BackoffMax, cfg.Jitter = time.Millisecond, 5*time.Millisecond, 0.5
	cfg.Endpoints = func() []Endpoint { return eps }
	c := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	wait.Until(10*time.Second, func() bool { return until(c) })
	cancel()
	<-done
	return c, s
}

func kinds(recs []ledger.Record) []string {
	var out []string
	for _, r := range recs {
		switch r.K {
		case ledger.KindConn:
			out = append(out, r.K+":"+r.Phase)
		case ledger.KindEv, ledger.KindReset:
			out = append(out, fmt.Sprintf("%s:%d", r.K, r.Seq))
		}
	}
	return out
}

func TestResumeWithCursor(t *testing.T) {
	sc := &script{frames: [][]string{{initSync, ev1, ev2}, {hb5}}}
	srv := httptest.NewServer(sc)
	defer srv.Close()
	c, s := run(t, []Endpoint{{"pod-1", srv.URL}}, Config{Durable: true}, func(c *Consumer) bool { return c.Cursor() == 5 })
	if got := sc.sinces(); len(got) < 2 || got[0] != "" || got[1] != "2" {
		t.Errorf("since per connection = %q, want [\"\" \"2\" ...]", got)
	}
	want := []string{"conn:open", "reset:0", "ev:1", "ev:2", "conn:close", "conn:open", "conn:close"}
	if got := kinds(s.Records()); len(got) < len(want) || fmt.Sprint(got[:len(want)]) != fmt.Sprint(want) {
		t.Errorf("records = %v, want %v", got, want)
	}
	sum := c.Summary()
	if sum.FinalCursor != 5 || sum.FirstSince != 0 || !sum.Durable || sum.ToT < sum.FromT || c.heartbeats.Load() != 1 {
		t.Errorf("summary %+v heartbeats %d", sum, c.heartbeats.Load())
	}
	for _, r := range s.Records() {
		if r.K == ledger.KindEv && (r.Pod != "pod-1" || r.Conn != "c1.1" || r.Tenant != "ten") {
			t.Errorf("ev record %+v", r)
		}
	}
}

func TestFailoverToLivePod(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	sc := &script{frames: [][]string{{initSync, ev1}}, hold: true}
	srv := httptest.NewServer(sc)
	defer srv.Close()
	_, s := run(t, []Endpoint{{"pod-1", deadURL}, {"pod-2", srv.URL}}, Config{Durable: true}, func(c *Consumer) bool { return c.Cursor() == 1 })
	recs := s.Records()
	if len(recs) < 2 || recs[0].Phase != "fail" || recs[0].Pod != "pod-1" || recs[0].Err == "" || recs[1].Phase != "open" || recs[1].Pod != "pod-2" {
		t.Errorf("records %+v: want a fail on pod-1 then an open on pod-2", recs)
	}
}

func TestSlowConsumerResetReconnectsFromCursor(t *testing.T) {
	sc := &script{frames: [][]string{{initSync, ev1, ev2, slow}, {hb5}}, hold: true}
	srv := httptest.NewServer(sc)
	defer srv.Close()
	_, s := run(t, []Endpoint{{"p", srv.URL}}, Config{Durable: true}, func(c *Consumer) bool { return c.Cursor() == 5 })
	if got := sc.sinces(); len(got) != 2 || got[1] != "2" {
		t.Errorf("since per connection = %q, want a second connection from 2", got)
	}
	var closeErr string
	for _, r := range s.Records() {
		if r.K == ledger.KindConn && r.Phase == "close" && r.Conn == "c1.1" {
			closeErr = r.Err
		}
	}
	if closeErr == "" {
		t.Error("the slow_consumer close carries no reason")
	}
}

func TestDisconnectAndNonDurable(t *testing.T) {
	sc := &script{frames: [][]string{{initSync, ev1}, {initSync}}, hold: true}
	srv := httptest.NewServer(sc)
	defer srv.Close()
	var once sync.Once
	c, _ := run(t, []Endpoint{{"p", srv.URL}}, Config{Durable: false}, func(c *Consumer) bool {
		if c.Cursor() == 1 {
			once.Do(func() {
				if err := c.Disconnect(); err != nil {
					t.Error(err)
				}
			})
		}
		return len(sc.sinces()) >= 2
	})
	if got := sc.sinces(); len(got) < 2 || got[1] != "" {
		t.Errorf("non-durable reconnect sent since %q, want none", got)
	}
	if c.Summary().Durable {
		t.Error("summary says durable")
	}
}

func TestIdleTimeoutEndsSilentConnection(t *testing.T) {
	sc := &script{frames: [][]string{{initSync}}, hold: true}
	srv := httptest.NewServer(sc)
	defer srv.Close()
	run(t, []Endpoint{{"p", srv.URL}}, Config{Durable: true, IdleTimeout: 50 * time.Millisecond}, func(*Consumer) bool { return len(sc.sinces()) >= 2 })
	if n := len(sc.sinces()); n < 2 {
		t.Errorf("%d connections: the silent one was never given up", n)
	}
}

// A late consumer with a saved durable cursor does not connect before its Wait lets it, and its
// first connection resumes from that cursor (replay) instead of a fresh subscription; without
// Resume the first connection is fresh (no since).
func TestLateConsumerResumesFromSavedCursor(t *testing.T) {
	tests := []struct {
		name      string
		resume    bool
		wantSince string
		wantFirst int64
	}{
		{"saved cursor", true, "1", 1},
		{"fresh", false, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := &script{frames: [][]string{{ev2, hb5}}, hold: true}
			srv := httptest.NewServer(sc)
			defer srv.Close()
			gate, waiting := make(chan struct{}), make(chan struct{})
			var connsBeforeGate int
			var atGate, once sync.Once
			wait := func(ctx context.Context) bool {
				connsBeforeGate = len(sc.sinces())
				atGate.Do(func() { close(waiting) })
				select {
				case <-gate:
					return true
				case <-ctx.Done():
					return false
				}
			}
			c, _ := run(t, []Endpoint{{"p", srv.URL}}, Config{Durable: true, Resume: tc.resume, Since: 1, Wait: wait}, func(c *Consumer) bool {
				select {
				case <-waiting: // the consumer is at its start gate: open it
					once.Do(func() { close(gate) })
				default:
				}
				return c.Cursor() == 5
			})
			if connsBeforeGate != 0 {
				t.Errorf("%d connections before the consumer's start", connsBeforeGate)
			}
			if got := sc.sinces(); len(got) < 1 || got[0] != tc.wantSince {
				t.Errorf("first connection since = %q, want %q", got, tc.wantSince)
			}
			if sum := c.Summary(); sum.FirstSince != tc.wantFirst || sum.FinalCursor != 5 {
				t.Errorf("summary first_since %d final %d, want %d and 5", sum.FirstSince, sum.FinalCursor, tc.wantFirst)
			}
		})
	}
}

// NewClient's sockets carry the requested SO_RCVBUF (Linux doubles it, with a floor); without a
// size they keep the kernel's larger default.
func TestNewClientSetsReceiveBuffer(t *testing.T) {
	tests := []struct {
		rcvbuf   int
		min, max int
	}{
		{rcvbuf: 4096, min: 4096, max: 2 * 4096},
		{rcvbuf: 1, min: 1, max: 8192}, // raised to the kernel's minimum
		{rcvbuf: 0, min: 2 * 8192, max: 1 << 30},
	}
	for _, tc := range tests {
		for _, stream := range []bool{true, false} { // an SSE stream (its own connection), another request (net/http's)
			t.Run(fmt.Sprintf("%d/stream=%v", tc.rcvbuf, stream), func(t *testing.T) {
				got := make(chan int, 1)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
				defer srv.Close()
				cl := NewClient(tc.rcvbuf)
				st := cl.Transport.(*streamTransport)
				tr := st.next.(*http.Transport)
				measured := func(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
					return func(ctx context.Context, network, addr string) (net.Conn, error) {
						c, err := dial(ctx, network, addr)
						if err == nil {
							n, err := receiveBuffer(c.(*net.TCPConn))
							if err != nil {
								t.Error(err)
							}
							got <- n
						}
						return c, err
					}
				}
				st.dial, tr.DialContext = measured(st.dial), measured(tr.DialContext)
				req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
				if err != nil {
					t.Fatal(err)
				}
				if stream {
					req.Header.Set("Accept", "text/event-stream")
				}
				resp, err := cl.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				cl.CloseIdleConnections()
				if n := <-got; n < tc.min || n > tc.max {
					t.Errorf("SO_RCVBUF %d, want %d..%d", n, tc.min, tc.max)
				}
			})
		}
	}
}

// chunkReader never hands out more than its bound per Read, so a buffered parser above it reads
// about one frame ahead instead of its whole buffer.
func TestChunkReaderBoundsReads(t *testing.T) {
	for _, n := range []int{1, 7, 100} {
		src := strings.NewReader(strings.Repeat("x", 1000))
		cr := chunkReader{src, n}
		buf := make([]byte, 4096)
		total := 0
		for {
			k, err := cr.Read(buf)
			if k > n {
				t.Fatalf("read %d bytes, bound %d", k, n)
			}
			total += k
			if err != nil {
				break
			}
		}
		if total != 1000 {
			t.Errorf("bound %d: read %d of 1000 bytes", n, total)
		}
	}
}

// TestStructuralFramesInBothForms: a dual-emit stream (design 000 item 5) records the detailed
// file_changed as an ev with the structural op and its payload's old path in src, and the reset as a
// reset; a plain write carries no src.
func TestStructuralFramesInBothForms(t *testing.T) {
	renamed := "event: file_changed\ndata: {\"seq\":3,\"path\":\"/new\",\"op\":\"rename\",\"ts\":1,\"payload\":{\"old_path\":\"/old\",\"new_path\":\"/new\"}}\n\n"
	reset := "event: reset\ndata: {\"seq\":3,\"reason\":\"structural_change\",\"path\":\"/new\",\"op\":\"rename\"}\n\n"
	sc := &script{frames: [][]string{{initSync, ev1, renamed, reset}}, hold: true}
	srv := httptest.NewServer(sc)
	defer srv.Close()
	_, s := run(t, []Endpoint{{"pod-1", srv.URL}}, Config{Durable: true}, func(c *Consumer) bool { return c.Cursor() == 3 && c.Frames() == 4 })
	var got []string
	for _, r := range s.Records() {
		switch r.K {
		case ledger.KindEv:
			got = append(got, fmt.Sprintf("ev %s %s src=%q", r.Op, r.Path, r.Src))
		case ledger.KindReset:
			got = append(got, fmt.Sprintf("reset %s %s %s", r.Reason, r.Op, r.Path))
		}
	}
	want := []string{`reset initial_sync  `, `ev write /a src=""`, `ev rename /new src="/old"`, `reset structural_change rename /new`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records %q, want %q", got, want)
	}
}
