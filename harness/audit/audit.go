// Package audit reads, after the load, the fs_events rows a run produced in each tenant's database
// (directly, not through a proxy) and writes them as ledger `persisted` records; it also answers the
// drain phase's question "what is this tenant's head seq now".
package audit

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// Head returns the tenant's highest fs_events seq (0 when it has none).
func Head(ctx context.Context, db *sql.DB, tenant string) (int64, error) {
	var head sql.NullInt64
	err := db.QueryRowContext(ctx, "SELECT MAX(seq) FROM fs_events WHERE tenant_id = ?", tenant).Scan(&head)
	return head.Int64, err
}

// likePrefix escapes a LIKE pattern's wildcards in prefix and appends %.
func likePrefix(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(prefix) + "%"
}

// Tenant writes one persisted record per fs_events row of tenant whose path starts with prefix (the
// run's own rows), in seq order, and returns how many it wrote.
func Tenant(ctx context.Context, db *sql.DB, tenant, prefix string, sink ledger.Sink) (int, error) {
	rows, err := db.QueryContext(ctx, "SELECT seq, op, path, created_at FROM fs_events WHERE tenant_id = ? AND path LIKE ? ORDER BY seq",
		tenant, likePrefix(prefix))
	if err != nil {
		return 0, err
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
			return n, err
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
	return n, rows.Err()
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
