package sse

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seqgate/seqgate/internal/defaults"

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
	QueryTimeout         time.Duration // bound on each fs_events read; a stalled DB becomes an error + backoff [10s]
	// ReplayBudgetEvents / ReplayBudgetTime cap one connection's Phase-1 replay (design 000 item 4,
	// optional): once a full page takes the replay past either, the stream sends a heartbeat at its
	// cursor and ends; the client resumes with since=<cursor>, so the handoff loses nothing, and a
	// huge backlog cannot hold one connection (and one pod) for minutes. 0 = no cap [0, 0].
	ReplayBudgetEvents int
	ReplayBudgetTime   time.Duration
	// StructuralEvents is how structural ops are sent: StructuralReset, StructuralDual or
	// StructuralFileChanged [dual].
	StructuralEvents  string
	SinglePageReplay  bool // defect single-page-replay
	UnsignalledDrop   bool // defect unsignalled-queue-drop
	SpuriousSeqTooOld bool // defect spurious-seq-too-old
	// Guard is how pages are read (store.Guard): under GuardLock each page takes the tenant's
	// sequence row in share mode first, under GuardHorizon a stream delivers up to the first
	// missing seq (horizon.go), under GuardNone (the late-commit-skip defect) pages are read plainly.
	Guard store.Guard
	// HorizonWait is how long a GuardHorizon stream waits for a missing seq before it gives it up
	// as a hole [5s]. A row that becomes visible later than this after a higher one is skipped.
	HorizonWait time.Duration
	// SettleResets holds a reset that moves the cursor to the head until every seq below it is
	// visible or given up, under GuardHorizon (settle.go). eventlogd sets it in every
	// --event-commit mode: a batch write commits its files with its events in all of them.
	SettleResets bool
	// SettleBack bounds how long after its row's created_at a write takes its seq (its request's
	// timeout): a reset settles from the newest row created SettleBack + HorizonWait ago when this
	// pod has no history of the pool yet (settle.go) [30s].
	SettleBack         time.Duration
	NarrowSettle       bool // defect narrow-settle: a reset settles only PageSize seqs below the head
	AnyTenantSweepMark bool // defect any-tenant-sweep-mark: a gap below any tenant's sweep mark is passed
	PullHorizonCursor  bool // defect pull-horizon-cursor: a since above the tenant's head is a server_restart
	PullWakesCold      bool // defect pull-wakes-cold: a pull at the head queries the tenant DB
}

func (c *Config) defaults() {
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
	if c.StructuralEvents == "" {
		c.StructuralEvents = StructuralDual
	}
	defaults.Positive(&c.ReplayHeartbeatEvery, 5*time.Second)
	defaults.Positive(&c.Heartbeat, 15*time.Second)
	defaults.Positive(&c.CatchUpDelay, 10*time.Millisecond)
	defaults.Positive(&c.BackoffMin, 10*time.Millisecond)
	defaults.Positive(&c.BackoffMax, time.Second)
	defaults.Positive(&c.QueueWait, 2*time.Second)
	defaults.Positive(&c.WriteTimeout, 30*time.Second)
	defaults.Positive(&c.QueryTimeout, 10*time.Second)
	defaults.Positive(&c.HorizonWait, 5*time.Second)
	defaults.Positive(&c.SettleBack, 30*time.Second)
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
	// The time is the hint's last write (the head was committed by then).
	HeadHint func(ctx context.Context, tenant string) (head int64, at time.Time, ok bool, err error)

	clock seqClock // when this pod saw which seqs visible, per pool (a reset's settle window)

	afterPage func() // tests only: runs after each replay page is sent
}

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
	swept  int64   // the sweep mark of the last page that said seq_too_old
	hz     horizon // GuardHorizon only
	held   bool    // the last page stopped at a missing seq: read again soon (GuardHorizon)

	structural, sent prometheus.Counter // Resets{structural_change} and EventsSent of the tenant, from the first event
}

// setCursor moves the stream to c (its since, a reset's seq): nothing at or below c is read again.
func (x *stream) setCursor(c int64) {
	x.cursor = c
	x.hz = horizon{settled: max(x.hz.settled, c)}
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
	if len(evs) > 0 && x.sent == nil {
		// The stream's two counters, looked up (and so made, at zero) at its first event as every
		// event's lookup did, then kept: a lookup hashes the labels under a lock.
		x.structural = x.m.Resets.WithLabelValues(x.st.TenantID, ReasonStructuralChange)
		x.sent = x.m.EventsSent.WithLabelValues(x.st.TenantID)
	}
	for _, e := range evs {
		if !store.IsStructural(e.Op) {
			// eventFrames' one file_changed, without its slice.
			x.sent.Inc()
			if !x.put(ctx, changedFrame(e, nil)) {
				return false
			}
			x.cursor = e.Seq
			continue
		}
		fs, changed, resets := eventFrames(e, x.cfg.StructuralEvents)
		x.structural.Add(float64(resets))
		x.sent.Add(float64(changed))
		for _, f := range fs {
			if !x.put(ctx, f) {
				return false
			}
		}
		x.cursor = e.Seq
	}
	return true
}

