// Package target is what seqgate needs to know of a service it runs against: how the service
// provisions tenants and says they are usable, its HTTP API (Wire), where each tenant's events live
// (a database per tenant, or one table with a tenant column) and which DSN parameters the audit
// needs. A service is one Service value; the services seqgate ships, and the names the command line
// takes, are the registry of package harness/service.
package target

import (
	"fmt"
	"slices"
	"strings"
)

// Readiness says how a profile learns that a provisioned tenant is usable.
type Readiness int

const (
	// ReadyAtOnce: the provision answer means the tenant is usable (eventlogd).
	ReadyAtOnce Readiness = iota
	// ReadyStatus: GET /v1/status (with the tenant's key) until it says "active" (drive9).
	ReadyStatus
	// ReadyStatusIfServed: as ReadyStatus, but a service that answers 404 or 405 there has no status
	// endpoint and its tenants count as ready at once (generic).
	ReadyStatusIfServed
)

// Tenant is one provisioned tenant as the service named it.
type Tenant struct {
	ID   string // the service's tenant_id
	Key  string // its API key
	Pool string // the pool it went to (eventlogd answers it; else the pool seqgate asked for)
}

// Options are the command line's choices (--target-profile, --audit-db, --tenant-column).
type Options struct {
	// Profile names a service of the registry (package harness/service; "" = its first,
	// eventlogd), which resolves it into Service.
	Profile string
	// AuditDB is the database template (placeholders {tenant}, {tenant_nodash}, {pool}); "" keeps the
	// profile's. A template without a placeholder names one database shared by every tenant.
	AuditDB string
	// TenantColumn is the events table's tenant column, "none" for a table that holds one tenant
	// only; "" keeps the profile's.
	TenantColumn string
	// Service is the service itself (its name, readiness, layout and wire): New needs it. The
	// registry of package harness/service fills it from Profile.
	Service *Service
}

// Service is everything seqgate needs to know of a service's API and its tenants' events, in one
// value: a new service is one Service (in a service definition of package harness/service, beside
// its pod profile).
type Service struct {
	Name  string
	Ready Readiness
	// Wire is its HTTP API: provisioning, status, each op's request, the stream, the change feed,
	// the listing (nil: drive9's, Drive9Wire).
	Wire *Wire
	// AuditDB is the database template of each tenant's events (placeholders {tenant},
	// {tenant_nodash}, {pool}), TenantColumn the events table's tenant column ("" when each tenant
	// has its own database).
	AuditDB, TenantColumn string
	// Database, for a service whose databases a template cannot name, is where a tenant's events
	// live (instead of AuditDB), DatabaseDoc what it does, for messages; it needs the tenant's id.
	Database    func(Tenant) (string, error)
	DatabaseDoc string
	// With neither AuditDB nor Database the service has no layout of its own: an audited run must
	// give --audit-db and --tenant-column.
}

// Profile is one service's conventions, resolved from Options.
type Profile struct {
	Name  string
	Ready Readiness
	// SendPool: the provision request names the pool ({"pool": ...}); else its body is {}. Only
	// seqgate's own eventlogd pods are asked for a pool: their pools are the scenario's. An external
	// eventlogd has its operator's pools, puts a tenant in the first free one and answers which.
	SendPool bool
	// ProvisionToken, when set, is sent on every provision request (X-Provision-Token): eventlogd
	// refuses to provision without its token.
	ProvisionToken string
	// TenantColumn is the events table's column naming the tenant; "" when each tenant has its own database.
	TenantColumn string
	wire         *Wire // nil: Drive9Wire
	// database returns where tenant's events live; dbDoc describes it for messages.
	database func(Tenant) (string, error)
	dbDoc    string
	needsID  bool
}

// Database returns the database that holds tenant's events under this profile.
func (p *Profile) Database(t Tenant) (string, error) { return p.database(t) }

