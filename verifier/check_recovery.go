package verifier

import (
	"slices"
	"strconv"
	"time"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/threshold"
)

// recoveryGrace is how long after a fault's stop a consumer's cursor keeps being logged once frames of
// later mutations arrive: longer than a request may take to commit (the harness's request timeout,
// 10 s by default) plus a second of audit timestamp skew or rounding.
const recoveryGrace = int64(15 * time.Second)

// windowCheck follows the faults: each fault's span, its recovery_ms (from
// its stop until every durable consumer of the affected tenants had a cursor at the head seq the
// tenant had at the stop) and, when a threshold names one, the numbers of each window: fault (inside
// some fault's span), recovery (from a stop until its recovery ended) and steady (the rest).
//
// The head seq at a stop is the highest seq of the tenant's audit rows persisted at or before it
// (created_unix_ns, else the mutation's ack), known only after the run; so from each stop on, every
// affected consumer's cursor is logged where it reaches a new high, until a frame of a mutation sent
// after the stop arrives (its seq is above that head), plus recoveryGrace: a mutation sent before the
// stop can commit after one sent just after it, and an audit timestamp (the service's clock, taken
// when it made the event, before the commit; some servers keep whole seconds) can count a row
// committed just after the stop as before it, so the first later frame alone may still be below the
// head. The log is as long as the backlog a fault leaves plus the grace, not the run. A fault whose
// target is a tenant id affects that tenant; any other target (a pod, a database, the network)
// affects every tenant.
type windowCheck struct {
	ix       *index
	lat      *latencyCheck
	drops    *dropsCheck
	spans    []*faultSpan
	open     map[string]*faultSpan // fault id -> its started, not yet stopped span
	trackers map[int32][]*tracker  // per consumer, the trackers still logging
	logging  int                   // trackers still logging, over all consumers
	all      []*tracker
	nth      map[string]int // spans per fault id, to name repeats
}

type faultSpan struct {
	info        FaultInfo
	start, stop int64 // stop noTime: never stopped
	tenants     []int32
	tenant      string // the tenant id it affects, "" for every tenant
	reached     bool   // tenants are the start record's reached list (a DB address several tenants share)
	recoveryEnd int64  // noTime: not computed (no stop)
}

// faultTenant is the tenant a fault record names: its tenant field (seqgate's addition, beside a
// target that may be a slot name such as tenant_1), else its target.
func faultTenant(r *ledger.Record) string {
	if r.Tenant != "" {
		return r.Tenant
	}
	return r.Target
}

// tracker logs one consumer's cursor highs after one fault's stop.
type tracker struct {
	span    *faultSpan
	cons    int32
	log     []cursorHigh
	logging bool
}

type cursorHigh struct{ seq, t int64 }

func newWindowCheck(ix *index, lat *latencyCheck, drops *dropsCheck) *windowCheck {
	return &windowCheck{ix: ix, lat: lat, drops: drops, open: map[string]*faultSpan{}, trackers: map[int32][]*tracker{}, nth: map[string]int{}}
}

func (c *windowCheck) Observe(r *ledger.Record) {
	switch r.K {
	case ledger.KindFault:
		c.fault(r)
	case ledger.KindEv, ledger.KindReset, ledger.KindConn:
		f := c.ix.cur
		if c.logging == 0 || f.cons < 0 || len(c.trackers[f.cons]) == 0 {
			return
		}
		sentT := int64(noTime) // the send time of the mutation this frame delivers, when known
		if r.K == ledger.KindEv && f.id >= 0 {
			if m := c.ix.mutationAt(f.id); m.flags&fHasMut != 0 {
				sentT = c.ix.sent(m)
			}
		}
		ts := c.trackers[f.cons]
		keep := ts[:0]
		for _, tr := range ts {
			if last := tr.log[len(tr.log)-1]; f.after > last.seq {
				tr.log = append(tr.log, cursorHigh{seq: f.after, t: r.T})
			}
			if sentT != noTime && sentT > tr.span.stop+recoveryGrace {
				tr.logging = false
				c.logging--
				continue
			}
			keep = append(keep, tr)
		}
		clear(ts[len(keep):])
		c.trackers[f.cons] = keep
	}
}

