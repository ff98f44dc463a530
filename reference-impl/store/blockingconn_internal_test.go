//go:build linux

package store

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
)

// blockingPair is a blockingConn dialled to a loopback listener and the listener's side of it.
func blockingPair(t *testing.T) (*blockingConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := dialBlocking(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	bc, ok := c.(*blockingConn)
	if !ok {
		t.Fatalf("dialBlocking made a %T, want a *blockingConn", c)
	}
	t.Cleanup(func() { bc.Close(); peer.Close() })
	return bc, peer
}

// TestBlockingConn: what the driver needs of a write group's connection, on a real socket.
//   - Bytes go both ways; a read deadline in the future does not cut a read that gets its bytes
//     first, and a cleared one waits as long as it takes.
//   - A read past its deadline returns a timeout (net.Error.Timeout, os.ErrDeadlineExceeded), as
//     does a deadline already passed.
//   - Close wakes a read blocked in the socket (the driver's context watcher closes a connection
//     whose statement's context ended), and every call after it fails.
//   - The liveness check sees nothing on an idle live connection, the end of the stream once the
//     peer closed, and bytes waiting as an error; it never consumes them.
func TestBlockingConn(t *testing.T) {
	t.Run("bytes and deadlines", func(t *testing.T) {
		c, peer := blockingPair(t)
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("peer read %q %v", buf, err)
		}
		if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		go peer.Write([]byte("pong")) //nolint:errcheck
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "pong" {
			t.Fatalf("read %q %v", buf, err)
		}
		if err := c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		_, err := c.Read(buf)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read past its deadline: %v, want a timeout", err)
		}
		if err := c.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read after a passed deadline: %v, want a timeout", err)
		}
		if err := c.SetReadDeadline(time.Time{}); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			_, err := io.ReadFull(c, buf)
			got <- err
		}()
		wait.For(t, 10*time.Second, "the read in its system call", func() bool { return c.inCall() == 1 })
		// The read is blocked with no deadline; it ends when bytes come, however late (here later
		// than the 20 ms deadline above).
		if _, err := peer.Write([]byte("late")); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil || string(buf) != "late" {
			t.Fatalf("read with the deadline cleared: %q %v", buf, err)
		}
	})
	t.Run("close wakes a blocked read", func(t *testing.T) {
		c, _ := blockingPair(t)
		got := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 1))
			got <- err
		}()
		wait.For(t, 10*time.Second, "the read in its system call", func() bool { return c.inCall() == 1 })
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-got:
			if err == nil {
				t.Fatal("read after Close returned no error")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not wake the blocked read")
		}
		if !c.isFreed() {
			t.Fatal("descriptor not closed once the read returned")
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, errConnClosed) {
			t.Fatalf("write after Close: %v", err)
		}
	})
	t.Run("liveness", func(t *testing.T) {
		c, peer := blockingPair(t)
		check := func() error {
			rc, err := c.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			return rc.Read(func(uintptr) bool { t.Fatal("the driver's read ran: it would block"); return true })
		}
		if err := check(); err != nil {
			t.Fatalf("idle live connection: %v", err)
		}
		if _, err := peer.Write([]byte("!")); err != nil {
			t.Fatal(err)
		}
		wait.For(t, 10*time.Second, "the byte to arrive", func() bool { return check() != nil })
		b := make([]byte, 1)
		if _, err := c.Read(b); err != nil || b[0] != '!' {
			t.Fatalf("the checked byte: %q %v (the check must not consume it)", b, err)
		}
		if err := check(); err != nil {
			t.Fatalf("idle again: %v", err)
		}
		peer.Close()
		wait.For(t, 10*time.Second, "the end of the stream", func() bool { return errors.Is(check(), io.EOF) })
	})
}

// TestBlockingConnsBounded: past maxBlockingConns open, a dial returns a connection on the poller;
// one closed frees its place.
func TestBlockingConnsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	old := maxBlockingConns
	maxBlockingConns = blockingOpen.Load() + 1
	defer func() { maxBlockingConns = old }()
	dial := func() net.Conn {
		c, err := dialBlocking(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	first := dial()
	if _, ok := first.(*blockingConn); !ok {
		t.Fatalf("first dial: %T, want a *blockingConn", first)
	}
	if c := dial(); c == nil {
		t.Fatal("no connection")
	} else if _, ok := c.(*blockingConn); ok {
		t.Fatal("dial past the bound: a *blockingConn, want a connection on the poller")
	}
	first.Close()
	if c := dial(); c == nil {
		t.Fatal("no connection")
	} else if _, ok := c.(*blockingConn); !ok {
		t.Fatalf("dial after one closed: %T, want a *blockingConn", c)
	}
}

func (c *blockingConn) inCall() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.busy
}

func (c *blockingConn) isFreed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.freed
}
