package sse

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/signal"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// Config tunes streams; zero fields take the defaults in brackets.
type Config struct {
	PageSize             int           // rows per fs_events read [1000]
	ReplayHeartbeatPages int           // Phase 1: heartbeat every N pages [10]
	ReplayHeartbeatEvery time.Duration // Phase 1: or every T [5s]
	Heartbeat            time.Duration // Phase 2 heartbeat period [15s]
	MaxPagesPerWake      int           // Phase 2: full pages drained per wake before re-arming [10]
	CatchUpDelay         time.Duration // Phase 2 re-arm after MaxPagesPerWake full pages [10ms]
	BackoffMin           time.Duration // Phase 2 error backoff start [10ms], doubling
	BackoffMax           time.Duration // Phase 2 error backoff cap [1s]
	LivenessPoll         time.Duration // optional poll of a connected tenant not polled for this long [0 = off]
	QueueSize            int           // frames per connection send queue [1024]
	QueueWait            time.Duration // how long a full queue may stay full before slow_consumer [2s]
	WriteTimeout         time.Duration // per socket write [30s]
	Retention            time.Duration // fs_events retention: a cursor this old re-checks the sweep mark [1h]
	QueryTimeout         time.Duration // bound on each fs_events read; a stalled DB becomes an error + backoff [10s]
	// ReplayBudgetEvents / ReplayBudgetTime cap one connection's Phase-1 replay (design 000 item 4,
	// optional): once a full page takes the replay past either, the stream sends a heartbeat at its
	// cursor and ends; the client resumes with since=<cursor>, so the handoff loses nothing, and a
	// huge backlog cannot hold one connection (and one pod) for minutes. 0 = no cap [0, 0].
	ReplayBudgetEvents int
	ReplayBudgetTime   time.Duration
	SinglePageReplay   bool // defect single-page-replay
	UnsignalledDrop    bool // defect unsignalled-queue-drop
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if c.PageSize <= 0 {
		c.PageSize = 1000
	}
	if c.ReplayHeartbeatPages <= 0 {
		c.ReplayHeartbeatPages = 10
	}
	if c.MaxPagesPerWake <= 0 {
		c.MaxPagesPerWake = 10
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 1024
	}
	def(&c.ReplayHeartbeatEvery, 5*time.Second)
	def(&c.Heartbeat, 15*time.Second)
	def(&c.CatchUpDelay, 10*time.Millisecond)
	def(&c.BackoffMin, 10*time.Millisecond)
	def(&c.BackoffMax, time.Second)
	def(&c.QueueWait, 2*time.Second)
	def(&c.WriteTimeout, 30*time.Second)
	def(&c.Retention, time.Hour)
	def(&c.QueryTimeout, 10*time.Second)
}

// Streamer serves event streams of one pod.
type Streamer struct {
	cfg Config
	bus *signal.Bus
	m   *metrics.Metrics
	log *slog.Logger
	// Resolve re-acquires a tenant's store when the stream's handle was closed under it (the pool
	// idle-closed the backend); nil disables re-acquisition.
	Resolve func(ctx context.Context, tenant string) (*store.TenantStore, error)
	// HeadHint reads the tenant's head hint from the meta DB (store.Meta.SeqHead); nil disables the
	// resume at the head, and every resume queries the tenant DB.
	HeadHint func(ctx context.Context, tenant string) (int64, bool, error)
}

// headHintTimeout bounds the meta read of a resume: a meta DB that does not answer costs a
// reconnect at most this much before it falls back to the tenant DB.
const headHintTimeout = time.Second

// NewStreamer returns a Streamer; streams wake on bus.
func NewStreamer(cfg Config, bus *signal.Bus, m *metrics.Metrics, log *slog.Logger) *Streamer {
	cfg.defaults()
	return &Streamer{cfg: cfg, bus: bus, m: m, log: log}
}

