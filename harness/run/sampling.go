package run

import (
	"context"
	"time"

	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/harness/scrape"
	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/ledger"
)

// startSampling starts the /metrics scraper (when there are pods), the proxy-counter sampler (one
// sample now, then every second) and, when the retention can sweep the run's rows before the final
// audit, the audit passes. The stop phase stops them all.
func startSampling(s *state) {
	ctx, stop := context.WithCancel(context.Background())
	p := &sampling{stop: stop}
	s.samp = p
	sampleProxies(s)
	if s.sys.fleet != nil {
		sc := &scrape.Scraper{Targets: func() []scrape.Target {
			var out []scrape.Target
			for _, e := range s.sys.endpoints(true) {
				out = append(out, scrape.Target{Pod: e.Name, URL: e.URL, Path: s.sys.metricsPath})
			}
			return out
		}, Names: append(append(append([]string(nil), scrape.Families...), s.sc.Metrics...), s.sys.lossCounters...), Period: time.Second, Start: s.start, Sink: s.w}
		p.scraper = sc
		p.wg.Add(1)
		go func() { defer p.wg.Done(); sc.Run(ctx) }()
	}
	if every := passInterval(s); every > 0 {
		s.passes = &audit.Passes{}
		ids := make([]string, 0, len(s.tenants))
		for _, t := range s.tenants {
			ids = append(ids, t.ID)
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			sleep.Every(ctx, every, func() {
				pctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				if err := s.passes.Pass(pctx, ids, s.sys.tables, func(id string) string { return s.driver.Path(id, "") }); err != nil && ctx.Err() == nil {
					s.log.Warn("audit pass failed (the next one re-reads)", "err", err)
				}
			})
		}()
	}
	if s.sys.proxies != nil {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			sleep.Every(ctx, time.Second, func() { sampleProxies(s) })
		}()
	}
}

// sampleProxies writes one proxy record per proxy. A dedicated pool's record names its tenant (the
// cold-wakeup check reads those); the shared pool and the meta DB name none.
func sampleProxies(s *state) {
	if s.sys.proxies == nil {
		return
	}
	owner, count := map[string]string{}, map[string]int{}
	for _, t := range s.tenants {
		count[t.Pool]++
		if t.Mode == "dedicated" {
			owner[t.Pool] = t.ID
		}
	}
	for pool, n := range count {
		if n > 1 {
			delete(owner, pool) // one proxy for several tenants (a pod profile of layout admin_dsn) names none
		}
	}
	at := s.now()
	for _, p := range s.sys.proxies.All() {
		c := p.Counters()
		_ = s.w.Write(&ledger.Record{K: ledger.KindProxy, Name: p.Name, Tenant: owner[p.Name], T: at,
			Conns: c.Conns, BytesUp: c.BytesUp, BytesDown: c.BytesDown})
	}
}

// passInterval is how often audit passes read the run's rows during the run, 0 for none. They are
// needed when the retention sweep can delete a row of the run before the final audit reads it: for
// harness-run eventlogd pods, a retention shorter than the run (load, drain, a minute of margin).
// A pass every quarter of the retention (250 ms to 5 s) sees each row a few times before any sweep
// may delete it. An external target's retention is unknown here: no passes.
func passInterval(s *state) time.Duration {
	if !s.sys.audited || s.sys.fleet == nil {
		return 0
	}
	r := s.sc.Pods.Eventlogd.Retention.D()
	if r <= 0 {
		r = time.Hour // eventlogd's default
	}
	if r >= s.sc.Duration.D()+s.sc.DrainTimeout.D()+time.Minute {
		return 0
	}
	return min(max(r/4, 250*time.Millisecond), 5*time.Second)
}
