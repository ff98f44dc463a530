package faultstest

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// Consumer is a fault.Consumer holding a real TCP connection (nil: a consumer that never connected).
type Consumer struct {
	name  string
	mu    sync.Mutex
	conn  net.Conn
	delay time.Duration
}

var _ fault.Consumer = (*Consumer)(nil)

// NewConsumer returns a consumer named name on conn (which may be nil).
func NewConsumer(name string, conn net.Conn) *Consumer { return &Consumer{name: name, conn: conn} }

// Name returns the consumer's name.
func (c *Consumer) Name() string { return c.name }

// SetReadDelay records the read delay a fault set.
func (c *Consumer) SetReadDelay(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delay = d
}

// ReadDelay returns the read delay last set.
func (c *Consumer) ReadDelay() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.delay
}

// Disconnect closes the connection; an error when there is none.
func (c *Consumer) Disconnect() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return errors.New("not connected")
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

// Connected reports whether the consumer still holds its connection.
func (c *Consumer) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn != nil
}
