package run

import (
	"context"
	"log/slog"
	"time"

	"github.com/seqgate/seqgate/harness/audit"
)

// auditPhase writes the persisted records: every fs_events row of this run, tenant by tenant, read
// directly (not through a proxy). Without direct connections (an external target without --dsn)
// there is nothing to read. A tenant that cannot be read is logged and skipped: the verifier sees
// its rows missing.
func auditPhase(_ context.Context, s *state, log *slog.Logger) error {
	if len(s.sys.direct) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	total := 0
	for _, t := range s.tenants {
		n, err := audit.Tenant(ctx, s.sys.direct[t.Pool], t.ID, s.driver.Path(t.ID, ""), s.w)
		if err != nil {
			log.Error("audit failed", "tenant", t.ID, "err", err)
			continue
		}
		total += n
	}
	log.Info("audit finished", "persisted", total)
	return nil
}
