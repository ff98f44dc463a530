package verifier

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/seqgate/seqgate/ledger"
)

// Loss reasons that are not counter reasons.
const (
	ReasonCrash  = "crash"
	ReasonSilent = "silent"
)

// dropCounterSuffix names the drop counters that explain losses (drive9_sse_event_retry_dropped_total).
const dropCounterSuffix = "_retry_dropped_total"

// lossCheck computes W (acked), lost, and explains each loss: first by the drop counters of the pod
// that acked it (oldest losses first, by reason), then by a later crash of that pod; the rest is silent.
type lossCheck struct {
	ix       *index
	w        *witnessSet
	counters map[dropKey]*dropCounter
	crashes  map[string][]int64 // pod -> crash times
	started  map[string]bool    // pods that had a start record before their first sample
	metrics  int64
}

type dropKey struct{ pod, tenant, reason string }

type dropCounter struct {
	last, increase, firstIncT int64
	firstIncN                 int64 // metric record number of the first increase: orders ties in one scrape
	seen                      bool
}

// lostWitness is one lost mutation with why it is lost.
type lostWitness struct {
	MID        string  `json:"mid"`
	Tenant     string  `json:"tenant"`
	Path       string  `json:"path"`
	Op         string  `json:"op,omitempty"`
	Pod        string  `json:"pod"`
	Reason     string  `json:"reason"`
	IntendedMs float64 `json:"intended_ms"`
	SentMs     float64 `json:"sent_ms"`
	AckMs      float64 `json:"ack_ms"`
	Status     int32   `json:"status,omitempty"`
}

// unresolvedWitness is an acked mutation neither persisted nor delivered in a ledger with no end.
type unresolvedWitness struct {
	MID    string  `json:"mid"`
	Tenant string  `json:"tenant"`
	Path   string  `json:"path"`
	Pod    string  `json:"pod"`
	AckMs  float64 `json:"ack_ms"`
}

func newLossCheck(ix *index, w *witnessSet) *lossCheck {
	return &lossCheck{ix: ix, w: w, counters: map[dropKey]*dropCounter{}, crashes: map[string][]int64{}, started: map[string]bool{}}
}

func (c *lossCheck) Observe(r *ledger.Record) {
	switch r.K {
	case ledger.KindPod:
		switch r.Phase {
		case "crash":
			c.crashes[r.Pod] = append(c.crashes[r.Pod], r.T)
		case "start":
			c.started[r.Pod] = true
		}
	case ledger.KindMetric:
		if !strings.HasSuffix(r.Name, dropCounterSuffix) {
			return
		}
		c.metrics++
		k := dropKey{r.Pod, r.Labels["tenant_id"], r.Labels["reason"]}
		v := int64(r.Value)
		dc, ok := c.counters[k]
		if !ok {
			dc = &dropCounter{firstIncT: noTime}
			c.counters[k] = dc
		}
		var inc int64
		switch {
		case !dc.seen && c.started[r.Pod]:
			inc = v // the pod started in this run: its counter started at 0
		case !dc.seen:
			inc = 0 // baseline of a pod that was already running
		case v >= dc.last:
			inc = v - dc.last
		default:
			inc = v // counter reset: the pod restarted
		}
		if inc > 0 && dc.firstIncT == noTime {
			dc.firstIncT, dc.firstIncN = r.T, c.metrics
		}
		dc.increase += inc
		dc.last, dc.seen = v, true
	}
}

