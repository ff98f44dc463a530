package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/internal/sleep"
)

// ErrNotFound means the tenant or key does not exist (or is no longer active).
var ErrNotFound = errors.New("not found")

// ErrPoolTaken means a dedicated pool already holds a tenant.
var ErrPoolTaken = errors.New("dedicated pool already holds a tenant")

// Tenant is one provisioned tenant.
type Tenant struct {
	ID     string
	PoolID string
	Status string
}

// Meta is the meta DB: tenants, keys and the signal plane. Its methods never touch a tenant DB.
type Meta struct {
	DB *sql.DB
	// UnorderedOutbox is the unordered-outbox defect: outbox transactions skip the order-row lock,
	// as eventlogd did before it took that lock, so outbox ids can become visible out of order.
	UnorderedOutbox bool
	// Retries counts this Meta's conflict retries (nil: not counted); see RetryCount.
	Retries *RetryCount

	hold outboxHold // the outbox_commit_delay failpoint (HoldOutboxCommits)
}

// outboxHold is a test-only failpoint: until the deadline, each outbox transaction of this pod stays
// open delay after its outbox insert took its ids.
type outboxHold struct {
	mu    sync.Mutex
	delay time.Duration
	until time.Time
}

// HoldOutboxCommits arms the failpoint for span (span 0 disarms): each outbox transaction this pod
// writes meanwhile waits delay between its outbox insert and its commit, as a pod that stalls
// mid-transaction does (a GC pause, a starved CPU, a slow link to the meta DB). Its outbox ids are
// then taken long before they become visible, the window an unordered outbox loses hints in.
func (m *Meta) HoldOutboxCommits(delay, span time.Duration) {
	m.hold.mu.Lock()
	defer m.hold.mu.Unlock()
	m.hold.delay, m.hold.until = delay, time.Now().Add(span)
}

// holdDelay is how long an outbox transaction starting now waits before its commit (0: none).
func (m *Meta) holdDelay() time.Duration {
	m.hold.mu.Lock()
	defer m.hold.mu.Unlock()
	if time.Now().Before(m.hold.until) {
		return m.hold.delay
	}
	return 0
}

// HashKey is how an API key is stored: hex SHA-256 (keys are 256-bit random, so no salt is needed).
func HashKey(key string) string {
	var h [KeyHashLen]byte
	HashKeyTo(&h, key)
	return string(h[:])
}

// KeyHashLen is the length of HashKey's answer.
const KeyHashLen = 2 * sha256.Size

