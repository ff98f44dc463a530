// Package consumer runs SSE subscribers the way the drive9 consumer guide says a client should: parse
// the stream to the letter of the SSE spec, keep a durable cursor (the max seq seen over every frame),
// reconnect with ?since=cursor after a backoff with jitter, fail over to another pod when its own is
// gone, and act on every reset. Every event, reset and connection change becomes a ledger record.
package consumer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seqgate/seqgate/harness/target"
	"github.com/seqgate/seqgate/internal/eventstream"
	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/ledger"
)

// Endpoint is one place the stream can be read from (a pod, or the external target).
type Endpoint struct {
	Name string
	URL  string
}

// Config describes one consumer.
type Config struct {
	Name    string // the ledger's consumer id
	Tenant  string
	Key     string
	Durable bool // resume with ?since=cursor; a non-durable consumer starts over on every connection
	// Backoff before reconnecting: BackoffMin doubling per failed attempt up to BackoffMax, of which a
	// fraction Jitter is drawn at random (from Seed).
	BackoffMin, BackoffMax time.Duration
	Jitter                 float64
	Seed                   uint64
	Slow                   time.Duration // delay after each frame
	// ReadChunk, when > 0, bounds each read from the stream to this many bytes (use it with a small
	// SO_RCVBUF, see NewClient, so the backlog of a slow consumer is not absorbed by its own buffers).
	ReadChunk int
	// IdleTimeout ends a connection that delivers no frame at all for this long (a paused pod keeps
	// its sockets open); default 30s.
	IdleTimeout time.Duration
	// Resume makes the first connection ?since=Since (a durable cursor saved in an earlier life)
	// instead of a fresh subscription; only for durable consumers.
	Resume bool
	Since  int64
	// Wait, when set, is called at the start of Run and holds the first connection back (a late
	// consumer); it returns false when ctx ended first.
	Wait      func(ctx context.Context) bool
	Home      int // index of the preferred endpoint
	Start     time.Time
	Sink      ledger.Sink
	Endpoints func() []Endpoint
	// Client must have no overall timeout: streams are long. NewClient(0), the default, holds an
	// idle stream in one goroutine and about 1 KiB of buffers.
	Client *http.Client
	// Pull makes this a pull consumer (pull.go): it polls GET /v1/events/changes every PollInterval
	// at the head, PageSize events per request, instead of holding a stream.
	Pull         bool
	PollInterval time.Duration
	PageSize     int
	// PullFirst makes this a pull-then-stream consumer: before its first stream, and again after
	// every reset the stream sends but initial_sync, structural_change and slow_consumer, it pulls
	// GET /v1/events/changes up to the head (PageSize events per request) and then streams from the
	// pull's cursor (seed 003's bootstrap). Its pulls and its streams keep one cursor.
	PullFirst bool
	// Resync makes a durable consumer list ListDir (the tenant's run tree, a folder path ending in
	// "/") after every reset but structural_change (and after those too with ResyncStructural),
	// within ListTimeout (default DefaultListTimeout), before it reads on (resync.go).
	Resync           bool
	ResyncStructural bool
	ListDir          string
	ListTimeout      time.Duration
	// Wire is the service's API: where the stream, the change feed and the listing are (nil:
	// drive9's, target.Drive9Wire).
	Wire *target.Wire
}

func (c *Consumer) wire() *target.Wire {
	if c.cfg.Wire != nil {
		return c.cfg.Wire
	}
	return target.Drive9Wire
}

// Consumer is one SSE subscriber. Its methods are safe for concurrent use.
type Consumer struct {
	cfg Config
	rng *rand.Rand // used by Run's goroutine only

	cursor     atomic.Int64
	readDelay  atomic.Int64
	heartbeats atomic.Int64
	events     atomic.Int64
	resets     atomic.Int64
	frames     atomic.Int64

	resyncs, resyncsFailed, listed, listNanos atomic.Int64

	needPull atomic.Bool // a pull-then-stream consumer pulls before its next stream
	listing  atomic.Bool // a reset's listing is due or under way

	mu         sync.Mutex
	cancelConn context.CancelFunc
	firstSince int64
	haveFirst  bool
	fromT, toT int64
}

