package synth

import (
	"math"

	"github.com/seqgate/seqgate/ledger"
)

// mainPhase generates the open-model load: mutations arrive at the configured rate (plus the extra
// structural, silent and ambiguous ones), each tenant's rows are sequenced in commit order, and
// every consumer of the tenant receives them.
func (g *gen) mainPhase() error {
	cfg := g.cfg
	extra := pStructural + pChmod + pAmbiguous
	meanGap := 1e9 / (cfg.Rate * (1 + extra))
	now := loadStart
	for w := 0; w < g.mainN; {
		now += int64(g.rng.ExpFloat64()*meanGap) + 1
		if err := g.advance(now); err != nil {
			return err
		}
		if w == g.crashAtW && g.crashPod >= 0 && !g.crashed {
			g.planCrash(now)
		}
		if n := g.recovered[w]; n > 0 {
			g.recovered[w] = n - 1
			g.ambiguous(now, g.active[g.rng.IntN(len(g.active))], true)
			continue
		}
		u := g.rng.Float64() * (1 + extra)
		t := g.active[g.rng.IntN(len(g.active))]
		switch {
		case u < pStructural:
			g.structural(now, t)
		case u < pStructural+pChmod:
			g.chmod(now, t)
		case u < extra:
			g.ambiguous(now, t, false)
		default:
			v, isVictim := g.victims[w]
			if isVictim {
				t = v.tenant
			}
			g.event(now, t, v, -1)
			w++
		}
	}
	return nil
}

// tailPhase: after a pause, each active tenant's closing events (the last one, or the last few for
// tenants with a stalled consumer), so every skip is followed by a frame that moves the cursor on.
func (g *gen) tailPhase() error {
	now := g.maxKey + sec
	if err := g.advance(now); err != nil {
		return err
	}
	g.inTail = true
	for k := 0; ; k++ {
		any := false
		for _, t := range g.active {
			if k < t.tail {
				any = true
				now += 2 * ms
				if err := g.advance(now); err != nil {
					return err
				}
				g.event(now, t, victim{}, k)
			}
		}
		if !any {
			return nil
		}
	}
}

// unplaced counts consumer anomalies that did not land (the run was too short for them).
func (g *gen) unplaced() int {
	n := 0
	for _, t := range g.active {
		for _, c := range t.cons {
			n += len(c.arms) - c.next
			if c.pending != nil || c.cover != nil {
				n++
			}
		}
	}
	return n
}

// newMut fills the common part of a mutation record.
func (g *gen) newMut(now int64, t *tenantState, op string, pod int) (*ledger.Record, string) {
	g.nmut++
	mid := g.mid(g.nmut)
	r := g.q.rec()
	*r = ledger.Record{K: ledger.KindMut, MID: mid, Tenant: t.id, Op: op, Path: g.path(t, mid), IntendedT: now,
		T: now + g.sendDelay(), Res: ledger.ResOK, Status: 200, Pod: g.pods[pod]}
	t.up += 420
	t.down += 260
	if g.nmut%500 == 0 {
		t.conns++
	}
	return r, mid
}

// commit sequences a row in t's domain (commit order = seq order) and records it for the audit.
func (g *gen) commit(t *tenantState, sendT int64, mut int, op uint8) (seq, at int64) {
	d := t.dom
	at = max(sendT+g.jitter(ms, 4*ms), d.lastCommit+1000)
	d.lastCommit = at
	d.seq++
	t.rows = append(t.rows, row{seq: d.seq, created: at, mut: uint32(mut), op: op})
	return d.seq, at
}

// event writes one event-producing mutation (W) and its deliveries, or its loss.
func (g *gen) event(now int64, t *tenantState, v victim, tailK int) {
	pod := g.route()
	if v.kind != vNone {
		pod = v.pod
	}
	opIdx := g.rng.IntN(len(eventOps))
	r, mid := g.newMut(now, t, eventOps[opIdx], pod)
	if v.kind != vNone {
		r.DoneT = r.T + g.jitter(ms, 4*ms) + g.jitter(500_000, 2*ms)
		g.push(r.DoneT, r)
		reason := v.reason
		switch v.kind {
		case vCounter:
			g.drops = append(g.drops, drop{at: r.DoneT + 2*sec, series: g.seriesIdx[[3]string{g.pods[pod], t.id, v.reason}]})
		case vCrash:
			reason = "crash"
		case vSilent:
			reason = "silent"
		}
		g.truth.Instances.Lost = append(g.truth.Instances.Lost, LostMut{MID: mid, Tenant: t.id, Pod: g.pods[pod], Reason: reason, ack: r.DoneT})
		return
	}
	seq, at := g.commit(t, r.T, g.nmut, uint8(opIdx))
	r.DoneT = at + g.jitter(500_000, 2500_000)
	g.push(r.DoneT, r)
	e := evInfo{seq: seq, commit: at, sendT: r.T, done: r.DoneT, path: r.Path, op: r.Op, tenant: t, tailK: tailK}
	for _, c := range t.cons {
		c.onEvent(&e)
	}
	t.lastPath = e.path
}