// HashKeyTo writes HashKey(key) to dst, allocating nothing for a key of up to 256 bytes (the
// request path hashes every request's key).
func HashKeyTo(dst *[KeyHashLen]byte, key string) {
	var buf [256]byte
	var h [sha256.Size]byte
	if len(key) <= len(buf) {
		h = sha256.Sum256(append(buf[:0], key...))
	} else {
		h = sha256.Sum256([]byte(key))
	}
	hex.Encode(dst[:], h[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// CreateTenant provisions a tenant in poolID and returns it with its API key (shown once, stored
// hashed). When dedicated is true the pool is claimed first, so two pods cannot put two tenants in
// one dedicated pool.
func (m *Meta) CreateTenant(ctx context.Context, poolID string, dedicated bool) (Tenant, string, error) {
	t := Tenant{ID: "t" + randomHex(8), PoolID: poolID, Status: "active"}
	key := "k" + randomHex(32)
	tx, err := m.DB.BeginTx(ctx, nil)
	if err != nil {
		return Tenant{}, "", err
	}
	defer tx.Rollback()
	if dedicated {
		if _, err := tx.ExecContext(ctx, `INSERT INTO dedicated_pool_claims (pool_id, tenant_id) VALUES (?, ?)`, poolID, t.ID); err != nil {
			if isDuplicate(err) {
				return Tenant{}, "", ErrPoolTaken
			}
			return Tenant{}, "", err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO tenants (tenant_id, api_key_hash, pool_id, status, created_at) VALUES (?, ?, ?, 'active', ?)`,
		t.ID, HashKey(key), poolID, time.Now().UTC()); err != nil {
		return Tenant{}, "", err
	}
	// A new tenant has no events: its head hint starts at 0, so a stream of a never-written tenant
	// (since=0, or a reconnect at 0) is answered without its tenant DB.
	if _, err := tx.ExecContext(ctx, `INSERT INTO tenant_seq_head (tenant_id, head, updated_at) VALUES (?, 0, ?)`, t.ID, time.Now().UTC()); err != nil {
		return Tenant{}, "", err
	}
	return t, key, tx.Commit()
}

// TenantByKey returns the active tenant whose key hashes to keyHash, or ErrNotFound.
func (m *Meta) TenantByKey(ctx context.Context, keyHash string) (Tenant, error) {
	var t Tenant
	err := m.DB.QueryRowContext(ctx, `SELECT tenant_id, pool_id, status FROM tenants WHERE api_key_hash = ? AND status = 'active'`, keyHash).
		Scan(&t.ID, &t.PoolID, &t.Status)
	if errors.Is(err, sql.ErrNoRows) {
		return Tenant{}, ErrNotFound
	}
	return t, err
}

// Tenant returns the active tenant id, or ErrNotFound when it was deleted or never existed.
func (m *Meta) Tenant(ctx context.Context, id string) (Tenant, error) {
	var t Tenant
	err := m.DB.QueryRowContext(ctx, `SELECT tenant_id, pool_id, status FROM tenants WHERE tenant_id = ? AND status = 'active'`, id).
		Scan(&t.ID, &t.PoolID, &t.Status)
	if errors.Is(err, sql.ErrNoRows) {
		return Tenant{}, ErrNotFound
	}
	return t, err
}

// DeleteTenant marks a tenant deleted: its key stops working and its buffered events are dropped
// as tenant_gone. Rows stay (no cold-DB access).
func (m *Meta) DeleteTenant(ctx context.Context, id string) error {
	_, err := m.DB.ExecContext(ctx, `UPDATE tenants SET status = 'deleted' WHERE tenant_id = ?`, id)
	return err
}

// ActiveTenants returns every active tenant (for the seeded cold-DB sweeper defect only).
func (m *Meta) ActiveTenants(ctx context.Context) ([]Tenant, error) {
	rows, err := m.DB.QueryContext(ctx, `SELECT tenant_id, pool_id, status FROM tenants WHERE status = 'active'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Tenant
	for rows.Next() {
		var t Tenant
		if err := rows.Scan(&t.ID, &t.PoolID, &t.Status); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// InsertNotify writes one outbox row per tenant in a single statement: the cross-pod wake-up hint,
// marked with the writing pod (whose own streams were already woken through its bus).
func (m *Meta) InsertNotify(ctx context.Context, podID string, tenants []string) error {
	return m.InsertNotifyHeads(ctx, podID, tenants, nil)
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func insertNotify(ctx context.Context, db execer, podID string, tenants []string, now time.Time) error {
	if len(tenants) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO tenant_notify_outbox (tenant_id, work, pod_id, created_at) VALUES `)
	args := make([]any, 0, 3*len(tenants))
	for i, t := range tenants {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, 'sse', ?, ?)")
		args = append(args, t, podID, now)
	}
	_, err := db.ExecContext(ctx, b.String(), args...)
	return err
}

// InsertNotifyHeads is InsertNotify plus the head hints: in one transaction it raises each
// tenant's tenant_seq_head row to heads[tenant] (never lowers it) and writes the outbox rows.
// Because the hint and the wake commit together, a stream that read an older hint is woken by
// the outbox row that carries the newer one. Tenants with no seq (0) only get the outbox row.
func (m *Meta) InsertNotifyHeads(ctx context.Context, podID string, tenants []string, heads map[string]int64) error {
	if len(tenants) == 0 {
		return nil
	}
	return retryConflicts(ctx, m.Retries, func() error {
		tx, err := m.DB.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := insertNotifyHeadsTx(ctx, tx, podID, tenants, heads, !m.UnorderedOutbox, m.holdDelay()); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// InsertNotifyHeadsTx runs the statements of InsertNotifyHeads inside tx (the caller commits;
// tests hold one open while another commits). It first locks the single outbox order row, so the
// AUTO_INCREMENT ids are taken only after every earlier outbox transaction committed: outbox rows
// commit in id order, and a poller reading id > cursor with the row in share mode (OutboxSince) can
// never pass an id that commits later (the late-commit argument of fs_event_seq_lock, for the whole
// outbox: its inserts are coalesced, a few per second per pod, so one order row costs nothing).
func InsertNotifyHeadsTx(ctx context.Context, tx *sql.Tx, podID string, tenants []string, heads map[string]int64) error {
	return insertNotifyHeadsTx(ctx, tx, podID, tenants, heads, true, 0)
}

// insertNotifyHeadsTx is InsertNotifyHeadsTx; ordered false is the unordered-outbox defect: no
// order-row lock, and the outbox row written first (a transactional outbox's usual order), so its
// id is taken at the start of the transaction and stays invisible until the commit, however long
// the hint upserts keep it open. (Written after the hints, the defect hid behind their row locks:
// two transactions that share a tenant's hint row commit in order, and a slow pod's transactions
// hold a busy tenant's row most of the time.) hold > 0 keeps the transaction open that long after
// its outbox insert (the outbox_commit_delay failpoint).
func insertNotifyHeadsTx(ctx context.Context, tx *sql.Tx, podID string, tenants []string, heads map[string]int64, ordered bool, hold time.Duration) error {
	if len(tenants) == 0 {
		return nil
	}
	now := time.Now().UTC()
	if ordered {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tenant_notify_outbox_order (id, n) VALUES (1, 1) ON DUPLICATE KEY UPDATE n = n + 1`); err != nil {
			return err
		}
	} else {
		if err := insertNotify(ctx, tx, podID, tenants, now); err != nil {
			return err
		}
		if !sleep.For(ctx, hold) {
			return ctx.Err()
		}
	}
	var b strings.Builder
	var args []any
	for _, t := range tenants { // sorted by the caller: pods lock hint rows in one order
		if heads[t] <= 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(`INSERT INTO tenant_seq_head (tenant_id, head, updated_at) VALUES (?, ?, ?)`)
		} else {
			b.WriteString(", (?, ?, ?)")
		}
		args = append(args, t, heads[t], now)
	}
	if len(args) > 0 {
		if _, err := tx.ExecContext(ctx, b.String()+` ON DUPLICATE KEY UPDATE head = GREATEST(head, VALUES(head)), updated_at = VALUES(updated_at)`, args...); err != nil {
			return err
		}
	}
	if !ordered {
		return nil // the outbox row went first
	}
	if err := insertNotify(ctx, tx, podID, tenants, now); err != nil {
		return err
	}
	if !sleep.For(ctx, hold) {
		return ctx.Err()
	}
	return nil
}

// SeqHead returns tenant's head hint: the highest seq any pod signalled for it (ok false when no
// pod ever did). It never exceeds the tenant's real head; it may lag it by one coalescing window.
func (m *Meta) SeqHead(ctx context.Context, tenant string) (int64, bool, error) {
	var h int64
	err := m.DB.QueryRowContext(ctx, `SELECT head FROM tenant_seq_head WHERE tenant_id = ?`, tenant).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return h, err == nil, err
}

// SeqHeadAt is SeqHead with the time of the hint's last write: the head was committed by then.
func (m *Meta) SeqHeadAt(ctx context.Context, tenant string) (int64, time.Time, bool, error) {
	var h int64
	var at time.Time
	err := m.DB.QueryRowContext(ctx, `SELECT head, updated_at FROM tenant_seq_head WHERE tenant_id = ?`, tenant).Scan(&h, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, time.Time{}, false, nil
	}
	return h, at, err == nil, err
}

// MigratedPools returns the pools whose tenant schema some pod already created at
// TenantSchemaVersion through the DSN they have now (pool_schema): a starting pod need not touch
// those tenant DBs (a start must not wake every cold tenant DB).
func (m *Meta) MigratedPools(ctx context.Context, specs []PoolSpec) (map[string]bool, error) {
	rows, err := m.DB.QueryContext(ctx, `SELECT pool_id, dsn_hash, version FROM pool_schema`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]string{}
	for rows.Next() {
		var id, h string
		var v int
		if err := rows.Scan(&id, &h, &v); err != nil {
			return nil, err
		}
		if v == TenantSchemaVersion {
			have[id] = h
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, s := range specs {
		if h, ok := have[s.ID]; ok && h == HashKey(s.DSN) {
			out[s.ID] = true
		}
	}
	return out, nil
}

// RecordMigrated notes in pool_schema that spec's tenant schema is at TenantSchemaVersion.
func (m *Meta) RecordMigrated(ctx context.Context, spec PoolSpec) error {
	_, err := m.DB.ExecContext(ctx, `INSERT INTO pool_schema (pool_id, dsn_hash, version, updated_at) VALUES (?, ?, ?, ?)
		ON DUPLICATE KEY UPDATE dsn_hash = VALUES(dsn_hash), version = VALUES(version), updated_at = VALUES(updated_at)`,
		spec.ID, HashKey(spec.DSN), TenantSchemaVersion, time.Now().UTC())
	return err
}

// OutboxRow is one wake-up hint.
type OutboxRow struct {
	ID       int64
	TenantID string
	PodID    string // the pod that wrote it ('' from an older eventlogd)
}

// OutboxSince returns up to limit outbox rows with id > after, in id order. It reads in one
// transaction that first takes the outbox order row in share mode: on MariaDB a plain read's view is
// built by walking the active transactions without a global latch, and the commits of id N and then
// id N+1 (which waited for N's order-row lock) can both fall inside one walk, leaving N+1 visible
// without N; the poller would pass N for good (a lost wake). With the share lock held no outbox
// transaction is between its id and its commit while the view is built (see
// TenantStore.EventsPageLocked, the same argument for events). Outbox inserts are coalesced, a few
// per second per pod, so a poller holding the row for one read delays them by as much.
func (m *Meta) OutboxSince(ctx context.Context, after int64, limit int) ([]OutboxRow, error) {
	out, err := m.outboxSince(ctx, after, limit)
	if err != nil && refusedShareMode(m.DB, err) { // TiDB: its reads need no share lock (sharelock.go)
		out, err = m.outboxSince(ctx, after, limit)
	}
	return out, err
}

func (m *Meta) outboxSince(ctx context.Context, after int64, limit int) ([]OutboxRow, error) {
	tx, err := m.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: a failed rollback loses nothing
	var n int64
	err = tx.QueryRowContext(ctx, `SELECT n FROM tenant_notify_outbox_order WHERE id = 1`+inShareMode(m.DB)).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, tenant_id, pod_id FROM tenant_notify_outbox WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OutboxRow
	for rows.Next() {
		var r OutboxRow
		if err := rows.Scan(&r.ID, &r.TenantID, &r.PodID); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	return out, tx.Commit()
}

// OutboxHead returns the highest outbox id (0 when empty): where a new pod starts reading.
func (m *Meta) OutboxHead(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	err := m.DB.QueryRowContext(ctx, `SELECT MAX(id) FROM tenant_notify_outbox`).Scan(&id)
	return id.Int64, err
}

// OutboxOldestAge returns the age of the oldest outbox row (0 when empty).
func (m *Meta) OutboxOldestAge(ctx context.Context) (time.Duration, error) {
	var ts sql.NullTime
	if err := m.DB.QueryRowContext(ctx, `SELECT MIN(created_at) FROM tenant_notify_outbox`).Scan(&ts); err != nil {
		return 0, err
	}
	if !ts.Valid {
		return 0, nil
	}
	return time.Since(ts.Time), nil
}

// Cursor returns podID's outbox cursor, ok=false when it has none.
func (m *Meta) Cursor(ctx context.Context, podID string) (int64, bool, error) {
	var id int64
	err := m.DB.QueryRowContext(ctx, `SELECT last_id FROM tenant_outbox_cursor WHERE pod_id = ?`, podID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// UpsertCursor records podID's outbox position and refreshes updated_at even when the position
// did not move: the freshness is what the prune gate's age bound reads.
func (m *Meta) UpsertCursor(ctx context.Context, podID string, lastID int64) error {
	_, err := m.DB.ExecContext(ctx, `INSERT INTO tenant_outbox_cursor (pod_id, last_id, updated_at) VALUES (?, ?, ?)
		ON DUPLICATE KEY UPDATE last_id = VALUES(last_id), updated_at = VALUES(updated_at)`, podID, lastID, time.Now().UTC())
	return err
}

// PruneOutbox deletes up to limit outbox rows older than retention whose id is at or below the
// prune floor: MIN(last_id) over cursors, counting only cursors refreshed within maxCursorAge when
// maxCursorAge > 0 (a stalled pod cannot pin the outbox). It returns the rows deleted.
func (m *Meta) PruneOutbox(ctx context.Context, retention, maxCursorAge time.Duration, limit int) (int64, error) {
	now := time.Now().UTC()
	var floor sql.NullInt64
	var err error
	if maxCursorAge > 0 {
		err = m.DB.QueryRowContext(ctx, `SELECT MIN(last_id) FROM tenant_outbox_cursor WHERE updated_at >= ?`, now.Add(-maxCursorAge)).Scan(&floor)
	} else {
		err = m.DB.QueryRowContext(ctx, `SELECT MIN(last_id) FROM tenant_outbox_cursor`).Scan(&floor)
	}
	if err != nil || !floor.Valid {
		return 0, err
	}
	cutoff := now.Add(-retention)
	// The prune mark is raised to the highest id this delete may remove before anything is deleted,
	// so a poller that reads the mark after its rows sees every gap the prune made (OutboxPruneMark).
	var through sql.NullInt64
	if err := m.DB.QueryRowContext(ctx, `SELECT MAX(id) FROM (SELECT id FROM tenant_notify_outbox
		WHERE id <= ? AND created_at < ? ORDER BY id LIMIT ?) AS doomed`, floor.Int64, cutoff, limit).Scan(&through); err != nil {
		return 0, err
	}
	if !through.Valid {
		return 0, nil
	}
	if _, err := m.DB.ExecContext(ctx, `UPDATE tenant_notify_outbox_prune_mark
		SET pruned_through = GREATEST(pruned_through, ?) WHERE id = 1`, through.Int64); err != nil {
		return 0, err
	}
	res, err := m.DB.ExecContext(ctx, `DELETE FROM tenant_notify_outbox WHERE id <= ? AND created_at < ? ORDER BY id LIMIT ?`,
		through.Int64, cutoff, limit)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// OutboxPruneMark returns the highest outbox id the prune gate may have deleted (0 when none): a
// poller whose cursor is below it may have missed rows it never read.
func (m *Meta) OutboxPruneMark(ctx context.Context) (int64, error) {
	var through sql.NullInt64
	err := m.DB.QueryRowContext(ctx, `SELECT MAX(pruned_through) FROM tenant_notify_outbox_prune_mark`).Scan(&through)
	return through.Int64, err
}

// Heartbeat registers podID or refreshes its heartbeat.
func (m *Meta) Heartbeat(ctx context.Context, podID string) error {
	now := time.Now().UTC()
	_, err := m.DB.ExecContext(ctx, `INSERT INTO pods (pod_id, started_at, heartbeat_at) VALUES (?, ?, ?)
		ON DUPLICATE KEY UPDATE heartbeat_at = VALUES(heartbeat_at)`, podID, now, now)
	return err
}

// RemovePod deletes podID and its outbox cursor (graceful shutdown).
func (m *Meta) RemovePod(ctx context.Context, podID string) error {
	if _, err := m.DB.ExecContext(ctx, `DELETE FROM tenant_outbox_cursor WHERE pod_id = ?`, podID); err != nil {
		return err
	}
	_, err := m.DB.ExecContext(ctx, `DELETE FROM pods WHERE pod_id = ?`, podID)
	return err
}

// SweepStalePods deletes pods whose heartbeat is older than staleAfter together with their outbox
// cursor rows (a dead pod must not hold the prune floor), and returns the pod ids removed.
func (m *Meta) SweepStalePods(ctx context.Context, staleAfter time.Duration) ([]string, error) {
	cutoff := time.Now().UTC().Add(-staleAfter)
	rows, err := m.DB.QueryContext(ctx, `SELECT pod_id FROM pods WHERE heartbeat_at < ?`, cutoff)
	if err != nil {
		return nil, err
	}
	var stale []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		stale = append(stale, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, id := range stale {
		if _, err := m.DB.ExecContext(ctx, `DELETE FROM tenant_outbox_cursor WHERE pod_id = ?`, id); err != nil {
			return nil, err
		}
		if _, err := m.DB.ExecContext(ctx, `DELETE FROM pods WHERE pod_id = ? AND heartbeat_at < ?`, id, cutoff); err != nil {
			return nil, err
		}
	}
	return stale, nil
}

// ClaimMaintenance claims the cluster-wide maintenance run name if its last run is older than
// interval, and reports whether this caller won the claim.
func (m *Meta) ClaimMaintenance(ctx context.Context, name string, interval time.Duration) (bool, error) {
	now := time.Now().UTC()
	res, err := m.DB.ExecContext(ctx, `UPDATE shared_maintenance_state SET last_run_at = ? WHERE name = ? AND last_run_at < ?`,
		now, name, now.Add(-interval))
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	_, err = m.DB.ExecContext(ctx, `INSERT INTO shared_maintenance_state (name, last_run_at) VALUES (?, ?)`, name, now)
	if isDuplicate(err) {
		return false, nil
	}
	return err == nil, err
}

func isDuplicate(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1062
}

// errorf wraps err with what was being done.
func errorf(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
