package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/events"
	"github.com/seqgate/seqgate/reference-impl/metrics"
	"github.com/seqgate/seqgate/reference-impl/retention"
	"github.com/seqgate/seqgate/reference-impl/signal"
	"github.com/seqgate/seqgate/reference-impl/sse"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// Server is one pod.
type Server struct {
	cfg       Config
	meta      *store.Meta
	pools     *store.Pools
	reg       *prometheus.Registry
	m         *metrics.Metrics
	bus       *signal.Bus
	notifier  *signal.Notifier
	poller    *signal.Poller
	registry  *signal.Registry
	buffer    *events.Buffer
	publisher *events.Publisher
	sweeper   *retention.Sweeper
	streamer  *sse.Streamer
	auth      *authCache
	lim       *limiter
	mux       *http.ServeMux
	groups    writeGroups // --event-commit grouped

	streamCtx    context.Context // canceled at shutdown: ends every stream
	stopStreams  context.CancelFunc
	bgCtx        context.Context
	stopBg       context.CancelFunc
	wg           sync.WaitGroup
	authWG       sync.WaitGroup // background key revalidations
	notifierDone chan struct{}
	streams      streamSet
	closeOnce    sync.Once
	started      bool
}

// wake fans a durable insert out to other pods (outbox) and this pod's streams (bus).
type wake struct {
	n *signal.Notifier
	b *signal.Bus
}

func (w wake) Signal(t string, seq int64) { w.n.Signal(t, seq) }
func (w wake) Publish(t string, seq int64) {
	w.b.NoteHead(t, seq) // before the wake: see sse's resume at the head
	w.b.Publish(t)
}

