package signal

import (
	"context"
	"log/slog"
	"time"

	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// Registry keeps this pod's heartbeat in the meta DB and removes stale pods, deleting their outbox
// cursor rows so a dead pod cannot hold the outbox prune floor.
type Registry struct {
	Meta       *store.Meta
	PodID      string
	Every      time.Duration // heartbeat period (default 5s)
	StaleAfter time.Duration // a pod silent this long is removed (default 30s)
	Metrics    *metrics.Metrics
	Log        *slog.Logger
}

// Run heartbeats and sweeps until ctx ends.
func (r *Registry) Run(ctx context.Context) {
	if r.Every <= 0 {
		r.Every = 5 * time.Second
	}
	if r.StaleAfter <= 0 {
		r.StaleAfter = 30 * time.Second
	}
	r.Tick(ctx)
	sleep.Every(ctx, r.Every, func() { r.Tick(ctx) })
}

// Tick heartbeats once and sweeps stale pods once.
func (r *Registry) Tick(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.Meta.Heartbeat(qctx, r.PodID); err != nil {
		r.Log.Warn("pod heartbeat failed", "err", err)
		return
	}
	gone, err := r.Meta.SweepStalePods(qctx, r.StaleAfter)
	if err != nil {
		r.Log.Warn("stale pod sweep failed", "err", err)
		return
	}
	for _, id := range gone {
		r.Log.Info("swept stale pod", "pod", id)
		r.Metrics.PodsSwept.Inc()
	}
}

// Deregister removes this pod and its cursor (graceful shutdown).
func (r *Registry) Deregister(ctx context.Context) error {
	return r.Meta.RemovePod(ctx, r.PodID)
}
