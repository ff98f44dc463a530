// Package metrics holds every Prometheus instrument of eventlogd, built on a registry the caller
// passes in (never the global one). Names follow drive9 where drive9 has the metric; the rest are
// the inputs the durability SLIs of design 000 need. Labels are bounded: tenant_id (one per
// provisioned tenant), reason, result, path, kind, op from fixed lists.
package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the instruments of one pod.
type Metrics struct {
	InsertAttempts *prometheus.CounterVec   // path=hot|flush
	InsertResults  *prometheus.CounterVec   // path, result=ok|error
	InsertDuration *prometheus.HistogramVec // path
	WriteGroupSize prometheus.Histogram     // writes per group (--event-commit grouped)
	FlushResults   *prometheus.CounterVec   // result=ok|error|rejected|tenant_gone
	BufferDepth    prometheus.Gauge
	Dropped        *prometheus.CounterVec // tenant_id, reason
	Residency      prometheus.Histogram
	Resets         *prometheus.CounterVec // tenant_id, reason
	EventsSent     *prometheus.CounterVec // tenant_id
	Heartbeats     prometheus.Counter
	Connections    *prometheus.CounterVec // tenant_id
	Inflight       prometheus.Gauge
	OutboxInserts  *prometheus.CounterVec // result
	OutboxPolls    *prometheus.CounterVec // result
	OutboxAge      prometheus.Gauge
	OutboxPruned   prometheus.Counter
	OutboxStalled  prometheus.Gauge
	FSEventsRows   *prometheus.GaugeVec // tenant_id (or shared_pool:<id>)
	FSEventsPruned prometheus.Counter
	Sweeps         *prometheus.CounterVec // kind=lazy|maintenance|shared|cold, result
	TenantQueries  *prometheus.CounterVec // op=events_since|bounds|settle_floor|seq_head
	PodsSwept      prometheus.Counter
	Mutations      *prometheus.CounterVec // op, result
	ResumesAtHead  prometheus.Counter
	HorizonHoles   prometheus.Counter
	ShutdownCloses prometheus.Histogram // streams closed per paced batch at shutdown
	ReplayHandoffs prometheus.Counter
	FanoutLag      *prometheus.CounterVec // reason=poll_gap|backlog
	SignalLost     *prometheus.CounterVec // reason=outbox_pruned|poller_start|shutdown
	RecoveryWakes  prometheus.Counter
	DrainRearms    *prometheus.CounterVec // reason=catch_up|error
	LagCloses      prometheus.Counter     // defect mass-close-on-lag only
}

