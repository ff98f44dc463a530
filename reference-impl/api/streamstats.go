package api

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// streamStats exports, at scrape time, how stream reads queued: on each tenant's read gate (one
// tenant's own streams waiting for each other, the intended place) and on each pool's stream
// handle (reads of any tenant waiting for a connection: the sign of one tenant hogging the handle
// when per-tenant gates are off, or of more tenants reading at once than the handle has connections).
type streamStats struct {
	pools                 *store.Pools
	gateWaits, poolWaits  *prometheus.Desc
	poolInUse, poolOpened *prometheus.Desc
}

func newStreamStats(p *store.Pools) *streamStats {
	return &streamStats{pools: p,
		gateWaits: prometheus.NewDesc("eventlogd_stream_reads_queued_total",
			"Stream reads of a tenant that waited for that tenant's own read slots (--db-stream-tenant-max).", []string{"tenant_id"}, nil),
		poolWaits: prometheus.NewDesc("eventlogd_db_stream_waits_total",
			"Stream reads that waited for a connection of the pool's stream-read handle (--db-stream-max-open).", []string{"pool"}, nil),
		poolInUse: prometheus.NewDesc("eventlogd_db_stream_connections_in_use",
			"Connections of the pool's stream-read handle in use now.", []string{"pool"}, nil),
		poolOpened: prometheus.NewDesc("eventlogd_db_stream_connections_open",
			"Connections of the pool's stream-read handle open now.", []string{"pool"}, nil),
	}
}

func (c *streamStats) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.gateWaits
	ch <- c.poolWaits
	ch <- c.poolInUse
	ch <- c.poolOpened
}

func (c *streamStats) Collect(ch chan<- prometheus.Metric) {
	for tenant, n := range c.pools.GateWaits() {
		ch <- prometheus.MustNewConstMetric(c.gateWaits, prometheus.CounterValue, float64(n), tenant)
	}
	for pool, st := range c.pools.StreamStats() {
		ch <- prometheus.MustNewConstMetric(c.poolWaits, prometheus.CounterValue, float64(st.WaitCount), pool)
		ch <- prometheus.MustNewConstMetric(c.poolInUse, prometheus.GaugeValue, float64(st.InUse), pool)
		ch <- prometheus.MustNewConstMetric(c.poolOpened, prometheus.GaugeValue, float64(st.OpenConnections), pool)
	}
}
