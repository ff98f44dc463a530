package signal

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// Notifier writes the cross-pod wake-up hints to tenant_notify_outbox, coalesced: the first signal
// after a quiet spell is written at once, later ones wait for the window and share one multi-row
// INSERT. Each signal carries the seq just committed; the same meta transaction raises the
// tenant's head hint (tenant_seq_head) to the highest seq of the window, which lets a stream resume
// at the head without querying the tenant DB. A failed insert never reaches the mutation; its
// tenants (and seqs) stay pending for the next window.
type Notifier struct {
	Meta    *store.Meta
	PodID   string        // written into each row so this pod's poller skips its own hints
	Window  time.Duration // minimum spacing of outbox inserts (default 200ms)
	Timeout time.Duration // per-insert timeout (default 2s)
	Metrics *metrics.Metrics
	Log     *slog.Logger

	mu      sync.Mutex
	pending map[string]int64 // tenant -> highest seq signalled in this window
	wake    chan struct{}
	once    sync.Once
}

func (n *Notifier) init() {
	n.once.Do(func() {
		n.pending = map[string]int64{}
		n.wake = make(chan struct{}, 1)
		if n.Window <= 0 {
			n.Window = 200 * time.Millisecond
		}
		if n.Timeout <= 0 {
			n.Timeout = 2 * time.Second
		}
	})
}

// Signal marks tenant as having a new committed event seq; it never blocks.
func (n *Notifier) Signal(tenant string, seq int64) {
	n.init()
	n.mu.Lock()
	n.pending[tenant] = max(n.pending[tenant], seq)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Pending returns how many tenants wait for an outbox insert.
func (n *Notifier) Pending() int {
	n.init()
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.pending)
}

// Run writes pending signals until ctx ends, then makes one last attempt.
func (n *Notifier) Run(ctx context.Context) {
	n.init()
	for {
		select {
		case <-ctx.Done():
			n.last()
			return
		case <-n.wake:
		}
		n.flush(ctx)
		if !sleep.For(ctx, n.Window) {
			n.last()
			return
		}
	}
}

// last is the shutdown's one attempt. Hints it cannot write are lost for good (no window follows):
// the other pods' streams of those tenants get the events with the tenant's next write, a reconnect
// or the liveness poll. Counted per tenant (reason shutdown), never silent.
func (n *Notifier) last() {
	n.flush(context.Background())
	if left := n.Pending(); left > 0 {
		n.Metrics.SignalLost.WithLabelValues("shutdown").Add(float64(left))
		n.Log.Error("outbox hints lost at shutdown: the meta DB did not take them", "tenants", left)
	}
}

func (n *Notifier) flush(ctx context.Context) {
	n.mu.Lock()
	if len(n.pending) == 0 {
		n.mu.Unlock()
		return
	}
	heads := n.pending
	tenants := make([]string, 0, len(heads))
	for t := range heads {
		tenants = append(tenants, t)
	}
	n.pending = map[string]int64{}
	n.mu.Unlock()
	sort.Strings(tenants)
	ictx, cancel := context.WithTimeout(ctx, n.Timeout)
	err := n.Meta.InsertNotifyHeads(ictx, n.PodID, tenants, heads)
	cancel()
	if err != nil {
		n.Metrics.OutboxInserts.WithLabelValues("error").Inc()
		n.Log.Warn("outbox insert failed; will retry next window", "tenants", len(tenants), "err", err)
		n.mu.Lock()
		for _, t := range tenants {
			n.pending[t] = max(n.pending[t], heads[t])
		}
		n.mu.Unlock()
		select { // retry after the window
		case n.wake <- struct{}{}:
		default:
		}
		return
	}
	n.Metrics.OutboxInserts.WithLabelValues("ok").Inc()
}
