package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// TenantStore is one tenant's view of its tenant DB: every query is scoped by tenant_id, in a dedicated
// DB as in a shared one.
type TenantStore struct {
	DB *sql.DB
	// GroupDB is the pool's write-group handle (Pools.AcquireGroup) under --event-commit grouped:
	// its connections send a group's statements in one round trip (CommitGroup). Nil otherwise.
	GroupDB  *sql.DB
	TenantID string
	PoolID   string
	Shared   bool
	// LeakAcrossTenants drops the tenant_id filter from event reads (the cross-tenant-leak seeded
	// defect). Never set it outside a defect run.
	LeakAcrossTenants bool
	// Gate, when set, bounds this tenant's concurrent reads (EventsPage, Bounds) on a shared handle:
	// event streams read through their pool's stream handle under their tenant's gate.
	Gate *ReadGate
	// Retries counts this store's conflict retries (nil: not counted); a pod gives all its stores
	// one, see RetryCount.
	Retries *RetryCount
}

// Event is one row of fs_events.
type Event struct {
	Seq       int64
	Path      string
	Op        string
	Actor     string
	CreatedAt time.Time
	Src       string // the source of a rename or copy (src_path), else empty
	// Batch is the id of the batch write that produced the event (every event of one batch carries
	// it); empty for a single mutation.
	Batch string
	// MaybeStored says an earlier insert of this event ended without an answer from the server (a
	// timeout, a lost connection): it may have committed, so a retry looks the row up first
	// (FindEvent) and inserts it only when it is not there. Not a column.
	MaybeStored bool
}

// Guard is how a tenant's event inserts and stream reads keep a reader at seq > cursor from
// passing a seq that becomes visible after a higher one (a late commit). See docs/eventlogd.md,
// "The late-commit guard".
type Guard int

const (
	// GuardNone inserts and reads plainly: the late-commit-skip seeded defect.
	GuardNone Guard = iota
	// GuardLock serialises a tenant's inserts on its fs_event_seq_lock row (so its seqs commit in
	// order) and has every page read take that row in share mode before its snapshot (so no insert
	// of the tenant commits while the snapshot is taken: see EventsPageLocked).
	GuardLock
	// GuardHorizon inserts with one autocommit statement (nothing serialised) and reads pages in the
	// global seq order, delivering only up to the first gap: a reader never passes a seq that is
	// still in flight, and gives a gap up as a hole (a rolled-back insert) after a bounded wait.
	GuardHorizon
)

// Guards names the guards a flag may choose (GuardNone is only reachable through the defect).
var Guards = map[string]Guard{"lock": GuardLock, "horizon": GuardHorizon}

// String returns the guard's flag name.
func (g Guard) String() string {
	switch g {
	case GuardLock:
		return "lock"
	case GuardHorizon:
		return "horizon"
	}
	return "none"
}

// InsertEvent writes ev and returns its seq. Under GuardLock the insert first locks the tenant's
// fs_event_seq_lock row in the same transaction, so the AUTO_INCREMENT seq is taken only after the
// tenant's previous event committed: a tenant's events commit in seq order. Under GuardHorizon it
// is one autocommit INSERT (one round trip); its readers make up for the order (EventsAfter). Under
// GuardNone (the late-commit-skip defect) it is the lock's transaction without the lock, so the
// window between a seq and its commit is as wide as the guard's would be without its lock.
// A deadlock victim or lock wait timeout runs the transaction again (bounded, see retryConflicts):
// the event is not pushed to the retry buffer for a conflict between our own statements.
func (s *TenantStore) InsertEvent(ctx context.Context, ev Event, g Guard) (int64, error) {
	var seq int64
	err := retryConflicts(ctx, s.Retries, func() error {
		if g == GuardHorizon {
			res, err := s.DB.ExecContext(ctx, insertEvent, s.TenantID, ev.Path, ev.Op, ev.Actor, storedTime(ev.CreatedAt), ev.Src, ev.Batch)
			if err != nil {
				return err
			}
			seq, err = res.LastInsertId()
			return err
		}
		tx, err := s.DB.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if seq, err = InsertEventTx(ctx, tx, s.TenantID, ev, g == GuardLock); err != nil {
			_ = tx.Rollback()
			return err
		}
		lateCommit(g, seq)
		return tx.Commit()
	})
	return seq, err
}

