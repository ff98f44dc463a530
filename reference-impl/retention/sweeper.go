// Package retention deletes fs_events rows older than the configured retention without ever waking
// a quiet tenant DB: the primary sweep runs lazily on the write path (at most once per Interval per
// tenant, in the background, batched), the backstop runs from the maintenance pass over tenants that
// wrote since the previous pass, and a shared pool is swept pool-wide under a cluster-wide claim.
package retention

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seqgate/seqgate/internal/defaults"

	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// Sweeper runs both sweep paths with the same Retention.
type Sweeper struct {
	Retention      time.Duration // fs_events retention (default 1h)
	Interval       time.Duration // lazy sweep throttle per tenant (default 1h)
	SharedInterval time.Duration // shared-pool claim interval (default 30m)
	Maintenance    time.Duration // backstop pass period (default 10m)
	Batch          int           // rows per DELETE (default 5000)
	MaxBatches     int           // DELETE statements per sweep (default 20)
	ColdSweeper    bool          // the cold-db-sweeper defect: the backstop sweeps every tenant
	Unbounded      bool          // the unbounded-sweep defect: the lazy sweep is one DELETE, run inline (unbounded.go)
	Meta           *store.Meta
	Pools          *store.Pools
	Resolve        func(ctx context.Context, tenant string) (*store.TenantStore, error)
	Metrics        *metrics.Metrics
	Log            *slog.Logger

	once   sync.Once
	mu     sync.Mutex
	last   map[string]time.Time
	active map[string]*store.TenantStore
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	busy   atomic.Int64 // sweeps spawned and not finished
}

// Busy reports whether a spawned sweep is still running (tests wait for it instead of sleeping).
func (s *Sweeper) Busy() bool { return s.busy.Load() > 0 }

func (s *Sweeper) init() {
	s.once.Do(func() {
		defaults.Positive(&s.Retention, time.Hour)
		defaults.Positive(&s.Interval, time.Hour)
		defaults.Positive(&s.SharedInterval, 30*time.Minute)
		defaults.Positive(&s.Maintenance, 10*time.Minute)
		if s.Batch <= 0 {
			s.Batch = 5000
		}
		if s.MaxBatches <= 0 {
			s.MaxBatches = 20
		}
		s.last = map[string]time.Time{}
		s.active = map[string]*store.TenantStore{}
		s.ctx, s.cancel = context.WithCancel(context.Background())
	})
}

// AfterInsert is called after every durable hot-path insert; it never blocks on I/O.
func (s *Sweeper) AfterInsert(st *store.TenantStore) {
	s.init()
	if s.Unbounded {
		s.sweepInline(st)
		return
	}
	key := "tenant:" + st.TenantID
	if st.Shared {
		key = "pool:" + st.PoolID
	}
	s.mu.Lock()
	s.active[st.TenantID] = st
	due := time.Since(s.last[key]) >= s.Interval
	if st.Shared {
		due = time.Since(s.last[key]) >= s.SharedInterval
	}
	if due {
		s.last[key] = time.Now()
	}
	s.mu.Unlock()
	if !due {
		return
	}
	s.spawn(func(ctx context.Context) {
		if st.Shared {
			s.sweepShared(ctx, st, "shared")
		} else {
			s.sweepTenant(ctx, st, "lazy")
		}
	})
}

func (s *Sweeper) spawn(fn func(ctx context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	s.wg.Add(1)
	s.busy.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.busy.Add(-1)
		fn(s.ctx)
	}()
}

func (s *Sweeper) sweepTenant(ctx context.Context, st *store.TenantStore, kind string) {
	res, err := st.Sweep(ctx, time.Now().Add(-s.Retention), s.Batch, s.MaxBatches)
	s.record(kind, res, err, st.TenantID)
	if err == nil {
		if n, err := store.EstimateRows(ctx, st.DB); err == nil {
			s.Metrics.FSEventsRows.WithLabelValues(st.TenantID).Set(float64(n))
		}
	}
}

func (s *Sweeper) sweepShared(ctx context.Context, st *store.TenantStore, kind string) {
	won, err := s.Meta.ClaimMaintenance(ctx, "fs_events_sweep:"+st.PoolID, s.SharedInterval)
	if err != nil || !won {
		if err != nil {
			s.Log.Warn("shared sweep claim failed", "pool", st.PoolID, "err", err)
		}
		return
	}
	res, err := store.SweepShared(ctx, st.DB, time.Now().Add(-s.Retention), s.Batch, s.MaxBatches)
	s.record(kind, res, err, "shared_pool:"+st.PoolID)
	if err == nil {
		if n, err := store.EstimateRows(ctx, st.DB); err == nil {
			s.Metrics.FSEventsRows.WithLabelValues("shared_pool:" + st.PoolID).Set(float64(n))
		}
	}
}

func (s *Sweeper) record(kind string, res store.SweepResult, err error, who string) {
	if err != nil {
		s.Metrics.Sweeps.WithLabelValues(kind, "error").Inc()
		s.Log.Warn("fs_events sweep failed", "kind", kind, "tenant_id", who, "deleted", res.Deleted, "err", err)
		return
	}
	s.Metrics.Sweeps.WithLabelValues(kind, "ok").Inc()
	s.Metrics.FSEventsPruned.Add(float64(res.Deleted))
	if res.Deleted > 0 {
		s.Log.Info("fs_events sweep", "kind", kind, "tenant_id", who, "deleted", res.Deleted, "batches", res.Batches, "done", res.Done)
	}
}

// SweepNow sweeps one tenant synchronously (operator sweep and tests), returning what it did.
func (s *Sweeper) SweepNow(ctx context.Context, st *store.TenantStore) (store.SweepResult, error) {
	s.init()
	if st.Shared {
		res, err := store.SweepShared(ctx, st.DB, time.Now().Add(-s.Retention), s.Batch, s.MaxBatches)
		s.record("manual", res, err, "shared_pool:"+st.PoolID)
		return res, err
	}
	res, err := st.Sweep(ctx, time.Now().Add(-s.Retention), s.Batch, s.MaxBatches)
	s.record("manual", res, err, st.TenantID)
	return res, err
}

// Run is the maintenance pass (the backstop sweep path) until ctx ends: every Maintenance it sweeps
// the tenants that wrote since the previous pass, so it never wakes a quiet tenant DB (unless the
// cold-db-sweeper defect is on, which sweeps every tenant).
func (s *Sweeper) Run(ctx context.Context) {
	s.init()
	sleep.Every(ctx, s.Maintenance, func() { s.maintenancePass(ctx) })
}

func (s *Sweeper) maintenancePass(ctx context.Context) {
	s.mu.Lock()
	active := s.active
	s.active = map[string]*store.TenantStore{}
	s.mu.Unlock()
	if s.ColdSweeper {
		s.coldPass(ctx)
		return
	}
	for _, st := range active {
		if st.Shared {
			s.sweepShared(ctx, st, "maintenance")
		} else {
			s.sweepTenant(ctx, st, "maintenance")
		}
	}
}

func (s *Sweeper) coldPass(ctx context.Context) {
	tenants, err := s.Meta.ActiveTenants(ctx)
	if err != nil {
		return
	}
	for _, t := range tenants {
		st, err := s.Resolve(ctx, t.ID)
		if err != nil {
			continue
		}
		s.sweepTenant(ctx, st, "cold")
	}
}

// Close cancels running sweeps and waits for them.
func (s *Sweeper) Close() {
	s.init()
	s.mu.Lock()
	s.cancel()
	s.mu.Unlock()
	s.wg.Wait()
}
