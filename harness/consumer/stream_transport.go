package consumer

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
)

// streamTransport carries a consumer's SSE streams on connections of their own and everything else
// (listings, pulls, TLS) on the HTTP transport next. net/http's transport keeps two goroutines and
// two 4 KiB buffers per connection, most of what an idle subscriber costs; a stream here is one
// connection read by the consumer's own goroutine through one small buffer, and closed with its body
// (a stream is never reused). A stream is a plain-HTTP GET that accepts text/event-stream.
type streamTransport struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	next http.RoundTripper
}

// streamReadBuffer is the buffer a stream's connection is read through: the status line and headers,
// the chunk sizes, and what does not fill the parser's own buffer.
const streamReadBuffer = 512

func (t *streamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.URL.Scheme != "http" || req.Header.Get("Accept") != "text/event-stream" {
		return t.next.RoundTrip(req)
	}
	ctx := req.Context()
	addr := req.URL.Host
	if req.URL.Port() == "" {
		addr = net.JoinHostPort(req.URL.Hostname(), "80")
	}
	conn, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	// Cancelling the request closes the connection, which ends a blocked write or read at once.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if err := req.Write(conn); err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, streamReadBuffer), req)
	if err != nil {
		return fail(err)
	}
	resp.Body = &streamBody{body: resp.Body, conn: conn, stop: stop, ctx: ctx}
	return resp, nil
}

// CloseIdleConnections closes the idle connections of the transport the other requests go through
// (streams keep none).
func (t *streamTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// streamBody is a stream's body: reading it reads the connection; closing it closes the connection.
// After the request's context ended, a read returns the context's error, as net/http's does.
type streamBody struct {
	body io.ReadCloser
	conn net.Conn
	stop func() bool
	ctx  context.Context
	once sync.Once
}

func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && b.ctx.Err() != nil {
		err = b.ctx.Err()
	}
	return n, err
}

func (b *streamBody) Close() error {
	b.once.Do(func() {
		b.stop()
		b.conn.Close()
	})
	return nil
}
