package report

import (
	"fmt"
	"math"
)

// Bounds of the per-tenant series: which tenants and consumers are followed over time, so a run
// with many tenants keeps a bounded report (the panels show the top ones of these; see tenantPanels).
const (
	maxTrackedTenants   = 256 // the first tenants of the ledger followed over time
	maxTrackedConsumers = 8   // per followed tenant, the first consumers followed over time
)

// tenantSeries is a followed tenant's place in the buckets' per-tenant slices.
type tenantSeries struct {
	slot int   // index into bucket.head
	cons []int // its followed consumers' indexes into bucket.lag and bucket.cur
}

// trackTenant gives tenant ti a slot if there is one left.
func (c *Collector) trackTenant(ti int32) {
	t := c.tenants[ti]
	if t.series != nil {
		return
	}
	if c.nTracked >= maxTrackedTenants {
		if !t.untracked {
			t.untracked = true
			c.d.UntrackedTenants++
			c.partial(fmt.Sprintf("more than %d tenants: only the first %d of the ledger have per-tenant series", maxTrackedTenants, maxTrackedTenants))
		}
		return
	}
	t.series = &tenantSeries{slot: c.nTracked}
	c.nTracked++
	c.d.tracked = append(c.d.tracked, trackedTenant{ID: t.id, slot: t.series.slot})
}

// trackConsumer gives ci a slot among its tenant's followed consumers if there is one left.
func (c *Collector) trackConsumer(ci *consumerInfo, id string) {
	t := c.tenants[ci.tenant]
	c.trackTenant(ci.tenant)
	if t.series == nil || ci.slot >= 0 {
		return
	}
	tt := &c.d.tracked[t.series.slot]
	if len(t.series.cons) >= maxTrackedConsumers {
		tt.MoreConsumers++
		return
	}
	ci.slot = c.nConsSlots
	c.nConsSlots++
	t.series.cons = append(t.series.cons, ci.slot)
	tt.Consumers = append(tt.Consumers, trackedConsumer{ID: id, slot: ci.slot})
}

// trackedTenant is a tenant with series over time, and its followed consumers.
type trackedTenant struct {
	ID            string
	Consumers     []trackedConsumer
	MoreConsumers int // its consumers beyond maxTrackedConsumers, not followed
	slot          int
}

type trackedConsumer struct {
	ID   string
	slot int
}

// setMax raises s[i] to v, growing s (new cells hold fill).
func setMax[T int64 | float64](s []T, i int, v T, fill T) []T {
	for len(s) <= i {
		s = append(s, fill)
	}
	if s[i] == fill || v > s[i] {
		s[i] = v
	}
	return s
}

// mergeMax folds o into s cell by cell (the larger value; fill is "none").
func mergeMax[T int64 | float64](s, o []T, fill T) []T {
	for i, v := range o {
		if v != fill {
			s = setMax(s, i, v, fill)
		}
	}
	return s
}

var nan = math.NaN()

// consumerLag notes a first delivery's latency (µs) for consumer slot, in the bucket of its ack.
func (b *bucket) consumerLag(slot int, us float64) {
	for len(b.lag) <= slot {
		b.lag = append(b.lag, nan)
	}
	if math.IsNaN(b.lag[slot]) || us > b.lag[slot] {
		b.lag[slot] = us
	}
}

// mergeLag folds o's per-consumer lag into b's.
func (b *bucket) mergeLag(o *bucket) {
	for i, v := range o.lag {
		if !math.IsNaN(v) {
			b.consumerLag(i, v)
		}
	}
}