// storedTime is t as fs_events.created_at (DATETIME(6)) holds it: UTC, in whole microseconds, so an
// insert and FindEvent's look-up send the same value however the driver formats fractions.
func storedTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// FindEvent returns the seq of ev's row when the tenant has one with ev's created_at, path and op
// (an insert whose answer was lost may have committed it: see Event.MaybeStored). created_at is
// the pod's clock at the publish, in microseconds as stored (storedTime), so it tells two events of one path
// apart; the lookup is an equality on the created_at index.
func (s *TenantStore) FindEvent(ctx context.Context, ev Event) (int64, bool, error) {
	var seq int64
	err := s.DB.QueryRowContext(ctx, `SELECT seq FROM fs_events WHERE created_at = ? AND tenant_id = ? AND path = ? AND op = ? LIMIT 1`,
		storedTime(ev.CreatedAt), s.TenantID, ev.Path, ev.Op).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return seq, err == nil, err
}

// lateCommitEvery and lateCommitDelay shape the late-commit-skip defect (GuardNone): every
// lateCommitEvery-th seq commits lateCommitDelay after it was taken.
const (
	lateCommitEvery = 16
	lateCommitDelay = 20 * time.Millisecond
)

// lateCommit is the late-commit-skip defect's delay (GuardNone only), run between an event's
// insert and its commit: a commit delayed after its seq was taken (a GC pause, an fsync stall, a
// slow network) is what lets later seqs commit first, made certain. On an idle machine the natural
// window (one round trip) almost never overlaps a reader.
func lateCommit(g Guard, seq int64) { lateCommits(g, seq, 1) }

// lateCommits is lateCommit for the n consecutive seqs from first (one multi-row insert): it
// delays the commit once when any of them is due.
func lateCommits(g Guard, first int64, n int) {
	if g == GuardNone && n > 0 && (first+int64(n)-1)/lateCommitEvery > (first-1)/lateCommitEvery {
		time.Sleep(lateCommitDelay)
	}
}

const insertEvent = `INSERT INTO fs_events (tenant_id, path, op, actor, created_at, src_path, batch) VALUES (?, ?, ?, ?, ?, ?, ?)`

// InsertEventTx runs the statements of InsertEvent inside tx (the caller commits); ordered takes the
// sequence row first (GuardLock). Tests use it to hold one insert's transaction open while another
// commits.
func InsertEventTx(ctx context.Context, tx *sql.Tx, tenantID string, ev Event, ordered bool) (int64, error) {
	return insertEventsTx(ctx, tx, tenantID, []Event{ev}, ordered)
}