// New resolves the profile of the service o names (o.Service). audit says whether the run reads the
// service's database (--dsn given): only then must a service without a layout of its own be told
// where the events are.
func New(o Options, audit bool) (*Profile, error) {
	sv := o.Service
	if sv == nil {
		return nil, fmt.Errorf("target profile %q: no service given (the registry of package harness/service resolves the name)", o.Profile)
	}
	if sv.Name == "" {
		return nil, fmt.Errorf("target service: no name")
	}
	p := &Profile{Name: sv.Name, Ready: sv.Ready, TenantColumn: sv.TenantColumn, wire: sv.Wire}
	switch {
	case sv.Database != nil:
		p.database, p.dbDoc, p.needsID = sv.Database, sv.DatabaseDoc, true
	case sv.AuditDB != "":
		if err := p.setTemplate(sv.AuditDB); err != nil {
			return nil, fmt.Errorf("target service %s: %w", sv.Name, err)
		}
	case audit && o.AuditDB == "":
		return nil, fmt.Errorf("--target-profile %s: --audit-db TEMPLATE is required with --dsn (the database of each tenant's events, e.g. 'events' or 'app_{tenant_nodash}'; placeholders %s)", sv.Name, placeholderList())
	case audit && o.TenantColumn == "":
		return nil, fmt.Errorf("--target-profile %s: --tenant-column is required with --dsn (the fs_events column naming the tenant, or 'none' when each tenant has its own database)", sv.Name)
	}
	return p.apply(o)
}

// apply makes --audit-db and --tenant-column override the profile's layout.
func (p *Profile) apply(o Options) (*Profile, error) {
	if o.AuditDB != "" {
		if err := p.setTemplate(o.AuditDB); err != nil {
			return nil, err
		}
	}
	switch o.TenantColumn {
	case "":
	case "none":
		p.TenantColumn = ""
	default:
		if !validIdent(o.TenantColumn) {
			return nil, fmt.Errorf("--tenant-column %q: not a column name (letters, digits, _ and $; or 'none')", o.TenantColumn)
		}
		p.TenantColumn = o.TenantColumn
	}
	return p, nil
}

// placeholders a database template may use.
var placeholders = []string{"{tenant}", "{tenant_nodash}", "{pool}"}

func placeholderList() string { return strings.Join(placeholders, ", ") }

// setTemplate makes the profile's databases come from tmpl; an unknown or unclosed placeholder is an error.
func (p *Profile) setTemplate(tmpl string) error {
	rest := tmpl
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return fmt.Errorf("--audit-db %q: unclosed %q (placeholders: %s)", tmpl, rest[i:], placeholderList())
		}
		ph := rest[i : i+j+1]
		if !slices.Contains(placeholders, ph) {
			return fmt.Errorf("--audit-db %q: unknown placeholder %s (allowed: %s)", tmpl, ph, placeholderList())
		}
		rest = rest[i+j+1:]
	}
	if strings.ContainsAny(tmpl, "`\x00/") {
		return fmt.Errorf("--audit-db %q: not a database name", tmpl)
	}
	p.dbDoc = tmpl
	p.needsID = strings.Contains(tmpl, "{tenant")
	p.database = func(t Tenant) (string, error) {
		r := strings.NewReplacer("{tenant}", t.ID, "{tenant_nodash}", strings.ReplaceAll(t.ID, "-", ""), "{pool}", t.Pool)
		name := r.Replace(tmpl)
		if name == "" {
			return "", fmt.Errorf("--audit-db %q gives tenant %s an empty database name", tmpl, t.ID)
		}
		return name, nil
	}
	return nil
}

// Layout describes, for messages and the log, where the profile looks for events.
func (p *Profile) Layout() string {
	col := "no tenant column (one tenant per database)"
	if p.TenantColumn != "" {
		col = "tenant column " + p.TenantColumn
	}
	return fmt.Sprintf("database %s, table fs_events, %s", p.dbDoc, col)
}

// NeedsTenantID reports whether a tenant's database is found from its id (so a tenant given by
// --api-key alone must also be given its id).
func (p *Profile) NeedsTenantID() bool { return p.needsID }

func validIdent(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
