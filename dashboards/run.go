package dashboards

//lint:file-ignore SA1019 the v1 dashboard model is what Grafana's file provisioning loads; dashboardv2 needs the v2 (app platform) API

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// faultAnnotations mark a run's faults: where seqgate injected them (its schedule, from `seqgate run
// --metrics-addr`, when Prometheus scrapes it) and, one query per kind of effect, where they show in
// the system under test's own metrics (which also works for a run seqgate's metrics do not reach).
func faultAnnotations() []*dashboard.AnnotationQueryBuilder {
	return []*dashboard.AnnotationQueryBuilder{
		promAnnotation("Faults injected by seqgate", "dark-red", `seqgate_faults_active > 0`,
			"fault {{kind}}", "{{kind}} active (seqgate's schedule)"),
		promAnnotation("Pod down (crash, pause)", "purple", `up{job="eventlogd"} == 0`,
			"pod down", "{{instance}} not scraped (pod_crash, pod_pause, pod_restart)"),
		promAnnotation("Pod restarted", "blue", `changes(process_start_time_seconds{job="eventlogd"}[1m]) > 0`,
			"pod restarted", "{{instance}} started again"),
		promAnnotation("Event inserts failing (tenant-DB fault)", "orange",
			`sum by (instance) (increase(eventlogd_event_insert_results_total{job="eventlogd",result="error"}[30s])) > 0`,
			"event inserts failing", "{{instance}}: tenant_db_down, tenant_db_stall, event_insert_fail"),
		promAnnotation("Outbox polls failing (meta-DB fault)", "yellow",
			`sum by (instance) (increase(eventlogd_outbox_polls_total{job="eventlogd",result="error"}[30s])) > 0`,
			"outbox polls failing", "{{instance}}: meta_db_down, meta_db_stall"),
		promAnnotation("Outbox poller stalled", "light-blue", `eventlogd_outbox_poller_stalled{job="eventlogd"} > 0`,
			"poller stalled", "{{instance}}: outbox_poller_stall"),
		promAnnotation("Alerts firing", "red", `ALERTS{alertstate="firing",alertname=~"Eventlogd.*"}`,
			"{{alertname}}", "{{tenant_id}} {{reason}} ({{severity}})"),
	}
}

// Run is the dashboard of one seqgate run against the stack's pods: load, delivery, the retry
// buffer and losses over the last minutes, with the faults' effects as annotations.
func Run() *dashboard.DashboardBuilder {
	b := dashboard.NewDashboardBuilder("seqgate run: system under test").
		Uid("seqgate-run").
		Description("What a seqgate scenario does to the pods it targets (the SUT's own metrics), faults drawn as annotations.").
		Tags([]string{"eventlogd", "seqgate", "run"}).
		Refresh("5s").
		Time("now-15m", "now").
		Timezone(common.TimeZoneUtc).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(datasourceVar()).
		WithVariable(instanceVar())
	for _, a := range faultAnnotations() {
		b = b.Annotation(a)
	}
	return b.
		WithRow(dashboard.NewRowBuilder("Load")).
		WithPanel(series("Mutations by op and result", "Filesystem mutations per second (the scenario's load) by op and result.", "ops",
			query{`sum by (op, result) (rate(eventlogd_mutations_total{` + sel + `}[$__rate_interval]))`, "{{op}} {{result}}"})).
		WithPanel(series("Pods up", "1 per pod scraped; a crashed or paused pod drops to 0.", "short",
			query{`up{job="eventlogd",instance=~"$instance"}`, "{{instance}}"}).Max(1)).
		WithRow(dashboard.NewRowBuilder("Durability")).
		WithPanel(series("Event inserts by path and result", "fs_events inserts per second: hot path on the mutation, flush from the retry buffer.", "ops",
			query{`sum by (path, result) (rate(eventlogd_event_insert_results_total{` + sel + `}[$__rate_interval]))`, "{{path}} {{result}}"})).
		WithPanel(series("Retry-buffer depth", "Buffered events awaiting a retry insert, per pod.", "short",
			query{`drive9_sse_event_retry_buffer_depth{` + sel + `}`, "{{instance}}"})).
		WithPanel(series("Drops by tenant and reason", "Events lost from the retry buffer in each interval (the run's counted losses).", "short",
			query{`sum by (tenant_id, reason) (increase(drive9_sse_event_retry_dropped_total{` + sel + `}[$__rate_interval]))`, "{{tenant_id}} {{reason}}"})).
		WithPanel(series("Retry flushes by result", "Retry-buffer flush attempts per second.", "ops",
			query{`sum by (result) (rate(drive9_sse_event_retry_flush_total{` + sel + `}[$__rate_interval]))`, "{{result}}"})).
		WithRow(dashboard.NewRowBuilder("Delivery")).
		WithPanel(series("Events sent by tenant", "SSE file_changed events per second.", "ops",
			query{`sum by (tenant_id) (rate(drive9_sse_events_sent_total{` + sel + `}[$__rate_interval]))`, "{{tenant_id}}"})).
		WithPanel(series("Resets sent by reason", "SSE resets per second (server_restart after a pod restart, slow_consumer, seq_too_old...).", "ops",
			query{`sum by (reason) (rate(drive9_sse_resets_sent_total{` + sel + `}[$__rate_interval]))`, "{{reason}}"})).
		WithPanel(series("SSE connections", "Open event streams per pod (consumers fail over across pods).", "short",
			query{`drive9_sse_inflight_connections{` + sel + `}`, "{{instance}}"})).
		WithPanel(series("Outbox oldest-row age", "Signal-plane health during meta-DB and poller faults.", "s",
			query{`drive9_tenant_outbox_backlog_oldest_age_seconds{` + sel + `}`, "{{instance}}"})).
		WithRow(dashboard.NewRowBuilder("seqgate (seqgate run --metrics-addr)")).
		WithPanel(series("Offered, acked, failed, dropped", "Mutations per second as the harness sees them: offered by the schedule, acked, failed, and dropped by the open model (no free request slot).", "ops",
			query{`rate(seqgate_mutations_offered_total[$__rate_interval])`, "offered"},
			query{`rate(seqgate_mutations_acked_total[$__rate_interval])`, "acked"},
			query{`sum by (result) (rate(seqgate_mutations_failed_total[$__rate_interval]))`, "failed {{result}}"},
			query{`rate(seqgate_mutations_dropped_total[$__rate_interval])`, "dropped"})).
		WithPanel(series("Delivered events and consumer lag", "Events delivered to seqgate's consumers per second, and the largest consumer lag in events.", "short",
			query{`rate(seqgate_events_delivered_total[$__rate_interval])`, "delivered/s"},
			query{`seqgate_consumer_lag_events`, "max lag (events)"})).
		WithPanel(series("Schedule slip p99", "How late the harness sent mutations after their intended time: a harness that falls behind shows here, not as service latency.", "s",
			query{`histogram_quantile(0.99, sum by (le) (rate(seqgate_schedule_slip_seconds_bucket[$__rate_interval])))`, "p99"}))
}
