package kinds_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

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

func (c *connCounter) consumer(t *testing.T, name string) *faultstest.Consumer {
	conn, err := net.Dial("tcp", c.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return faultstest.NewConsumer(name, conn)
}

// TestConsumerDisconnect proves consumer_disconnect closes the chosen consumers' real connections
// (count N = the first N, 0 = all) and leaves the others connected.
func TestConsumerDisconnect(t *testing.T) {
	for _, c := range []struct{ count, want int }{{2, 2}, {0, 4}} {
		t.Run(map[int]string{2: "two", 0: "all"}[c.count], func(t *testing.T) {
			cc := newConnCounter(t)
			env := faultstest.NewEnv(t)
			var all []*faultstest.Consumer
			for _, n := range []string{"c1", "c2", "c3", "c4"} {
				nc := cc.consumer(t, n)
				all = append(all, nc)
				env.Consumers["t1"] = append(env.Consumers["t1"], nc)
			}
			f := build(t, kinds.ConsumerDisconnect(), env, "t1", 0, kinds.ConsumerDisconnectParams{Count: c.count})
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
				dropped := !nc.Connected()
				if dropped != (i < c.want) {
					t.Errorf("consumer %s dropped=%v", nc.Name(), dropped)
				}
			}
			if err := f.Heal(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
