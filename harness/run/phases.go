package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/harness/consumer"
	"github.com/seqgate/seqgate/harness/load"
	"github.com/seqgate/seqgate/harness/scrape"
	"github.com/seqgate/seqgate/ledger"
)

// startConsumers starts every consumer the scenario declares, spread over the pods.
func (r *runner) startConsumers(ctx context.Context, wg *sync.WaitGroup) {
	streamClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}} // no timeout: streams are long
	n := 0
	r.late = map[*consumer.Consumer]bool{}
	for _, spec := range r.sc.Consumers {
		client := streamClient
		if spec.RcvBuf > 0 {
			client = consumer.NewClient(spec.RcvBuf)
		}
		var wait func(context.Context) bool
		if spec.Start > 0 {
			at := spec.Start.D()
			wait = func(ctx context.Context) bool { // a late consumer: its first connection at load start + at
				select {
				case <-r.loadBegun:
				case <-ctx.Done():
					return false
				}
				return sleepUntil(ctx, r.loadStart.Add(at))
			}
		}
		for _, t := range r.tenants {
			if spec.Tenants != "" && spec.Tenants != t.Group {
				continue
			}
			for i := 0; i < spec.Count; i++ {
				n++
				c := consumer.New(consumer.Config{
					Name: fmt.Sprintf("%s/c%d", t.ID, len(r.env.consumers[t.Name()])+1), Tenant: t.ID, Key: t.Key,
					Durable: spec.IsDurable(), BackoffMin: spec.BackoffMin.D(), BackoffMax: spec.BackoffMax.D(),
					Jitter: spec.Jitter, Slow: spec.Slow.D(), IdleTimeout: spec.IdleTimeout.D(), Seed: uint64(r.sc.Seed)*1_000_003 + uint64(n),
					Home: n, Start: r.start, Sink: r.w, Client: client, Wait: wait,
					Resume: spec.Since != nil, Since: deref(spec.Since), ReadChunk: spec.RcvBuf,
					Endpoints: func() []consumer.Endpoint {
						var out []consumer.Endpoint
						for _, e := range r.podEndpoints(false) {
							out = append(out, consumer.Endpoint(e))
						}
						return out
					},
				})
				r.cons = append(r.cons, c)
				r.late[c] = spec.Start > 0
				r.env.consumers[t.Name()] = append(r.env.consumers[t.Name()], c)
				wg.Add(1)
				go func() { defer wg.Done(); c.Run(ctx) }()
			}
		}
	}
	r.log.Info("consumers started", "phase", "consumers", "count", n)
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// waitConsumersOpen gives the consumers a moment to subscribe before the load starts, so the first
// events have someone to go to (bounded: a consumer that cannot connect is the verifier's business).
func (r *runner) waitConsumersOpen(ctx context.Context) {
	ok := audit.Wait(ctx, 10*time.Second, 20*time.Millisecond, func(context.Context) bool {
		for _, c := range r.cons {
			if c.Frames() == 0 && !r.late[c] {
				return false
			}
		}
		return true
	})
	if !ok {
		r.log.Warn("not every consumer had a frame before the load", "phase", "consumers")
	}
}

// startSampling starts the /metrics scraper and the proxy-counter sampler (one sample now, then
// every second).
func (r *runner) startSampling(ctx context.Context, wg *sync.WaitGroup) {
	r.sampleProxies()
	if r.fleet != nil {
		sc := &scrape.Scraper{Targets: func() []scrape.Target {
			var out []scrape.Target
			for _, e := range r.podEndpoints(true) {
				out = append(out, scrape.Target{Pod: e.Name, URL: e.URL})
			}
			return out
		}, Names: append(append([]string(nil), scrape.Families...), r.sc.Metrics...), Period: time.Second, Start: r.start, Sink: r.w}
		r.scraper = sc
		wg.Add(1)
		go func() { defer wg.Done(); sc.Run(ctx) }()
	}
	if r.proxies != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					r.sampleProxies()
				}
			}
		}()
	}
}

// sampleProxies writes one proxy record per proxy. A dedicated pool's record names its tenant (the
// cold-wakeup check reads those); the shared pool and the meta DB name none.
func (r *runner) sampleProxies() {
	if r.proxies == nil {
		return
	}
	owner := map[string]string{}
	for _, t := range r.tenants {
		if t.Mode == "dedicated" {
			owner[t.Pool] = t.ID
		}
	}
	at := r.now()
	for _, p := range r.proxies.All() {
		c := p.Counters()
		_ = r.w.Write(&ledger.Record{K: ledger.KindProxy, Name: p.Name, Tenant: owner[p.Name], T: at,
			Conns: c.Conns, BytesUp: c.BytesUp, BytesDown: c.BytesDown})
	}
}

