package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Errors a file mutation can return; the API maps them to 404, 409 and 400.
var (
	ErrNoSuchPath  = errors.New("no such file or directory")
	ErrExists      = errors.New("path already exists")
	ErrIsDir       = errors.New("path is a directory")
	ErrNotEmpty    = errors.New("directory not empty (use ?recursive)")
	ErrInvalidMove = errors.New("cannot move a directory into itself")
)

// File is one row of the files table.
type File struct {
	Path     string
	IsDir    bool
	Mode     int
	Revision int64
	Content  []byte
}

func (s *TenantStore) lockPath(ctx context.Context, tx *sql.Tx, path string) (File, bool, error) {
	f := File{Path: path}
	var dir int
	err := tx.QueryRowContext(ctx, `SELECT is_dir, mode, revision FROM files WHERE tenant_id = ? AND path = ? FOR UPDATE`, s.TenantID, path).
		Scan(&dir, &f.Mode, &f.Revision)
	if errors.Is(err, sql.ErrNoRows) {
		return f, false, nil
	}
	f.IsDir = dir == 1
	return f, err == nil, err
}

// inTx runs fn in a transaction, running it again when InnoDB picks it as a deadlock victim or
// a lock wait times out (see retryConflicts).
func (s *TenantStore) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return retryConflicts(ctx, s.Retries, func() error { return s.tryTx(ctx, fn) })
}

func (s *TenantStore) tryTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// WriteFile creates or overwrites path with content and returns the new revision. One autocommit
// upsert, one round trip (it was a transaction of four: the benchmark against raw inserts showed
// them): no locking read of a missing row (its gap lock would deadlock concurrent creates), and the
// outcome comes back in the OK packet's insert id, set with LAST_INSERT_ID(expr) by the first
// assignment (ODKU assignments run left to right, so revision is still the old one there): 0 when
// the row was inserted (revision 1), the new revision of an overwritten file, or isDirMark for a
// directory, which is left unchanged.
func (s *TenantStore) WriteFile(ctx context.Context, path string, content []byte) (int64, error) {
	var rev int64
	err := retryConflicts(ctx, s.Retries, func() (err error) {
		rev, err = s.writeFile(ctx, s.DB, path, content)
		return err
	})
	return revision(rev, err)
}

// WriteFileTx is WriteFile's upsert inside tx (--event-commit joined: the caller commits it with
// its event); the caller runs the transaction again on a lock conflict.
func (s *TenantStore) WriteFileTx(ctx context.Context, tx *sql.Tx, path string, content []byte) (int64, error) {
	return revision(s.writeFile(ctx, tx, path, content))
}

