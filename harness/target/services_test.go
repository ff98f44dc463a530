package target

import "strings"

// The three kinds of service the profile logic tells apart, as the tests' own values (the services
// seqgate ships are package harness/service's, and tested there): a pooled layout with a tenant
// column whose tenants are ready at once; a database per tenant named by a function, ready when its
// status says so; no layout of its own, with a status endpoint only if served.
var (
	pooled    = &Service{Name: "pooled", Ready: ReadyAtOnce, AuditDB: "{pool}", TenantColumn: "tenant_id"}
	perTenant = &Service{Name: "per-tenant", Ready: ReadyStatus, DatabaseDoc: "drive9_<id without dashes>",
		Database: func(t Tenant) (string, error) {
			return "drive9_" + strings.ToLower(strings.ReplaceAll(t.ID, "-", "")), nil
		}}
	bare = &Service{Name: "bare", Ready: ReadyStatusIfServed}
)
