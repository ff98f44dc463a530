package consumer

import (
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// NewClient returns an HTTP client for SSE streams (no overall timeout). With rcvbuf > 0 every socket
// it opens gets SO_RCVBUF = rcvbuf bytes before it connects, so the TCP window it advertises stays
// small and a slow reader pushes back on the server after a few KB (loopback autotuning would
// otherwise let the kernel absorb megabytes). Linux doubles the value for its bookkeeping and raises
// it to its minimum (SOCK_MIN_RCVBUF, 4,608 bytes on this kernel); ReceiveBuffer reads what it became.
func NewClient(rcvbuf int) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
			}); err != nil {
				return err
			}
			if serr != nil {
				return fmt.Errorf("SO_RCVBUF %d: %w", rcvbuf, serr)
			}
			return nil
		}
	}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64,
		DisableCompression: true}}
}

// ReceiveBuffer returns the kernel's SO_RCVBUF of a TCP connection (after Linux's doubling).
func ReceiveBuffer(c *net.TCPConn) (int, error) {
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