// New returns a consumer; Run starts it.
func New(cfg Config) *Consumer {
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 30 * time.Second
	}
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = 100 * time.Millisecond
	}
	if cfg.BackoffMax < cfg.BackoffMin {
		cfg.BackoffMax = cfg.BackoffMin
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(0)
	}
	if cfg.ListTimeout <= 0 {
		cfg.ListTimeout = DefaultListTimeout
	}
	c := &Consumer{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x636f6e73))}
	c.readDelay.Store(int64(cfg.Slow))
	if cfg.Resume && cfg.Durable {
		c.cursor.Store(cfg.Since)
	}
	return c
}

// Name returns the consumer's ledger id.
func (c *Consumer) Name() string { return c.cfg.Name }

// Tenant returns the consumer's tenant id.
func (c *Consumer) Tenant() string { return c.cfg.Tenant }

// Cursor returns the max seq seen so far over every frame.
func (c *Consumer) Cursor() int64 { return c.cursor.Load() }

// Events returns how many file_changed events were delivered.
func (c *Consumer) Events() int64 { return c.events.Load() }

// Frames returns how many frames (of any type) were received.
func (c *Consumer) Frames() int64 { return c.frames.Load() }

// Settled reports whether the consumer has had a frame and no listing after a reset is due or
// under way: what a run waits for before its load (and its samples of the cold DBs) begins.
func (c *Consumer) Settled() bool { return c.frames.Load() > 0 && !c.listing.Load() }

// Durable reports whether the consumer keeps a durable cursor.
func (c *Consumer) Durable() bool { return c.cfg.Durable }

// SetReadDelay makes the consumer wait d after each frame (0 = full speed).
func (c *Consumer) SetReadDelay(d time.Duration) { c.readDelay.Store(int64(d)) }

// Disconnect closes the current connection at once, as a client-side network failure; the consumer
// reconnects by its own policy.
func (c *Consumer) Disconnect() error {
	c.mu.Lock()
	cancel := c.cancelConn
	c.mu.Unlock()
	if cancel == nil {
		return errors.New("consumer " + c.cfg.Name + " has no open connection")
	}
	cancel()
	return nil
}

func (c *Consumer) now() int64 { return time.Since(c.cfg.Start).Nanoseconds() }

// Summary returns the consumer's ledger summary record (valid after Run returned).
func (c *Consumer) Summary() *ledger.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &ledger.Record{K: ledger.KindConsumer, Consumer: c.cfg.Name, Tenant: c.cfg.Tenant, Kind: c.kind(),
		FromT: c.fromT, ToT: c.toT, FirstSince: c.firstSince, FinalCursor: c.cursor.Load(), Durable: c.cfg.Durable}
}

// errDisconnect marks a connection this side closed on purpose (a fault, or a slow_consumer reset).
var errDisconnect = errors.New("closed by the consumer")

// Run reads the stream until ctx is done, reconnecting as needed.
func (c *Consumer) Run(ctx context.Context) {
	if c.cfg.Wait != nil && !c.cfg.Wait(ctx) {
		c.mu.Lock()
		c.fromT = c.now() // never connected: an empty window
		c.toT = c.fromT
		c.mu.Unlock()
		return
	}
	c.mu.Lock()
	c.fromT = c.now()
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.toT = c.now()
		c.mu.Unlock()
	}()
	if c.cfg.Pull {
		c.runPull(ctx)
		return
	}
	if c.cfg.PullFirst {
		c.runPullThenStream(ctx)
		return
	}
	c.reconnect(ctx, func(ep Endpoint, conn string, n int) session {
		opened, frames, now, _ := c.connect(ctx, ep, conn, n == 1)
		return session{opened: opened, progressed: frames > 0, now: now}
	})
}

// session is how one connection (or one run of polls) ended, for the reconnect loop.
type session struct {
	opened     bool // the endpoint answered: otherwise fail over to the next one
	progressed bool // it delivered something: the backoff starts over
	now        bool // reconnect at once (a slow_consumer reset)
}

