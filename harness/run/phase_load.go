package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/seqgate/seqgate/harness/load"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/sleep"
)

// loadPhase drives the load for the scenario's duration, with sampling, the fault runner, the hooks
// and the progress display beside it. Ctrl-C cuts it short; the phases after it still run.
func loadPhase(ctx context.Context, s *state, log *slog.Logger) error {
	s.driver = load.NewDriver(load.Config{RunID: s.id, Seed: s.sc.Seed, Start: s.start, Sink: s.w,
		Endpoints: func() []load.Endpoint { return s.sys.endpoints(true) }, Wire: s.sys.wire})
	startSampling(s) // after the driver: the audit passes read the run's paths through it
	var blocks []load.Block
	for i, l := range s.sc.Load {
		b := load.Block{Index: i, Load: l}
		// A tenant's phase is its place in its whole group (not among the tenants this agent drives),
		// so its schedule is the same in a sharded run as in a single-agent one.
		phase := map[int]float64{}
		var group []scenario.Tenant
		for _, t := range s.sc.Expand() {
			if t.Group == l.Tenants {
				group = append(group, t)
			}
		}
		for pos, t := range group {
			phase[t.Index] = float64(pos) / float64(len(group))
		}
		for _, t := range s.tenants {
			if t.Group == l.Tenants {
				b.Tenants = append(b.Tenants, load.Tenant{ID: t.ID, Key: t.Key, Index: t.Index, Phase: phase[t.Index]})
			}
		}
		blocks = append(blocks, b)
	}
	loadCtx, cancel := context.WithTimeout(ctx, s.sc.Duration.D()+time.Second)
	defer cancel()
	cpu := cpuMeter(s)
	s.clock.mark()
	cpu.Begin()
	start := s.clock.at
	s.res.LoadStartSeconds = start.Sub(s.start).Seconds()
	log.Info("load started", "duration", s.sc.Duration.D(), "blocks", len(blocks))
	sideCtx, stopSide := context.WithCancel(ctx)
	side := startSide(sideCtx, s, log, start)
	progCtx, stopProg := context.WithCancel(context.Background())
	progDone := make(chan struct{})
	go func() { defer close(progDone); progressOf(s).run(progCtx, start) }()

	s.driver.Run(loadCtx, start, blocks)
	// The load phase lasts the scenario's duration even when every block ended earlier: the writers
	// idle, while faults, hooks, consumers and sampling carry on (a quiet phase at the end).
	if !sleep.Until(ctx, start.Add(s.sc.Duration.D())) {
		log.Info("load phase cut short")
	}
	cpuWin := cpu.End()
	s.res.CPU = &cpuWin
	stopProg()
	<-progDone
	s.res.LoadSeconds = time.Since(start).Seconds()
	stopSide()
	side.Wait()
	st := &s.driver.Stats
	s.res.Offered, s.res.Dropped, s.res.Acked = st.Offered.Load(), st.Dropped.Load(), st.OK.Load()
	s.res.ScheduledSeconds = s.sc.Duration.D().Seconds()
	s.res.DroppedByTenant = map[string]int64{}
	byID := s.driver.DroppedByTenant()
	for _, t := range s.tenants {
		if n := byID[t.ID]; n > 0 {
			s.res.DroppedByTenant[t.Name()] = n
		}
	}
	log.Info("load finished", "offered", st.Offered.Load(), "sent", st.Sent.Load(), "dropped", st.Dropped.Load(),
		"ok", st.OK.Load(), "err", st.Err.Load(), "timeout", st.Timeout.Load(),
		"offered_per_s", fmt.Sprintf("%.1f", s.res.PerSecond(st.Offered.Load())),
		"acked_per_s", fmt.Sprintf("%.1f", s.res.PerSecond(st.OK.Load())))
	return nil
}

// startSide starts what runs beside the writers: the fault runner and the hooks, both timed from
// the load's start. Wait on the result after cancelling ctx.
func startSide(ctx context.Context, s *state, log *slog.Logger, start time.Time) *sync.WaitGroup {
	var side sync.WaitGroup
	if s.faults != nil {
		side.Add(1)
		go func() {
			defer side.Done()
			if err := s.faults.Run(ctx); err != nil {
				s.res.FaultErr = errors.Join(s.res.FaultErr, err)
				log.Error("fault failed", "err", err)
			}
		}()
	}
	for _, h := range s.o.Hooks {
		side.Add(1)
		go func() {
			defer side.Done()
			if !sleep.Until(ctx, start.Add(h.At)) {
				return
			}
			log.Info("hook", "hook", h.Name)
			if err := h.Do(ctx, s.env); err != nil {
				log.Error("hook failed", "hook", h.Name, "err", err)
			}
		}()
	}
	return &side
}

// progressOf is the live display's line: rates since the last line, the faults active now.
func progressOf(s *state) *progress {
	var offered, acked, events rate
	last := time.Now()
	return &progress{w: s.o.Progress, terminal: s.o.Terminal, every: 5 * time.Second, line: func(el time.Duration) string {
		d := time.Since(last)
		last = time.Now()
		var ev int64
		for _, c := range s.cons.all {
			ev += c.Events()
		}
		st := &s.driver.Stats
		var active []string
		if s.faults != nil {
			active = s.faults.ActiveLabels()
		}
		return fmt.Sprintf("%s/%s offered %.0f/s acked %.0f/s dropped %d events %d (%.0f/s) faults %s",
			el, s.sc.Duration.D(), offered.per(st.Offered.Load(), d), acked.per(st.OK.Load(), d), st.Dropped.Load(),
			ev, events.per(ev, d), faultList(active))
	}}
}