func (c *windowCheck) fault(r *ledger.Record) {
	switch r.Phase {
	case "start":
		if _, ok := c.open[r.ID]; ok {
			return // started twice: the first start rules
		}
		c.nth[r.ID]++
		name := r.ID
		if n := c.nth[r.ID]; n > 1 {
			name += "#" + strconv.Itoa(n)
		}
		sp := &faultSpan{info: FaultInfo{ID: name, Kind: r.Kind, Target: r.Target, StartMs: ms(r.T)}, start: r.T, stop: noTime, recoveryEnd: noTime, tenant: faultTenant(r)}
		for _, id := range r.Reached {
			if ti, ok := c.ix.tenantRef(id); ok && !slices.Contains(sp.tenants, ti) {
				sp.tenants = append(sp.tenants, ti)
			}
		}
		if len(sp.tenants) > 0 {
			sp.reached = true
		} else if ti, ok := c.ix.tenantRef(faultTenant(r)); ok {
			sp.tenants = []int32{ti}
		} else {
			for ti := range int32(len(c.ix.tenantNames)) {
				sp.tenants = append(sp.tenants, ti)
			}
		}
		c.open[r.ID] = sp
		c.spans = append(c.spans, sp)
	case "stop":
		sp, ok := c.open[r.ID]
		if !ok {
			return // a stop without a start has no span
		}
		delete(c.open, r.ID)
		sp.stop = r.T
		stop := ms(r.T)
		sp.info.StopMs = &stop
		for _, cs := range c.ix.cons {
			if !slices.Contains(sp.tenants, cs.tenant) {
				continue
			}
			tr := &tracker{span: sp, cons: cs.idx, log: []cursorHigh{{seq: cs.cursor, t: r.T}}, logging: true}
			c.trackers[cs.idx] = append(c.trackers[cs.idx], tr)
			c.all = append(c.all, tr)
			c.logging++
		}
	}
}

func (c *windowCheck) Finish(s *Summary) {
	ix := c.ix
	end := ix.lastT
	if ix.ended {
		end = max(end, ix.endT)
	}
	heads := map[*faultSpan]map[int32]int64{}
	for _, sp := range c.spans {
		if sp.reached {
			for _, ti := range sp.tenants {
				sp.info.Tenants = append(sp.info.Tenants, ix.tenantName(ti))
			}
		} else if ti, ok := ix.tenantRef(sp.tenant); ok {
			sp.info.Tenants = []string{ix.tenantName(ti)}
		} else {
			sp.info.Tenants = []string{"*"} // every tenant
		}
		if sp.stop == noTime {
			continue
		}
		h := map[int32]int64{}
		for _, ti := range sp.tenants {
			var head int64
			ix.auditOf(ti).rows.each(func(row auditRow) bool {
				if row.seq > head && (ix.persistedAt(row) <= sp.stop || c.heldBack(row, sp)) {
					head = row.seq
				}
				return true
			})
			h[ti] = head
		}
		heads[sp] = h
		sp.recoveryEnd = sp.stop
		sp.info.Recovered = true
	}
	for _, tr := range c.all {
		cs := ix.cons[tr.cons]
		if !cs.durable || !cs.hasRecord {
			continue
		}
		sp := tr.span
		head := heads[sp][cs.tenant]
		at := int64(noTime)
		for _, h := range tr.log {
			if h.seq >= head {
				at = h.t
				break
			}
		}
		if gt, gone := ix.deletedAt(cs.tenant); at == noTime && gone {
			// its tenant was deleted: its stream ended there, and nothing it missed can be recovered
			at = max(sp.stop, min(gt, end))
		}
		if at == noTime {
			sp.info.Recovered = false
			at = max(end, sp.stop)
		}
		sp.recoveryEnd = max(sp.recoveryEnd, at)
	}
	for _, sp := range c.spans {
		if sp.stop != noTime {
			r := ms(sp.recoveryEnd - sp.stop)
			sp.info.RecoveryMs = &r
			s.RecoveryMs[sp.info.ID] = r
			s.RecoveryMaxMs = max(s.RecoveryMaxMs, r)
			if !sp.info.Recovered {
				s.UnrecoveredFaults++
			}
		} else {
			sp.recoveryEnd = noTime
		}
		s.Faults = append(s.Faults, sp.info)
	}
	if ix.windows {
		c.windows(s, end)
	}
}

// heldBack reports whether row is the event of an acked write the fault held back: sent before
// the fault's stop (so it was owed when the fault healed) and answered after its start. A stall
// holds every write in flight; its rows commit after the stop, yet the consumers owe them from the
// stop on, so recovery runs until they arrive (a 20 s stall does not recover "in 0 ms" because
// nothing had committed before the stop).
func (c *windowCheck) heldBack(row auditRow, sp *faultSpan) bool {
	m := c.ix.muts.at(row.id)
	if m.flags&fHasMut == 0 || !m.inW() {
		return false
	}
	sent := c.ix.muts.sent(m)
	return sent != noTime && sent < sp.stop && c.ix.done(m) >= sp.start
}

// windowOf names the window of a delivery whose write was due at from and delivered at to: fault
// when [from, to] overlaps a fault's span, else recovery when it overlaps a recovery, else steady.
// A write acked just before a fault but delivered inside it waited out the fault: its latency is the
// fault's, not the steady state's.
func (c *windowCheck) windowOf(from, to, end int64) int {
	rec := false
	for _, sp := range c.spans {
		stop := sp.stop
		if stop == noTime {
			stop = end + 1
		}
		if from < stop && to >= sp.start {
			return winFault
		}
		if sp.recoveryEnd != noTime && from < sp.recoveryEnd && to >= sp.stop {
			rec = true
		}
	}
	if rec {
		return winRecovery
	}
	return winSteady
}

