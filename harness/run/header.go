package run

import (
	"sync"

	"github.com/seqgate/seqgate/ledger"
)

// headedSink holds records back until the run header is written: pods start (and are recorded)
// before the tenants are provisioned, but the run record, which lists the tenants, must be line one.
type headedSink struct {
	w *ledger.Writer

	mu      sync.Mutex
	started bool
	pending []ledger.Record
}

func (h *headedSink) Write(r *ledger.Record) error {
	h.mu.Lock()
	if !h.started {
		h.pending = append(h.pending, *r)
		h.mu.Unlock()
		return nil
	}
	h.mu.Unlock()
	return h.w.Write(r)
}

// TenantRecordsAbove is the count of tenants past which the run record does not list them: a run
// of more tenants writes one tenant record each right after the run record instead (readers present
// both the same way), so that no ledger line grows with the run's size.
const TenantRecordsAbove = 2000

// header writes the run record (and, for a run of more than TenantRecordsAbove tenants, its tenant
// records), then everything held back, and lets later records through.
func (h *headedSink) header(run *ledger.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started {
		return nil
	}
	tenants := run.Tenants
	if len(tenants) > TenantRecordsAbove {
		r := *run
		r.Tenants = nil
		run = &r
	}
	if err := h.w.Write(run); err != nil {
		return err
	}
	if run.Tenants == nil {
		for _, t := range tenants {
			if err := h.w.Write(&ledger.Record{K: ledger.KindTenant, ID: t.ID, Mode: t.Mode, Cold: t.Cold, Name: t.Name}); err != nil {
				return err
			}
		}
	}
	for i := range h.pending {
		if err := h.w.Write(&h.pending[i]); err != nil {
			return err
		}
	}
	h.started, h.pending = true, nil
	return nil
}