// insertEventsTx inserts evs (at least one) with one statement inside tx and returns the first
// one's seq; ordered takes the sequence row first (GuardLock). One multi-row INSERT is a "simple
// insert" to InnoDB: under innodb_autoinc_lock_mode 0 or 1 (MariaDB's default is 1) it reserves its
// seqs at once, so they are consecutive and no concurrent insert of any guard takes a seq among them.
func insertEventsTx(ctx context.Context, tx *sql.Tx, tenantID string, evs []Event, ordered bool) (int64, error) {
	if ordered {
		if _, err := tx.ExecContext(ctx, seqLockUpsert, tenantID); err != nil {
			return 0, err
		}
	}
	q, args := eventsInsert(tenantID, evs)
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// seqLockUpsert takes the tenant's sequence row (GuardLock), held until the commit.
const seqLockUpsert = `INSERT INTO fs_event_seq_lock (tenant_id, n) VALUES (?, 1) ON DUPLICATE KEY UPDATE n = n + 1`

// eventsInsert is the one statement that inserts evs (at least one) of tenantID, with its arguments.
func eventsInsert(tenantID string, evs []Event) (string, []any) {
	args := make([]any, 0, 7*len(evs))
	// A value equal to the previous row's is boxed once and shared (a group's events share their
	// tenant, op and time; a batch's its batch id): boxing a string or a time allocates.
	var prev Event
	var box [6]any // the previous row's op, actor, created_at, src, batch; [5] the tenant
	box[5] = tenantID
	for i, ev := range evs {
		ev.CreatedAt = storedTime(ev.CreatedAt)
		if i == 0 || ev.Op != prev.Op {
			box[0] = ev.Op
		}
		if i == 0 || ev.Actor != prev.Actor {
			box[1] = ev.Actor
		}
		if i == 0 || ev.CreatedAt != prev.CreatedAt {
			box[2] = ev.CreatedAt
		}
		if i == 0 || ev.Src != prev.Src {
			box[3] = ev.Src
		}
		if i == 0 || ev.Batch != prev.Batch {
			box[4] = ev.Batch
		}
		args = append(args, box[5], ev.Path, box[0], box[1], box[2], box[3], box[4])
		prev = ev
	}
	return insertEvent + strings.Repeat(`, (?, ?, ?, ?, ?, ?, ?)`, len(evs)-1), args
}

// EventsSince returns up to limit events with seq > since in seq order.
func (s *TenantStore) EventsSince(ctx context.Context, since int64, limit int) ([]Event, error) {
	evs, _, err := s.EventsPage(ctx, since, limit)
	return evs, err
}

// EventsPage returns up to limit events with seq > since in seq order and, read by the same
// statement (one consistent snapshot), the tenant's sweep mark (0 when the page is empty). A sweep
// raises the mark before it deletes, so when a page was read past deleted rows its mark covers
// them: the caller compares the mark with its cursor on every page, at no extra query.
func (s *TenantStore) EventsPage(ctx context.Context, since int64, limit int) ([]Event, int64, error) {
	release, err := s.enter(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	q, args := s.pageQuery(since, limit)
	rows, err := s.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, err
	}
	return scanPage(rows)
}

func (s *TenantStore) pageQuery(since int64, limit int) (string, []any) {
	const mark = `(SELECT COALESCE(MAX(swept_through), 0) FROM fs_events_sweep_mark WHERE tenant_id = ?)`
	if s.LeakAcrossTenants {
		return `SELECT seq, path, op, actor, created_at, src_path, batch, ` + mark + ` FROM fs_events WHERE seq > ? ORDER BY seq LIMIT ?`,
			[]any{s.TenantID, since, limit}
	}
	return `SELECT seq, path, op, actor, created_at, src_path, batch, ` + mark + ` FROM fs_events WHERE tenant_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
		[]any{s.TenantID, s.TenantID, since, limit}
}

func scanPage(rows *sql.Rows) ([]Event, int64, error) {
	defer rows.Close()
	out := make([]Event, 0, 16)
	var swept int64
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.Seq, &e.Path, &e.Op, &e.Actor, &e.CreatedAt, &e.Src, &e.Batch, &swept); err != nil {
			return nil, 0, err
		}
		out = append(out, e)
	}
	return out, swept, rows.Err()
}

// EventsPageLocked is EventsPage for GuardLock: in one transaction it first takes the tenant's
// fs_event_seq_lock row in share mode, then reads the page. The row lock alone does not make a
// plain page safe on MariaDB: a read view is built by walking the active transactions without a
// global latch, so while the walk runs an insert it already listed as active can commit, the next
// insert of the tenant can take the row, commit and leave before the walk reaches it, and the view
// shows seq N+1 without seq N (measured: store.TestLockedPagesNeverPassALowerSeq's control). With
// the share lock held, no insert of the tenant is between its seq and its commit while the view is
// built (each committed before releasing the row, the next cannot take it), so the page holds every
// committed seq of the tenant below its highest. Costs: four round trips, and an insert waits for
// the page read that holds the row.
func (s *TenantStore) EventsPageLocked(ctx context.Context, since int64, limit int) ([]Event, int64, error) {
	release, err := s.enter(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	evs, swept, err := s.eventsPageLocked(ctx, since, limit)
	if err != nil && refusedShareMode(s.DB, err) { // TiDB: its reads need no share lock (sharelock.go)
		evs, swept, err = s.eventsPageLocked(ctx, since, limit)
	}
	return evs, swept, err
}

func (s *TenantStore) eventsPageLocked(ctx context.Context, since int64, limit int) ([]Event, int64, error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: a failed rollback loses nothing
	var n int64
	err = tx.QueryRowContext(ctx, `SELECT n FROM fs_event_seq_lock WHERE tenant_id = ?`+inShareMode(s.DB), s.TenantID).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, 0, err
	}
	q, args := s.pageQuery(since, limit)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, err
	}
	evs, swept, err := scanPage(rows)
	if err != nil {
		return nil, 0, err
	}
	return evs, swept, tx.Commit()
}

// Row is one row of a horizon page: any tenant's seq (Mine says whether it is this tenant's, and
// only then are the event fields filled).
type Row struct {
	Event
	Mine bool
}

// HorizonPage is what one statement (one snapshot) says about the seqs after a point.
type HorizonPage struct {
	Rows     []Row // every visible seq after the point, of every tenant, in order (at most limit)
	Swept    int64 // this tenant's sweep mark
	SweptAny int64 // the highest sweep mark of any tenant: a gap at or below it may be a deleted row
}

// EventsAfter reads, in one statement, every visible seq after `after` in the global seq order
// (the AUTO_INCREMENT counter is shared by every tenant of the DB), with this tenant's events and
// the sweep marks. GuardHorizon's readers deliver only up to the first missing seq: a seq that is
// missing is still in flight (or a hole: a rolled-back insert, given up after a bounded wait), and
// since the rows and the gap are judged in the same snapshot, a late commit can only ever appear as
// a gap, never as a row already passed.
func (s *TenantStore) EventsAfter(ctx context.Context, after int64, limit int) (HorizonPage, error) {
	release, err := s.enter(ctx)
	if err != nil {
		return HorizonPage{}, err
	}
	defer release()
	t := any(s.TenantID)
	// actor, src_path and batch come as NULL where empty (most rows): the driver hands a row's
	// NULL over as is and allocates for every other string, so an ordinary write's row costs three
	// allocations fewer. They read back as the empty string either way.
	cols, args := `tenant_id = ?, IF(tenant_id = ?, path, ''), IF(tenant_id = ?, op, ''), IF(tenant_id = ?, NULLIF(actor, ''), NULL), IF(tenant_id = ?, NULLIF(src_path, ''), NULL), IF(tenant_id = ?, NULLIF(batch, ''), NULL)`, []any{t, t, t, t, t, t}
	if s.LeakAcrossTenants {
		cols, args = `1, path, op, NULLIF(actor, ''), NULLIF(src_path, ''), NULLIF(batch, '')`, nil // the defect: every tenant's rows are "mine"
	}
	// seq comes as its distance from after: the driver boxes an integer into an allocation of its
	// own unless it is below 256, which a page's first 255 rows' distances are.
	q := `SELECT seq - ?, ` + cols + `, created_at,
		(SELECT COALESCE(MAX(swept_through), 0) FROM fs_events_sweep_mark WHERE tenant_id = ?),
		(SELECT COALESCE(MAX(swept_through), 0) FROM fs_events_sweep_mark)
		FROM fs_events WHERE seq > ? ORDER BY seq LIMIT ?`
	rows, err := s.DB.QueryContext(ctx, q, append(append([]any{after}, args...), t, after, limit)...)
	if err != nil {
		return HorizonPage{}, err
	}
	defer rows.Close()
	var p HorizonPage
	// Scanned into once per statement, not per row (what Scan is given escapes). The strings come
	// as the driver's bytes: the path is copied, the op is one of the known ones, the rest are
	// usually NULL.
	var r Row
	var off int64
	var path, op, actor, src, batch sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&off, &r.Mine, &path, &op, &actor, &src, &batch, &r.CreatedAt, &p.Swept, &p.SweptAny); err != nil {
			return HorizonPage{}, err
		}
		r.Seq = after + off
		r.Path, r.Op, r.Actor, r.Src, r.Batch = string(path), opString(op), string(actor), string(src), string(batch)
		p.Rows = append(p.Rows, r)
	}
	return p, rows.Err()
}

// Bounds returns the tenant's newest seq (0 when it has none) and the highest seq of its rows a
// sweep has deleted (0 when none).
func (s *TenantStore) Bounds(ctx context.Context) (head, swept int64, err error) {
	release, err := s.enter(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer release()
	var h sql.NullInt64
	if err := s.DB.QueryRowContext(ctx, `SELECT MAX(seq) FROM fs_events WHERE tenant_id = ?`, s.TenantID).Scan(&h); err != nil {
		return 0, 0, err
	}
	var m sql.NullInt64
	if err := s.DB.QueryRowContext(ctx, `SELECT MAX(swept_through) FROM fs_events_sweep_mark WHERE tenant_id = ?`, s.TenantID).Scan(&m); err != nil {
		return 0, 0, err
	}
	return h.Int64, m.Int64, nil
}

// SweepResult says what one sweep did.
type SweepResult struct {
	Deleted int64
	Batches int
	Done    bool // no rows older than the cutoff remain (within the batch cap)
}

// Sweep deletes this tenant's events created before cutoff in batches of batch rows, at most
// maxBatches statements; the remainder waits for the next sweep. Before each batch it raises the
// sweep mark to the batch's highest seq, so a reader can never miss that rows are gone.
func (s *TenantStore) Sweep(ctx context.Context, cutoff time.Time, batch, maxBatches int) (SweepResult, error) {
	return sweep(ctx, s.DB, s.TenantID, cutoff, batch, maxBatches)
}

// SweepShared deletes events of every tenant in a shared DB created before cutoff (the shared-pool
// sweep). Before each batch it raises the sweep mark of every tenant with rows in the batch, so
// seq_too_old stays exact per tenant: a tenant whose rows were not swept gets no reset.
func SweepShared(ctx context.Context, db *sql.DB, cutoff time.Time, batch, maxBatches int) (SweepResult, error) {
	return sweep(ctx, db, "", cutoff, batch, maxBatches)
}

// markBatch raises the sweep marks for the next batch and returns them (tenant, mark pairs).
//
// A mark is capped below the tenant's lowest retained row: created_at and seq orders differ (a
// created_at is taken before the insert waits for a connection or the sequence lock, and a retried
// event keeps its first created_at), so the batch's highest old seq can lie above a younger row
// that the sweep keeps. A mark over a kept row would tell its readers seq_too_old for a row that
// is still there (a spurious reset, and a resync the client did not need); capped, the old rows
// above the young one wait until it ages out too.
//
// It also returns the tenants whose marks it capped, each with its cap: the caller leaves their rows
// above the cap out of its next batches, so one tenant's kept row does not stop the sweep of the
// others in a shared pool.
func markBatch(ctx context.Context, db *sql.DB, where string, args []any, cutoff time.Time, batch int) ([]any, map[string]int64, error) {
	q := `SELECT tenant_id, MIN(seq), MAX(seq) FROM (SELECT tenant_id, seq FROM fs_events WHERE ` + where + ` ORDER BY seq LIMIT ?) b GROUP BY tenant_id`
	rows, err := db.QueryContext(ctx, q, append(args, batch)...)
	if err != nil {
		return nil, nil, errorf("sweep select", err)
	}
	var marks []any
	first := map[string]int64{} // each tenant's lowest selected seq
	for rows.Next() {
		var t string
		var lo, m int64
		if err := rows.Scan(&t, &lo, &m); err != nil {
			rows.Close()
			return nil, nil, err
		}
		marks = append(marks, t, m)
		first[t] = lo
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if len(marks) == 0 {
		return nil, nil, nil
	}
	n := len(marks) / 2
	// The lowest kept row at or below each tenant's candidate mark, in one statement over the
	// (tenant_id, seq) index.
	bound := `(tenant_id = ? AND seq <= ?)` + strings.Repeat(` OR (tenant_id = ? AND seq <= ?)`, n-1)
	kept, err := db.QueryContext(ctx, `SELECT tenant_id, MIN(seq) FROM fs_events WHERE created_at >= ? AND (`+bound+`) GROUP BY tenant_id`,
		append([]any{cutoff}, marks...)...)
	if err != nil {
		return nil, nil, errorf("sweep select kept", err)
	}
	lowest := map[string]int64{}
	for kept.Next() {
		var t string
		var m int64
		if err := kept.Scan(&t, &m); err != nil {
			kept.Close()
			return nil, nil, err
		}
		lowest[t] = m
	}
	kept.Close()
	if err := kept.Err(); err != nil {
		return nil, nil, err
	}
	capped := marks[:0]
	var blocked map[string]int64
	for i := 0; i < len(marks); i += 2 {
		t, m := marks[i].(string), marks[i+1].(int64)
		if k, ok := lowest[t]; ok && m >= k {
			m = k - 1
			if blocked == nil {
				blocked = map[string]int64{}
			}
			blocked[t] = m
		}
		if m >= first[t] { // a cap below every selected row leaves this tenant nothing to delete now
			capped = append(capped, t, m)
		}
	}
	if len(capped) == 0 {
		return nil, blocked, nil
	}
	marks, n = capped, len(capped)/2
	stmt := `INSERT INTO fs_events_sweep_mark (tenant_id, swept_through) VALUES (?, ?)` + strings.Repeat(`, (?, ?)`, n-1) +
		` ON DUPLICATE KEY UPDATE swept_through = GREATEST(swept_through, VALUES(swept_through))`
	if _, err := db.ExecContext(ctx, stmt, marks...); err != nil {
		return nil, nil, errorf("sweep mark", err)
	}
	return marks, blocked, nil
}

// sweep deletes in batches. Each DELETE is bounded by each tenant's own new mark, not by the batch's
// highest seq: a row committed between the batch's SELECT and its DELETE (a retried event with an
// old created_at whose seq was taken before the SELECT) is deleted only if its tenant's mark covers
// it, so a reader always sees seq_too_old for a deleted row (see TestSharedSweepNeverDeletesAboveATenantsMark).
func sweep(ctx context.Context, db *sql.DB, tenantID string, cutoff time.Time, batch, maxBatches int) (SweepResult, error) {
	var r SweepResult
	cutoff = cutoff.UTC()
	where, args := `created_at < ?`, []any{cutoff}
	if tenantID != "" {
		where, args = `tenant_id = ? AND created_at < ?`, []any{tenantID, cutoff}
	}
	blocked := map[string]int64{} // tenants whose marks were capped, and the caps
	for r.Batches < maxBatches {
		w, a := where, args
		if len(blocked) > 0 {
			w += ` AND NOT (` + strings.TrimSuffix(strings.Repeat(`(tenant_id = ? AND seq > ?) OR `, len(blocked)), ` OR `) + `)`
			a = append([]any{}, args...)
			for t, m := range blocked {
				a = append(a, t, m)
			}
		}
		marks, capped, err := markBatch(ctx, db, w, a, cutoff, batch)
		if err != nil {
			return r, err
		}
		for t, m := range capped {
			blocked[t] = m
		}
		if len(marks) == 0 {
			if len(capped) == 0 {
				r.Done = true
				return r, nil
			}
			continue // only capped tenants' rows: select again without them (each pass caps a new tenant)
		}
		bound := `(tenant_id = ? AND seq <= ?)` + strings.Repeat(` OR (tenant_id = ? AND seq <= ?)`, len(marks)/2-1)
		dargs := append(append(append([]any{}, args...), marks...), batch)
		res, err := db.ExecContext(ctx, `DELETE FROM fs_events WHERE `+where+` AND (`+bound+`) ORDER BY seq LIMIT ?`, dargs...)
		if err != nil {
			return r, errorf("sweep delete", err)
		}
		n, _ := res.RowsAffected()
		r.Deleted += n
		r.Batches++
		if n < int64(batch) && len(capped) == 0 {
			r.Done = true
			return r, nil
		}
	}
	return r, nil
}

// EstimateRows returns the server's estimate of the fs_events row count (information_schema,
// never COUNT(*): a hot tenant's table can hold millions of rows).
func EstimateRows(ctx context.Context, db *sql.DB) (int64, error) {
	var n sql.NullInt64
	err := db.QueryRowContext(ctx, `SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'fs_events'`).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n.Int64, err
}

// IsClosed reports whether err means the *sql.DB was closed under the caller (the pool idle-closed
// its backend): the caller should re-resolve the store and retry once.
func IsClosed(err error) bool {
	return err != nil && (errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "database is closed"))
}

// CreatedBefore returns the highest seq at or below top, of any tenant of the DB, whose row was
// created before t (0 when there is none): a reset's settle starts there when its pod has no
// history of the pool. It walks the primary key down from top (forced: the created_at index
// would read every old row), so it reads about as many rows as were created after t.
func (s *TenantStore) CreatedBefore(ctx context.Context, top int64, t time.Time) (int64, error) {
	release, err := s.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	var seq int64
	err = s.DB.QueryRowContext(ctx, `SELECT seq FROM fs_events FORCE INDEX (PRIMARY) WHERE seq <= ? AND created_at < ? ORDER BY seq DESC LIMIT 1`,
		top, t.UTC()).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return seq, err
}

// SeqHead returns the highest seq of any tenant of the DB (0 when it has none): every seq at or
// below it was handed out by the DB's AUTO_INCREMENT counter.
func (s *TenantStore) SeqHead(ctx context.Context) (int64, error) {
	release, err := s.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	var h sql.NullInt64
	err = s.DB.QueryRowContext(ctx, `SELECT MAX(seq) FROM fs_events`).Scan(&h)
	return h.Int64, err
}
