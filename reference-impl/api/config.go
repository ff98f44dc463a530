// Package api assembles one eventlogd pod: the HTTP surface (provision, auth, filesystem mutations,
// the event stream, /metrics, /healthz, the test-only admin endpoints) over the store, the publish
// path, the signal plane and the retention sweeper. Tests run several pods in one process with New;
// cmd/eventlogd runs one per process.
package api

import (
	"log/slog"
	"time"

	"github.com/seqgate/seqgate/internal/defaults"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seqgate/seqgate/reference-impl/defect"
	"github.com/seqgate/seqgate/reference-impl/events"
	"github.com/seqgate/seqgate/reference-impl/sse"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// Config is everything a pod needs; zero durations and sizes take the defaults of design 000.
type Config struct {
	PodID     string
	MetaDSN   string
	Pools     []store.PoolSpec // empty: one shared pool "shared_pool" on the meta server
	Retention time.Duration    // fs_events retention, both sweep paths [1h]
	Admin     bool             // serve /v1/admin/*
	Defects   defect.Set

	// AdminToken, when set, is required on every /v1/admin/* request (admin_auth.go).
	AdminToken string

	EventInsertTimeout time.Duration // hot-path insert bound [2s]
	// Guard is the late-commit guard of event inserts and stream reads [store.GuardHorizon]; the
	// late-commit-skip defect sets store.GuardNone (docs/eventlogd.md, "The late-commit guard").
	Guard store.Guard
	// EventCommit is how a mutation's event is committed: EventCommitSeparate (its own insert after
	// the mutation's commit, design 000's publish path), EventCommitJoined (in the mutation's
	// transaction, after a savepoint) or EventCommitGrouped (joined, with a tenant's concurrent
	// writes committed together) ["" = separate].
	EventCommit string
	Buffer      events.BufferConfig
	Stream      sse.Config

	OutboxCoalesce     time.Duration // outbox insert spacing [200ms]
	OutboxPoll         time.Duration // poller period [200ms]
	OutboxRetention    time.Duration // outbox row lifetime [1h]
	OutboxCursorMaxAge time.Duration // prune gate ignores cursors older than this [10m]
	OutboxPruneEvery   time.Duration // [10s]
	PodHeartbeat       time.Duration // [5s]
	PodStaleAfter      time.Duration // [30s]

	SweepInterval       time.Duration // lazy sweep throttle per tenant [1h]
	SharedSweepInterval time.Duration // shared-pool claim interval [30m]
	MaintenanceInterval time.Duration // backstop sweep pass [10m]
	SweepBatch          int           // rows per DELETE [5000]
	SweepMaxBatches     int           // DELETEs per sweep [20]

	ShutdownBudget time.Duration // retry-buffer flush budget at shutdown [10s]
	// StreamCloseRate paces StopStreams: at most this many streams closed per second, in batches
	// every 10 ms, so a shutdown never closes every stream at once (a fleet-wide reconnect storm);
	// 0 = the default, negative = all at once [1000].
	StreamCloseRate int
	StreamCloseMax  time.Duration // streams still open after this much pacing close together [5s]
	AuthCacheTTL    time.Duration // API key cache [5s]
	AuthStaleMax    time.Duration // how long past its TTL a cached key is honoured while the meta DB fails [1m]
	MaxBody         int64         // write body limit [16MiB]
	Limits          Limits        // connection, request, stream and provisioning limits (limits.go)
	RequestTimeout  time.Duration // server-side bound on a filesystem request, event insert included [30s]
	DB              store.PoolOptions

	Log      *slog.Logger
	Registry *prometheus.Registry // nil: New makes one

	// AfterMutation, when set, runs after a mutation committed and before its event insert (under
	// EventCommitJoined: after the mutation's statements, inside the transaction that then inserts
	// the event and commits both; under EventCommitGrouped, once per write before the group's
	// round trip, which sends the mutation's statements and the events' together). Tests use it to
	// break the tenant DB exactly there; it is never set in production.
	AfterMutation func(tenantID string)
}

// The --event-commit modes.
const (
	EventCommitSeparate = "separate" // the mutation commits, then its event is inserted (two commits)
	EventCommitJoined   = "joined"   // the mutation and its event commit in one transaction
	// EventCommitGrouped is joined, with a tenant's concurrent writes (PUT) committed together: one
	// transaction, one multi-row upsert and one multi-row event insert per group (group.go).
	EventCommitGrouped = "grouped"
)

// EventCommitModes lists the allowed --event-commit values.
var EventCommitModes = []string{EventCommitSeparate, EventCommitJoined, EventCommitGrouped}

func (c *Config) defaults() {
	defaults.Positive(&c.Retention, time.Hour)
	defaults.Positive(&c.EventInsertTimeout, 2*time.Second)
	defaults.Positive(&c.OutboxCoalesce, 200*time.Millisecond)
	defaults.Positive(&c.OutboxPoll, 200*time.Millisecond)
	defaults.Positive(&c.OutboxRetention, time.Hour)
	defaults.Positive(&c.OutboxCursorMaxAge, 10*time.Minute)
	defaults.Positive(&c.OutboxPruneEvery, 10*time.Second)
	defaults.Positive(&c.PodHeartbeat, 5*time.Second)
	defaults.Positive(&c.PodStaleAfter, 30*time.Second)
	defaults.Positive(&c.SweepInterval, time.Hour)
	defaults.Positive(&c.SharedSweepInterval, 30*time.Minute)
	defaults.Positive(&c.MaintenanceInterval, 10*time.Minute)
	defaults.Positive(&c.ShutdownBudget, 10*time.Second)
	if c.StreamCloseRate == 0 {
		c.StreamCloseRate = 1000
	}
	defaults.Positive(&c.StreamCloseMax, 5*time.Second)
	defaults.Positive(&c.AuthCacheTTL, 5*time.Second)
	defaults.Positive(&c.AuthStaleMax, time.Minute)
	if c.SweepBatch <= 0 {
		c.SweepBatch = 5000
	}
	if c.SweepMaxBatches <= 0 {
		c.SweepMaxBatches = 20
	}
	defaults.Positive(&c.RequestTimeout, 30*time.Second)
	if c.MaxBody <= 0 {
		c.MaxBody = 16 << 20
	}
	c.Limits.defaults(c.AuthCacheTTL)
	if c.Buffer.MaxAge <= 0 {
		c.Buffer.MaxAge = events.MaxAgeFor(c.Retention)
	}
	if c.Defects == nil {
		c.Defects = defect.Set{}
	}
	if c.EventCommit == "" {
		c.EventCommit = EventCommitSeparate
	}
	if c.Guard == store.GuardNone {
		c.Guard = store.GuardHorizon
	}
	if c.Defects.On(defect.LateCommitSkip) {
		c.Guard = store.GuardNone
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
}
