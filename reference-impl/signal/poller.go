package signal

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// Poller reads tenant_notify_outbox (meta DB only, never a tenant DB) every Interval and wakes the
// local streams of each tenant it sees; it records its position in tenant_outbox_cursor and, every
// PruneEvery, prunes rows older than Retention below the prune floor.
type Poller struct {
	Meta         *store.Meta
	Bus          *Bus
	PodID        string
	Interval     time.Duration // default 200ms
	Batch        int           // rows per read (default 1000)
	Retention    time.Duration // outbox row lifetime (default 1h)
	CursorMaxAge time.Duration // prune gate ignores cursors older than this; 0 = no age bound (defect)
	PruneEvery   time.Duration // default 10s
	// FanoutCap, when > 0, is defect silent-fanout-drop: each read wakes at most this many tenants and
	// drops the other wakes without a count or a signal (a bounded broadcast that fell behind).
	FanoutCap int
	// OnLag, when set, is defect mass-close-on-lag: it runs on every lagged read (see LagAfter) and
	// closes every stream of the pod at once. The correct build has no use for it: a wake carries no
	// data and each stream reads from its own cursor, so a late wake is only late.
	OnLag   func()
	Metrics *metrics.Metrics
	Log     *slog.Logger

	mu         sync.Mutex
	stallUntil time.Time
	cursor     int64
	lastRead   time.Time // the last successful read (poll loop only)
	unchecked  int64     // cursor not yet compared with the prune mark (poll loop only)
}

// LagAfter is how long after the previous successful read a read counts as lagged (reason
// poll_gap; two poll intervals when that is longer): seed 004's delivery deadline. A meta-DB stall or a stalled poller puts every pod's
// reads past it at once; the wakes of such a read are late, never lost.
const LagAfter = 2 * time.Second

// Stall stops polling (and cursor refreshes) for d, as a stuck poller would.
func (p *Poller) Stall(d time.Duration) {
	p.mu.Lock()
	p.stallUntil = time.Now().Add(d)
	p.mu.Unlock()
	p.Metrics.OutboxStalled.Set(1)
}

// Resume ends a stall.
func (p *Poller) Resume() {
	p.mu.Lock()
	p.stallUntil = time.Time{}
	p.mu.Unlock()
	p.Metrics.OutboxStalled.Set(0)
}

// Stalled reports whether the poller is stalled now.
func (p *Poller) Stalled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Now().Before(p.stallUntil)
}

// Cursor returns the last outbox id this poller handled.
func (p *Poller) Cursor() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cursor
}

// Run polls until ctx ends.
func (p *Poller) Run(ctx context.Context) {
	if p.Interval <= 0 {
		p.Interval = 200 * time.Millisecond
	}
	if p.Batch <= 0 {
		p.Batch = 1000
	}
	if p.Retention <= 0 {
		p.Retention = time.Hour
	}
	if p.PruneEvery <= 0 {
		p.PruneEvery = 10 * time.Second
	}
	started := false
	lastPrune := time.Now() // first prune one period after start
	t := time.NewTicker(p.Interval)
	defer t.Stop()
	for {
		if !started {
			started = p.start(ctx)
		} else if p.Stalled() {
			p.Metrics.OutboxPolls.WithLabelValues("stalled").Inc()
		} else {
			p.Metrics.OutboxStalled.Set(0)
			p.poll(ctx)
			if time.Since(lastPrune) >= p.PruneEvery {
				lastPrune = time.Now()
				p.prune(ctx)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// start picks the starting position: this pod's cursor row if it has one, else the outbox head
// (a new pod has no streams waiting on older hints).
func (p *Poller) start(ctx context.Context) bool {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, ok, err := p.Meta.Cursor(qctx, p.PodID)
	if err == nil && !ok {
		c, err = p.Meta.OutboxHead(qctx)
	}
	if err != nil {
		p.Metrics.OutboxPolls.WithLabelValues("error").Inc()
		p.Log.Warn("outbox poller start failed", "err", err)
		return false
	}
	p.mu.Lock()
	p.cursor = c
	p.mu.Unlock()
	p.unchecked = c
	p.lastRead = time.Now()
	// A stream that connected before this start (the meta DB was down, or the listener came first)
	// read its tenant before hints this start will never read (a new pod starts at the head).
	p.lost("poller_start")
	return true
}

// lost wakes every local stream to re-read after a known loss of wakes whose tenants are unknown,
// and counts it when there was a stream to lose them.
func (p *Poller) lost(reason string) {
	if n := p.Bus.PublishAll(); n > 0 {
		p.Metrics.SignalLost.WithLabelValues(reason).Inc()
		p.Metrics.RecoveryWakes.Add(float64(n))
		p.Log.Warn("cross-pod wakes lost; every local stream re-reads from its cursor", "reason", reason, "streams", n)
	}
}

func (p *Poller) poll(ctx context.Context) {
	cur := p.Cursor()
	backlog := false
	// A bounded number of full batches per tick keeps a large backlog moving without monopolizing;
	// rows left over are read next tick (counted as lag, reason backlog).
	for i := 0; i < 10; i++ {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rows, err := p.Meta.OutboxSince(qctx, cur, p.Batch)
		cancel()
		if err != nil {
			p.Metrics.OutboxPolls.WithLabelValues("error").Inc()
			p.Log.Warn("outbox poll failed", "err", err)
			return
		}
		p.Metrics.OutboxPolls.WithLabelValues("ok").Inc()
		seen := map[string]bool{}
		for _, r := range rows {
			// This pod's own hints are redundant: its bus was published when it wrote them.
			if r.PodID != p.PodID && !seen[r.TenantID] && (p.FanoutCap == 0 || len(seen) < p.FanoutCap) {
				seen[r.TenantID] = true
				p.Bus.Publish(r.TenantID)
			}
			cur = r.ID
		}
		p.mu.Lock()
		p.cursor = cur
		p.mu.Unlock()
		if len(rows) < p.Batch {
			break
		}
		backlog = i == 9
	}
	p.lagged(backlog)
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// Read after the rows: the prune raises the mark before it deletes, so a row deleted before this
	// poll's reads could see it is under the mark read now.
	if mark, err := p.Meta.OutboxPruneMark(qctx); err == nil {
		if mark > p.unchecked {
			p.lost("outbox_pruned")
		}
		p.unchecked = cur
	}
	if err := p.Meta.UpsertCursor(qctx, p.PodID, cur); err != nil {
		p.Log.Warn("outbox cursor upsert failed", "err", err)
	}
}

// lagged counts a read that came late or left a backlog, and runs OnLag (the defect) on it.
func (p *Poller) lagged(backlog bool) {
	now := time.Now()
	gap := now.Sub(p.lastRead)
	p.lastRead = now
	lag := false
	if gap > max(LagAfter, 2*p.Interval) { // a slow configured period alone is no lag
		p.Metrics.FanoutLag.WithLabelValues("poll_gap").Inc()
		lag = true
	}
	if backlog {
		p.Metrics.FanoutLag.WithLabelValues("backlog").Inc()
		lag = true
	}
	if lag && p.OnLag != nil {
		p.OnLag()
	}
}

func (p *Poller) prune(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if age, err := p.Meta.OutboxOldestAge(qctx); err == nil {
		p.Metrics.OutboxAge.Set(age.Seconds())
	}
	n, err := p.Meta.PruneOutbox(qctx, p.Retention, p.CursorMaxAge, 5000)
	if err != nil {
		p.Log.Warn("outbox prune failed", "err", err)
		return
	}
	p.Metrics.OutboxPruned.Add(float64(n))
}
