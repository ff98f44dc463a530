package audit

import (
	"context"
	"fmt"
	"time"
)

// BacklogPrefix starts the path of every backlog row: outside every run's prefix (/seqgate/<run_id>/),
// so the audit never reads a backlog row and no consumer expects one.
const BacklogPrefix = "/seqgate-backlog/"

// Backlog writes rows events rows for tenant, all created at createdAt, with paths under
// BacklogPrefix: the old rows a retention sweep must delete while a run writes. It doubles the rows
// with INSERT ... SELECT (a few statements for millions of rows) rather than sending each one. It
// writes the columns eventlogd's table needs (a table whose other columns have no default, as
// drive9's `ts`, refuses it: eventlogd pods only).
func (t Table) Backlog(ctx context.Context, tenant string, rows int, createdAt time.Time) error {
	if rows < 1 {
		return nil
	}
	cols, vals, args := "path, op, created_at", "?, 'write', ?", []any{BacklogPrefix + "0", createdAt.UTC()}
	if t.TenantColumn != "" {
		cols, vals, args = quote(t.TenantColumn)+", "+cols, "?, "+vals, append([]any{tenant}, args...)
	}
	if _, err := t.DB.ExecContext(ctx, "INSERT INTO "+EventsTable+" ("+cols+") VALUES ("+vals+")", args...); err != nil {
		return fmt.Errorf("database %s: backlog of tenant %s: %w", t.Database, tenant, err)
	}
	// Each round copies up to as many backlog rows as there are, with the same created_at, each under a
	// path of its own: the prefix, the source row's seq and the round (a row is copied once a round).
	sel := "?, CONCAT(?, seq, '-', ?), op, created_at"
	if t.TenantColumn == "" {
		sel = "CONCAT(?, seq, '-', ?), op, created_at"
	}
	for have, round := 1, 1; have < rows; round++ {
		n := min(have, rows-have)
		w, wargs := t.where(tenant, "path LIKE ?", likePrefix(BacklogPrefix))
		var qargs []any
		if t.TenantColumn != "" {
			qargs = append(qargs, tenant)
		}
		qargs = append(append(qargs, BacklogPrefix, round), wargs...)
		q := "INSERT INTO " + EventsTable + " (" + cols + ") SELECT " + sel + " FROM " + EventsTable + w + " LIMIT ?"
		if _, err := t.DB.ExecContext(ctx, q, append(qargs, n)...); err != nil {
			return fmt.Errorf("database %s: backlog of tenant %s (%d of %d rows written): %w", t.Database, tenant, have, rows, err)
		}
		have += n
	}
	return nil
}