// New builds the instruments and registers them on reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		InsertAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_event_insert_attempts_total",
			Help: "fs_events insert attempts by path (hot = on the mutation, flush = retry-buffer flush)."}, []string{"path"}),
		InsertResults: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_event_insert_results_total",
			Help: "fs_events insert outcomes by path and result (ok, error)."}, []string{"path", "result"}),
		InsertDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "eventlogd_event_insert_duration_seconds",
			Help: "fs_events insert latency by path.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"path"}),
		WriteGroupSize: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "eventlogd_write_group_size",
			Help: "Writes committed together per write group (--event-commit grouped).", Buckets: prometheus.ExponentialBuckets(1, 2, 8)}),
		FlushResults: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drive9_sse_event_retry_flush_total",
			Help: "Retry-buffer flush attempts by result (ok, error, rejected, tenant_gone)."}, []string{"result"}),
		BufferDepth: prometheus.NewGauge(prometheus.GaugeOpts{Name: "drive9_sse_event_retry_buffer_depth",
			Help: "Current number of buffered events awaiting a retry insert (in-flight entries included)."}),
		Dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drive9_sse_event_retry_dropped_total",
			Help: "Retry-buffer entries dropped before a durable insert, by tenant_id and reason (tenant_cap, global_cap, expired, stopped, shutdown, tenant_gone, rejected)."}, []string{"tenant_id", "reason"}),
		Residency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "eventlogd_event_retry_buffer_residency_seconds",
			Help: "Time from enqueue to durable insert of flushed retry-buffer entries (loss-budget input).", Buckets: prometheus.ExponentialBuckets(0.01, 2, 18)}),
		Resets: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drive9_sse_resets_sent_total",
			Help: "SSE reset events sent by tenant_id and reason."}, []string{"tenant_id", "reason"}),
		EventsSent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drive9_sse_events_sent_total",
			Help: "SSE file_changed events sent by tenant_id."}, []string{"tenant_id"}),
		Heartbeats: prometheus.NewCounter(prometheus.CounterOpts{Name: "drive9_sse_heartbeats_sent_total",
			Help: "SSE heartbeat events sent."}),
		Connections: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drive9_sse_connections_total",
			Help: "SSE /v1/events connections opened by tenant_id."}, []string{"tenant_id"}),
		Inflight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "drive9_sse_inflight_connections",
			Help: "Open SSE /v1/events connections."}),
		OutboxInserts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_outbox_inserts_total",
			Help: "Coalesced tenant_notify_outbox insert statements by result (ok, error)."}, []string{"result"}),
		OutboxPolls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_outbox_polls_total",
			Help: "Outbox poller reads of the meta DB by result (ok, error, stalled)."}, []string{"result"}),
		OutboxAge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "drive9_tenant_outbox_backlog_oldest_age_seconds",
			Help: "Age of the oldest tenant_notify_outbox row (signal-plane pruning health)."}),
		OutboxPruned: prometheus.NewCounter(prometheus.CounterOpts{Name: "eventlogd_outbox_pruned_rows_total",
			Help: "tenant_notify_outbox rows deleted by the prune gate."}),
		OutboxStalled: prometheus.NewGauge(prometheus.GaugeOpts{Name: "eventlogd_outbox_poller_stalled",
			Help: "1 while the outbox poller is stalled through the admin endpoint."}),
		FSEventsRows: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "drive9_fs_events_rows",
			Help: "Estimated fs_events rows (information_schema estimate) by tenant_id, or shared_pool:<id> for a shared DB."}, []string{"tenant_id"}),
		FSEventsPruned: prometheus.NewCounter(prometheus.CounterOpts{Name: "drive9_fs_events_pruned_total",
			Help: "fs_events rows pruned by retention sweeps."}),
		Sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_fs_events_sweeps_total",
			Help: "Retention sweeps by kind (lazy, maintenance, shared, cold) and result (ok, error)."}, []string{"kind", "result"}),
		TenantQueries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_tenant_db_event_queries_total",
			Help: "fs_events reads issued by SSE streams and pulls by op (events_since, bounds, settle_floor, seq_head)."}, []string{"op"}),
		PodsSwept: prometheus.NewCounter(prometheus.CounterOpts{Name: "eventlogd_stale_pods_swept_total",
			Help: "Stale pods (and their outbox cursor rows) removed by this pod's sweep."}),
		Mutations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_mutations_total",
			Help: "Filesystem mutations by op and result (ok, client_error, error)."}, []string{"op", "result"}),
		ResumesAtHead: prometheus.NewCounter(prometheus.CounterOpts{Name: "eventlogd_sse_resumes_at_head_total",
			Help: "Streams started from the meta head hint (a resume at the head, or an initial sync) without a tenant-DB query."}),
		ShutdownCloses: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "eventlogd_sse_shutdown_close_batch_size",
			Help: "Streams closed per paced batch (every 10 ms) at shutdown.", Buckets: prometheus.ExponentialBuckets(1, 2, 12)}),
		ReplayHandoffs: prometheus.NewCounter(prometheus.CounterOpts{Name: "eventlogd_sse_replay_handoffs_total",
			Help: "Replays ended at the per-connection replay budget (the client resumes from its cursor)."}),
		FanoutLag: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_fanout_lag_total",
			Help: "Outbox reads that found the cross-pod fan-out behind, by reason (poll_gap: more than 2 s, or two poll intervals, since the previous read; backlog: rows left for the next tick). Their wakes arrive late; nothing is skipped or closed."}, []string{"reason"}),
		SignalLost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_fanout_signal_lost_total",
			Help: "Times this pod knew cross-pod wakes were lost, by reason (outbox_pruned, poller_start: every local stream was woken to re-read from its cursor; shutdown: this pod's last hints could not be written, counted per tenant)."}, []string{"reason"}),
		RecoveryWakes: prometheus.NewCounter(prometheus.CounterOpts{Name: "eventlogd_fanout_recovery_wakes_total",
			Help: "Local streams woken to re-read from their cursor after a known signal loss."}),
		DrainRearms: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventlogd_sse_drain_rearms_total",
			Help: "Live drains that stopped short and re-armed a timer, by reason (catch_up: the page budget per wake was spent with rows left; error: a read failed, retried with backoff)."}, []string{"reason"}),
		LagCloses: prometheus.NewCounter(prometheus.CounterOpts{Name: "eventlogd_fanout_lag_closed_streams_total",
			Help: "Streams closed because the fan-out lagged (only the seeded defect mass-close-on-lag closes any)."}),
		HorizonHoles: prometheus.NewCounter(prometheus.CounterOpts{Name: "eventlogd_sse_horizon_gaps_given_up_total",
			Help: "Times a stream under --late-commit-guard horizon gave missing seqs up as holes after --sse-horizon-wait."}),
	}
	reg.MustRegister(m.InsertAttempts, m.InsertResults, m.InsertDuration, m.WriteGroupSize, m.FlushResults, m.BufferDepth, m.Dropped,
		m.Residency, m.Resets, m.EventsSent, m.Heartbeats, m.Connections, m.Inflight, m.OutboxInserts, m.OutboxPolls,
		m.OutboxAge, m.OutboxPruned, m.OutboxStalled, m.FSEventsRows, m.FSEventsPruned, m.Sweeps, m.TenantQueries,
		m.PodsSwept, m.Mutations, m.ResumesAtHead, m.ShutdownCloses, m.ReplayHandoffs, m.FanoutLag, m.SignalLost,
		m.RecoveryWakes, m.DrainRearms, m.LagCloses, m.HorizonHoles)
	// The vectors whose labels come from a fixed list are exported at 0 from the start: a vector
	// appears on /metrics only once a label set is used, and a scraper (seqgate's metrics:) cannot
	// tell a family that never counted from one the service does not have.
	for _, path := range []string{"hot", "flush"} {
		m.InsertAttempts.WithLabelValues(path)
		for _, result := range []string{"ok", "error"} {
			m.InsertResults.WithLabelValues(path, result)
		}
	}
	for _, result := range []string{"ok", "error", "rejected", "tenant_gone"} {
		m.FlushResults.WithLabelValues(result)
	}
	for _, reason := range []string{"poll_gap", "backlog"} {
		m.FanoutLag.WithLabelValues(reason)
	}
	for _, reason := range []string{"outbox_pruned", "poller_start", "shutdown"} {
		m.SignalLost.WithLabelValues(reason)
	}
	for _, reason := range []string{"catch_up", "error"} {
		m.DrainRearms.WithLabelValues(reason)
	}
	return m
}
