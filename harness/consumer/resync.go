package consumer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// A durable consumer with Resync set does what the consumer contract asks of a client on a reset:
// it lists the tenant's run tree (ListDir, recursively, over the endpoint it reads from), then
// streams on from the reset's seq. Every file of the listing is a `listed` record written as it
// is read, and the listing ends in a `resync` record: when it began and ended, the reset's seq and
// reason, whether it succeeded, how many files it found and why it failed. A listing that fails or
// takes longer than ListTimeout is a resync with ok false: the verifier cannot count it as proof.
//
// structural_change resets are not followed by a listing unless ResyncStructural is set: such a
// reset sits at its own op's seq and passes no row, so a listing proves nothing new about rows.

// DefaultListTimeout bounds one listing (every page of every folder).
const DefaultListTimeout = time.Minute

// wantsResync reports whether a reset with this reason is followed by a listing.
func (c *Consumer) wantsResync(reason string) bool {
	if !c.cfg.Resync || !c.cfg.Durable || c.cfg.ListDir == "" {
		return false
	}
	return reason != "structural_change" || c.cfg.ResyncStructural
}

// resync lists the tenant's tree after the reset at seq on conn, writing its listed and resync
// records. ctx is the consumer's, not the connection's: a listing is not cut short by the stream's
// idle timeout.
func (c *Consumer) resync(ctx context.Context, ep Endpoint, conn string, seq int64, reason string) {
	c.listing.Store(true)
	defer c.listing.Store(false)
	start := c.now()
	lctx, cancel := context.WithTimeout(ctx, c.cfg.ListTimeout)
	defer cancel()
	l := Lister{Client: c.cfg.Client, URL: ep.URL, Key: c.cfg.Key, Wire: c.cfg.Wire}
	item := ledger.Record{K: ledger.KindListed, Consumer: c.cfg.Name, Tenant: c.cfg.Tenant}
	n, err := l.List(lctx, c.cfg.ListDir, func(e Entry) error {
		item.T, item.Path = c.now(), e.Path
		setInt(&item.Size, e.Size)
		setInt(&item.Rev, e.Rev)
		return c.cfg.Sink.Write(&item)
	})
	end := c.now()
	rec := &ledger.Record{K: ledger.KindResync, Consumer: c.cfg.Name, Tenant: c.cfg.Tenant, Conn: conn, T: end,
		Reason: reason, OK: err == nil}
	setInt(&rec.TStart, start)
	setInt(&rec.AfterSeq, seq)
	setInt(&rec.Entries, n)
	if err != nil {
		if errors.Is(lctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("listing timed out after %v: %w", c.cfg.ListTimeout, err)
		}
		rec.Error = err.Error()
		c.resyncsFailed.Add(1)
	}
	_ = c.cfg.Sink.Write(rec)
	c.resyncs.Add(1)
	c.listed.Add(n)
	c.listNanos.Add(end - start)
}

// setInt stores v into an integer field of a record, whichever integer type the field has.
func setInt[T ~int | ~int64](p *T, v int64) { *p = T(v) }

// Resyncs returns how many listings the consumer made, and how many of them failed.
func (c *Consumer) Resyncs() (made, failed int64) { return c.resyncs.Load(), c.resyncsFailed.Load() }

// Listed returns how many files the consumer's listings found in all.
func (c *Consumer) Listed() int64 { return c.listed.Load() }

// ListingTime returns the time the consumer spent listing in all.
func (c *Consumer) ListingTime() time.Duration { return time.Duration(c.listNanos.Load()) }
