package verifier

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/seqgate/seqgate/ledger"
)

// genCfg configures the test-local ledger generator: a clean run of tenants x consumers x events with
// exactly the requested anomalies injected (fewer when the run is too small to hold them all; the truth
// says how many were placed).
type genCfg struct {
	seed                       uint64
	tenants, consumers, events int
	silent, crash              int // lost mutations, per tenant
	skipped, dups, reorder     int // per consumer
	stall                      bool
	leaks, unexpected          int // per consumer
}

// genTruth is what the generator placed, in summary terms.
type genTruth struct {
	acked, lost, silent, crash, skipped, undelivered, dups, leaks, unexpected, overtaken int64
	records                                                                              int64
}

func (t genTruth) verdict(budget float64) string {
	if t.silent > 0 || t.skipped > 0 || t.undelivered > 0 || t.leaks > 0 || float64(t.lost)/float64(t.acked) > budget {
		return VerdictFail
	}
	return VerdictPass
}

const msNs = 1_000_000

// genLedger writes a ledger for cfg and returns the truth. Records are written in time order.
func genLedger(cfg genCfg, w *ledger.Writer) (genTruth, error) {
	rng := rand.New(rand.NewPCG(cfg.seed, 7))
	var tr genTruth
	var recs []ledger.Record // run phase, sorted by t before writing
	var post []ledger.Record
	run := ledger.Record{K: ledger.KindRun, V: 1, RunID: "gen", Scenario: "gen", Seed: int64(cfg.seed), StartUnixNs: 1,
		Budget: ptrF(1e-4), Pods: []string{"p1", "p2"}, Target: "external"}
	for ti := range cfg.tenants {
		run.Tenants = append(run.Tenants, ledger.Tenant{ID: fmt.Sprintf("t%d", ti), Mode: "dedicated"})
	}
	type mut struct {
		path string
		t    int64
		seq  int64 // 0 = not persisted
	}
	muts := make([][]mut, cfg.tenants)
	var lastT int64
	for ti := range cfg.tenants {
		tenant := run.Tenants[ti].ID
		// Roles: 0 normal, 1 silent loss, 2 crash loss. The last mutation stays normal so every durable
		// consumer's cursor can pass the skipped ones.
		roles := make([]int, cfg.events)
		perm := rng.Perm(max(cfg.events-1, 0))
		for i, j := range perm {
			switch {
			case i < cfg.silent:
				roles[j] = 1
			case i < cfg.silent+cfg.crash:
				roles[j] = 2
			}
		}
		var seq int64
		for j := range cfg.events {
			t := int64(j)*10*msNs + int64(ti)*msNs + msNs
			m := mut{path: fmt.Sprintf("/g/gen/%s/m%d", tenant, j), t: t}
			pod := "p1"
			switch roles[j] {
			case 0:
				seq++
				m.seq = seq
				post = append(post, ledger.Record{K: ledger.KindPersisted, Tenant: tenant, Seq: seq, Op: "write", Path: m.path})
			case 1:
				tr.silent++
			case 2:
				tr.crash++
				pod = "p2"
			}
			tr.acked++
			recs = append(recs, ledger.Record{K: ledger.KindMut, MID: fmt.Sprintf("%s-m%d", tenant, j), Tenant: tenant, Op: "write",
				Path: m.path, IntendedT: t, T: t, DoneT: t + 2*msNs, Res: ledger.ResOK, Pod: pod})
			muts[ti] = append(muts[ti], m)
			lastT = max(lastT, t+2*msNs)
		}
	}
	tr.lost = tr.silent + tr.crash
	if tr.crash > 0 {
		recs = append(recs, ledger.Record{K: ledger.KindPod, Pod: "p2", Phase: "crash", T: lastT + msNs})
	}
	for ti := range cfg.tenants {
		tenant := run.Tenants[ti].ID
		var delivered []mut
		for _, m := range muts[ti] {
			if m.seq > 0 {
				delivered = append(delivered, m)
			}
		}
		for ci := range cfg.consumers {
			cons := fmt.Sprintf("%s-c%d", tenant, ci)
			conn := cons + "-k1"
			recs = append(recs, ledger.Record{K: ledger.KindConn, Consumer: cons, Tenant: tenant, Conn: conn, T: 0, Phase: "open", Pod: "p1"})
			cut := len(delivered) // deliver indices < cut
			if cfg.stall && len(delivered) > 2 {
				cut = 1 + rng.IntN(len(delivered)-1)
				tr.undelivered += int64(len(delivered) - cut)
			}
			// role per index < cut-1 (the cut-1th is always delivered, so skips are passed):
			// 1 skipped, 2 duplicated, 3 first of a swapped pair, 4 second of it.
			role := make([]int, cut)
			free := rng.Perm(max(cut-1, 0))
			take := func(n int, fn func(i int) bool) {
				for _, i := range free {
					if n == 0 {
						break
					}
					if fn(i) {
						n--
					}
				}
			}
			take(cfg.skipped, func(i int) bool {
				if role[i] != 0 {
					return false
				}
				role[i] = 1
				tr.skipped++
				return true
			})
			take(cfg.dups, func(i int) bool {
				if role[i] != 0 {
					return false
				}
				role[i] = 2
				tr.dups++
				return true
			})
			take(cfg.reorder, func(i int) bool {
				if i+1 >= cut-1 || role[i] != 0 || role[i+1] != 0 || (i > 0 && role[i-1] == 3) {
					return false
				}
				role[i], role[i+1] = 3, 4
				tr.overtaken++
				return true
			})
			final := int64(0)
			ev := func(m mut, t int64) ledger.Record {
				return ledger.Record{K: ledger.KindEv, Consumer: cons, Tenant: tenant, Conn: conn, T: t, Seq: m.seq, Op: "write", Path: m.path, Pod: "p1"}
			}
			for i := 0; i < cut; i++ {
				m := delivered[i]
				at := m.t + 3*msNs + int64(ci)*1000
				switch role[i] {
				case 1:
					continue
				case 2:
					recs = append(recs, ev(m, at), ev(m, at+100))
				case 3:
					n := delivered[i+1]
					nat := n.t + 3*msNs + int64(ci)*1000
					recs = append(recs, ev(n, nat), ev(m, nat+100))
					i++
					m = n
				default:
					recs = append(recs, ev(m, at))
				}
				final = max(final, m.seq)
			}
			for k := range cfg.unexpected {
				tr.unexpected++
				recs = append(recs, ledger.Record{K: ledger.KindEv, Consumer: cons, Tenant: tenant, Conn: conn, T: int64(k) * msNs,
					Seq: 0, Op: "write", Path: fmt.Sprintf("/g/gen/nobody/u%d", k), Pod: "p1"})
			}
			if cfg.tenants > 1 {
				other := (ti + 1) % cfg.tenants
				for k := range min(cfg.leaks, len(muts[other])) {
					tr.leaks++
					recs = append(recs, ledger.Record{K: ledger.KindEv, Consumer: cons, Tenant: tenant, Conn: conn,
						T: muts[other][k].t + 5*msNs, Seq: 0, Op: "write", Path: muts[other][k].path, Pod: "p1"})
				}
			}
			post = append(post, ledger.Record{K: ledger.KindConsumer, Consumer: cons, Tenant: tenant, FromT: 0, ToT: lastT,
				FirstSince: 0, FinalCursor: final, Durable: true})
		}
	}
	slices.SortStableFunc(recs, func(a, b ledger.Record) int { return cmp.Compare(a.T, b.T) })
	all := append(append([]ledger.Record{run}, recs...), post...)
	all = append(all, ledger.Record{K: ledger.KindEnd, T: lastT + 10*msNs, Drained: true})
	for i := range all {
		if err := w.Write(&all[i]); err != nil {
			return tr, err
		}
	}
	tr.records = int64(len(all))
	return tr, w.Flush()
}