// New connects to the meta DB and every tenant DB, creates or migrates their schema (idempotent)
// and wires the pod. Call Start to run its background loops and Close to stop it.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg.defaults()
	if cfg.PodID == "" {
		return nil, errors.New("pod id is required (--pod)")
	}
	if cfg.MetaDSN == "" {
		return nil, errors.New("meta DSN is required (--meta-dsn)")
	}
	if err := store.CheckDSN(cfg.MetaDSN); err != nil {
		return nil, fmt.Errorf("--meta-dsn: %w", err)
	}
	if len(cfg.Pools) == 0 {
		var err error
		if cfg.Pools, err = store.DefaultPools(cfg.MetaDSN); err != nil {
			return nil, err
		}
	}
	if err := store.CheckPools(cfg.Pools); err != nil {
		return nil, err
	}
	if m := cfg.Stream.StructuralEvents; m != "" && !slices.Contains(sse.StructuralModes, m) {
		return nil, fmt.Errorf("--structural-events %q: allowed %s", m, strings.Join(sse.StructuralModes, ", "))
	}
	if !slices.Contains(EventCommitModes, cfg.EventCommit) {
		return nil, fmt.Errorf("--event-commit %q: allowed %s", cfg.EventCommit, strings.Join(EventCommitModes, ", "))
	}
	if cfg.Limits.ProvisionToken == "" && !cfg.Limits.OpenProvisioning {
		return nil, errors.New("provisioning needs a token (--provision-token, EVENTLOGD_PROVISION_TOKEN or --provision-token-file); --open-provisioning lets anyone who reaches the port create tenants (unsafe)")
	}
	if cfg.Limits.ProvisionToken != "" && cfg.Limits.OpenProvisioning {
		return nil, errors.New("--open-provisioning and a provisioning token exclude each other: give one")
	}
	warnUnsafeCharsets(cfg)
	metaDB, err := openMeta(ctx, cfg)
	if err != nil {
		return nil, err
	}
	pools := store.NewPools(cfg.Pools, cfg.DB)
	// Pools an earlier start already migrated (recorded in the meta DB) are opened lazily: a pod
	// start must not touch every cold tenant DB. The others are migrated now and recorded.
	meta := &store.Meta{DB: metaDB, UnorderedOutbox: cfg.Defects.On(defect.UnorderedOutbox), Retries: &store.RetryCount{}}
	known, err := meta.MigratedPools(ctx, cfg.Pools)
	if err != nil {
		cfg.Log.Warn("pool schema records unreadable; migrating every pool", "err", err)
	}
	pools.MarkMigrated(known)
	failed := pools.MigrateAll(ctx, 5*time.Second)
	for id, err := range failed {
		cfg.Log.Warn("tenant pool unreachable at start; it will be migrated on first use", "pool", id, "err", err)
	}
	for _, spec := range cfg.Pools {
		if failed[spec.ID] == nil && !known[spec.ID] {
			if err := meta.RecordMigrated(ctx, spec); err != nil {
				cfg.Log.Warn("could not record the pool's schema version", "pool", spec.ID, "err", err)
			}
		}
	}
	reg := cfg.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	s := &Server{cfg: cfg, meta: meta, pools: pools, reg: reg, m: metrics.New(reg), bus: signal.NewBus(),
		auth:         newAuthCache(cfg.AuthCacheTTL, cfg.AuthStaleMax, cfg.Limits.AuthNegativeTTL, cfg.Limits.AuthCacheMax),
		notifierDone: make(chan struct{})}
	s.lim = newLimiter(cfg.Limits, cfg.MaxBody, reg)
	reg.MustRegister(newStreamStats(pools))
	// This pod's own: its Meta and every TenantStore it builds share meta.Retries.
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "eventlogd_tx_conflict_retries_total",
		Help: "Tenant DB statements or transactions run again after a deadlock (1213) or lock wait timeout (1205)."},
		func() float64 { return float64(meta.Retries.Load()) }))
	s.streamCtx, s.stopStreams = context.WithCancel(context.Background())
	s.bgCtx, s.stopBg = context.WithCancel(context.Background())
	log := cfg.Log
	s.notifier = &signal.Notifier{Meta: s.meta, PodID: cfg.PodID, Window: cfg.OutboxCoalesce, Metrics: s.m, Log: log}
	maxAge := cfg.OutboxCursorMaxAge
	if cfg.Defects.On(defect.UnboundedOutboxPinning) {
		maxAge = 0
	}
	s.poller = &signal.Poller{Meta: s.meta, Bus: s.bus, PodID: cfg.PodID, Interval: cfg.OutboxPoll, Retention: cfg.OutboxRetention,
		CursorMaxAge: maxAge, PruneEvery: cfg.OutboxPruneEvery, Metrics: s.m, Log: log}
	if cfg.Defects.On(defect.SilentFanoutDrop) {
		s.poller.FanoutCap = 2
	}
	if cfg.Defects.On(defect.MassCloseOnLag) {
		s.poller.OnLag = s.closeAllStreams
	}
	s.registry = &signal.Registry{Meta: s.meta, PodID: cfg.PodID, Every: cfg.PodHeartbeat, StaleAfter: cfg.PodStaleAfter, Metrics: s.m, Log: log}
	s.sweeper = &retention.Sweeper{Retention: cfg.Retention, Interval: cfg.SweepInterval, SharedInterval: cfg.SharedSweepInterval,
		Maintenance: cfg.MaintenanceInterval, Batch: cfg.SweepBatch, MaxBatches: cfg.SweepMaxBatches,
		ColdSweeper: cfg.Defects.On(defect.ColdDBSweeper), Unbounded: cfg.Defects.On(defect.UnboundedSweep), Meta: s.meta, Pools: pools, Resolve: s.resolve, Metrics: s.m, Log: log}
	s.publisher = &events.Publisher{InsertTimeout: cfg.EventInsertTimeout, Guard: cfg.Guard,
		DropOnFailure: cfg.Defects.On(defect.DropOnInsertFailure), NoSecondWake: cfg.Defects.On(defect.NoSecondWake),
		Wake: wake{s.notifier, s.bus}, Sweep: s.sweeper, Resolve: s.resolve, Metrics: s.m, Log: log}
	bcfg := cfg.Buffer
	bcfg.Uncounted = cfg.Defects.On(defect.UncountedDrop)
	s.buffer = events.NewBuffer(bcfg, s.publisher, s.publisher.Flushed, s.m, log)
	s.publisher.Buffer = s.buffer
	scfg := cfg.Stream
	scfg.SinglePageReplay = cfg.Defects.On(defect.SinglePageReplay)
	scfg.UnsignalledDrop = cfg.Defects.On(defect.UnsignalledQueueDrop)
	scfg.SpuriousSeqTooOld = cfg.Defects.On(defect.SpuriousSeqTooOld)
	scfg.Guard = cfg.Guard
	// A batch write commits its files with its events under every --event-commit mode, so a reset
	// settles the seqs below it in all of them (reset-passes-batch: only under joined and grouped).
	scfg.SettleResets = cfg.EventCommit != EventCommitSeparate || !cfg.Defects.On(defect.ResetPassesBatch)
	if scfg.SettleBack == 0 {
		scfg.SettleBack = cfg.RequestTimeout // a write takes its seq within its request
	}
	scfg.NarrowSettle = cfg.Defects.On(defect.NarrowSettle)
	scfg.AnyTenantSweepMark = cfg.Defects.On(defect.AnyTenantSweepMark)
	scfg.PullHorizonCursor = cfg.Defects.On(defect.PullHorizonCursor)
	scfg.PullWakesCold = cfg.Defects.On(defect.PullWakesCold)
	s.streamer = sse.NewStreamer(scfg, s.bus, s.m, log)
	s.streamer.Resolve = s.resolveStream
	s.streamer.HeadHint = s.meta.SeqHeadAt
	s.routes()
	return s, nil
}