// pageResult is one read of a stream: the events to send, and what to do next.
type pageResult struct {
	evs    []store.Event
	tooOld bool // rows above the cursor were swept: reset(seq_too_old) at x.swept, then go on
	more   bool // a full page: read again at once
}

// page reads one page after the cursor, with the sweep mark read by the same statement: a sweep
// raises the mark before it deletes, so a page read past swept rows always carries the raised mark,
// and the range turns into seq_too_old instead of a silent gap. This holds for every page, however
// recent the stream's last event: a retried row can be inserted with a created_at already past the
// sweep cutoff and swept before any stream read it.
func (x *stream) page(ctx context.Context) (pageResult, error) {
	ctx, cancel := context.WithTimeout(ctx, x.cfg.QueryTimeout)
	defer cancel()
	x.m.TenantQueries.WithLabelValues("events_since").Inc()
	r, err := x.read(ctx)
	if store.IsClosed(err) && x.Resolve != nil {
		st, rerr := x.Resolve(ctx, x.st.TenantID)
		if rerr != nil {
			return pageResult{}, rerr
		}
		x.st = st
		r, err = x.read(ctx)
	}
	return r, err
}

// read is one page read under the stream's guard.
func (x *stream) read(ctx context.Context) (pageResult, error) {
	var evs []store.Event
	var swept int64
	var err error
	switch x.cfg.Guard {
	case store.GuardHorizon:
		return x.readHorizon(ctx)
	case store.GuardLock:
		evs, swept, err = x.st.EventsPageLocked(ctx, x.cursor, x.cfg.PageSize)
	default:
		evs, swept, err = x.st.EventsPage(ctx, x.cursor, x.cfg.PageSize)
	}
	if err != nil {
		return pageResult{}, err
	}
	if x.cursor < swept {
		x.swept = swept
		return pageResult{tooOld: true}, nil
	}
	return pageResult{evs: evs, more: len(evs) >= x.cfg.PageSize}, nil
}

// readHorizon reads every tenant's seqs after the stream's horizon and keeps this tenant's events
// up to the first missing seq (horizon.go).
func (x *stream) readHorizon(ctx context.Context) (pageResult, error) {
	p, err := x.st.EventsAfter(ctx, x.hz.settled, x.cfg.PageSize)
	if err != nil {
		return pageResult{}, err
	}
	x.saw(x.st, p)
	if x.cursor < p.Swept {
		x.swept = p.Swept
		x.held = false
		return pageResult{tooOld: true}, nil
	}
	before := x.hz.settled
	n, held, gaveUp := x.hz.advance(p.Rows, x.gone(x.st, p), time.Now(), x.cfg.HorizonWait)
	if gaveUp {
		x.m.HorizonHoles.Inc()
		x.log.Warn("sse horizon gave missing seqs up as holes (rolled-back inserts, or rows visible later than --sse-horizon-wait)",
			"tenant_id", x.st.TenantID, "after", before, "through", x.hz.settled)
	}
	x.held = held
	var evs []store.Event
	for _, r := range p.Rows[:n] {
		if r.Mine {
			evs = append(evs, r.Event)
		}
	}
	return pageResult{evs: evs, more: !held && len(p.Rows) >= x.cfg.PageSize}, nil
}

// gone is the seq at or below which a horizon reader of st's page p may pass a missing seq at once
// as a row a sweep deleted. This tenant's own sweep mark: a missing seq below it is one of this
// tenant's swept rows or another tenant's row, neither of which this reader owes its client.
// Another tenant's mark says nothing about a seq of this tenant: a neighbour's retried row, born
// older than the retention, takes a fresh seq and is swept at once, and its mark then lands above
// this tenant's writes still in flight. So another tenant's mark passes a gap at once only below
// the highest seq this pod saw visible HorizonWait ago (seqClock): a seq that low still missing is
// a deleted row or has been in flight longer than any stream waits for a gap. Other gaps below a
// neighbour's mark wait like any gap (at most HorizonWait, once per page of gaps).
func (s *Streamer) gone(st *store.TenantStore, p store.HorizonPage) int64 {
	if s.cfg.AnyTenantSweepMark {
		return p.SweptAny
	}
	old, _ := s.clock.before(st.PoolID, time.Now(), s.cfg.HorizonWait)
	return max(p.Swept, min(p.SweptAny, old))
}

// saw records the highest seq of a horizon page in the pod's seq clock (settle.go).
func (s *Streamer) saw(st *store.TenantStore, p store.HorizonPage) {
	if n := len(p.Rows); n > 0 {
		s.clock.observe(st.PoolID, p.Rows[n-1].Seq, time.Now(), s.cfg.HorizonWait)
	}
}
