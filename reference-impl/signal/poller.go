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
	Metrics   *metrics.Metrics
	Log       *slog.Logger

	mu         sync.Mutex
	stallUntil time.Time
	cursor     int64
}

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
	return true
}

func (p *Poller) poll(ctx context.Context) {
	cur := p.Cursor()
	// A bounded number of full batches per tick keeps a large backlog moving without monopolizing.
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
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := p.Meta.UpsertCursor(qctx, p.PodID, cur); err != nil {
		p.Log.Warn("outbox cursor upsert failed", "err", err)
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
