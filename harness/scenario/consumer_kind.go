package scenario

import (
	"fmt"
	"time"
)

// Consumer kinds: how a consumer reads its tenant's events.
const (
	KindSSE  = "sse"  // GET /v1/events, a long-lived stream (the default)
	KindPull = "pull" // GET /v1/events/changes, polled with a durable checkpoint (seed 003)
	// KindPullThenStream pulls up to the head, then streams from the pull's cursor, and again after
	// every reset (seed 003's bootstrap).
	KindPullThenStream = "pull-then-stream"
)

// ConsumerKinds are the allowed values of consumers[].kind.
var ConsumerKinds = []string{KindSSE, KindPull, KindPullThenStream}

// Pull defaults and bounds (the endpoint's own page bound is 1..1000).
const (
	DefaultPullInterval = time.Second
	DefaultPullPageSize = 100
	MaxPullPageSize     = 1000
)

// IsPull reports whether these consumers poll GET /v1/events/changes.
func (c Consumers) IsPull() bool { return c.Kind == KindPull }

// IsPullThenStream reports whether these consumers pull up to the head before each stream.
func (c Consumers) IsPullThenStream() bool { return c.Kind == KindPullThenStream }

// consumerKind validates kind, interval, page_size and resync of consumers[i] and applies their
// defaults: interval and page_size belong to pull and pull-then-stream consumers, which always keep
// a durable checkpoint; a pull consumer reads no socket buffer; resync is for durable consumers.
func (v *validator) consumerKind(c *Consumers, i int) error {
	f := fmt.Sprintf("consumers[%d]", i)
	if c.Resync != nil && *c.Resync && !c.IsDurable() {
		return v.err(f+".resync", v.at("consumers", i, "resync"), []string{"only with durable: true (a non-durable consumer starts over, it does not resync)"}, "resync: true with durable: false")
	}
	if c.ResyncStructural && !c.IsResync() {
		return v.err(f+".resync_structural", v.at("consumers", i, "resync_structural"), []string{"only with resync on (durable, resync not false)"}, "resync_structural: true without resync")
	}
	switch c.Kind {
	case "", KindSSE: // left as written: a resolved scenario of sse consumers stays as it was
		if c.Interval != 0 {
			return v.err(f+".interval", v.at("consumers", i, "interval"), []string{"only with kind: pull or pull-then-stream"}, "interval %v on an sse consumer", c.Interval.D())
		}
		if c.PageSize != 0 {
			return v.err(f+".page_size", v.at("consumers", i, "page_size"), []string{"only with kind: pull or pull-then-stream"}, "page_size %d on an sse consumer", c.PageSize)
		}
		return nil
	case KindPull, KindPullThenStream:
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
		return v.err(f+".durable", v.at("consumers", i, "durable"), []string{"true (a pull consumer keeps a durable checkpoint)"}, "durable: false with kind: %s", c.Kind)
	}
	if c.RcvBuf != 0 && c.Kind == KindPull {
		return v.err(f+".rcvbuf", v.at("consumers", i, "rcvbuf"), []string{"only with kind: sse or pull-then-stream"}, "rcvbuf %d on a pull consumer", c.RcvBuf)
	}
	return nil
}
