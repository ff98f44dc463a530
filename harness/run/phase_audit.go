package run

import (
	"context"
	"log/slog"
	"time"

	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/ledger"
)

// auditPhase writes the persisted records: every fs_events row of this run, tenant by tenant, read
// directly (not through a proxy) from where the target says each tenant's events live, then the rows
// the audit passes during the run saw and this audit no longer found (absent: swept); then one audit
// record with the outcome, ok or not. A tenant that cannot be read does not stop the others, and the
// failure is in the ledger, never only in the log: the verifier must not take a run whose audit
// failed for one whose events were all checked. Without an audit (an external target without --dsn)
// there is nothing to read and no record.
func auditPhase(_ context.Context, s *state, log *slog.Logger) error {
	if !s.sys.audited {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ids := make([]string, 0, len(s.tenants))
	for _, t := range s.tenants {
		ids = append(ids, t.ID)
	}
	sink := ledger.Sink(s.w)
	if s.passes != nil {
		sink = s.passes.Final(s.w)
	}
	o := audit.Run(ctx, ids, s.sys.tables, func(id string) string { return s.driver.Path(id, "") }, sink)
	res := &AuditResult{OK: o.OK(), Tenants: o.Tenants, Rows: o.Rows}
	if s.passes != nil {
		// rows the passes saw and the final audit no longer found: swept, but they persisted
		n, err := s.passes.Absent(s.w)
		if err != nil {
			return err
		}
		res.Passes, res.FailedPasses = s.passes.Counts()
		res.Absent = n
		log.Info("audit passes during the run", "passes", res.Passes, "failed", res.FailedPasses, "absent_at_the_end", n)
	}
	rec := &ledger.Record{K: ledger.KindAudit, T: s.now(), OK: o.OK(), AuditTenants: int64(o.Tenants), Rows: int64(o.Rows)}
	if o.Err != nil {
		rec.Error = o.Err.Error()
		log.Error("audit failed", "tenants", o.Tenants, "of", len(ids), "persisted", o.Rows, "err", o.Err)
	} else {
		log.Info("audit finished", "tenants", o.Tenants, "persisted", o.Rows)
	}
	res.Error = rec.Error
	s.res.Audit = res
	return s.w.Write(rec)
}
