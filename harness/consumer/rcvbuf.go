package consumer

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// SmallMSS is the TCP_MAXSEG a small-buffer consumer socket advertises: the IPv4 default MSS. On
// loopback (MTU 64 KB) the server's send buffer autotunes to 2 x cwnd x MSS, megabytes, whatever the
// receiver's window; with 536-byte segments it stays near its 16 KB default. Measured on this machine
// (a server writing 100-byte frames to a client that never reads, until a write blocks for 500 ms):
// 3.9 MB absorbed with default sockets, 2.2 MB with SO_RCVBUF 2048 alone, 66 KB with SO_RCVBUF 2048
// and MSS 536.
const SmallMSS = 536

// NewClient returns an HTTP client for SSE streams (no overall timeout): plain-HTTP streams go on
// connections of their own, read by the consumer's goroutine (streamTransport), the rest through
// net/http's transport. With rcvbuf > 0 every socket
// it opens gets SO_RCVBUF = rcvbuf bytes and TCP_MAXSEG = SmallMSS before it connects, so the window it
// advertises and the server's send buffer both stay small and a slow reader pushes back on the
// server's own send queue after some tens of KB (loopback autotuning would otherwise let the kernels
// absorb megabytes). Linux doubles the value for its bookkeeping and raises
// it to its minimum (SOCK_MIN_RCVBUF, 4,608 bytes on this kernel); receiveBuffer reads what it became.
func NewClient(rcvbuf int) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
				if serr == nil {
					serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, SmallMSS)
				}
			}); err != nil {
				return err
			}
			if serr != nil {
				return fmt.Errorf("SO_RCVBUF %d / TCP_MAXSEG %d: %w", rcvbuf, SmallMSS, serr)
			}
			return nil
		}
	}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64, DisableCompression: true}
	if rcvbuf > 0 {
		tr.ReadBufferSize = min(max(rcvbuf, 512), 4096) // the client's own buffer must not undo the small window
	}
	return &http.Client{Transport: &streamTransport{dial: d.DialContext, next: tr}}
}

// chunkReader hands out at most n bytes per Read, so a buffered parser on top of it holds about one
// frame plus n bytes instead of filling its whole buffer from the socket: with a small SO_RCVBUF, a
// slow consumer's backlog then stays in the server, where its send queue can overflow and be signalled.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

// receiveBuffer returns the kernel's SO_RCVBUF of a TCP connection (after Linux's doubling).
func receiveBuffer(c *net.TCPConn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var gerr error
	if err := rc.Control(func(fd uintptr) { n, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) }); err != nil {
		return 0, err
	}
	return n, gerr
}
