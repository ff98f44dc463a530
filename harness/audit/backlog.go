package audit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// BacklogPrefix starts the path of every backlog row: outside every run's prefix (/seqgate/<run_id>/),
// so the audit never reads a backlog row and no consumer expects one.
const BacklogPrefix = "/seqgate-backlog/"

// backlogBatch is the rows of one backlog INSERT (about 60 KB of statement).
const backlogBatch = 2000

// Backlog writes rows events rows for tenant, all created at createdAt, each under a path of its own
// below BacklogPrefix: the old rows a retention sweep must delete while a run writes. It sends them
// as multi-row INSERTs (INSERT ... SELECT from the same table would need the server's temporary
// tables). It writes the columns eventlogd's table needs: a table whose other columns have no
// default, as drive9's `ts`, refuses it (eventlogd pods only).
func (t Table) Backlog(ctx context.Context, tenant string, rows int, createdAt time.Time) error {
	cols, row := "path, op, created_at", "(?, 'write', ?)"
	if t.TenantColumn != "" {
		cols, row = quote(t.TenantColumn)+", "+cols, "(?, ?, 'write', ?)"
	}
	at := createdAt.UTC()
	for done := 0; done < rows; {
		n := min(backlogBatch, rows-done)
		args := make([]any, 0, 3*n)
		for i := done; i < done+n; i++ {
			if t.TenantColumn != "" {
				args = append(args, tenant)
			}
			args = append(args, BacklogPrefix+strconv.Itoa(i), at)
		}
		q := "INSERT INTO " + EventsTable + " (" + cols + ") VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
		if _, err := t.DB.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("database %s: backlog of tenant %s (%d of %d rows written): %w", t.Database, tenant, done, rows, err)
		}
		done += n
	}
	return nil
}
