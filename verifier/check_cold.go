package verifier

import (
	"slices"

	"github.com/seqgate/seqgate/ledger"
)

// coldCheck counts wakeups of cold tenants' databases: a cold tenant whose proxy's conns, bytes_up or
// bytes_down grew between its first and last proxy record is one wakeup (the spec counts tenants, not
// intervals). A counter that goes down (a restarted proxy) starts a new baseline at the lower value;
// any later rise is a wakeup. The deltas are the sums of the rises; the
// witness also names the first interval in which a counter rose.
//
// A rise in an interval between two samples, at most coldListingInterval long, that overlaps a
// listing of the tenant by one of its consumers (a resync record's t_start to its t, plus
// coldListingSlack for the traffic it leaves behind) is the client's doing, not the service's: a
// listing reads the tenant's DB by definition. Such rises are not wakeups (seqgate's reading,
// since consumers resync). A longer interval could hide a wakeup away from the listing, and
// counts as before.
type coldCheck struct {
	ix       *index
	w        *witnessSet
	tenants  map[string]*coldTenant
	listings map[string][][2]int64 // tenant -> [t_start, t] of its consumers' listings
}

// coldListingSlack is how long after a listing ended a rise is still its doing; coldListingInterval
// the longest interval between two samples whose rise a listing can explain (the harness samples
// every second).
const (
	coldListingSlack    = 1_000_000_000
	coldListingInterval = 3_000_000_000
)

type coldTenant struct {
	proxy            string
	first, last      proxySample
	rise             proxySample // summed rises of each counter
	riseFrom, riseTo int64       // first interval with growth
	rose             bool
	rises            []proxySample // each interval with growth: t is its start, conns..down its rises, end its end
	ends             []int64
}

type proxySample struct {
	t, conns, up, down int64
}

type coldWitness struct {
	Tenant      string  `json:"tenant"`
	Proxy       string  `json:"proxy"`
	FirstMs     float64 `json:"first_ms"`
	LastMs      float64 `json:"last_ms"`
	Conns       int64   `json:"conns_delta"`
	BytesUp     int64   `json:"bytes_up_delta"`
	BytesDown   int64   `json:"bytes_down_delta"`
	FirstRiseMs float64 `json:"first_rise_from_ms"`
	FirstRiseTo float64 `json:"first_rise_to_ms"`
}

func newColdCheck(ix *index, w *witnessSet) *coldCheck {
	return &coldCheck{ix: ix, w: w, tenants: map[string]*coldTenant{}, listings: map[string][][2]int64{}}
}

func (c *coldCheck) cold(tenant string) bool {
	i, ok := c.ix.tenantIDs[tenant]
	return ok && c.ix.run.Listed[i].coldFirst
}

func (c *coldCheck) Observe(r *ledger.Record) {
	if r.K == ledger.KindResync && c.cold(r.Tenant) {
		c.listings[r.Tenant] = append(c.listings[r.Tenant], [2]int64{r.TStart, r.T})
		return
	}
	if r.K != ledger.KindProxy || r.Tenant == "" || !c.cold(r.Tenant) {
		return
	}
	cur := proxySample{t: r.T, conns: r.Conns, up: r.BytesUp, down: r.BytesDown}
	ct, ok := c.tenants[r.Tenant]
	if !ok {
		c.tenants[r.Tenant] = &coldTenant{proxy: r.Name, first: cur, last: cur}
		return
	}
	rise := func(now, before int64) int64 { return max(now-before, 0) } // a drop is a new baseline
	dc, du, dd := rise(cur.conns, ct.last.conns), rise(cur.up, ct.last.up), rise(cur.down, ct.last.down)
	if dc+du+dd > 0 {
		ct.rises = append(ct.rises, proxySample{t: ct.last.t, conns: dc, up: du, down: dd})
		ct.ends = append(ct.ends, cur.t)
	}
	ct.last = cur
}

// settle sums the rises no listing of the tenant explains.
func (c *coldCheck) settle(tenant string, ct *coldTenant) {
	for i, r := range ct.rises {
		from, to := r.t, ct.ends[i]
		listed := false
		for _, l := range c.listings[tenant] {
			listed = listed || (to-from <= coldListingInterval && l[0] <= to && l[1]+coldListingSlack >= from)
		}
		if listed {
			continue
		}
		if !ct.rose {
			ct.rose, ct.riseFrom, ct.riseTo = true, from, to
		}
		ct.rise.conns += r.conns
		ct.rise.up += r.up
		ct.rise.down += r.down
	}
}

func (c *coldCheck) Finish(s *Summary) {
	names := make([]string, 0, len(c.tenants))
	for t := range c.tenants {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		ct := c.tenants[t]
		c.settle(t, ct)
		if !ct.rose {
			continue
		}
		dc, du, dd := ct.rise.conns, ct.rise.up, ct.rise.down
		name := c.ix.tenantName(c.ix.tenant(t)) // the summary's name of the proxy's tenant
		s.ColdWakeups++
		s.tenant(name).ColdWakeups++
		c.w.add(WitnessColdWakeups, coldWitness{Tenant: name, Proxy: ct.proxy, FirstMs: ms(ct.first.t), LastMs: ms(ct.last.t),
			Conns: dc, BytesUp: du, BytesDown: dd, FirstRiseMs: ms(ct.riseFrom), FirstRiseTo: ms(ct.riseTo)})
	}
}

// coldCheckDesc describes cold tenants whose database was touched.
var coldCheckDesc = descriptor{
	Meaning: "a tenant with no load must never have its database woken (its proxy counters must not rise)",
	Name:    CheckColdWakeups, File: "check_cold.go", Path: "cold_wakeups",
	Value:   func(s *Summary) float64 { return float64(s.ColdWakeups) },
	Per:     func(st *Stats) float64 { return float64(st.ColdWakeups) },
	Witness: WitnessColdWakeups, Anomaly: true, Gate: gateFails,
	Title:      "cold wakeups",
	Doc:        "a tenant with `cold: true` whose proxy `conns`, `bytes_up` or `bytes_down` rose between its first and last `proxy` record: one wakeup per tenant. A counter that goes down (a restarted proxy) starts a new baseline at the lower value; any later rise is a wakeup (decision of 2026-11-30)",
	WitnessDoc: "tenant, proxy, first_ms, last_ms, conns_delta, bytes_up_delta, bytes_down_delta (the sums of the rises), first_rise_from_ms, first_rise_to_ms (the first interval that grew)",
	build:      func(e *checkEnv) checker { return newColdCheck(e.ix, e.w) },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *coldCheck) observedKinds() []string { return []string{ledger.KindResync, ledger.KindProxy} }
