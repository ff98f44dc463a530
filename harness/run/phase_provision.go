package run

import (
	"context"
	"log/slog"

	"github.com/seqgate/seqgate/harness/consumer"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/provenance"
	"github.com/seqgate/seqgate/ledger"
)

// provisionPhase creates every tenant of the scenario on the target, then writes the run record (and
// the pod records held back until now) and builds the faults' view of the run.
func provisionPhase(ctx context.Context, s *state, log *slog.Logger) error {
	tenants, err := s.target.provision(ctx, s, log)
	if err != nil {
		return err
	}
	s.tenants = tenants
	s.env = &env{pool: map[string]string{}, ids: map[string]string{}, consumers: map[string][]*consumer.Consumer{}, proxies: s.sys.proxies, fleet: s.sys.fleet, token: s.sys.adminToken}
	for _, t := range s.tenants {
		s.env.tenants = append(s.env.tenants, t.Name())
		s.env.pool[t.Name()] = t.Pool
		s.env.ids[t.Name()] = t.ID
		s.res.Tenants = append(s.res.Tenants, TenantName{Name: t.Name(), ID: t.ID})
	}
	budget := s.sc.Budget
	rec := &ledger.Record{K: ledger.KindRun, V: ledger.Version, RunID: s.id, Scenario: s.sc.Name, Seed: s.sc.Seed,
		StartUnixNs: s.start.UnixNano(), Budget: &budget, Target: s.sys.name, Thresholds: s.sc.Thresholds, Pods: s.sys.podNames(),
		Audit: s.sys.audited, Profile: s.sys.profile, Metrics: s.sc.Metrics, Resync: resyncs(s.sc)}
	for _, t := range s.tenants {
		rec.Tenants = append(rec.Tenants, ledger.Tenant{ID: t.ID, Mode: t.Mode, Cold: t.Cold, Name: t.Name()})
	}
	if sh := s.o.Shard; sh.Sharded() {
		rec.Shard = &ledger.Shard{K: sh.K, N: sh.N}
	}
	if p := s.o.Provenance.Clone(); p != nil {
		p.Machine = provenance.Machine()
		rec.Provenance = p
	}
	return s.sink.header(rec)
}

// resyncs is the run record's resync: whether consumers of this run list after a reset. It is
// true when any consumer block resyncs; a block with resync: false in such a run has its resets
// judged all the same, so the events they pass are unproven (the run cannot pass on them).
func resyncs(sc *scenario.Scenario) bool {
	for _, c := range sc.Consumers {
		if c.IsResync() && c.Count > 0 {
			return true
		}
	}
	return false
}
