package run

import (
	"errors"
	"fmt"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/shard"
)

// CheckShard refuses options a sharded run cannot honour, naming the flag: an agent drives its share
// of an external service's tenants (--target), injects no faults, and needs whole tenants to drive.
//
// Why no faults: the faults a scenario names act on tenants and pods that other agents drive, a
// service the agents did not start has no pods of theirs to crash, and a fault's window would be
// judged against other agents' clocks, which agree only as well as their hosts' wall clocks do.
// Chaos against a sharded run is the operator's (their own fault tooling), outside the ledger.
func CheckShard(o Options) error {
	if !o.Shard.Sharded() {
		return nil
	}
	if o.Target == "" {
		return fmt.Errorf("--shard %s needs --target: the agents of a sharded run drive one service they did not start", o.Shard)
	}
	if o.APIKey != "" && o.Shard.N > 1 {
		return fmt.Errorf("--shard %s with --api-key: one existing tenant cannot be split among agents", o.Shard)
	}
	sc := o.Scenario
	switch {
	case len(sc.Faults) > 0 || sc.Nemesis != nil:
		return fmt.Errorf("--shard %s: scenario %s has faults (%d in the timeline, nemesis %v); a sharded run injects none (docs/scale-out.md): remove them or run without --shard",
			o.Shard, sc.Name, len(sc.Faults), sc.Nemesis != nil)
	case o.Replay != "":
		return errors.New("--replay replays faults, and a sharded run injects none (docs/scale-out.md)")
	case o.Toxiproxy != "":
		return errors.New("--toxiproxy is for DB faults, and a sharded run injects none (docs/scale-out.md)")
	}
	return shard.Check(o.Shard, sc)
}

// slots are the tenant slots this run drives: all of the scenario's, or an agent's share.
func (s *state) slots() []scenario.Tenant {
	all := s.sc.Expand()
	if !s.o.Shard.Sharded() {
		return all
	}
	owner := shard.Assign(all, s.sc.Seed, s.o.Shard.N)
	var out []scenario.Tenant
	for _, t := range all {
		if owner[t.Index] == s.o.Shard.K {
			out = append(out, t)
		}
	}
	return out
}
