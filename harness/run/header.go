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

// header writes the run record, then everything held back, and lets later records through.
func (h *headedSink) header(run *ledger.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started {
		return nil
	}
	if err := h.w.Write(run); err != nil {
		return err
	}
	for i := range h.pending {
		if err := h.w.Write(&h.pending[i]); err != nil {
			return err
		}
	}
	h.started, h.pending = true, nil
	return nil
}
