package api_test

import (
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// smallBuffers shrinks the kernel socket buffers of accepted connections, so a consumer that stops
// reading fills them after a few KB instead of a few MB.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

func smallReadClient() *http.Client {
	d := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

func TestSlowConsumerIsResetAloneOthersKeepStreaming(t *testing.T) {
	const burst = 3000
	for _, drop := range []bool{false, true} {
		t.Run(map[bool]string{false: "reset", true: "unsignalled-queue-drop"}[drop], func(t *testing.T) {
			e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
			p := e.podWith("p", func(c *api.Config) {
				c.Stream.QueueSize = 16
				c.Stream.QueueWait = 200 * time.Millisecond
				c.Stream.PageSize = 100
				if drop {
					c.Defects = defect.Set{defect.UnsignalledQueueDrop: true}
				}
			}, func(l net.Listener) net.Listener { return smallBuffers{l} })
			tenant, k := p.provision(t, "ded")
			p.write(t, k, "/first", "x")
			fast := p.subscribe(t, k, 1).start()
			slowClient := smallReadClient()
			defer slowClient.CloseIdleConnections()
			slow := p.subscribeWith(t, k, 1, slowClient) // not reading yet
			fast.until(t, 10*time.Second, func(f frame) bool { return f.Type == "heartbeat" })

			st, err := p.srv.Store(testCtx(t), tenant)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < burst; i++ {
				if _, err := st.InsertEvent(testCtx(t), store.Event{Path: fmt.Sprintf("/burst/%d", i), Op: "write", CreatedAt: time.Now()}, store.GuardLock); err != nil {
					t.Fatal(err)
				}
			}
			p.write(t, k, "/wake", "x")
			if drop {
				wait.For(t, 20*time.Second, "both streams to pass the burst", func() bool {
					return counter(t, p, "drive9_sse_events_sent_total", map[string]string{"tenant_id": tenant}) >= 2*(burst+1)
				})
			} else {
				got, ok := fast.until(t, 30*time.Second, func(f frame) bool { return f.Path == "/wake" })
				if !ok || countType(got, "file_changed") != burst+1 {
					t.Fatalf("fast consumer got %d of %d", countType(got, "file_changed"), burst+1)
				}
			}
			if !drop {
				wait.For(t, 20*time.Second, "slow_consumer reset", func() bool {
					return counter(t, p, "drive9_sse_resets_sent_total", map[string]string{"tenant_id": tenant, "reason": "slow_consumer"}) == 1
				})
			}
			// The reset arm (the control) sees its reset(slow_consumer) within window of the slow
			// consumer starting to read; the defect must send none within the same window.
			const window = 5 * time.Second
			slow.start()
			var frames []frame
			isReset := func(f frame) bool { return f.Reason == "slow_consumer" }
			if drop {
				var hit bool
				if frames, hit = slow.until(t, window, isReset); hit {
					t.Fatalf("defect: reset(slow_consumer) within %v: %+v", window, frames[len(frames)-1])
				}
			} else {
				var ok bool
				if frames, ok = slow.until(t, window, isReset); !ok {
					t.Fatalf("control: no reset(slow_consumer) within %v of reading (%d frames)", window, len(frames))
				}
				more, closed := slow.untilClosed(t, 30*time.Second)
				if len(more) != 0 {
					t.Fatalf("frames after the slow_consumer reset: %+v", more)
				}
				if !closed {
					t.Fatal("the stream stayed open 30s after reset(slow_consumer)")
				}
			}
			// Frames the slow consumer did get are contiguous; the reset carries the last seq written.
			var last int64 = 1 // /first
			gap, reset := false, false
			for _, f := range frames {
				switch {
				case f.Type == "file_changed":
					if f.Seq != last+1 {
						gap = true
					}
					last = f.Seq
				case f.Reason == "slow_consumer":
					reset = true
					if f.Seq != last {
						t.Fatalf("reset(slow_consumer) seq %d, last event written %d", f.Seq, last)
					}
				}
			}
			if drop {
				if !gap || reset {
					t.Fatalf("defect: want a silent gap and no reset, got gap=%v reset=%v", gap, reset)
				}
				return
			}
			if gap || !reset {
				t.Fatalf("want contiguous frames then reset, got gap=%v reset=%v (%d frames)", gap, reset, len(frames))
			}
			// Only the slow one was closed: the fast one keeps streaming.
			p.write(t, k, "/after", "x")
			if got, ok := fast.until(t, 10*time.Second, func(f frame) bool { return f.Path == "/after" }); !ok {
				t.Fatalf("fast consumer stopped after the slow one's reset: %+v", got)
			}
			if n := counter(t, p, "drive9_sse_inflight_connections", nil); n != 1 {
				t.Fatalf("inflight connections %v, want 1", n)
			}
		})
	}
}

func countType(fs []frame, typ string) int {
	n := 0
	for _, f := range fs {
		if f.Type == typ {
			n++
		}
	}
	return n
}
