package verifier

// nameScopes lists every tenant of the ledger in the summary's tenants, and says in each per-tenant
// and per-consumer entry whose numbers they are: the tenant's name (the scenario's, e.g. tenant_2,
// from the run record) and the service's id. Only tenants and consumers with numbers have entries;
// every tenant entry names crash and silent in lost_by_reason, as the spec's lost_by_reason does.
func nameScopes(s *Summary, ix *index) {
	s.Tenants = make([]TenantInfo, 0, len(ix.tenantNames))
	for i, id := range ix.tenantNames {
		name := ix.tenantName(int32(i))
		if st, ok := s.PerTenant[name]; ok {
			st.Tenant, st.TenantID = name, id
			for _, k := range []string{ReasonCrash, ReasonSilent} {
				if _, ok := st.LostByReason[k]; !ok {
					st.LostByReason[k] = 0
				}
			}
		}
		l := ix.run.Listed[i] // a tenant the list does not name has no mode and is not cold
		s.Tenants = append(s.Tenants, TenantInfo{Name: name, ID: id, Mode: l.mode, Cold: l.cold})
	}
	for _, c := range ix.cons {
		if st, ok := s.PerConsumer[c.id]; ok {
			st.Tenant, st.TenantID = ix.tenantName(c.tenant), ix.tenantNames[c.tenant]
		}
	}
}