// stream is one connection's state.
type stream struct {
	*Streamer
	st     *store.TenantStore
	q      *sendQueue
	cursor int64
	lastTs time.Time // created_at of the last event sent (drives the sweep-mark re-check)
	swept  int64
	// checkMark re-checks the sweep mark after the next page (the first page of a replay).
	checkMark bool
}

// Serve streams st's events after since until the client leaves, the server shuts down (ctx), or
// the consumer proves too slow.
func (s *Streamer) Serve(ctx context.Context, w http.ResponseWriter, st *store.TenantStore, since int64) {
	tenant := st.TenantID
	sub := s.bus.Subscribe(tenant) // before the first read: no wake can fall between read and wait
	defer sub.Close()
	s.m.Connections.WithLabelValues(tenant).Inc()
	s.m.Inflight.Inc()
	defer s.m.Inflight.Dec()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x := &stream{Streamer: s, st: st, q: newSendQueue(s.cfg.QueueSize, s.cfg.QueueWait, s.cfg.WriteTimeout, s.cfg.UnsignalledDrop)}
	go x.q.run(ctx, w)
	defer func() {
		select {
		case <-x.q.slow:
			// Let the writer deliver reset(slow_consumer) before the context goes; its socket
			// write deadline bounds the wait.
			t := time.NewTimer(x.cfg.WriteTimeout + time.Second)
			select {
			case <-x.q.done:
			case <-t.C:
			}
			t.Stop()
		default:
		}
		cancel()
		<-x.q.done
	}()
	if !x.phase1(ctx, since) {
		return
	}
	x.phase2(ctx, sub)
}

// put enqueues f and accounts for it; false ends the stream.
func (x *stream) put(ctx context.Context, f frame) bool {
	ok, dropped := x.q.put(ctx, f)
	if !ok {
		select {
		case <-x.q.slow:
			x.m.Resets.WithLabelValues(x.st.TenantID, ReasonSlowConsumer).Inc()
			x.log.Info("slow consumer reset", "tenant_id", x.st.TenantID, "written", x.q.lastWritten())
		default:
		}
		return false
	}
	if dropped {
		return true // defect: silently lost
	}
	return true
}

func (x *stream) reset(ctx context.Context, seq int64, reason string) bool {
	x.m.Resets.WithLabelValues(x.st.TenantID, reason).Inc()
	return x.put(ctx, resetFrame(seq, reason))
}

func (x *stream) heartbeat(ctx context.Context) bool {
	x.m.Heartbeats.Inc()
	return x.put(ctx, heartbeatFrame(x.cursor))
}

func (x *stream) sendEvents(ctx context.Context, evs []store.Event) bool {
	for _, e := range evs {
		f, structural := eventFrame(e)
		if structural {
			x.m.Resets.WithLabelValues(x.st.TenantID, ReasonStructuralChange).Inc()
		} else {
			x.m.EventsSent.WithLabelValues(x.st.TenantID).Inc()
		}
		if !x.put(ctx, f) {
			return false
		}
		x.cursor = e.Seq
		x.lastTs = e.CreatedAt
	}
	return true
}

// page reads one page after the cursor. When a sweep may have reached the cursor (the first page of
// a replay, or a cursor whose last event is older than half the retention), it re-reads the sweep
// mark AFTER the page: a sweep raises the mark before it deletes, so a page that missed swept rows
// always sees the raised mark, and the range turns into seq_too_old instead of a silent gap.
func (x *stream) page(ctx context.Context) (evs []store.Event, tooOld bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, x.cfg.QueryTimeout)
	defer cancel()
	x.m.TenantQueries.WithLabelValues("events_since").Inc()
	evs, err = x.st.EventsSince(ctx, x.cursor, x.cfg.PageSize)
	if store.IsClosed(err) && x.Resolve != nil {
		st, rerr := x.Resolve(ctx, x.st.TenantID)
		if rerr != nil {
			return nil, false, rerr
		}
		x.st = st
		evs, err = x.st.EventsSince(ctx, x.cursor, x.cfg.PageSize)
	}
	if err != nil {
		return nil, false, err
	}
	if x.checkMark || (!x.lastTs.IsZero() && time.Since(x.lastTs) > x.cfg.Retention/2) {
		x.m.TenantQueries.WithLabelValues("bounds").Inc()
		_, swept, err := x.st.Bounds(ctx)
		if err != nil {
			return nil, false, err
		}
		x.checkMark = false
		if x.cursor < swept {
			x.swept = swept
			return nil, true, nil
		}
	}
	return evs, false, nil
}

