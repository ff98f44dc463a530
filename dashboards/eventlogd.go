package dashboards

//lint:file-ignore SA1019 the v1 dashboard model is what Grafana's file provisioning loads; dashboardv2 needs the v2 (app platform) API

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// sel restricts a metric to the pods picked in the $instance variable.
const sel = `job="eventlogd",instance=~"$instance"`

// Eventlogd is the durability-SLI dashboard of design 000 for a fleet of eventlogd pods (or any
// service exporting drive9's metric names): insert success ratio, retry-buffer depth, flushes and
// drops, resets, outbox oldest-row age, buffer residency, SSE connections and replay handoffs, with
// firing alerts as annotations.
func Eventlogd() *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder("eventlogd: durability SLIs").
		Uid("eventlogd-sli").
		Description("Durability SLIs of design 000 (10^-4 loss budget). Rules: dashboards/rules/eventlogd.rules.yml.").
		Tags([]string{"eventlogd", "seqgate", "sli"}).
		Refresh("30s").
		Time("now-3h", "now").
		Timezone(common.TimeZoneUtc).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(datasourceVar()).
		WithVariable(instanceVar()).
		Annotation(promAnnotation("Alerts firing", "red", `ALERTS{alertstate="firing",alertname=~"Eventlogd.*"}`,
			"{{alertname}}", "{{tenant_id}} {{reason}} ({{severity}})")).
		WithRow(dashboard.NewRowBuilder("Loss budget (SLO 1 - 10^-4)")).
		WithPanel(single("Hot-path insert success (5m)", "fs_events inserts on the mutation path that succeeded; failures go to the retry buffer.", "percentunit",
			query{expr: `sum(rate(eventlogd_event_insert_results_total{` + sel + `,path="hot",result="ok"}[5m])) / sum(rate(eventlogd_event_insert_attempts_total{` + sel + `,path="hot"}[5m]))`},
			step(nil, "red"), step(cog.ToPtr(0.99), "orange"), step(cog.ToPtr(0.999), "green")).Decimals(3)).
		WithPanel(single("Loss ratio (1h)", "Retry-buffer drops / events attempted over the last hour; the budget is 1e-4.", "none",
			query{expr: `eventlogd:event_loss_ratio:rate1h`},
			step(nil, "green"), step(cog.ToPtr(1e-4), "orange"), step(cog.ToPtr(14.4e-4), "red"))).
		WithPanel(single("Events dropped (range)", "Hard loss: retry-buffer entries dropped before a durable insert, all reasons, over the dashboard range.", "short",
			query{expr: `sum(increase(drive9_sse_event_retry_dropped_total{` + sel + `}[$__range])) or vector(0)`},
			step(nil, "green"), step(cog.ToPtr(1.0), "red"))).
		WithPanel(single("Retry-buffer depth", "Entries awaiting a retry insert, all pods.", "short",
			query{expr: `sum(drive9_sse_event_retry_buffer_depth{` + sel + `})`},
			step(nil, "green"), step(cog.ToPtr(100.0), "orange"), step(cog.ToPtr(1000.0), "red"))).
		WithPanel(series("Loss-budget burn rate", "Loss ratio over each alert window divided by the 1e-4 budget. Fast page: 1h and 5m above 14.4; 6h and 30m above 6. Ticket: 1d and 2h above 3; 3d and 6h above 1.", "x",
			query{`eventlogd:event_loss_ratio:rate5m / 1e-4`, "5m"},
			query{`eventlogd:event_loss_ratio:rate1h / 1e-4`, "1h"},
			query{`eventlogd:event_loss_ratio:rate6h / 1e-4`, "6h"},
			query{`eventlogd:event_loss_ratio:rate1d / 1e-4`, "1d"}).Span(24)).
		WithRow(dashboard.NewRowBuilder("Write path and retry buffer")).
		WithPanel(series("Hot-path insert success ratio", "Per pod; the SLI's dips feed the retry buffer.", "percentunit",
			query{`sum by (instance) (rate(eventlogd_event_insert_results_total{` + sel + `,path="hot",result="ok"}[$__rate_interval])) / sum by (instance) (rate(eventlogd_event_insert_attempts_total{` + sel + `,path="hot"}[$__rate_interval]))`, "{{instance}}"}).Max(1)).
		WithPanel(series("Retry-buffer depth", "Buffered events awaiting a retry insert (in-flight entries included), per pod.", "short",
			query{`drive9_sse_event_retry_buffer_depth{` + sel + `}`, "{{instance}}"})).
		WithPanel(series("Retry flushes by result", "Retry-buffer flush attempts per second: ok, error (tenant DB still failing), tenant_gone.", "ops",
			query{`sum by (result) (rate(drive9_sse_event_retry_flush_total{` + sel + `}[$__rate_interval]))`, "{{result}}"})).
		WithPanel(series("Drops by tenant and reason", "Events lost from the retry buffer per interval, by tenant and reason (tenant_cap, global_cap, expired, stopped, shutdown, tenant_gone). Any non-zero value pages.", "short",
			query{`sum by (tenant_id, reason) (increase(drive9_sse_event_retry_dropped_total{` + sel + `}[$__rate_interval]))`, "{{tenant_id}} {{reason}}"})).
		WithPanel(series("Buffer residency (enqueue to durable insert)", "Quantiles of the time flushed entries spent in the retry buffer: a loss-budget input (events lost per crash = events/s x mean residency).", "s",
			query{`histogram_quantile(0.5, sum by (le) (rate(eventlogd_event_retry_buffer_residency_seconds_bucket{` + sel + `}[$__rate_interval])))`, "p50"},
			query{`histogram_quantile(0.99, sum by (le) (rate(eventlogd_event_retry_buffer_residency_seconds_bucket{` + sel + `}[$__rate_interval])))`, "p99"},
			query{`sum(rate(eventlogd_event_retry_buffer_residency_seconds_sum{` + sel + `}[$__rate_interval])) / sum(rate(eventlogd_event_retry_buffer_residency_seconds_count{` + sel + `}[$__rate_interval]))`, "mean"})).
		WithPanel(series("Insert latency p99", "fs_events insert latency by path (hot, flush).", "s",
			query{`histogram_quantile(0.99, sum by (le, path) (rate(eventlogd_event_insert_duration_seconds_bucket{` + sel + `}[$__rate_interval])))`, "{{path}}"})).
		WithRow(dashboard.NewRowBuilder("Streams and signal plane")).
		WithPanel(series("Resets sent by reason", "SSE reset events per second by reason; seq_too_old is the only consumer-visible loss signal.", "ops",
			query{`sum by (reason) (rate(drive9_sse_resets_sent_total{` + sel + `}[$__rate_interval]))`, "{{reason}}"})).
		WithPanel(series("Outbox oldest-row age", "Age of the oldest tenant_notify_outbox row; the alert fires above 2x --outbox-retention (2h by default).", "s",
			query{`drive9_tenant_outbox_backlog_oldest_age_seconds{` + sel + `}`, "{{instance}}"})).
		WithPanel(series("SSE connections", "Open event streams per pod, and new connections per second.", "short",
			query{`drive9_sse_inflight_connections{` + sel + `}`, "open {{instance}}"},
			query{`sum by (instance) (rate(drive9_sse_connections_total{` + sel + `}[$__rate_interval]))`, "new/s {{instance}}"})).
		WithPanel(series("Replay handoffs", "Replays ended at the per-connection replay budget per second (the client resumes from its cursor).", "ops",
			query{`sum by (instance) (rate(eventlogd_sse_replay_handoffs_total{` + sel + `}[$__rate_interval]))`, "{{instance}}"})).
		WithPanel(series("Outbox poller", "Meta-DB reads of the outbox poller by result; 1 = stalled through the admin hook.", "ops",
			query{`sum by (result) (rate(eventlogd_outbox_polls_total{` + sel + `}[$__rate_interval]))`, "{{result}}"},
			query{`max(eventlogd_outbox_poller_stalled{` + sel + `})`, "stalled"})).
		WithPanel(series("Events sent", "SSE file_changed events sent per second, by tenant.", "ops",
			query{`sum by (tenant_id) (rate(drive9_sse_events_sent_total{` + sel + `}[$__rate_interval]))`, "{{tenant_id}}"}))
}