// structural writes a rename/delete/mkdir/copy: a row, delivered as reset(structural_change).
func (g *gen) structural(now int64, t *tenantState) {
	opIdx := g.rng.IntN(len(structuralOps))
	r, _ := g.newMut(now, t, structuralOps[opIdx], g.route())
	if r.Op == "rename" || r.Op == "copy" {
		r.Src = t.lastPath
		if r.Src == "" {
			r.Src = r.Path + ".src"
		}
	}
	if r.Op == "rename" {
		for i := range g.truth.misses {
			if m := &g.truth.misses[i]; m.ev.Tenant == t.id && m.ev.Path == r.Src && r.T < m.t {
				m.moved = true // moved away before the listing ended: it owed nothing
			}
		}
	}
	seq, at := g.commit(t, r.T, g.nmut, uint8(len(eventOps)+opIdx))
	r.DoneT = at + g.jitter(500_000, 2500_000)
	g.push(r.DoneT, r)
	e := evInfo{seq: seq, commit: at, path: r.Path, op: r.Op, tenant: t, tailK: -1, reset: true}
	for _, c := range t.cons {
		c.onStructural(&e)
	}
}

// chmod is a silent op: acked, no row, nothing delivered.
func (g *gen) chmod(now int64, t *tenantState) {
	r, _ := g.newMut(now, t, "chmod", g.route())
	r.DoneT = r.T + g.jitter(ms, 4*ms)
	g.push(r.DoneT, r)
}

// ambiguous writes an event mutation whose answer was an error or a timeout. Normally nothing
// persisted; recovered ones persisted anyway and are delivered (spec: recovered).
func (g *gen) ambiguous(now int64, t *tenantState, recovered bool) {
	opIdx := 0
	r, mid := g.newMut(now, t, eventOps[opIdx], g.route())
	timeout := recovered || g.rng.IntN(2) == 0
	if timeout {
		r.Res, r.Status = ledger.ResTimeout, 0
		r.DoneT = r.T + 10*sec // the client gave up
	} else {
		r.Res, r.Status = ledger.ResErr, 503
		r.DoneT = r.T + g.jitter(ms, 4*ms)
	}
	g.push(r.DoneT, r)
	if !recovered {
		return
	}
	seq, at := g.commit(t, r.T, g.nmut, uint8(opIdx))
	e := evInfo{seq: seq, commit: at, sendT: r.T, done: r.DoneT, path: r.Path, op: r.Op, tenant: t, tailK: -1, recovered: true}
	for _, c := range t.cons {
		c.onEvent(&e)
	}
	g.truth.Instances.Recovered = append(g.truth.Instances.Recovered, mid)
}