// knownHead returns the tenant's head hint when a resume from since may be answered without a
// tenant-DB query: the hint equals since (a resume at the head), or since is 0 (initial sync from
// the hint) and the hint exists; in both cases this pod must have committed nothing above the hint.
// The hint only ever holds committed seqs, so hint <= head; when it lags (a write committed but its
// hint not yet written), the write's wake is still to come and was subscribed to already:
//   - written on another pod: the hint and the outbox row commit in one meta transaction, so an
//     outbox row carrying seq > hint commits after this read and wakes this pod's poller, then
//     this stream (subscribed before the read), whose drain reads the row;
//   - written on this pod: the local head is raised before the local wake; a wake published
//     before the subscription shows up as LocalHead > hint here, so the tenant DB is queried.
//
// So a resume at the head misses nothing, and an initial sync from a lagging hint only delivers
// events just before its reset (never a gap). Every doubt (no hint, a hint other than since, a
// meta error or timeout) queries the tenant DB. A resume at the head gets exactly what a query
// would have given it: no reset (since is neither above the head nor below the sweep mark, which
// never exceeds the head) and the heartbeat.
func (x *stream) knownHead(ctx context.Context, since int64) (int64, bool) {
	if x.HeadHint == nil || x.bus.LocalHead(x.st.TenantID) > since {
		return 0, false
	}
	hctx, cancel := context.WithTimeout(ctx, headHintTimeout)
	defer cancel()
	h, ok, err := x.HeadHint(hctx, x.st.TenantID)
	if err != nil {
		x.log.Debug("head hint unavailable; querying the tenant DB", "tenant_id", x.st.TenantID, "err", err)
		return 0, false
	}
	if !ok || (since != 0 && h != since) || x.bus.LocalHead(x.st.TenantID) > h {
		return 0, false
	}
	return h, true
}

// phase1 sends the initial reset or the replay backlog, then the stream-current heartbeat.
func (x *stream) phase1(ctx context.Context, since int64) bool {
	if h, ok := x.knownHead(ctx, since); ok {
		x.m.ResumesAtHead.Inc()
		// The first drain re-reads the sweep mark: if the hint lagged for a whole retention
		// (a long meta outage) and rows above it were swept, that drain says seq_too_old.
		x.checkMark = true
		if since == 0 {
			x.cursor = h
			return x.reset(ctx, h, ReasonInitialSync) && x.heartbeat(ctx)
		}
		x.cursor = since
		return x.heartbeat(ctx)
	}
	x.m.TenantQueries.WithLabelValues("bounds").Inc()
	bctx, cancel := context.WithTimeout(ctx, x.cfg.QueryTimeout)
	head, swept, err := x.st.Bounds(bctx)
	cancel()
	if err != nil {
		x.log.Warn("sse bounds query failed", "tenant_id", x.st.TenantID, "err", err)
		return false // the client reconnects with its cursor
	}
	top := max(head, swept)
	switch {
	case since == 0:
		x.cursor = top
		return x.reset(ctx, top, ReasonInitialSync) && x.heartbeat(ctx)
	case since > top:
		x.cursor = top
		return x.reset(ctx, top, ReasonServerRestart) && x.heartbeat(ctx)
	case since < swept:
		x.cursor = top
		return x.reset(ctx, top, ReasonSeqTooOld) && x.heartbeat(ctx)
	}
	x.cursor = since
	x.checkMark = true // a sweep may run between the bounds read above and the first page
	pages, lastHB, sent, started := 0, time.Now(), 0, time.Now()
	for {
		evs, tooOld, err := x.page(ctx)
		if err != nil {
			// Mid-replay failure: end without the stream-current heartbeat (that would be a lie);
			// the client resumes from the last seq it saw.
			x.log.Warn("sse replay query failed", "tenant_id", x.st.TenantID, "cursor", x.cursor, "err", err)
			return false
		}
		if tooOld {
			x.cursor = x.swept
			if !x.reset(ctx, x.swept, ReasonSeqTooOld) {
				return false
			}
			break
		}
		if !x.sendEvents(ctx, evs) {
			return false
		}
		if len(evs) < x.cfg.PageSize || x.cfg.SinglePageReplay {
			break
		}
		sent += len(evs)
		if (x.cfg.ReplayBudgetEvents > 0 && sent >= x.cfg.ReplayBudgetEvents) ||
			(x.cfg.ReplayBudgetTime > 0 && time.Since(started) >= x.cfg.ReplayBudgetTime) {
			// Hand off: the heartbeat carries the cursor, the client resumes from it.
			x.m.ReplayHandoffs.Inc()
			x.heartbeat(ctx)
			return false
		}
		pages++
		if pages%x.cfg.ReplayHeartbeatPages == 0 || time.Since(lastHB) >= x.cfg.ReplayHeartbeatEvery {
			lastHB = time.Now()
			if !x.heartbeat(ctx) {
				return false
			}
		}
	}
	return x.heartbeat(ctx)
}

