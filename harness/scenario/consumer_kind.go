package scenario

import (
	"fmt"
	"time"
)

// Consumer kinds: how a consumer reads its tenant's events.
const (
	KindSSE  = "sse"  // GET /v1/events, a long-lived stream (the default)
	KindPull = "pull" // GET /v1/events/changes, polled with a durable checkpoint (seed 003)
)

// ConsumerKinds are the allowed values of consumers[].kind.
var ConsumerKinds = []string{KindSSE, KindPull}

// Pull defaults and bounds (the endpoint's own page bound is 1..1000).
const (
	DefaultPullInterval = time.Second
	DefaultPullPageSize = 100
	MaxPullPageSize     = 1000
)

// IsPull reports whether these consumers poll GET /v1/events/changes.
func (c Consumers) IsPull() bool { return c.Kind == KindPull }

// consumerKind validates kind, interval and page_size of consumers[i] and applies their defaults:
// interval and page_size belong to pull consumers, which always keep a durable checkpoint and read
// no socket buffer.
func (v *validator) consumerKind(c *Consumers, i int) error {
	f := fmt.Sprintf("consumers[%d]", i)
	switch c.Kind {
	case "", KindSSE: // left as written: a resolved scenario of sse consumers stays as it was
		if c.Interval != 0 {
			return v.err(f+".interval", v.at("consumers", i, "interval"), []string{"only with kind: pull"}, "interval %v on an sse consumer", c.Interval.D())
		}
		if c.PageSize != 0 {
			return v.err(f+".page_size", v.at("consumers", i, "page_size"), []string{"only with kind: pull"}, "page_size %d on an sse consumer", c.PageSize)
		}
		return nil
	case KindPull:
	default:
		return v.err(f+".kind", v.at("consumers", i, "kind"), ConsumerKinds, "unknown consumer kind %q", c.Kind)
	}
	if c.Interval == 0 {
		c.Interval = Duration(DefaultPullInterval)
	}
	if c.Interval < 0 {
		return v.err(f+".interval", v.at("consumers", i, "interval"), []string{"a positive duration"}, "interval is %v", c.Interval.D())
	}
	if c.PageSize == 0 {
		c.PageSize = DefaultPullPageSize
	}
	if c.PageSize < 1 || c.PageSize > MaxPullPageSize {
		return v.err(f+".page_size", v.at("consumers", i, "page_size"), []string{fmt.Sprintf("1..%d", MaxPullPageSize)}, "page_size is %d", c.PageSize)
	}
	if !c.IsDurable() {
		return v.err(f+".durable", v.at("consumers", i, "durable"), []string{"true (a pull consumer keeps a durable checkpoint)"}, "durable: false with kind: pull")
	}
	if c.RcvBuf != 0 {
		return v.err(f+".rcvbuf", v.at("consumers", i, "rcvbuf"), []string{"only with kind: sse"}, "rcvbuf %d on a pull consumer", c.RcvBuf)
	}
	return nil
}
