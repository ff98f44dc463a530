package store

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A write group's connections (Pools.AcquireGroup) read in a blocking system call instead of
// Go's network poller. A hot tenant's committer sends a group and waits for the server's answer;
// with the poller, the answer is only seen when a scheduler runs out of queued goroutines and polls,
// and on a busy pod (hundreds of writers answered by the last group, their next requests read)
// that took longer than the statements (docs/performance.md: the committer waited about as long
// again as the server worked). A blocked read instead wakes its thread as soon as the answer
// arrives. It holds an OS thread only while a group's round trip is in flight: at most one per
// connection of a group handle (PoolOptions.GroupMaxOpen), and at most maxBlockingConns of them
// in the process, whatever the count of pools and tenants (the runtime dies past 10,000 threads, and
// a stalled tenant DB holds each of its reads until its context ends): a connection dialled past
// that count uses the poller.
//
// Deadlines are the socket's receive and send timeouts (SO_RCVTIMEO, SO_SNDTIMEO), set from each
// deadline as the driver sets it before a read or write (the DSN's readTimeout, writeTimeout): a
// read or write that times out returns os.ErrDeadlineExceeded, a net.Error whose Timeout is true.
// Close shuts the socket down first, which wakes a read blocked in it (the driver closes a
// connection from its context watcher when a statement's context ends), and closes the descriptor
// once no read or write is using it, so the number can never be reused under one.
type blockingConn struct {
	f             *os.File // owns fd
	fd            int
	local, remote net.Addr

	mu     sync.Mutex
	busy   int  // reads and writes in their system call
	closed bool // Close ran: no new read or write starts
	freed  bool // f is closed
}

// maxBlockingConns bounds the blockingConns open in the process; blockingOpen counts them.
var (
	maxBlockingConns int64 = 512
	blockingOpen     atomic.Int64
)

// dialBlocking dials addr and returns the connection as a blockingConn (a connection of another
// kind, or one past maxBlockingConns, as it is).
func dialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{KeepAlive: 15 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	if blockingOpen.Add(1) > maxBlockingConns {
		blockingOpen.Add(-1)
		return c, nil
	}
	f, err := tc.File() // a duplicate descriptor, in blocking mode once Fd is called
	local, remote := tc.LocalAddr(), tc.RemoteAddr()
	_ = tc.Close()
	if err != nil {
		blockingOpen.Add(-1)
		return nil, err
	}
	return &blockingConn{f: f, fd: int(f.Fd()), local: local, remote: remote}, nil
}

var errConnClosed = errors.New("blocking conn: use of closed connection")

func (c *blockingConn) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.busy++
	return true
}

func (c *blockingConn) leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy--; c.busy == 0 && c.closed {
		c.free()
	}
}

// free closes the descriptor; under mu, with nothing busy.
func (c *blockingConn) free() {
	if !c.freed {
		c.freed = true
		_ = c.f.Close()
		blockingOpen.Add(-1)
	}
}

func (c *blockingConn) Read(p []byte) (int, error) {
	if !c.enter() {
		return 0, errConnClosed
	}
	defer c.leave()
	for {
		n, err := syscall.Read(c.fd, p)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return 0, os.ErrDeadlineExceeded // SO_RCVTIMEO passed
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *blockingConn) Write(p []byte) (int, error) {
	if !c.enter() {
		return 0, errConnClosed
	}
	defer c.leave()
	done := 0
	for done < len(p) {
		n, err := syscall.Write(c.fd, p[done:])
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return done, os.ErrDeadlineExceeded // SO_SNDTIMEO passed
		case err != nil:
			return done, err
		}
		done += n
	}
	return done, nil
}

func (c *blockingConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR) // wakes a read blocked in the socket
	if c.busy == 0 {
		c.free()
	}
	return nil
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *blockingConn) SetReadDeadline(t time.Time) error {
	return c.setTimeout(syscall.SO_RCVTIMEO, t)
}

func (c *blockingConn) SetWriteDeadline(t time.Time) error {
	return c.setTimeout(syscall.SO_SNDTIMEO, t)
}

// setTimeout sets the socket's option opt to the time left until t (none for the zero time; a
// deadline already passed times the next call out at once, as closely as a timeout can: 1 µs).
func (c *blockingConn) setTimeout(opt int, t time.Time) error {
	if !c.enter() {
		return errConnClosed
	}
	defer c.leave()
	var tv syscall.Timeval
	if !t.IsZero() {
		tv = syscall.NsecToTimeval(max(time.Until(t), time.Microsecond).Nanoseconds())
		if tv.Sec == 0 && tv.Usec == 0 {
			tv.Usec = 1
		}
	}
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv)
}

// SyscallConn lets the driver check an idle connection before its first statement (an answer
// or an end of stream waiting in it means the server closed it): the check's read must not block,
// so the raw connection peeks without waiting instead of running the driver's read.
func (c *blockingConn) SyscallConn() (syscall.RawConn, error) { return peekConn{c}, nil }

type peekConn struct{ c *blockingConn }

func (p peekConn) Control(f func(fd uintptr)) error {
	if !p.c.enter() {
		return errConnClosed
	}
	defer p.c.leave()
	f(uintptr(p.c.fd))
	return nil
}

// Read is the liveness check: nil when nothing is waiting in the socket, an error otherwise (the
// driver then drops the connection and takes another). f is not run: its read would block.
func (p peekConn) Read(func(fd uintptr) bool) error {
	if !p.c.enter() {
		return errConnClosed
	}
	defer p.c.leave()
	var b [1]byte
	for {
		n, _, err := syscall.Recvfrom(p.c.fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return nil // alive, nothing waiting
		case err != nil:
			return err
		case n == 0:
			return io.EOF
		}
		return errors.New("blocking conn: unexpected bytes waiting in an idle connection")
	}
}

func (p peekConn) Write(func(fd uintptr) bool) error {
	return errors.New("blocking conn: raw writes are not supported")
}
