// Package target describes the services seqgate runs against with --target: a profile knows how a
// service provisions tenants and says they are usable, where each tenant's events live (a database
// per tenant, or one table with a tenant column) and which DSN parameters the audit needs. The
// profiles are an explicit list (Names); `generic` takes its layout from flags.
package target

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Profile names.
const (
	Eventlogd = "eventlogd"
	Drive9    = "drive9"
	Generic   = "generic"
)

// Names lists the profiles, default first.
var Names = []string{Eventlogd, Drive9, Generic}

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
	Profile string // "" = eventlogd
	// AuditDB is the database template (placeholders {tenant}, {tenant_nodash}, {pool}); "" keeps the
	// profile's. A template without a placeholder names one database shared by every tenant.
	AuditDB string
	// TenantColumn is the events table's tenant column, "none" for a table that holds one tenant
	// only; "" keeps the profile's.
	TenantColumn string
	// Service, when set, is the service itself (its name, readiness, layout and wire), instead of
	// the built-in profile Profile names: a service seqgate does not ship is one Service value
	// (docs/external.md, "Adding a service").
	Service *Service
}

// Service is everything seqgate needs to know of a service's API and its tenants' events, in one
// value: a new service is one Service (and, to start its pods, one pod profile naming it).
type Service struct {
	Name  string
	Ready Readiness
	// Wire is its HTTP API: provisioning, status, each op's request, the stream, the change feed,
	// the listing (nil: drive9's, Drive9Wire).
	Wire *Wire
	// AuditDB is the database template of each tenant's events (placeholders {tenant},
	// {tenant_nodash}, {pool}), TenantColumn the events table's tenant column ("" when each tenant
	// has its own database). AuditDB "" leaves them to --audit-db and --tenant-column.
	AuditDB, TenantColumn string
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
	wire *Wire // nil: Drive9Wire
	// database returns where tenant's events live; dbDoc describes it for messages.
	database func(Tenant) (string, error)
	dbDoc    string
	needsID  bool
}

// Database returns the database that holds tenant's events under this profile.
func (p *Profile) Database(t Tenant) (string, error) { return p.database(t) }

// New resolves the profile the options name. audit says whether the run reads the service's
// database (--dsn given): only then must generic know where the events are.
func New(o Options, audit bool) (*Profile, error) {
	name := o.Profile
	if name == "" {
		name = Eventlogd
	}
	var p *Profile
	switch {
	case o.Service != nil:
		sv := o.Service
		if sv.Name == "" {
			return nil, fmt.Errorf("target service: no name")
		}
		p = &Profile{Name: sv.Name, Ready: sv.Ready, TenantColumn: sv.TenantColumn, wire: sv.Wire}
		if sv.AuditDB != "" {
			if err := p.setTemplate(sv.AuditDB); err != nil {
				return nil, fmt.Errorf("target service %s: %w", sv.Name, err)
			}
		} else if audit && o.AuditDB == "" {
			return nil, fmt.Errorf("target service %s: --audit-db TEMPLATE is required with --dsn (placeholders %s)", sv.Name, placeholderList())
		}
	default:
		p, err := builtin(name, o, audit)
		if err != nil {
			return nil, err
		}
		return p.apply(o)
	}
	return p.apply(o)
}

// builtin is the profile of a service seqgate ships.
func builtin(name string, o Options, audit bool) (*Profile, error) {
	var p *Profile
	switch name {
	case Eventlogd:
		p = &Profile{Name: name, Ready: ReadyAtOnce, TenantColumn: "tenant_id"}
		if err := p.setTemplate("{pool}"); err != nil {
			return nil, err
		}
	case Drive9:
		p = &Profile{Name: name, Ready: ReadyStatus, database: drive9Database, dbDoc: "drive9_<tenant id without dashes>", needsID: true}
	case Generic:
		p = &Profile{Name: name, Ready: ReadyStatusIfServed}
		if audit && o.AuditDB == "" {
			return nil, fmt.Errorf("--target-profile generic: --audit-db TEMPLATE is required with --dsn (the database of each tenant's events, e.g. 'events' or 'app_{tenant_nodash}'; placeholders %s)", placeholderList())
		}
		if audit && o.TenantColumn == "" {
			return nil, fmt.Errorf("--target-profile generic: --tenant-column is required with --dsn (the fs_events column naming the tenant, or 'none' when each tenant has its own database)")
		}
	default:
		return nil, fmt.Errorf("--target-profile %q: unknown (allowed: %s)", name, strings.Join(Names, ", "))
	}
	return p, nil
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

// drive9Database is drive9's local provisioner's name for a tenant's database
// (pkg/tenant/local/provisioner.go, databaseName): "drive9_" + the tenant id lower-cased with
// everything but letters, digits and _ removed, cut to 64 characters.
func drive9Database(t Tenant) (string, error) {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(t.ID)) {
		if r == '-' {
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("tenant id %q gives no drive9 database name", t.ID)
	}
	name := "drive9_" + b.String()
	if len(name) > 64 {
		name = name[:64]
	}
	return name, nil
}

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