// openMeta connects to the meta DB and migrates it, retrying until ctx ends: a pod restarted during
// a meta-DB outage comes up when the meta DB does.
func openMeta(ctx context.Context, cfg Config) (*sql.DB, error) {
	for {
		db, err := store.OpenDB(ctx, cfg.MetaDSN)
		if err == nil {
			if err = store.MigrateMeta(ctx, db); err == nil {
				return db, nil
			}
			db.Close()
		}
		cfg.Log.Warn("meta DB not ready; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("meta DB: %w", err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Start runs the background loops: retry-buffer scheduler, outbox notifier and poller, pod
// heartbeat and stale-pod sweep, the maintenance sweep pass, the idle pool closer.
func (s *Server) Start() {
	s.started = true
	s.buffer.Start()
	go func() {
		defer close(s.notifierDone)
		s.notifier.Run(s.bgCtx)
	}()
	s.goBg(s.poller.Run)
	s.goBg(s.registry.Run)
	s.goBg(s.sweeper.Run)
	s.goBg(s.watchStreamKeys)
	s.goBg(func(ctx context.Context) {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.pools.CloseIdle()
			}
		}
	})
	s.cfg.Log.Info("eventlogd pod started", "fs_events_retention", s.cfg.Retention.String(),
		"retry_max_age", s.buffer.Config().MaxAge.String(), "late_commit_guard", s.cfg.Guard.String(), "event_commit", s.cfg.EventCommit, "pools", len(s.cfg.Pools), "defects", s.cfg.Defects.String())
}

func (s *Server) goBg(fn func(ctx context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn(s.bgCtx)
	}()
}

// Handler is the pod's HTTP surface. Filesystem paths bypass ServeMux, whose path cleaning would
// redirect "/a//b" or "/a/../b" instead of rejecting them with a 400.
func (s *Server) Handler() http.Handler {
	fs := s.withTenant(s.handleFS)
	return s.protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isFSPath(r.URL.Path) {
			fs(w, r) // protect bounded its context by --request-timeout
			return
		}
		s.mux.ServeHTTP(w, r)
	}))
}

// StopStreams ends every open event stream (the first step of a graceful shutdown, so that an
// http.Server's Shutdown can finish). It paces the closes (Config.StreamCloseRate, in batches every
// 10 ms) and returns when every stream was told to end: each close starts a client reconnect, and
// closing all at once would send every client of the pod to the other pods in the same instant
// (seed 004: a server-forced mass close is a fleet-wide reconnect storm). Streams still open after
// Config.StreamCloseMax, or opened during the pacing, are closed together at the end.
func (s *Server) StopStreams() {
	if rate := s.cfg.StreamCloseRate; rate > 0 {
		batch := max(1, rate/100)
		deadline := time.Now().Add(s.cfg.StreamCloseMax)
		for time.Now().Before(deadline) {
			cancels := s.streams.take(batch)
			if len(cancels) == 0 {
				break
			}
			for _, c := range cancels {
				c()
			}
			s.m.ShutdownCloses.Observe(float64(len(cancels)))
			time.Sleep(10 * time.Millisecond)
		}
	}
	s.stopStreams()
}

// closeAllStreams is defect mass-close-on-lag: every open stream of the pod ends in the same
// instant, and every client reconnects at once (seed 004's #9195 closer without its pacing).
func (s *Server) closeAllStreams() {
	cancels := s.streams.take(math.MaxInt)
	for _, c := range cancels {
		c()
	}
	s.m.LagCloses.Add(float64(len(cancels)))
}

// streamSet is the pod's open streams, for the paced close at shutdown.
type streamSet struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]context.CancelFunc
}

// add registers a stream's cancel and returns its removal.
func (ss *streamSet) add(cancel context.CancelFunc) (remove func()) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.m == nil {
		ss.m = map[uint64]context.CancelFunc{}
	}
	ss.next++
	id := ss.next
	ss.m[id] = cancel
	return func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		delete(ss.m, id)
	}
}

