package verifier

import "github.com/seqgate/seqgate/verifier/ledger"

// coldCheck counts wakeups of cold tenants' databases: every interval between consecutive proxy
// records of a cold tenant in which conns, bytes_up or bytes_down grew is one wakeup (so any growth
// between the first and last record fails the run).
type coldCheck struct {
	ix   *index
	w    *witnessSet
	last map[string]*proxySample
	n    map[string]int64
}

type proxySample struct {
	t, conns, up, down int64
}

type coldWitness struct {
	Tenant    string  `json:"tenant"`
	Proxy     string  `json:"proxy"`
	FromMs    float64 `json:"from_ms"`
	ToMs      float64 `json:"to_ms"`
	Conns     int64   `json:"conns_delta"`
	BytesUp   int64   `json:"bytes_up_delta"`
	BytesDown int64   `json:"bytes_down_delta"`
}

func newColdCheck(ix *index, w *witnessSet) *coldCheck {
	return &coldCheck{ix: ix, w: w, last: map[string]*proxySample{}, n: map[string]int64{}}
}

func (c *coldCheck) cold(tenant string) bool {
	for _, t := range c.ix.run.Tenants {
		if t.ID == tenant {
			return t.Cold
		}
	}
	return false
}

func (c *coldCheck) Observe(r *ledger.Record) {
	if r.K != ledger.KindProxy || r.Tenant == "" || !c.cold(r.Tenant) {
		return
	}
	cur := proxySample{t: r.T, conns: r.Conns, up: r.BytesUp, down: r.BytesDown}
	prev, ok := c.last[r.Tenant]
	if !ok {
		c.last[r.Tenant] = &cur
		return
	}
	dc, du, dd := cur.conns-prev.conns, cur.up-prev.up, cur.down-prev.down
	if dc > 0 || du > 0 || dd > 0 {
		c.n[r.Tenant]++
		c.w.add("cold_wakeups", coldWitness{Tenant: r.Tenant, Proxy: r.Name, FromMs: ms(prev.t), ToMs: ms(cur.t),
			Conns: dc, BytesUp: du, BytesDown: dd})
	}
	*prev = cur
}

func (c *coldCheck) Finish(s *Summary) {
	for t, n := range c.n {
		s.ColdWakeups += n
		s.tenant(t).ColdWakeups += n
	}
}
