package run

import (
	"context"
	"time"

	"github.com/seqgate/seqgate/harness/scrape"
	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/ledger"
)

// startSampling starts the /metrics scraper (when there are pods) and the proxy-counter sampler
// (one sample now, then every second). The stop phase stops both.
func startSampling(s *state) {
	ctx, stop := context.WithCancel(context.Background())
	p := &sampling{stop: stop}
	s.samp = p
	sampleProxies(s)
	if s.sys.fleet != nil {
		sc := &scrape.Scraper{Targets: func() []scrape.Target {
			var out []scrape.Target
			for _, e := range s.sys.endpoints(true) {
				out = append(out, scrape.Target{Pod: e.Name, URL: e.URL})
			}
			return out
		}, Names: append(append([]string(nil), scrape.Families...), s.sc.Metrics...), Period: time.Second, Start: s.start, Sink: s.w}
		p.scraper = sc
		p.wg.Add(1)
		go func() { defer p.wg.Done(); sc.Run(ctx) }()
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
	owner := map[string]string{}
	for _, t := range s.tenants {
		if t.Mode == "dedicated" {
			owner[t.Pool] = t.ID
		}
	}
	at := s.now()
	for _, p := range s.sys.proxies.All() {
		c := p.Counters()
		_ = s.w.Write(&ledger.Record{K: ledger.KindProxy, Name: p.Name, Tenant: owner[p.Name], T: at,
			Conns: c.Conns, BytesUp: c.BytesUp, BytesDown: c.BytesDown})
	}
}