// reconnect runs sessions one after another until ctx is done: after a backoff that grows with
// failed attempts, on the next endpoint when one did not answer. n counts sessions from 1.
func (c *Consumer) reconnect(ctx context.Context, run func(ep Endpoint, conn string, n int) session) {
	attempt, ep, n := 0, c.cfg.Home, 0
	for ctx.Err() == nil {
		eps := c.cfg.Endpoints()
		if len(eps) == 0 {
			if !sleep.For(ctx, c.backoff(attempt)) {
				return
			}
			attempt++
			continue
		}
		n++
		s := run(eps[ep%len(eps)], fmt.Sprintf("%s.%d", c.cfg.Name, n), n)
		if ctx.Err() != nil {
			return
		}
		switch {
		case s.now:
			attempt = 0
			continue
		case !s.opened:
			ep++ // its pod is gone or refusing: fail over to the next one
			attempt++
		case s.progressed:
			attempt = 0
		default:
			attempt++
		}
		if !sleep.For(ctx, c.backoff(attempt)) {
			return
		}
	}
}

// backoff is BackoffMin*2^attempt capped at BackoffMax, with a random fraction Jitter taken off.
func (c *Consumer) backoff(attempt int) time.Duration {
	d := c.cfg.BackoffMin
	for i := 0; i < attempt && d < c.cfg.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, c.cfg.BackoffMax)
	return d - time.Duration(c.cfg.Jitter*c.rng.Float64()*float64(d))
}

type frame struct {
	Seq     *int64 `json:"seq"`
	Path    string `json:"path"`
	Op      string `json:"op"`
	Reason  string `json:"reason"`
	Payload *struct {
		OldPath string `json:"old_path"`
	} `json:"payload"` // a structural op's detail in the file_changed form (design 000 item 5)
	Batch string `json:"batch"` // eventlogd's additive field: the batch write the event belongs to
}

// session returns the context of one connection (or run of polls), which Disconnect cancels with
// errDisconnect, its cancel (with a cause) and its release.
func (c *Consumer) session(ctx context.Context) (context.Context, context.CancelCauseFunc, func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	c.mu.Lock()
	c.cancelConn = func() { cancel(errDisconnect) }
	c.mu.Unlock()
	return cctx, cancel, func() {
		c.mu.Lock()
		c.cancelConn = nil
		c.mu.Unlock()
		cancel(nil)
	}
}

// connect runs one connection: it reports whether the stream opened, how many frames it carried,
// whether to reconnect at once (a slow_consumer reset), and why it ended.
func (c *Consumer) connect(ctx context.Context, ep Endpoint, conn string, first bool) (opened bool, frames int, reconnectNow bool, err error) {
	cctx, cancel, release := c.session(ctx)
	defer release()

	since := c.cursor.Load()
	resume := c.cfg.Durable && (!first || c.cfg.Resume)
	if !resume {
		since = 0 // a fresh subscription: the server answers with initial_sync
	}
	url := c.wire().StreamURL(ep.URL, resume, since)
	rec := &ledger.Record{K: ledger.KindConn, Consumer: c.cfg.Name, Tenant: c.cfg.Tenant, Conn: conn, Pod: ep.Name, Since: since}
	if first {
		c.mu.Lock()
		c.firstSince = since // an initial_sync reset as first frame replaces it with its seq
		c.mu.Unlock()
	}
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, url, nil)
	if err != nil {
		panic(err) // our own URL
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.Key)
	req.Header.Set("Accept", "text/event-stream")
	idle := time.AfterFunc(c.cfg.IdleTimeout, func() { cancel(errors.New("idle timeout: no frame")) })
	defer idle.Stop()
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		c.fail(rec, cause(cctx, err))
		return false, 0, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("HTTP %d", resp.StatusCode)
		c.fail(rec, err)
		return false, 0, false, err
	}
	open := *rec
	open.Phase, open.T = "open", c.now()
	_ = c.cfg.Sink.Write(&open)

	var body io.Reader = resp.Body
	if c.cfg.ReadChunk > 0 {
		body = chunkReader{resp.Body, c.cfg.ReadChunk}
	}
	r := eventstream.NewReader(body)
	for {
		ev, rerr := r.Next()
		if rerr != nil {
			err = cause(cctx, rerr)
			break
		}
		idle.Reset(c.cfg.IdleTimeout)
		frames++
		a := c.handle(ev, conn, ep.Name, first && frames == 1)
		if a.list {
			idle.Stop() // the listing has its own bound; the stream waits meanwhile
			c.resync(ctx, ep, conn, a.seq, a.reason)
			idle.Reset(c.cfg.IdleTimeout)
		}
		if a.reconnect {
			reconnectNow, err = true, errors.New("reset slow_consumer: reconnecting from the cursor")
			if a.reason != "slow_consumer" {
				err = errors.New("reset " + a.reason + ": pulling up to the head again")
			}
			break
		}
		if d := time.Duration(c.readDelay.Load()); d > 0 && !sleep.For(cctx, d) {
			err = cause(cctx, cctx.Err())
			break
		}
	}
	cl := *rec
	cl.Phase, cl.T = "close", c.now()
	if ctx.Err() == nil && err != nil {
		cl.Err = err.Error()
	}
	_ = c.cfg.Sink.Write(&cl)
	return true, frames, reconnectNow, err
}