// planCrash: the last pod stops taking mutations now and crashes half a second later (so every
// mutation it acked is done by then); its consumers fail over to the next pod after a second, and
// it restarts two seconds after the crash.
func (g *gen) planCrash(now int64) {
	g.crashed = true
	p := g.crashPod
	g.podDown[p] = true
	tc := now + 500*ms
	reopen := tc + sec
	next := (p + 1) % len(g.pods)
	var moved []*consumer
	for _, t := range g.tenants {
		for _, c := range t.cons {
			if c.pods[0] == p {
				c.failAt, c.reopenAt = tc, reopen+int64(len(moved))*100_000
				c.pods[1], c.conns[1] = next, c.id+"#2"
				moved = append(moved, c)
			}
		}
	}
	g.schedule(tc, func(at int64) {
		for _, rec := range []ledger.Record{
			{K: ledger.KindFault, ID: "f1", Kind: "pod_crash", Target: g.pods[p], Phase: "start", T: at, Params: map[string]any{"signal": "SIGKILL"}},
			{K: ledger.KindPod, Pod: g.pods[p], Phase: "crash", T: at, Signal: "SIGKILL"},
		} {
			r := g.q.rec()
			*r = rec
			g.push(at, r)
		}
		for _, c := range moved {
			r := g.q.rec()
			*r = ledger.Record{K: ledger.KindConn, Consumer: c.id, Tenant: c.t.id, Conn: c.conns[0], T: at + ms, Phase: "fail",
				Pod: g.pods[p], Since: 0, Err: "unexpected EOF"}
			g.push(at+ms, r)
		}
	})
	for _, c := range moved {
		g.schedule(c.reopenAt, func(at int64) {
			r := g.q.rec()
			*r = ledger.Record{K: ledger.KindConn, Consumer: c.id, Tenant: c.t.id, Conn: c.conns[1], T: at, Phase: "open",
				Pod: g.pods[next], Since: c.cursorAtFail}
			g.push(at, r)
		})
	}
	g.schedule(tc+2*sec, func(at int64) {
		r := g.q.rec()
		*r = ledger.Record{K: ledger.KindPod, Pod: g.pods[p], Phase: "start", T: at, PID: 2000 + p}
		g.push(at, r)
	})
	g.schedule(tc+2500*ms, func(at int64) {
		for _, rec := range []ledger.Record{
			{K: ledger.KindPod, Pod: g.pods[p], Phase: "ready", T: at},
			{K: ledger.KindFault, ID: "f1", Kind: "pod_crash", Target: g.pods[p], Phase: "stop", T: at},
		} {
			r := g.q.rec()
			*r = rec
			g.push(at, r)
		}
		g.podDown[p] = false
	})
}

// finish ends the run: a last scrape after every drop, the connections close, then the audit, the
// consumer summaries and the end record.
func (g *gen) finish() error {
	end := g.maxKey + sec
	for _, d := range g.drops {
		end = max(end, d.at+sec)
	}
	if err := g.advance(end - 600*ms); err != nil {
		return err
	}
	g.stopScrapes = true
	g.sched = g.sched[:0]
	g.scrape(end - 500*ms)
	for _, t := range g.tenants {
		for _, c := range t.cons {
			k := c.connAt(end)
			r := g.q.rec()
			*r = ledger.Record{K: ledger.KindConn, Consumer: c.id, Tenant: t.id, Conn: c.conns[k], T: end - 200*ms, Phase: "close",
				Pod: g.pods[c.pods[k]], Since: c.sinceOf(k)}
			g.push(r.T, r)
		}
	}
	// The harness stops the pods after the drain (SIGTERM, exit 0).
	for i, p := range g.pods {
		r := g.q.rec()
		code := 0
		*r = ledger.Record{K: ledger.KindPod, Pod: p, Phase: "exit", T: end - 100*ms + int64(i)*ms, Signal: "SIGTERM", Code: &code}
		g.push(r.T, r)
	}
	if err := g.flush(math.MaxInt64); err != nil {
		return err
	}
	var rec ledger.Record
	for _, t := range g.tenants {
		for _, rw := range t.rows {
			mid := g.mid(int(rw.mut))
			op := ""
			if int(rw.op) < len(eventOps) {
				op = eventOps[rw.op]
			} else {
				op = structuralOps[int(rw.op)-len(eventOps)]
			}
			rec = ledger.Record{K: ledger.KindPersisted, Tenant: t.id, Seq: rw.seq, Op: op, Path: g.path(t, mid),
				CreatedUnixNs: fakeStartUnixNs + rw.created}
			if err := g.w.Write(&rec); err != nil {
				return err
			}
		}
	}
	for _, t := range g.tenants {
		for _, c := range t.cons {
			rec = ledger.Record{K: ledger.KindConsumer, Consumer: c.id, Tenant: t.id, FromT: c.openT, ToT: end - 200*ms,
				FirstSince: 0, FinalCursor: c.cursor, Durable: true}
			if err := g.w.Write(&rec); err != nil {
				return err
			}
		}
	}
	rec = ledger.Record{K: ledger.KindEnd, T: end, Drained: g.cfg.Undelivered == 0}
	if g.cfg.Undelivered > 0 {
		rec.Reason = "drain timeout: a consumer stalled"
	}
	return g.w.Write(&rec)
}

// sinceOf is the since a connection was opened with.
func (c *consumer) sinceOf(k int) int64 {
	if k == 1 {
		return c.cursorAtFail
	}
	return 0
}
