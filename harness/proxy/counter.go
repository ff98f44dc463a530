package proxy

import (
	"net"
	"sync"
	"sync/atomic"
)

// counter is a plain TCP relay placed behind a toxiproxy proxy (toxiproxy -> counter -> DB). It counts
// connections and bytes each way as they flow: toxiproxy's own byte metrics are only added when a link
// ends, which is too late for a live sample and for the exact cold-tenant check.
type counter struct {
	ln       net.Listener
	upstream string

	conns, up, down atomic.Int64

	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func newCounter(upstream string) (*counter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &counter{ln: ln, upstream: upstream, open: map[net.Conn]struct{}{}}
	c.wg.Add(1)
	go c.accept()
	return c, nil
}

func (c *counter) addr() string { return c.ln.Addr().String() }

func (c *counter) accept() {
	defer c.wg.Done()
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.conns.Add(1)
		server, err := net.Dial("tcp", c.upstream)
		if err != nil {
			client.Close()
			continue
		}
		if !c.track(client, server) {
			return
		}
		c.wg.Add(2)
		go c.pipe(server, client, &c.up)
		go c.pipe(client, server, &c.down)
	}
}

// track registers both ends so close can break them; false when the relay is already closed.
func (c *counter) track(a, b net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		a.Close()
		b.Close()
		return false
	}
	c.open[a], c.open[b] = struct{}{}, struct{}{}
	return true
}

// Relay buffers: a link reads into a small buffer of its own while it is quiet and into a big one,
// lent by a pool, while its reads fill the small one. Most DB connections of a run sit idle in a
// read (a pod's pool keeps them open): a run of a thousand dedicated tenants holds thousands, each
// then costing smallRelayBuf per direction instead of bigRelayBuf.
const (
	smallRelayBuf = 1 << 10
	bigRelayBuf   = 32 << 10
)

var relayBufs = sync.Pool{New: func() any { b := make([]byte, bigRelayBuf); return &b }}

// pipe copies src to dst, counting into n chunk by chunk; when either side ends it closes both.
func (c *counter) pipe(dst, src net.Conn, n *atomic.Int64) {
	defer c.wg.Done()
	small := make([]byte, smallRelayBuf)
	buf, big := small, (*[]byte)(nil)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			n.Add(int64(k))
			if _, werr := dst.Write(buf[:k]); werr != nil {
				break
			}
		}
		if err != nil { // EOF, a reset or our own close: all are an ordinary end of the link
			break
		}
		switch {
		case big == nil && k == len(small): // busy: read on in big chunks
			big = relayBufs.Get().(*[]byte)
			buf = *big
		case big != nil && k <= smallRelayBuf: // quiet again: give the big buffer back before blocking
			relayBufs.Put(big)
			buf, big = small, nil
		}
	}
	if big != nil {
		relayBufs.Put(big)
	}
	src.Close()
	dst.Close()
	c.mu.Lock()
	delete(c.open, src)
	delete(c.open, dst)
	c.mu.Unlock()
}

func (c *counter) close() {
	c.mu.Lock()
	c.closed = true
	for conn := range c.open {
		conn.Close()
	}
	c.mu.Unlock()
	c.ln.Close()
	c.wg.Wait()
}
