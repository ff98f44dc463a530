package run

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/ledger"
)

// schedulePhase expands the fault timeline and nemesis with the seed (or loads the replayed run's),
// saves schedule.json and binds the faults to their targets. It comes after the consumers phase:
// consumer faults bind to the consumers.
func schedulePhase(_ context.Context, s *state, log *slog.Logger) error {
	var inst []faults.Instance
	if s.o.Replay != "" {
		sched, err := faults.LoadSchedule(filepath.Join(s.o.Replay, faults.ScheduleFile))
		if err != nil {
			return err
		}
		inst = sched.Faults
		log.Info("replaying fault schedule", "from", s.o.Replay)
	} else {
		ts := faults.TargetSet{Tenants: s.env.Tenants(), Pods: s.env.PodNames()}
		if s.o.Shard.Sharded() {
			ts.Tenants = s.allTenantSlots() // every agent expands the same schedule
		}
		var err error
		if inst, err = faults.Expand(s.sc.Faults, s.sc.Nemesis, s.sc.Seed, s.sc.Duration.D(), ts); err != nil {
			return err
		}
	}
	if err := faults.SaveSchedule(filepath.Join(s.o.Dir, faults.ScheduleFile), faults.Schedule{
		Scenario: s.sc.Name, Seed: s.sc.Seed, RunDuration: s.sc.Duration.D().String(), Faults: inst}); err != nil {
		return err
	}
	if len(inst) == 0 {
		return nil
	}
	log.Info("fault schedule", "faults", len(inst))
	logReach(s, log, inst)
	// Fault times count from the start of the load phase (set before the runner runs); their records
	// are moved onto the ledger's clock, which started before the pods.
	record := func(rec *ledger.Record) {
		rec.T += s.clock.at.Sub(s.start).Nanoseconds()
		_ = s.w.Write(rec)
	}
	clock := func() time.Duration { return time.Since(s.clock.at) }
	if sh := s.o.Shard; sh.Sharded() {
		if sh.K != FaultOwner {
			log.Info("sharded run: agent 1 injects the faults, this agent records them at their scheduled times", "faults", len(inst))
			s.faults = faults.NewRecordOnly(inst, FaultOwner, record, clock)
			return nil
		}
		if err := s.checkOwnerTargets(inst); err != nil {
			return err
		}
		inner := record
		record = func(rec *ledger.Record) { rec.InjectedBy = FaultOwner; inner(rec) }
	}
	runner, err := faults.NewRunner(s.env, inst, record, clock)
	if err != nil {
		return err
	}
	s.faults = runner
	return nil
}

// logReach says, for each tenant-DB fault whose proxy carries other tenants too (a shared pool, or a
// pod profile of layout admin_dsn where every tenant is behind one DB address), which tenants it
// reaches.
func logReach(s *state, log *slog.Logger, inst []faults.Instance) {
	byPool := map[string][]string{}
	for _, t := range s.env.Tenants() {
		byPool[s.env.pool[t]] = append(byPool[s.env.pool[t]], t)
	}
	for _, in := range inst {
		k, ok := faults.Lookup(in.Kind)
		if !ok || k.Targets != faults.TargetTenant || !strings.HasPrefix(in.Kind, "tenant_db_") {
			continue
		}
		reached := map[string]bool{}
		var pools []string
		for _, slot := range in.Slots {
			pool := s.env.pool[slot]
			if !slices.Contains(pools, pool) {
				pools = append(pools, pool)
			}
			for _, t := range byPool[pool] {
				reached[t] = true
			}
		}
		if len(reached) > len(in.Slots) {
			names := make([]string, 0, len(reached))
			for t := range reached {
				names = append(names, t)
			}
			slices.Sort(names)
			log.Info("tenant-DB fault reaches every tenant behind its proxy", "fault", in.ID, "kind", in.Kind,
				"target", strings.Join(in.Slots, ","), "proxy", strings.Join(pools, ","), "reaches", strings.Join(names, ","))
		}
	}
}