func (c *Consumer) fail(rec *ledger.Record, err error) {
	f := *rec
	f.Phase, f.T, f.Err = "fail", c.now(), err.Error()
	_ = c.cfg.Sink.Write(&f)
}

func cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		return c
	}
	return err
}

// action is what a frame asks of the connection: a listing after a reset at seq (list), and a
// reconnection from the cursor (a slow_consumer reset).
type action struct {
	list, reconnect bool
	seq             int64
	reason          string
}

// handle turns one frame into ledger records and cursor moves; it reports what the connection must
// do next.
func (c *Consumer) handle(ev eventstream.Event, conn, pod string, firstFrame bool) action {
	var f frame
	if err := json.Unmarshal([]byte(ev.Data), &f); err != nil || f.Seq == nil {
		return action{} // not ours to judge here: the stream goes on; the verifier sees what was delivered
	}
	seq := *f.Seq
	t := c.now()
	c.frames.Add(1)
	switch ev.Type {
	case "file_changed":
		c.events.Add(1)
		rec := &ledger.Record{K: ledger.KindEv, Consumer: c.cfg.Name, Tenant: c.cfg.Tenant, Conn: conn,
			T: t, Seq: seq, Op: f.Op, Path: f.Path, Pod: pod, Batch: f.Batch}
		if f.Payload != nil {
			rec.Src = f.Payload.OldPath
		}
		_ = c.cfg.Sink.Write(rec)
	case "reset":
		c.resets.Add(1)
		_ = c.cfg.Sink.Write(&ledger.Record{K: ledger.KindReset, Consumer: c.cfg.Name, Tenant: c.cfg.Tenant, Conn: conn,
			T: t, Seq: seq, Reason: f.Reason, Path: f.Path, Op: f.Op})
		if f.Reason == "initial_sync" && firstFrame {
			c.mu.Lock()
			if !c.haveFirst {
				c.firstSince, c.haveFirst = seq, true
			}
			c.mu.Unlock()
		}
	case "heartbeat":
		c.heartbeats.Add(1)
	}
	// The cursor is the max seq over every frame. initial_sync, seq_too_old and server_restart: a real
	// client lists everything and continues from the reset's seq; structural_change: it re-fetches the
	// path and moves on. Either way the cursor becomes (at least) the frame's seq.
	c.advance(seq)
	if ev.Type != "reset" {
		return action{}
	}
	a := action{list: c.wantsResync(f.Reason), reconnect: f.Reason == "slow_consumer", seq: seq, reason: f.Reason}
	if a.list {
		c.listing.Store(true) // before the frame counts as seen: Settled must not report a gap
	}
	// A pull-then-stream consumer pulls again after a reset that moved its cursor for the service's
	// reasons; initial_sync (its since was 0: the stream starts at the head, after the listing),
	// structural_change and slow_consumer are handled on the stream as any consumer does.
	if c.cfg.PullFirst && f.Reason != "slow_consumer" && f.Reason != "structural_change" && f.Reason != "initial_sync" {
		a.reconnect = true
		c.needPull.Store(true)
	}
	return a
}
