package run

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/harness/consumer"
	"github.com/seqgate/seqgate/harness/load"
	"github.com/seqgate/seqgate/internal/sleep"
)

// consumersPhase starts every consumer the scenario declares, spread over the pods, and gives them a
// moment to subscribe (and list, after their initial_sync) before the load starts, so the first
// events have someone to go to (bounded: a consumer that cannot connect is the verifier's
// business). Late consumers connect during the load.
func consumersPhase(ctx context.Context, s *state, log *slog.Logger) error {
	consCtx, stop := context.WithCancel(context.Background()) // stopped by the stop phase, not by Ctrl-C
	cs := &consumerSet{late: map[*consumer.Consumer]bool{}, stop: stop}
	s.cons = cs
	streamClient := consumer.NewClient(0) // no timeout: streams are long
	if s.o.consumerTransport != nil {
		streamClient.Transport = s.o.consumerTransport(streamClient.Transport)
	}
	endpoints := func() []consumer.Endpoint {
		var out []consumer.Endpoint
		for _, e := range s.sys.endpoints(false) {
			out = append(out, consumer.Endpoint(e))
		}
		return out
	}
	driven := map[int]tenant{}
	for _, t := range s.tenants {
		driven[t.Index] = t
	}
	n, started := 0, 0
	for _, spec := range s.sc.Consumers {
		client := streamClient
		if spec.RcvBuf > 0 {
			client = consumer.NewClient(spec.RcvBuf)
		}
		var wait func(context.Context) bool
		if spec.Start > 0 {
			at := spec.Start.D()
			wait = func(ctx context.Context) bool { // a late consumer: its first connection at load start + at
				select {
				case <-s.clock.begun:
				case <-ctx.Done():
					return false
				}
				return sleep.Until(ctx, s.clock.at.Add(at))
			}
		}
		for _, slot := range s.sc.Expand() {
			if spec.Tenants != "" && spec.Tenants != slot.Group {
				continue
			}
			// n counts the consumers of every tenant of the scenario, also those another agent of a
			// sharded run drives, so a consumer's seed and home are the same whichever agent runs it.
			t, mine := driven[slot.Index]
			if !mine {
				n += spec.Count
				continue
			}
			for i := 0; i < spec.Count; i++ {
				n++
				c := consumer.New(consumer.Config{
					Name: fmt.Sprintf("%s/c%d", t.Name(), len(s.env.consumers[t.Name()])+1), Tenant: t.ID, Key: t.Key,
					Durable: spec.IsDurable(), BackoffMin: spec.BackoffMin.D(), BackoffMax: spec.BackoffMax.D(),
					Jitter: spec.Jitter, Slow: spec.Slow.D(), IdleTimeout: spec.IdleTimeout.D(), Seed: uint64(s.sc.Seed)*1_000_003 + uint64(n),
					Home: n, Start: s.start, Sink: s.w, Client: client, Wait: wait,
					Resume: spec.Since != nil, Since: deref(spec.Since), ReadChunk: spec.RcvBuf,
					Endpoints: endpoints, Pull: spec.IsPull(), PollInterval: spec.Interval.D(), PageSize: spec.PageSize,
					PullFirst: spec.IsPullThenStream(), Resync: spec.IsResync(), ResyncStructural: spec.ResyncStructural,
					ListDir: load.TenantDir(s.id, t.ID), Wire: s.sys.wire,
				})
				started++
				cs.all = append(cs.all, c)
				cs.late[c] = spec.Start > 0
				s.env.consumers[t.Name()] = append(s.env.consumers[t.Name()], c)
				cs.wg.Add(1)
				go func() { defer cs.wg.Done(); c.Run(consCtx) }()
			}
		}
	}
	log.Info("consumers started", "count", started)
	// Each consumer's first frame, and the listing its initial_sync asks for, before the load and
	// the DB samples begin: a listing reads the tenant's DB, which would count as a cold DB waking.
	// The bound grows with the consumers: a thousand first listings at once take the pods tens of
	// seconds on a small machine, and a listing still under way when the samples begin wakes a cold DB.
	begin := time.Now()
	ok := audit.Wait(ctx, settleBound(started), 20*time.Millisecond, func(context.Context) bool {
		for _, c := range cs.all {
			if !c.Settled() && !cs.late[c] {
				return false
			}
		}
		return true
	})
	if !ok {
		log.Warn("not every consumer had a frame and its first listing before the load", "waited", settleBound(started).String())
	} else {
		log.Info("consumers settled", "count", started, "took", time.Since(begin).Round(time.Millisecond).String())
	}
	return nil
}

// settleBound is how long the consumers phase waits for every consumer's first frame and listing:
// 20 s, and 100 ms more per consumer.
func settleBound(consumers int) time.Duration {
	return 20*time.Second + time.Duration(consumers)*100*time.Millisecond
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
