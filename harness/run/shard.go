package run

import (
	"errors"
	"fmt"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/shard"
)

// FaultOwner is the agent of a sharded run that injects its faults (the others record them).
const FaultOwner = 1

// allTenantSlots are the names of every tenant of the scenario (tenant_<N>), whichever agent drives
// it: the targets every agent expands the fault schedule against, so that they expand it alike.
func (s *state) allTenantSlots() []string {
	var out []string
	for _, t := range s.sc.Expand() {
		out = append(out, faults.TenantSlot(t.Index))
	}
	return out
}

// checkOwnerTargets refuses a fault of a sharded run that acts on a tenant agent FaultOwner does not
// drive, naming the fault, its tenant and agent FaultOwner's tenants.
func (s *state) checkOwnerTargets(inst []faults.Instance) error {
	own := map[string]bool{}
	for _, t := range s.env.Tenants() {
		own[t] = true
	}
	for _, in := range inst {
		k, ok := faults.Lookup(in.Kind)
		if !ok || k.Targets != faults.TargetTenant {
			continue
		}
		for _, t := range in.Slots {
			if !own[t] {
				return fmt.Errorf("fault %s (%s, %s) acts on %s, which agent %d of this sharded run does not drive: agent %d injects every fault, so a tenant fault must act on one of its tenants (%v)",
					in.ID, in.Kind, in.Source, t, FaultOwner, FaultOwner, s.env.Tenants())
			}
		}
	}
	return nil
}

// CheckShard refuses options a sharded run cannot honour, naming the flag: an agent drives its share
// of an external service's tenants (--target) and needs whole tenants to drive.
//
// Faults: one agent owns them. Agent 1 injects the scenario's faults (expanded alike on every agent
// from the seed and the scenario's whole tenant list) and the others record each one at its
// scheduled times without injecting it (injected_by: 1), so every ledger shows the fault windows and
// the merge keeps agent 1's records only. A fault that acts on a tenant must therefore act on one of
// agent 1's tenants (the schedule phase names them when it does not).
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
	if o.Replay != "" {
		return errors.New("--replay with --shard: a sharded run's agents expand the scenario's faults alike from its seed; replaying one agent's schedule.json is not supported (docs/scale-out.md)")
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
