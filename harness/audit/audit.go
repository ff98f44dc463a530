// Package audit reads, after the load, the fs_events rows a run produced in each tenant's database
// (directly, not through a proxy) and writes them as ledger `persisted` records; it also answers the
// drain phase's question "what is this tenant's head seq now", and checks before any load that the
// events table has the shape it will read.
package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/ledger"
)

// EventsTable is the table every audit reads.
const EventsTable = "fs_events"

// Columns are the columns of EventsTable the audit reads (besides the tenant column, when there is one).
var Columns = []string{"seq", "path", "op", "created_at"}

// Table says where one tenant's events live: a database and, when the database holds several tenants,
// the column that names the tenant ("" when the database holds one tenant only, as drive9's do).
type Table struct {
	DB           *sql.DB
	Database     string // the database's name, for messages and the schema check
	TenantColumn string
}

// where returns the WHERE clause that selects tenant's rows (with extra conditions), and its arguments.
func (t Table) where(tenant string, extra string, args ...any) (string, []any) {
	var conds []string
	var out []any
	if t.TenantColumn != "" {
		conds = append(conds, quote(t.TenantColumn)+" = ?")
		out = append(out, tenant)
	}
	if extra != "" {
		conds = append(conds, extra)
		out = append(out, args...)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), out
}

// quote quotes an identifier for MySQL; names with a backtick are refused by Check before any query.
func quote(name string) string { return "`" + name + "`" }

// Head returns the tenant's highest fs_events seq (0 when it has none).
func (t Table) Head(ctx context.Context, tenant string) (int64, error) {
	w, args := t.where(tenant, "")
	var head sql.NullInt64
	err := t.DB.QueryRowContext(ctx, "SELECT MAX(seq) FROM "+EventsTable+w, args...).Scan(&head)
	if err != nil {
		return 0, fmt.Errorf("database %s: head seq of tenant %s: %w", t.Database, tenant, err)
	}
	return head.Int64, nil
}

// Rows writes one persisted record per fs_events row of tenant whose path starts with prefix (the
// run's own rows), in seq order, and returns how many it wrote.
func (t Table) Rows(ctx context.Context, tenant, prefix string, sink ledger.Sink) (int, error) {
	return t.RowsAfter(ctx, tenant, prefix, -1, sink)
}

// RowsAfter is Rows for the rows with seq > after only (after < 0: every row).
func (t Table) RowsAfter(ctx context.Context, tenant, prefix string, after int64, sink ledger.Sink) (int, error) {
	w, args := t.where(tenant, "path LIKE ?", likePrefix(prefix))
	if after >= 0 {
		w, args = t.where(tenant, "path LIKE ? AND seq > ?", likePrefix(prefix), after)
	}
	rows, err := t.DB.QueryContext(ctx, "SELECT seq, op, path, created_at FROM "+EventsTable+w+" ORDER BY seq", args...)
	if err != nil {
		return 0, fmt.Errorf("database %s: read %s of tenant %s: %w", t.Database, EventsTable, tenant, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			seq      int64
			op, path string
			created  sql.NullTime
		)
		if err := rows.Scan(&seq, &op, &path, &created); err != nil {
			return n, fmt.Errorf("database %s: scan %s row of tenant %s: %w", t.Database, EventsTable, tenant, err)
		}
		rec := &ledger.Record{K: ledger.KindPersisted, Tenant: tenant, Seq: seq, Op: op, Path: path}
		if created.Valid {
			rec.CreatedUnixNs = created.Time.UnixNano()
		}
		if err := sink.Write(rec); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("database %s: read %s of tenant %s: %w", t.Database, EventsTable, tenant, err)
	}
	return n, nil
}

// errUnknownDatabase is MySQL's ER_BAD_DB_ERROR: connecting to a database that does not exist.
const errUnknownDatabase = 1049

