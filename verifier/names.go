package verifier

// nameScopes makes every tenant and consumer of the ledger appear in the summary, and says in each
// per-tenant and per-consumer entry whose numbers they are: the tenant's name (the scenario's, e.g.
// tenant_2, from the run record) and the service's id. The summary's tenants list pairs the two.
func nameScopes(s *Summary, ix *index) {
	mode := map[string]string{}
	cold := map[string]bool{}
	for _, t := range ix.run.Tenants {
		mode[t.ID], cold[t.ID] = t.Mode, t.Cold
	}
	for i, id := range ix.tenantNames {
		name := ix.tenantName(int32(i))
		st := s.tenant(name)
		st.Tenant, st.TenantID = name, id
		s.Tenants = append(s.Tenants, TenantInfo{Name: name, ID: id, Mode: mode[id], Cold: cold[id]})
	}
	for _, c := range ix.cons {
		st := s.consumer(c.id)
		st.Tenant, st.TenantID = ix.tenantName(c.tenant), ix.tenantNames[c.tenant]
	}
}
