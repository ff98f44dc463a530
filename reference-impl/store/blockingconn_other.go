//go:build !linux

package store

import (
	"context"
	"net"
)

// dialBlocking is a plain dial where blocking reads are not built (blockingconn_linux.go).
func dialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}
