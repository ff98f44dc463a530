package target

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/harness/audit"
)

// DSN parameters seqgate sets on every DSN it opens unless the user set them: the audit scans
// DATETIME columns (parseTime) and must not hang on a dead server.
const (
	DialTimeout = 5 * time.Second
	IOTimeout   = 30 * time.Second
)

// Server is the --dsn of an external service: the server holding the tenants' databases.
type Server struct {
	cfg *mysql.Config
}

// ParseServer parses --dsn. The database name in it, if any, is the default database of a profile
// whose template names none.
func ParseServer(dsn string) (*Server, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("--dsn %q: %w", dsn, err)
	}
	return &Server{cfg: cfg}, nil
}

// DSN returns the DSN of database on the server, with parseTime and the timeouts set (a value the
// user gave in --dsn wins over the defaults; parseTime is always on, the audit needs it).
func (s *Server) DSN(database string) string {
	c := s.cfg.Clone()
	c.DBName = database
	c.ParseTime = true
	if c.Timeout == 0 {
		c.Timeout = DialTimeout
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = IOTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = IOTimeout
	}
	return c.FormatDSN()
}

// Tables are the audit's view of every tenant's events, one *sql.DB per database.
type Tables struct {
	ByTenant map[string]audit.Table
	dbs      map[string]*sql.DB
}

// Close closes every database handle.
func (t *Tables) Close() error {
	var errs []error
	for _, db := range t.dbs {
		errs = append(errs, db.Close())
	}
	return errors.Join(errs...)
}

// Open opens the database of each tenant on the server and checks its events table's shape. An error
// names the profile, the tenant and the missing table or column, so it can be read before any load.
// On error nothing stays open.
func (p *Profile) Open(ctx context.Context, srv *Server, tenants []Tenant) (*Tables, error) {
	ts := &Tables{ByTenant: map[string]audit.Table{}, dbs: map[string]*sql.DB{}}
	for _, t := range tenants {
		name, err := p.database(t)
		if err != nil {
			ts.Close()
			return nil, fmt.Errorf("target profile %s: %w", p.Name, err)
		}
		if name == "" {
			name = srv.cfg.DBName
		}
		if name == "" {
			ts.Close()
			return nil, fmt.Errorf("target profile %s: no database for tenant %s: give --audit-db or a database in --dsn", p.Name, t.ID)
		}
		db, ok := ts.dbs[name]
		if !ok {
			if db, err = sql.Open("mysql", srv.DSN(name)); err != nil {
				ts.Close()
				return nil, fmt.Errorf("target profile %s: database %s: %w", p.Name, name, err)
			}
			db.SetMaxOpenConns(2)
			ts.dbs[name] = db
		}
		ts.ByTenant[t.ID] = audit.Table{DB: db, Database: name, TenantColumn: p.TenantColumn}
	}
	// Check each database once (tenants sharing one share its check), in a stable order.
	checked := map[string]error{}
	ids := make([]string, 0, len(tenants))
	for _, t := range tenants {
		ids = append(ids, t.ID)
	}
	sort.Strings(ids)
	for _, id := range ids {
		tb := ts.ByTenant[id]
		err, done := checked[tb.Database]
		if !done {
			cctx, cancel := context.WithTimeout(ctx, IOTimeout)
			err = tb.Check(cctx)
			cancel()
			checked[tb.Database] = err
		}
		if err != nil {
			ts.Close()
			return nil, fmt.Errorf("target profile %s (%s): tenant %s: %w", p.Name, p.Layout(), id, err)
		}
	}
	return ts, nil
}