// writeFile runs WriteFile's upsert on ex and returns the raw insert id (see revision).
func (s *TenantStore) writeFile(ctx context.Context, ex execer, path string, content []byte) (int64, error) {
	res, err := ex.ExecContext(ctx, `INSERT INTO files (tenant_id, path, is_dir, mode, revision, content, updated_at) VALUES (?, ?, 0, 420, 1, ?, ?)
			ON DUPLICATE KEY UPDATE mode = IF(LAST_INSERT_ID(IF(is_dir = 1, ?, revision + 1)) > 0, mode, mode),
			revision = IF(is_dir = 1, revision, revision + 1), content = IF(is_dir = 1, content, VALUES(content)),
			updated_at = IF(is_dir = 1, updated_at, VALUES(updated_at))`,
		s.TenantID, path, content, time.Now().UTC(), isDirMark)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// revision turns writeFile's insert id into WriteFile's answer.
func revision(rev int64, err error) (int64, error) {
	switch {
	case err != nil:
		return 0, err
	case rev == isDirMark:
		return 0, ErrIsDir
	case rev == 0:
		return 1, nil
	}
	return rev, nil
}

// isDirMark is WriteFile's insert id for a path that is a directory (no revision comes near it).
const isDirMark = 1 << 62

// WriteFilesTx creates or overwrites every file of files (distinct paths) inside tx with one
// multi-row upsert, then reads their revisions back with one SELECT in the same transaction (its
// own writes, locked until the commit: exact). It returns each file's new revision, or ErrIsDir in
// errs for a path that is a directory (left unchanged, as WriteFile leaves it). A write group
// (--event-commit grouped) commits them with their events; the caller runs the transaction again
// on a lock conflict.
func (s *TenantStore) WriteFilesTx(ctx context.Context, tx *sql.Tx, files []FileWrite) (revs []int64, errs []error, err error) {
	if len(files) == 0 {
		return nil, nil, nil
	}
	w, err := s.filesUpsert(files)
	if err != nil {
		return nil, nil, err
	}
	if _, err := tx.ExecContext(ctx, w.upsert, w.upsertArgs...); err != nil {
		return nil, nil, err
	}
	rows, err := tx.QueryContext(ctx, w.query, w.queryArgs...)
	if err != nil {
		return nil, nil, err
	}
	revs, errs, _, err = w.revisions(rows, false)
	return revs, errs, err
}

// filesWrite is WriteFilesTx's two statements for files: the multi-row upsert and the SELECT of
// the revisions, with their arguments, and each path's index in files.
type filesWrite struct {
	upsert, query         string
	upsertArgs, queryArgs []any
	at                    map[string]int
	// For a write group's round trip (CommitGroup): upsertNoDir is upsert (its arguments too) that
	// fails with error 1242 when a path is a directory; queryWithID is query with
	// LAST_INSERT_ID() in each row.
	upsertNoDir, queryWithID string
}

func (s *TenantStore) filesUpsert(files []FileWrite) (filesWrite, error) {
	// The tenant, the time and each path are boxed into an argument once and shared by every row
	// and both statements that carry them (boxing a string or a time allocates).
	now, tenant := any(time.Now().UTC()), any(s.TenantID)
	w := filesWrite{upsertArgs: make([]any, 0, 4*len(files)), queryArgs: make([]any, 0, 1+len(files)), at: make(map[string]int, len(files))}
	w.queryArgs = append(w.queryArgs, tenant)
	for i, f := range files {
		if _, dup := w.at[f.Path]; dup {
			return filesWrite{}, errors.New("write group: path " + f.Path + " twice")
		}
		w.at[f.Path] = i
		path := any(f.Path)
		w.upsertArgs = append(w.upsertArgs, tenant, path, f.Content, now)
		w.queryArgs = append(w.queryArgs, path)
	}
	values := `INSERT INTO files (tenant_id, path, is_dir, mode, revision, content, updated_at) VALUES (?, ?, 0, 420, 1, ?, ?)` +
		strings.Repeat(`, (?, ?, 0, 420, 1, ?, ?)`, len(files)-1)
	w.upsert = values + `
			ON DUPLICATE KEY UPDATE revision = IF(is_dir = 1, revision, revision + 1), content = IF(is_dir = 1, content, VALUES(content)),
			updated_at = IF(is_dir = 1, updated_at, VALUES(updated_at))`
	// A directory's row makes the statement evaluate a scalar subquery of two rows: error 1242 on
	// every MySQL-compatible server, whatever its sql_mode, and the statement changes nothing. A
	// server that evaluated the constant subquery for every row would refuse every group's round
	// trip, which then commits the old way (CommitGroup): slower, never wrong.
	w.upsertNoDir = values + `
			ON DUPLICATE KEY UPDATE revision = IF(is_dir = 1, (SELECT 1 UNION ALL SELECT 2), revision + 1), content = VALUES(content),
			updated_at = VALUES(updated_at)`
	in := `FROM files WHERE tenant_id = ? AND path IN (?` + strings.Repeat(`, ?`, len(files)-1) + `)`
	w.query = `SELECT path, is_dir, revision ` + in
	w.queryWithID = `SELECT path, is_dir, revision, LAST_INSERT_ID() ` + in
	return w, nil
}

// revisions scans the SELECT's rows (query's; queryWithID's when withID, whose insert id it returns)
// and closes them: each file's revision, or ErrIsDir. Statements after the SELECT answer when the
// rows close: their error is revisions'.
func (w filesWrite) revisions(rows *sql.Rows, withID bool) (revs []int64, errs []error, id int64, err error) {
	defer func() {
		if cerr := rows.Close(); cerr != nil && err == nil {
			revs, errs, id, err = nil, nil, 0, cerr
		}
	}()
	revs, errs = make([]int64, len(w.at)), make([]error, len(w.at))
	seen := 0
	// Scanned into once per statement, not per row (what Scan is given escapes); the path is the
	// driver's bytes, only looked up.
	var path sql.RawBytes
	var dir, rev int64
	dest := []any{&path, &dir, &rev}
	if withID {
		dest = append(dest, &id)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, 0, err
		}
		i, ok := w.at[string(path)]
		if !ok {
			continue
		}
		seen++
		if dir == 1 {
			errs[i] = ErrIsDir
		} else {
			revs[i] = rev
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, 0, err
	}
	if seen != len(w.at) {
		return nil, nil, 0, errors.New("write group: upserted rows not found")
	}
	return revs, errs, id, nil
}

// writeBatchFileTx writes path inside tx, for BatchWrite (whose files commit together); WriteFile
// is one autocommit statement instead.
func (s *TenantStore) writeBatchFileTx(ctx context.Context, tx *sql.Tx, path string, content []byte) (int64, error) {
	now := time.Now().UTC()
	if _, err := tx.ExecContext(ctx, `INSERT INTO files (tenant_id, path, is_dir, mode, revision, content, updated_at) VALUES (?, ?, 0, 420, 1, ?, ?)
		ON DUPLICATE KEY UPDATE revision = IF(is_dir = 1, revision, revision + 1), content = IF(is_dir = 1, content, VALUES(content)), updated_at = VALUES(updated_at)`,
		s.TenantID, path, content, now); err != nil {
		return 0, err
	}
	var dir int
	var rev int64
	if err := tx.QueryRowContext(ctx, `SELECT is_dir, revision FROM files WHERE tenant_id = ? AND path = ?`, s.TenantID, path).Scan(&dir, &rev); err != nil {
		return 0, err
	}
	if dir == 1 {
		return 0, ErrIsDir
	}
	return rev, nil
}

// Create makes an empty file; ErrExists if path exists.
func (s *TenantStore) Create(ctx context.Context, path string) error {
	return s.insertNew(ctx, path, false)
}

// Mkdir makes a directory; ErrExists if path exists.
func (s *TenantStore) Mkdir(ctx context.Context, path string) error {
	return s.insertNew(ctx, path, true)
}

func (s *TenantStore) insertNew(ctx context.Context, path string, dir bool) error {
	err := retryConflicts(ctx, s.Retries, func() error { return s.insertNewOn(ctx, s.DB, path, dir) })
	if isDuplicate(err) {
		return ErrExists
	}
	return err
}

// CreateTx is Create inside tx, MkdirTx is Mkdir (--event-commit joined).
func (s *TenantStore) CreateTx(ctx context.Context, tx *sql.Tx, path string) error {
	return s.insertNewTx(ctx, tx, path, false)
}

// MkdirTx is Mkdir inside tx (--event-commit joined).
func (s *TenantStore) MkdirTx(ctx context.Context, tx *sql.Tx, path string) error {
	return s.insertNewTx(ctx, tx, path, true)
}

func (s *TenantStore) insertNewTx(ctx context.Context, tx *sql.Tx, path string, dir bool) error {
	err := s.insertNewOn(ctx, tx, path, dir)
	if isDuplicate(err) {
		return ErrExists
	}
	return err
}

func (s *TenantStore) insertNewOn(ctx context.Context, ex execer, path string, dir bool) error {
	isDir, mode := 0, 420
	if dir {
		isDir, mode = 1, 493
	}
	_, err := ex.ExecContext(ctx, `INSERT INTO files (tenant_id, path, is_dir, mode, revision, content, updated_at) VALUES (?, ?, ?, ?, 1, '', ?)`,
		s.TenantID, path, isDir, mode, time.Now().UTC())
	return err
}

// ReadFile returns path's row and content.
func (s *TenantStore) ReadFile(ctx context.Context, path string) (File, error) {
	f := File{Path: path}
	var dir int
	err := s.DB.QueryRowContext(ctx, `SELECT is_dir, mode, revision, content FROM files WHERE tenant_id = ? AND path = ?`, s.TenantID, path).
		Scan(&dir, &f.Mode, &f.Revision, &f.Content)
	if errors.Is(err, sql.ErrNoRows) {
		return f, ErrNoSuchPath
	}
	f.IsDir = dir == 1
	return f, err
}

// likePrefix returns a LIKE pattern matching everything under dir.
func likePrefix(dir string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(dir) + "/%"
}

// Rename moves src (and, for a directory, everything under it) to dst, replacing a file at dst.
func (s *TenantStore) Rename(ctx context.Context, src, dst string) error {
	if dst == src {
		return nil
	}
	if strings.HasPrefix(dst, src+"/") {
		return ErrInvalidMove
	}
	return s.inTx(ctx, func(tx *sql.Tx) error { return s.RenameTx(ctx, tx, src, dst) })
}

// RenameTx is Rename inside tx (--event-commit joined).
func (s *TenantStore) RenameTx(ctx context.Context, tx *sql.Tx, src, dst string) error {
	if dst == src {
		return nil
	}
	if strings.HasPrefix(dst, src+"/") {
		return ErrInvalidMove
	}
	// Lock both rows in one global order (path order), so two renames over the same pair in
	// opposite directions wait for each other instead of deadlocking.
	first, second := src, dst
	if dst < src {
		first, second = dst, src
	}
	a, aok, err := s.lockPath(ctx, tx, first)
	if err != nil {
		return err
	}
	b, bok, err := s.lockPath(ctx, tx, second)
	if err != nil {
		return err
	}
	f, ok, d, dok := a, aok, b, bok
	if first != src {
		f, ok, d, dok = b, bok, a, aok
	}
	if !ok {
		return ErrNoSuchPath
	}
	if dok {
		if d.IsDir {
			return ErrExists
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE tenant_id = ? AND path = ?`, s.TenantID, dst); err != nil {
			return err
		}
	}
	now := time.Now().UTC()
	if _, err := tx.ExecContext(ctx, `UPDATE files SET path = ?, updated_at = ? WHERE tenant_id = ? AND path = ?`, dst, now, s.TenantID, src); err != nil {
		return err
	}
	if f.IsDir {
		_, err = tx.ExecContext(ctx, `UPDATE files SET path = CONCAT(?, SUBSTRING(path, ?)), updated_at = ? WHERE tenant_id = ? AND path LIKE ?`,
			dst, len(src)+1, now, s.TenantID, likePrefix(src))
	}
	return err
}

// Copy copies file src to dst and returns dst's revision.
func (s *TenantStore) Copy(ctx context.Context, src, dst string) (int64, error) {
	f, err := s.ReadFile(ctx, src)
	if err != nil {
		return 0, err
	}
	if f.IsDir {
		return 0, ErrIsDir
	}
	return s.WriteFile(ctx, dst, f.Content)
}

// CopyTx is Copy inside tx (--event-commit joined): src is read in the transaction.
func (s *TenantStore) CopyTx(ctx context.Context, tx *sql.Tx, src, dst string) (int64, error) {
	var dir int
	var content []byte
	err := tx.QueryRowContext(ctx, `SELECT is_dir, content FROM files WHERE tenant_id = ? AND path = ?`, s.TenantID, src).Scan(&dir, &content)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, ErrNoSuchPath
	case err != nil:
		return 0, err
	case dir == 1:
		return 0, ErrIsDir
	}
	return s.WriteFileTx(ctx, tx, dst, content)
}

// Delete removes path; a non-empty directory needs recursive.
func (s *TenantStore) Delete(ctx context.Context, path string, recursive bool) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return s.DeleteTx(ctx, tx, path, recursive) })
}

// DeleteTx is Delete inside tx (--event-commit joined).
func (s *TenantStore) DeleteTx(ctx context.Context, tx *sql.Tx, path string, recursive bool) error {
	f, ok, err := s.lockPath(ctx, tx, path)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNoSuchPath
	}
	if f.IsDir {
		if !recursive {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM files WHERE tenant_id = ? AND path LIKE ? LIMIT 1`, s.TenantID, likePrefix(path)).Scan(&one)
			if err == nil {
				return ErrNotEmpty
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE tenant_id = ? AND path LIKE ?`, s.TenantID, likePrefix(path)); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM files WHERE tenant_id = ? AND path = ?`, s.TenantID, path)
	return err
}

// Chmod sets path's mode (a silent op: no event).
func (s *TenantStore) Chmod(ctx context.Context, path string, mode int) error {
	var res sql.Result
	err := retryConflicts(ctx, s.Retries, func() (err error) {
		res, err = s.DB.ExecContext(ctx, `UPDATE files SET mode = ?, updated_at = ? WHERE tenant_id = ? AND path = ?`, mode, time.Now().UTC(), s.TenantID, path)
		return err
	})
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		// Either missing or the same mode (MySQL counts changed rows); tell them apart.
		if _, err := s.ReadFile(ctx, path); err != nil {
			return err
		}
	}
	return nil
}
