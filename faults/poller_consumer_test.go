package faults

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/kinds"
)

// adminStub serves eventlogd's admin contract (docs/eventlogd.md) over real HTTP and records calls.
type adminStub struct {
	mu     sync.Mutex
	calls  []string
	status int
}

func (a *adminStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, r.Method+" "+r.URL.RequestURI())
	if a.status != 0 {
		http.Error(w, "admin disabled", a.status)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// TestOutboxPollerStall proves the fault speaks the admin contract: stall with the span, then resume;
// and that an admin endpoint that refuses (eventlogd without --admin) is an Inject error, not a silent
// no-op fault.
func TestOutboxPollerStall(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  int
		wantErr bool
	}{{"ok", 0, false}, {"no_admin", http.StatusNotFound, true}} {
		t.Run(c.name, func(t *testing.T) {
			stub := &adminStub{status: c.status}
			srv := httptest.NewServer(stub)
			defer srv.Close()
			env := newTestEnv(t)
			env.admin["p1"] = srv.URL + "/"
			f, err := Build(env, instance(t, kinds.OutboxPollerStallName, "p1", 90*time.Second, nil))
			if err != nil {
				t.Fatal(err)
			}
			err = f.Inject(context.Background())
			if (err != nil) != c.wantErr {
				t.Fatalf("Inject error %v, want error %v", err, c.wantErr)
			}
			if c.wantErr {
				if !strings.Contains(err.Error(), "HTTP 404") {
					t.Errorf("error does not say what the pod answered: %v", err)
				}
				return
			}
			if err := f.Heal(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := []string{"POST /v1/admin/poller/stall?for=1m30s", "POST /v1/admin/poller/resume"}
			if strings.Join(stub.calls, "|") != strings.Join(want, "|") {
				t.Fatalf("admin calls %q, want %q", stub.calls, want)
			}
		})
	}
}

// connCounter accepts connections and counts those the client closed.
type connCounter struct {
	ln     net.Listener
	closed chan string
	wg     sync.WaitGroup
}

func newConnCounter(t *testing.T) *connCounter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &connCounter{ln: ln, closed: make(chan string, 64)}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				_, _ = io.Copy(io.Discard, conn) // returns when the client closes
				c.closed <- conn.RemoteAddr().String()
				conn.Close()
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); c.wg.Wait() })
	return c
}

func (c *connCounter) consumer(t *testing.T, name string) *netConsumer {
	conn, err := net.Dial("tcp", c.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &netConsumer{name: name, conn: conn}
}

// TestConsumerDisconnect proves consumer_disconnect closes the chosen consumers' real connections
// (count N = the first N, 0 = all) and leaves the others connected.
func TestConsumerDisconnect(t *testing.T) {
	for _, c := range []struct{ count, want int }{{2, 2}, {0, 4}} {
		t.Run(map[int]string{2: "two", 0: "all"}[c.count], func(t *testing.T) {
			cc := newConnCounter(t)
			env := newTestEnv(t)
			var all []*netConsumer
			for _, n := range []string{"c1", "c2", "c3", "c4"} {
				nc := cc.consumer(t, n)
				all = append(all, nc)
				env.consumers["t1"] = append(env.consumers["t1"], nc)
			}
			f, err := Build(env, instance(t, kinds.ConsumerDisconnectName, "t1", 0, kinds.ConsumerDisconnectParams{Count: c.count}))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Inject(context.Background()); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < c.want; i++ {
				select {
				case <-cc.closed:
				case <-time.After(10 * time.Second):
					t.Fatalf("only %d of %d connections closed", i, c.want)
				}
			}
			for i, nc := range all {
				dropped := nc.conn == nil
				if dropped != (i < c.want) {
					t.Errorf("consumer %s dropped=%v", nc.name, dropped)
				}
			}
			if err := f.Heal(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestConsumerSlow proves consumer_slow sets the read delay on the first N consumers and Heal clears it.
func TestConsumerSlow(t *testing.T) {
	env := newTestEnv(t)
	cs := []*netConsumer{{name: "c1"}, {name: "c2"}, {name: "c3"}}
	for _, c := range cs {
		env.consumers["t1"] = append(env.consumers["t1"], c)
	}
	f, err := Build(env, instance(t, kinds.ConsumerSlowName, "t1", time.Second, kinds.ConsumerSlowParams{ReadDelay: 250 * time.Millisecond, Count: 2}))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		want := time.Duration(0)
		if i < 2 {
			want = 250 * time.Millisecond
		}
		if got := c.readDelay(); got != want {
			t.Errorf("%s read delay %s, want %s", c.name, got, want)
		}
	}
	if err := f.Heal(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.readDelay() != 0 {
			t.Errorf("%s still slow after Heal", c.name)
		}
	}
	if _, err := Build(env, instance(t, kinds.ConsumerSlowName, "t2", time.Second, nil)); err == nil {
		t.Error("a tenant without consumers must be a build error")
	}
}