// phase2 waits for wakes and drains; quiet tenants cause no reads at all.
func (x *stream) phase2(ctx context.Context, sub *signal.Sub) {
	hb := time.NewTicker(x.cfg.Heartbeat)
	defer hb.Stop()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var live <-chan time.Time
	if x.cfg.LivenessPoll > 0 {
		lt := time.NewTicker(x.cfg.LivenessPoll)
		defer lt.Stop()
		live = lt.C
	}
	backoff := time.Duration(0)
	lastPoll := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-x.q.done:
			return
		case <-hb.C:
			if !x.heartbeat(ctx) {
				return
			}
			continue
		case <-live:
			if time.Since(lastPoll) < x.cfg.LivenessPoll {
				continue
			}
		case <-sub.C:
		case <-timer.C:
		}
		timer.Stop()
		rearm, ok := x.drain(ctx)
		if !ok {
			return
		}
		switch rearm {
		case rearmNone:
			backoff = 0
			lastPoll = time.Now()
		case rearmCatchUp:
			backoff = 0
			lastPoll = time.Now()
			timer.Reset(x.cfg.CatchUpDelay)
		case rearmError:
			if backoff == 0 {
				backoff = x.cfg.BackoffMin
			} else {
				backoff = min(2*backoff, x.cfg.BackoffMax)
			}
			timer.Reset(backoff)
		}
	}
}

type rearm int

const (
	rearmNone rearm = iota
	rearmCatchUp
	rearmError
)

// drain pulls pages until a short page (disarm) or MaxPagesPerWake full pages (re-arm shortly).
func (x *stream) drain(ctx context.Context) (rearm, bool) {
	for pages := 0; ; {
		evs, tooOld, err := x.page(ctx)
		if err != nil {
			x.log.Warn("sse drain query failed", "tenant_id", x.st.TenantID, "cursor", x.cursor, "err", err)
			return rearmError, true
		}
		if tooOld {
			x.cursor = x.swept
			return rearmCatchUp, x.reset(ctx, x.swept, ReasonSeqTooOld)
		}
		if !x.sendEvents(ctx, evs) {
			return rearmNone, false
		}
		if len(evs) < x.cfg.PageSize || x.cfg.SinglePageReplay {
			return rearmNone, true
		}
		if pages++; pages >= x.cfg.MaxPagesPerWake {
			return rearmCatchUp, true
		}
	}
}