// take removes and returns up to n streams' cancels, oldest first.
func (ss *streamSet) take(n int) []context.CancelFunc {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ids := make([]uint64, 0, len(ss.m))
	for id := range ss.m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]context.CancelFunc, 0, min(n, len(ids)))
	for _, id := range ids[:min(n, len(ids))] {
		out = append(out, ss.m[id])
		delete(ss.m, id)
	}
	return out
}

// Close shuts the pod down gracefully: streams end, the retry buffer is flushed within the
// shutdown budget (leftovers counted as shutdown), the last outbox hints are written, background
// loops stop, the pod deregisters, connections close. Call it after in-flight requests finished.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.stopStreams()
		left := s.buffer.Close(s.cfg.ShutdownBudget)
		if left > 0 {
			s.cfg.Log.Warn("retry buffer not empty at shutdown; dropped", "entries", left)
		}
		s.stopBg()
		if s.started {
			<-s.notifierDone
		}
		s.wg.Wait()
		s.authWG.Wait()
		s.sweeper.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if derr := s.registry.Deregister(ctx); derr != nil {
			s.cfg.Log.Warn("pod deregister failed", "err", derr)
		}
		cancel()
		s.pools.Close()
		err = s.meta.DB.Close()
	})
	return err
}

// Buffer is the pod's retry buffer (tests and admin).
func (s *Server) Buffer() *events.Buffer { return s.buffer }

// Poller is the pod's outbox poller (tests and admin).
func (s *Server) Poller() *signal.Poller { return s.poller }

// SignalIdle reports whether every outbox hint this pod wrote has been read back by its poller
// (tests use it to let wakes settle before a negative control).
func (s *Server) SignalIdle(ctx context.Context) bool {
	if s.notifier.Pending() > 0 {
		return false
	}
	head, err := s.meta.OutboxHead(ctx)
	return err == nil && s.poller.Cursor() >= head
}

// Pools is the pod's tenant DB registry (tests).
func (s *Server) Pools() *store.Pools { return s.pools }

// Meta is the pod's meta DB (tests).
func (s *Server) Meta() *store.Meta { return s.meta }

// Registry is the pod's metrics registry.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Sweeper is the pod's retention sweeper (tests and admin).
func (s *Server) Sweeper() *retention.Sweeper { return s.sweeper }

// Store resolves tenant's store as the request path does (tests and admin).
func (s *Server) Store(ctx context.Context, tenant string) (*store.TenantStore, error) {
	return s.resolve(ctx, tenant)
}

// resolve is the normal backend acquisition path: the tenant in the meta DB, then its pool.
func (s *Server) resolve(ctx context.Context, tenant string) (*store.TenantStore, error) {
	t, err := s.meta.Tenant(ctx, tenant)
	if err != nil {
		return nil, err
	}
	return s.storeFor(ctx, t, nil)
}

// storeFor builds t's store on its pool's handles, or returns prev when prev is that store already
// (t's, on the same handles: a store is never changed once built).
func (s *Server) storeFor(ctx context.Context, t store.Tenant, prev *store.TenantStore) (*store.TenantStore, error) {
	spec, ok := s.pools.Spec(t.PoolID)
	if !ok {
		return nil, fmt.Errorf("tenant %s: pool %q is not in this pod's pools", t.ID, t.PoolID)
	}
	db, err := s.pools.Acquire(ctx, t.PoolID)
	if err != nil {
		return nil, err
	}
	var gdb *sql.DB
	if s.cfg.EventCommit == EventCommitGrouped {
		if gdb, err = s.pools.AcquireGroup(ctx, t.PoolID); err != nil {
			return nil, err
		}
	}
	if prev != nil && prev.DB == db && prev.GroupDB == gdb && prev.TenantID == t.ID && prev.PoolID == t.PoolID {
		return prev, nil
	}
	return &store.TenantStore{DB: db, GroupDB: gdb, TenantID: t.ID, PoolID: t.PoolID, Shared: spec.Role == store.RoleShared,
		LeakAcrossTenants: s.cfg.Defects.On(defect.CrossTenantLeak), Retries: s.meta.Retries}, nil
}

func (s *Server) routes() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg}))
	mux.HandleFunc("POST /v1/provision", s.handleProvision)
	mux.HandleFunc("GET /v1/events", s.withTenant(s.guardStream(s.handleEvents)))
	mux.HandleFunc("GET /v1/events/changes", s.withTenant(s.handleChanges))
	mux.HandleFunc("POST /v1/fs:batch-write", s.withTenant(s.handleBatchWrite))
	if s.cfg.Admin {
		s.mountAdmin(mux) // admin_auth.go: behind Config.AdminToken
	}
	s.mux = mux
}