func (c *lossCheck) Finish(s *Summary) {
	ix := c.ix
	type group struct{ pod, tenant string }
	lostBy := map[group][]int32{}
	partial := !ix.ended || ix.interrupted
	for id := range ix.muts.len() {
		m := ix.muts.at(int32(id))
		if !m.inW() {
			continue
		}
		ts := s.tenant(ix.tenantName(c.ix.muts.tenantOf(m)))
		s.Acked++
		ts.Acked++
		if m.persisted() {
			continue
		}
		if partial {
			// no end (or an interrupted one): not provably lost, unresolved
			s.Unresolved++
			ts.Unresolved++
			c.w.at(WitnessUnresolved, c.ix.done(m))
			c.w.add(WitnessUnresolved, unresolvedWitness{MID: c.ix.mid(m), Tenant: ix.tenantName(c.ix.muts.tenantOf(m)), Path: c.ix.path(m),
				Pod: ix.podName(m), AckMs: ms(c.ix.done(m))})
			continue
		}
		g := group{ix.podName(m), ix.tenantNames[c.ix.muts.tenantOf(m)]} // the ledger's id: drop counters are labelled with it
		lostBy[g] = append(lostBy[g], int32(id))
	}
	// A consumer's acked is its tenant's: the acked events it was there to receive, beside its
	// deliveries (it stayed 0, so per_consumer.<id>.acked could not be compared with anything).
	for _, cs := range ix.cons {
		if ts, ok := s.PerTenant[ix.tenantName(cs.tenant)]; ok {
			s.consumer(cs.id).Acked = ts.Acked
		}
	}
	reason := map[int32]string{}
	for g, ids := range lostBy {
		slices.SortStableFunc(ids, func(a, b int32) int { return cmp.Compare(ix.sent(ix.muts.at(a)), ix.sent(ix.muts.at(b))) })
		// 1. counters of the acking pod, reasons in the order they first increased (increases seen in
		// the same scrape cannot be ordered by the ledger: they are taken in ledger order).
		var keys []dropKey
		for k, dc := range c.counters {
			if k.pod == g.pod && k.tenant == g.tenant && dc.increase > 0 {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(a, b dropKey) int {
			if d := cmp.Compare(c.counters[a].firstIncT, c.counters[b].firstIncT); d != 0 {
				return d
			}
			return cmp.Compare(c.counters[a].firstIncN, c.counters[b].firstIncN)
		})
		next := 0
		for _, k := range keys {
			for left := c.counters[k].increase; left > 0 && next < len(ids); left-- {
				reason[ids[next]] = k.reason
				next++
			}
		}
		// 2. a later crash of the acking pod; 3. silent.
		for _, id := range ids[next:] {
			m := ix.muts.at(id)
			reason[id] = ReasonSilent
			for _, ct := range c.crashes[g.pod] {
				if ct >= c.ix.done(m) { // a crash after the ack: the acked event died in the buffer
					reason[id] = ReasonCrash
					break
				}
			}
		}
	}
	lostIDs := make([]int32, 0, len(reason))
	for id := range reason {
		lostIDs = append(lostIDs, id)
	}
	slices.SortFunc(lostIDs, func(a, b int32) int { return cmp.Compare(ix.sent(ix.muts.at(a)), ix.sent(ix.muts.at(b))) })
	for _, id := range lostIDs {
		m := ix.muts.at(id)
		why := reason[id]
		ts := s.tenant(ix.tenantName(c.ix.muts.tenantOf(m)))
		s.Lost++
		ts.Lost++
		s.LostByReason[why]++
		ts.LostByReason[why]++
		wit := lostWitness{MID: c.ix.mid(m), Tenant: ix.tenantName(c.ix.muts.tenantOf(m)), Path: c.ix.path(m), Pod: ix.podName(m),
			Reason: why, IntendedMs: ms(c.ix.intended(id)), SentMs: ms(c.ix.sent(m)), AckMs: ms(c.ix.done(m)), Status: int32(c.ix.muts.status(m))}
		c.w.add(WitnessLost, wit)
		c.w.at(WitnessLost, c.ix.done(m))
		if why == ReasonSilent {
			c.w.add(WitnessSilent, wit)
			c.w.at(WitnessSilent, c.ix.done(m))
		}
	}
	// The spec's lost_by_reason always names crash and silent, so a zero is visible.
	for _, st := range append([]*Stats{&s.Stats}, statsOf(s.PerTenant)...) {
		for _, k := range []string{ReasonCrash, ReasonSilent} {
			if _, ok := st.LostByReason[k]; !ok {
				st.LostByReason[k] = 0
			}
		}
		if st.Acked > 0 {
			st.EventLossFraction = float64(st.Lost) / float64(st.Acked)
		}
	}
}

// statsOf lists the per-scope stats of a map, in no particular order.
func statsOf(m map[string]*Stats) []*Stats {
	out := make([]*Stats, 0, len(m))
	for _, st := range m {
		out = append(out, st)
	}
	return out
}

// lossBudgetCheck describes the loss budget: the fraction of W lost.
var lossBudgetCheck = descriptor{
	Meaning: "the fraction of acknowledged writes whose event never persisted must stay within the loss budget",
	Name:    CheckLossBudget, File: "check_loss.go", Path: "event_loss_fraction",
	Value:      func(s *Summary) float64 { return s.EventLossFraction },
	Per:        func(st *Stats) float64 { return float64(st.Lost) },
	NeedsAudit: true, Gate: gateFails, Max: func(s *Summary) float64 { return s.Budget },
	FailsDoc:   "when fraction > budget",
	Title:      "loss",
	Doc:        "m in W not persisted. Explained first by drop counters (`*_retry_dropped_total{tenant_id,reason}` increases on the pod that acked m; each increase explains one of that pod's and tenant's losses, oldest first, reasons in the order they first rose), then by a `crash` record of that pod at or after m's ack; the rest is silent",
	WitnessDoc: "`lost` and `silent`: mid, tenant, path, pod (that acked it), reason, intended_ms, sent_ms, ack_ms, status",
	build:      func(e *checkEnv) checker { return newLossCheck(e.ix, e.w) },
}

// silentCheck describes losses nothing explains.
var silentCheck = descriptor{
	Meaning: "no acknowledged write may be lost without an explanation (a drop counter or a pod crash)",
	Name:    CheckSilent, File: "check_loss.go", Path: "lost_by_reason.silent",
	Value:   func(s *Summary) float64 { return float64(s.LostByReason[ReasonSilent]) },
	Per:     func(st *Stats) float64 { return float64(st.LostByReason[ReasonSilent]) },
	Witness: WitnessSilent, Anomaly: true, NeedsAudit: true, Gate: gateFails,
	FailsDoc: "when any silent loss", Title: "loss",
}

// lostCheck describes every loss, explained or not: what loss_budget judges.
var lostCheck = descriptor{
	Meaning: "acknowledged writes whose event is in neither the database audit nor any consumer's stream",
	Name:    "lost", File: "check_loss.go", Path: "lost", Covers: []string{"acked", "lost_by_reason.<key>"},
	Value:   func(s *Summary) float64 { return float64(s.Lost) },
	Witness: WitnessLost, Anomaly: true, NeedsAudit: true, Title: "loss",
}

// unresolvedCheck describes acked mutations a ledger with no end leaves open.
var unresolvedCheck = descriptor{
	Meaning: "in a run cut short, acknowledged writes neither stored nor delivered yet (not counted as lost)",
	Name:    "unresolved", File: "check_loss.go", Path: "unresolved",
	Value:   func(s *Summary) float64 { return float64(s.Unresolved) },
	Witness: WitnessUnresolved, Anomaly: true, NeedsAudit: true,
	Report:     func(s *Summary) string { return fmt.Sprintf("unresolved %d", s.Unresolved) },
	Title:      "unresolved",
	Doc:        "with no end (or an interrupted one), m in W not persisted",
	WitnessDoc: "`unresolved`: mid, tenant, path, pod, ack_ms",
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *lossCheck) observedKinds() []string { return []string{ledger.KindPod, ledger.KindMetric} }
