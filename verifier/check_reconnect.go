package verifier

import (
	"fmt"
	"slices"

	"github.com/seqgate/seqgate/ledger"
)

// reconnectCheck measures reconnect storms: the most conn opens in any 1-second window, and the total
// reconnects (opens after each consumer's first).
type reconnectCheck struct {
	ix    *index
	w     *witnessSet
	opens map[int32][]int64 // per consumer, open times
}

type stormWitness struct {
	FromMs float64 `json:"from_ms"`
	Opens  int64   `json:"opens_in_1s"`
}

func newReconnectCheck(ix *index, w *witnessSet) *reconnectCheck {
	return &reconnectCheck{ix: ix, w: w, opens: map[int32][]int64{}}
}

func (c *reconnectCheck) Observe(r *ledger.Record) {
	if r.K == ledger.KindConn && r.Phase == "open" {
		c.opens[c.ix.cur.cons] = append(c.opens[c.ix.cur.cons], r.T)
	}
}

func (c *reconnectCheck) Finish(s *Summary) {
	var all []int64
	byTenant := map[int32][]int64{}
	for ci, ts := range c.opens {
		cs := c.ix.cons[ci]
		all = append(all, ts...)
		byTenant[cs.tenant] = append(byTenant[cs.tenant], ts...)
		max, _ := maxPerSecond(ts)
		rc := Reconnects{Opens: int64(len(ts)), Total: int64(len(ts) - 1), MaxPerS: max}
		s.consumer(cs.id).Reconnects = rc
		tst := s.tenant(c.ix.tenantName(cs.tenant))
		tst.Reconnects.Opens += rc.Opens
		tst.Reconnects.Total += rc.Total
		s.Reconnects.Opens += rc.Opens
		s.Reconnects.Total += rc.Total
	}
	for ti, ts := range byTenant {
		s.tenant(c.ix.tenantName(ti)).Reconnects.MaxPerS, _ = maxPerSecond(ts)
	}
	var from int64
	s.Reconnects.MaxPerS, from = maxPerSecond(all)
	if s.Reconnects.Total > 0 {
		c.w.add(WitnessReconnects, stormWitness{FromMs: ms(from), Opens: s.Reconnects.MaxPerS})
	}
}

// maxPerSecond returns the most times in any window [t, t+1s) and where that window starts.
func maxPerSecond(ts []int64) (int64, int64) {
	ts = slices.Clone(ts)
	slices.Sort(ts)
	var best, at int64
	lo := 0
	for hi := range ts {
		for ts[hi]-ts[lo] >= 1e9 {
			lo++
		}
		if n := int64(hi - lo + 1); n > best {
			best, at = n, ts[lo]
		}
	}
	return best, at
}

// reconnectCheckDesc describes connection churn.
var reconnectCheckDesc = descriptor{
	Meaning: "consumer reconnections, and the most in any one second (a reconnect storm)",
	Name:    "reconnects", File: "check_reconnect.go", Path: "reconnects.max_per_s", Covers: []string{"reconnects.total", "reconnects.opens"},
	Value: func(s *Summary) float64 { return float64(s.Reconnects.MaxPerS) },
	Report: func(s *Summary) string {
		return fmt.Sprintf("total %d, opens %d, max %d opens/s", s.Reconnects.Total, s.Reconnects.Opens, s.Reconnects.MaxPerS)
	},
	Title:      "reconnects",
	Doc:        "most `conn` opens in any half-open window [t, t+1 s); total = `open` records after each consumer's first",
	WitnessDoc: "from_ms, opens_in_1s (the busiest window, when there were reconnects)",
	build:      func(e *checkEnv) checker { return newReconnectCheck(e.ix, e.w) },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *reconnectCheck) observedKinds() []string { return []string{ledger.KindConn} }