// SchemaError is a table or column the audit needs and the database lacks.
type SchemaError struct {
	Database string
	Table    string
	Missing  []string // missing columns; empty when the table itself is missing
	Have     []string // the table's columns, when it exists
	NoDB     bool     // the database itself does not exist
}

func (e *SchemaError) Error() string {
	if e.NoDB {
		return fmt.Sprintf("there is no database %s (so no table %s)", e.Database, e.Table)
	}
	if len(e.Missing) == 0 {
		return fmt.Sprintf("database %s has no table %s", e.Database, e.Table)
	}
	return fmt.Sprintf("table %s.%s has no column %s (it has: %s)", e.Database, e.Table,
		strings.Join(e.Missing, ", "), strings.Join(e.Have, ", "))
}

// Check verifies that the database has EventsTable with every column the audit reads (and the
// tenant column, when there is one). A missing table or column is a *SchemaError.
func (t Table) Check(ctx context.Context) error {
	if strings.ContainsAny(t.TenantColumn, "`\x00") {
		return fmt.Errorf("tenant column %q: not a column name", t.TenantColumn)
	}
	rows, err := t.DB.QueryContext(ctx,
		"SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ?", t.Database, EventsTable)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == errUnknownDatabase {
		return &SchemaError{Database: t.Database, Table: EventsTable, NoDB: true}
	}
	if err != nil {
		return fmt.Errorf("database %s: read the schema of %s: %w", t.Database, EventsTable, err)
	}
	defer rows.Close()
	have := map[string]bool{}
	var names []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return fmt.Errorf("database %s: read the schema of %s: %w", t.Database, EventsTable, err)
		}
		have[strings.ToLower(c)] = true
		names = append(names, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("database %s: read the schema of %s: %w", t.Database, EventsTable, err)
	}
	if len(have) == 0 {
		var n int
		err := t.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", t.Database).Scan(&n)
		return &SchemaError{Database: t.Database, Table: EventsTable, NoDB: err == nil && n == 0}
	}
	need := slices.Clone(Columns)
	if t.TenantColumn != "" {
		need = append(need, t.TenantColumn)
	}
	var missing []string
	for _, c := range need {
		if !have[strings.ToLower(c)] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		sort.Strings(names)
		return &SchemaError{Database: t.Database, Table: EventsTable, Missing: missing, Have: names}
	}
	return nil
}

// likePrefix escapes a LIKE pattern's wildcards in prefix and appends %.
func likePrefix(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(prefix) + "%"
}

// Wait polls until reached reports true or the timeout passes; it reports whether it was reached.
func Wait(ctx context.Context, timeout, every time.Duration, reached func(context.Context) bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if reached(ctx) {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(every):
		}
	}
}

// Outcome is one audit attempt over every tenant of a run: what the ledger's audit record says.
type Outcome struct {
	Tenants int   // tenants whose rows were read completely
	Rows    int   // persisted records written
	Err     error // every tenant's failure, joined; nil when the audit is complete
}

// OK reports whether every tenant's rows were read.
func (o Outcome) OK() bool { return o.Err == nil }

// Run audits each tenant of tables (tenant id -> where its events are) in the order of ids, writing
// persisted records for the rows whose path starts with prefix(tenant). A tenant that fails does not
// stop the others; its error names it.
func Run(ctx context.Context, ids []string, tables map[string]Table, prefix func(tenant string) string, sink ledger.Sink) Outcome {
	var o Outcome
	var errs []string
	for _, id := range ids {
		t, ok := tables[id]
		if !ok {
			errs = append(errs, fmt.Sprintf("tenant %s: no database to audit", id))
			continue
		}
		n, err := t.Rows(ctx, id, prefix(id), sink)
		o.Rows += n
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		o.Tenants++
	}
	if len(errs) > 0 {
		o.Err = fmt.Errorf("audit of %d of %d tenants failed: %s", len(errs), len(ids), strings.Join(errs, "; "))
	}
	return o
}