// loadPhase drives the load for the scenario's duration, with the fault runner, the hooks and the
// progress display beside it.
func (r *runner) loadPhase(ctx context.Context) {
	r.driver = load.NewDriver(load.Config{RunID: r.runID, Seed: r.sc.Seed, Start: r.start, Sink: r.w,
		Endpoints: func() []load.Endpoint { return r.podEndpoints(true) }})
	var blocks []load.Block
	for i, l := range r.sc.Load {
		b := load.Block{Index: i, Load: l}
		for _, t := range r.tenants {
			if t.Group == l.Tenants {
				b.Tenants = append(b.Tenants, load.Tenant{ID: t.ID, Key: t.Key, Index: t.Index})
			}
		}
		blocks = append(blocks, b)
	}
	loadCtx, cancel := context.WithTimeout(ctx, r.sc.Duration.D()+time.Second)
	defer cancel()
	r.loadStart = time.Now()
	close(r.loadBegun)
	r.log.Info("load started", "phase", "load", "duration", r.sc.Duration.D(), "blocks", len(blocks))
	var side sync.WaitGroup
	sideCtx, stopSide := context.WithCancel(ctx)
	if r.faults != nil {
		side.Add(1)
		go func() {
			defer side.Done()
			if err := r.faults.Run(sideCtx); err != nil {
				r.res.FaultErr = errors.Join(r.res.FaultErr, err)
				r.log.Error("fault failed", "phase", "load", "err", err)
			}
		}()
	}
	for _, h := range r.o.Hooks {
		side.Add(1)
		go func() {
			defer side.Done()
			select {
			case <-time.After(time.Until(r.loadStart.Add(h.At))):
			case <-sideCtx.Done():
				return
			}
			r.log.Info("hook", "phase", "load", "hook", h.Name)
			if err := h.Do(sideCtx, r.env); err != nil {
				r.log.Error("hook failed", "phase", "load", "hook", h.Name, "err", err)
			}
		}()
	}
	progCtx, stopProg := context.WithCancel(context.Background())
	progDone := make(chan struct{})
	go func() { defer close(progDone); r.progress().run(progCtx, r.loadStart) }()

	r.driver.Run(loadCtx, r.loadStart, blocks)
	// The load phase lasts the scenario's duration even when every block ended earlier: the writers
	// idle, while faults, hooks, consumers and sampling carry on (a quiet phase at the end).
	if !sleepUntil(ctx, r.loadStart.Add(r.sc.Duration.D())) {
		r.log.Info("load phase cut short", "phase", "load")
	}
	stopProg()
	<-progDone
	r.res.LoadSeconds = time.Since(r.loadStart).Seconds()
	stopSide()
	side.Wait()
	st := &r.driver.Stats
	r.res.Offered, r.res.Dropped, r.res.Acked = st.Offered.Load(), st.Dropped.Load(), st.OK.Load()
	r.res.DroppedByTenant = r.driver.DroppedByTenant()
	r.log.Info("load finished", "phase", "load", "offered", st.Offered.Load(), "sent", st.Sent.Load(), "dropped", st.Dropped.Load(),
		"ok", st.OK.Load(), "err", st.Err.Load(), "timeout", st.Timeout.Load(),
		"offered_per_s", fmt.Sprintf("%.1f", float64(st.Offered.Load())/r.res.LoadSeconds),
		"acked_per_s", fmt.Sprintf("%.1f", float64(st.OK.Load())/r.res.LoadSeconds))
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (r *runner) progress() *progress {
	var offered, acked, events rate
	last := time.Now()
	return &progress{w: r.o.Progress, terminal: r.o.Terminal, every: 5 * time.Second, line: func(el time.Duration) string {
		d := time.Since(last)
		last = time.Now()
		var ev int64
		for _, c := range r.cons {
			ev += c.Events()
		}
		st := &r.driver.Stats
		var active []string
		if r.faults != nil {
			active = r.faults.Active()
		}
		return fmt.Sprintf("%s/%s offered %.0f/s acked %.0f/s dropped %d events %d (%.0f/s) faults %s",
			el, r.sc.Duration.D(), offered.per(st.Offered.Load(), d), acked.per(st.OK.Load(), d), st.Dropped.Load(),
			ev, events.per(ev, d), faultList(active))
	}}
}

// healAll heals every fault still active (before the drain, and again in cleanup: idempotent).
func (r *runner) healAll() {
	if r.faults == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.faults.HealAll(ctx); err != nil {
		r.res.FaultErr = errors.Join(r.res.FaultErr, err)
		r.log.Error("heal failed", "phase", "heal", "err", err)
	}
}

// drain waits until every durable consumer's cursor reaches its tenant's head seq in the DB (or,
// with no DB to ask, until every cursor has been still for 3 s), bounded by the drain timeout.
func (r *runner) drain(ctx context.Context, timeout time.Duration) bool {
	r.log.Info("draining", "phase", "drain", "timeout", timeout)
	begin := time.Now()
	var lastMove time.Time
	prev := map[*consumer.Consumer]int64{}
	ok := audit.Wait(ctx, timeout, 100*time.Millisecond, func(ctx context.Context) bool {
		if len(r.tables) == 0 {
			moved := false
			for _, c := range r.cons {
				if c.Cursor() != prev[c] {
					prev[c], moved = c.Cursor(), true
				}
			}
			if moved || lastMove.IsZero() {
				lastMove = time.Now()
			}
			return time.Since(lastMove) > 3*time.Second
		}
		heads := map[string]int64{}
		for _, t := range r.tenants {
			h, err := r.tables[t.ID].Head(ctx, t.ID)
			if err != nil {
				return false
			}
			heads[t.ID] = h
		}
		for _, c := range r.cons {
			if c.Durable() && c.Cursor() < heads[c.Tenant()] {
				return false
			}
		}
		return r.buffersEmpty(begin)
	})
	r.log.Info("drain finished", "phase", "drain", "drained", ok, "took", time.Since(begin).Round(time.Millisecond))
	return ok
}

// buffersEmpty reports whether every running pod's retry buffer was empty in a scrape taken after
// since: an event still buffered would be inserted after the consumers stopped and look undelivered.
// Pods that do not export the gauge count as empty.
func (r *runner) buffersEmpty(since time.Time) bool {
	if r.scraper == nil {
		return true
	}
	for _, e := range r.podEndpoints(true) {
		v, at, ok := r.scraper.Latest(e.Name, "drive9_sse_event_retry_buffer_depth")
		if ok && (at.Before(since) || v != 0) {
			return false
		}
	}
	return true
}
