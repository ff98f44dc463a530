package verifier

import "github.com/seqgate/seqgate/ledger"

// FaultTenantDelete is the fault kind that deletes a tenant during a run (seqgate's addition to the
// ledger, docs/ledger-v1.md): its key is refused from then on and its streams end, so what its
// consumers had not received by then is counted as tenant_gone, not undelivered, and its losses are
// explained like any other (the service's tenant_gone drop counter), never excused.
const FaultTenantDelete = "tenant_delete"

// observeDeletion notes a tenant_delete fault: the tenant it names (the record's tenant, else its
// target when that is a tenant id) and when it started. A record with an error (the deletion may not
// have happened) withdraws it: the tenant is judged as one that lived.
func (ix *index) observeDeletion(r *ledger.Record) {
	if r.Kind != FaultTenantDelete {
		return
	}
	if ix.gone == nil {
		ix.gone, ix.goneFailed, ix.goneBy = map[int32]int64{}, map[string]bool{}, map[string]int32{}
	}
	if r.Err != "" {
		ix.goneFailed[r.ID] = true
		if ti, ok := ix.goneBy[r.ID]; ok {
			delete(ix.gone, ti)
		}
		return
	}
	if r.Phase != "start" || ix.goneFailed[r.ID] {
		return
	}
	name := r.Tenant
	if name == "" {
		name = r.Target
	}
	ti, ok := ix.tenantIDs[name]
	if !ok {
		ix.warnf("fault %s: tenant_delete of %q, which is not a tenant of the run record: ignored", r.ID, name)
		return
	}
	if _, seen := ix.gone[ti]; !seen {
		ix.gone[ti] = r.T
		ix.goneBy[r.ID] = ti
	}
}

// deletedAt reports when tenant ti was deleted during the run, if it was.
func (ix *index) deletedAt(ti int32) (int64, bool) {
	t, ok := ix.gone[ti]
	return t, ok
}
