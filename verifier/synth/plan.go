package synth

import (
	"cmp"
	"fmt"
	"slices"
)

// plan decides, before anything is written, which event mutations are lost and how, where each
// consumer anomaly lands (an "arm": the first suitable event of the consumer after a time), how
// many closing events each tenant gets, and when the crash and the cold wakeups happen.
func (g *gen) plan() error {
	cfg := g.cfg
	g.victims = map[int]victim{}
	g.recovered = map[int]int{}
	for _, t := range g.active {
		t.tail = 1
	}
	// Undelivered: spread over the consumers that may carry skips (see below); a consumer that
	// stalls misses its tenant's last `stall` closing events.
	consumers := g.activeConsumers()
	skipClass, resetClass := splitClasses(consumers, cfg.Skipped+cfg.Undelivered+cfg.MaskedSkips > 0, cfg.SeqTooOld+cfg.SpuriousResets+cfg.ResyncMissed > 0)
	for i := range cfg.Undelivered {
		c := skipClass[i%len(skipClass)]
		c.stall++
		c.t.tail = max(c.t.tail, c.stall+1) // the first closing event reaches everyone
	}
	tail := 0
	for _, t := range g.active {
		tail += t.tail
	}
	mainN := cfg.Events - tail
	if mainN < 0 {
		return fmt.Errorf("synth: --events %d: too few for %d closing events", cfg.Events, tail)
	}
	g.mainN = mainN

	// Mutation victims by W index, in windows that keep the explanations unambiguous: counter
	// losses are older than silent ones (counters explain the oldest losses first), crash losses
	// sit before the crash and on the crashing pod, which has no drop counters.
	normalPods := len(g.pods)
	if cfg.CrashLoss > 0 {
		g.crashPod = len(g.pods) - 1
		normalPods--
		g.crashAtW = mainN / 2
	}
	pick := func(n int, lo, hi float64, mk func(i int) victim) error {
		a, b := int(lo*float64(mainN)), int(hi*float64(mainN))
		free := 0
		for w := a; w < b; w++ {
			if _, used := g.victims[w]; !used {
				free++
			}
		}
		if n > free {
			return fmt.Errorf("synth: --events %d: too few to place %d lost mutations in their window", cfg.Events, n)
		}
		for i := range n {
			for {
				w := a + g.rng.IntN(b-a)
				if _, used := g.victims[w]; !used {
					g.victims[w] = mk(i)
					break
				}
			}
		}
		return nil
	}
	seriesIdx := map[[3]string]int{}
	err := pick(cfg.Lost, 0.05, 0.45, func(i int) victim {
		v := victim{kind: vCounter, tenant: g.active[g.rng.IntN(len(g.active))], pod: i % normalPods, reason: dropReasons[i%len(dropReasons)]}
		key := [3]string{g.pods[v.pod], v.tenant.id, v.reason}
		if _, ok := seriesIdx[key]; !ok {
			seriesIdx[key] = len(g.series)
			g.series = append(g.series, series{pod: v.pod, tenant: v.tenant.id, reason: v.reason})
		}
		return v
	})
	if err != nil {
		return err
	}
	if err := pick(cfg.CrashLoss, 0.3, 0.5, func(int) victim {
		return victim{kind: vCrash, tenant: g.active[g.rng.IntN(len(g.active))], pod: g.crashPod}
	}); err != nil {
		return err
	}
	if err := pick(cfg.Silent, 0.55, 0.95, func(i int) victim {
		return victim{kind: vSilent, tenant: g.active[g.rng.IntN(len(g.active))], pod: i % normalPods}
	}); err != nil {
		return err
	}
	// Series in a fixed order: (pod, tenant, reason) as first planned; the index map is only for lookup.
	slices.SortStableFunc(g.series, func(a, b series) int {
		if a.pod != b.pod {
			return a.pod - b.pod
		}
		return 0
	})
	g.seriesIdx = map[[3]string]int{}
	for i, s := range g.series {
		g.seriesIdx[[3]string{g.pods[s.pod], s.tenant, s.reason}] = i
	}
	for range cfg.Recovered {
		g.recovered[g.rng.IntN(max(mainN, 1))]++
	}

	// Consumer arms, at times spread over the main phase (its expected length from the rate).
	mainDur := int64(float64(mainN) / cfg.Rate * 1e9)
	g.scrapeEvery = max(scrapeStep, mainDur/maxScrapes)
	armAt := func() int64 { return loadStart + int64((0.05+0.75*g.rng.Float64())*float64(mainDur)) }
	assign := func(pool []*consumer, n int, k armKind) {
		start := g.rng.IntN(len(pool) + 1)
		for i := range n {
			c := pool[(start+i)%len(pool)]
			c.arms = append(c.arms, arm{at: armAt(), kind: k})
		}
	}
	assign(skipClass, cfg.Skipped, armSkip)
	assign(resetClass, cfg.SeqTooOld, armSeqTooOld)
	assign(resetClass, cfg.SpuriousResets, armSpurious)
	assign(resetClass, cfg.ResyncMissed, armResyncMissed)
	assign(consumers, cfg.Duplicates, armDup)
	assign(consumers, cfg.Reorder, armReorder)
	assign(consumers, cfg.Leaks, armLeak)
	assign(consumers, cfg.Unexpected, armUnexpected)
	assign(consumers, cfg.SeqMismatch, armSeqMismatch)
	assign(skipClass, cfg.MaskedSkips, armMaskedSkip)
	for _, c := range consumers {
		slices.SortStableFunc(c.arms, func(a, b arm) int { return cmp.Compare(a.at, b.at) })
	}

	// Cold wakeups: the first ColdWakeups cold tenants' DB proxies see traffic mid-run.
	n := 0
	for _, t := range g.tenants {
		if t.cold && n < cfg.ColdWakeups {
			n++
			g.schedule(loadStart+mainDur/2, func(int64) {
				t.conns++
				t.up += 240
				t.down += 512
				g.truth.Instances.ColdWakeups = append(g.truth.Instances.ColdWakeups, t.id)
			})
		}
	}
	return nil
}

// activeConsumers lists the consumers of active tenants, tenant by tenant.
func (g *gen) activeConsumers() []*consumer {
	var out []*consumer
	for _, t := range g.active {
		out = append(out, t.cons...)
	}
	return out
}

// splitClasses keeps skip-like anomalies (skipped, undelivered) and seq_too_old resets on different
// consumers: a later seq_too_old reset would excuse a skip (spec: reset-covered).
func splitClasses(cs []*consumer, skips, resets bool) (skipClass, resetClass []*consumer) {
	switch {
	case skips && resets:
		h := (len(cs) + 1) / 2
		return cs[:h], cs[h:]
	default:
		return cs, cs
	}
}
