package main

import "net"

// sendBufferListener sets SO_SNDBUF on every connection it accepts. On loopback the kernel
// autotunes a socket's send buffer to megabytes, which soaks up minutes of a slow consumer's frames
// before the pod's own per-connection send queue sees any pressure; a scenario that must reach the
// queue's overflow path (reset(slow_consumer), or its seeded defect) makes the buffer small.
type sendBufferListener struct {
	net.Listener
	bytes int
}

// Accept returns the next connection with its send buffer set; a connection whose buffer cannot
// be set is returned as it is (the kernel's default is a correct, only a roomier, buffer).
func (l sendBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(l.bytes)
	}
	return c, nil
}