// window names the window of time x: fault inside a fault's span, recovery inside a recovery, else
// steady.
func (c *windowCheck) window(x, end int64) int {
	rec := false
	for _, sp := range c.spans {
		stop := sp.stop
		if stop == noTime {
			stop = end + 1
		}
		if x >= sp.start && x < stop {
			return winFault
		}
		if sp.recoveryEnd != noTime && x >= sp.stop && x < sp.recoveryEnd {
			rec = true
		}
	}
	if rec {
		return winRecovery
	}
	return winSteady
}

const (
	winSteady = iota
	winFault
	winRecovery
)

func (c *windowCheck) windows(s *Summary, end int64) {
	ix := c.ix
	names := threshold.Windows // steady, fault, recovery: the order of the win constants
	var ws [3]WindowStats
	var lat, issue [3]*hist
	for i := range 3 {
		lat[i], issue[i] = newHist(), newHist()
	}
	partial := !ix.ended || ix.interrupted
	for _, t := range c.drops.mutT {
		ws[c.window(t, end)].Mutations++
	}
	for _, t := range c.drops.dropT {
		ws[c.window(t, end)].Drops++
	}
	for id := range int32(ix.muts.len()) {
		m := ix.muts.at(id)
		if m.flags&fHasMut == 0 {
			continue
		}
		intended := c.ix.intended(id)
		w := &ws[c.window(intended, end)]
		record(issue[c.window(intended, end)], subSat(c.ix.done(m), intended))
		if !m.inW() {
			continue
		}
		w.Acked++
		if !m.persisted() {
			if partial {
				w.Unresolved++
			} else {
				w.Lost++
			}
		}
	}
	for _, smp := range c.lat.samples {
		m := ix.muts.at(smp.id)
		wi := c.windowOf(c.ix.intended(smp.id), c.ix.done(m)+smp.d, end)
		ws[wi].Deliveries++
		if smp.d == 0 {
			ws[wi].DeliveredBeforeAck++
		}
		record(lat[wi], smp.d)
	}
	s.Windows = map[string]*WindowStats{}
	for i, name := range names {
		w := ws[i]
		w.DroppedFraction = fraction(w.Drops, w.Drops+w.Mutations)
		w.EventLossFraction = fraction(w.Lost, w.Acked)
		w.LatencyMs, w.IssueLatencyMs = quantiles(lat[i]), quantiles(issue[i])
		s.Windows[name] = &w
	}
}

// recoveryCheckDesc describes each fault's recovery.
var recoveryCheckDesc = descriptor{
	Meaning: "how long after each fault healed the consumers caught up with what was owed to them",
	Name:    "recovery", File: "check_recovery.go", Path: "recovery_max_ms", Covers: []string{"recovery_ms.<key>"},
	Value:      func(s *Summary) float64 { return s.RecoveryMaxMs },
	Report:     recoveryLine,
	FailsDoc:   "(`recovery_max_ms`, `recovery_ms.<id>`, `unrecovered_faults`, `<field>@<window>`)",
	Title:      "faults and windows",
	Doc:        "each `fault` start..stop span (per id; a repeated id is named `id#2`, ...). **recovery_ms**: from its stop until every durable consumer of the affected tenants had a cursor at the head seq its tenant owed at the stop: the highest seq of the tenant's audit rows persisted at or before the stop, or of an acked write the fault held back (sent before the stop, answered after the fault's start), so a stall that held every write recovers only when those arrive. Affected tenants (seqgate's reading): the tenants the start record's `reached` lists, when it lists any the run declares (ids it does not declare are left out); else the fault's `tenant`, or its `target` when it is a tenant's id or scenario name (`tenant_2`, what `seqgate run` writes); else every tenant. A consumer that never gets there leaves the fault unrecovered; its recovery runs to the end of the run. A consumer's cursor is followed until 15 s after the first frame of a mutation sent after the stop (a request can commit up to its timeout after it was sent, and the audit's `created_unix_ns` is the service's clock before the commit, whole seconds on some servers), so a row committed just after the stop that the audit dates before it does not leave a caught-up consumer \"unrecovered\". **Windows**: fault = inside a span, recovery = from a stop to the end of its recovery, steady = the rest; arrivals (mutations, drops) by `intended_t`; a delivery is in the fault window when its write's life, from `intended_t` to the delivery, overlaps a fault's span, else in recovery when it overlaps a recovery, else steady (a write acked just before a fault and delivered after it is the fault's latency, not the steady state's)",
	WitnessDoc: "– (`faults` in the summary)",
}

// unrecoveredCheck describes faults whose consumers never caught up.
var unrecoveredCheck = descriptor{
	Meaning: "faults after which some consumer never caught up by the end of the run",
	Name:    "unrecovered_faults", File: "check_recovery.go", Path: "unrecovered_faults",
	Value:   func(s *Summary) float64 { return float64(s.UnrecoveredFaults) },
	Anomaly: true, Title: "faults and windows",
	build: func(e *checkEnv) checker { e.win = newWindowCheck(e.ix, e.lat, e.drops); return e.win },
}

// observedKinds is the kinds Observe reads (dispatch.go).
func (c *windowCheck) observedKinds() []string {
	return []string{ledger.KindFault, ledger.KindEv, ledger.KindReset, ledger.KindConn}
}
