package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ErrNotDir is ListDir's answer for a path that is a file.
var ErrNotDir = errors.New("path is not a directory")

// Entry is one direct child of a listed directory. A directory that has no row of its own (its
// files were written without a mkdir, as every write of a fresh path is) is listed from its
// descendants: IsDir, mode 0755, no revision, no mtime.
type Entry struct {
	Name     string
	Size     int64
	IsDir    bool
	Mode     int
	Revision int64
	MTime    time.Time // zero for a directory without a row of its own
}

// ListDir returns up to limit direct children of dir (a path checked by the caller, or "/") whose
// names sort after after, in byte order of their names, and whether more children remain after
// them. A name is the segment after dir: a row at dir/name is that child (a file, or a directory
// made by mkdir), and deeper rows dir/name/... make name a directory when it has no row of its own
// (a file row wins: its descendants, which a write under a file path can leave, are not listed).
// It answers ErrNoSuchPath when dir has neither a row nor descendants, ErrNotDir when dir is a
// file. Only this tenant's rows are read, also in a shared DB.
//
// One statement per page: it groups the rows after the page's start by child name, so a page costs
// a range scan of the rest of dir's subtree (not of the table); the existence check before it is
// one point read (and, for a directory without a row, one LIMIT 1 probe).
func (s *TenantStore) ListDir(ctx context.Context, dir, after string, limit int) ([]Entry, bool, error) {
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	} else if err := s.dirExists(ctx, dir, prefix); err != nil {
		return nil, false, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT name, MAX(own), MAX(IF(own, is_dir, 0)), MAX(IF(own, mode, 0)),
			MAX(IF(own, revision, 0)), MAX(IF(own, size, 0)), MAX(IF(own, updated_at, NULL))
		FROM (SELECT SUBSTRING_INDEX(SUBSTRING(path, ?), '/', 1) AS name, LOCATE('/', path, ?) = 0 AS own,
				is_dir, mode, revision, LENGTH(content) AS size, updated_at
			FROM files WHERE tenant_id = ? AND path LIKE ? AND path > ?) AS children
		GROUP BY name HAVING name > ? ORDER BY name LIMIT ?`,
		len(prefix)+1, len(prefix)+1, s.TenantID, likeStart(prefix), []byte(prefix+after), []byte(after), limit+1)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	out := make([]Entry, 0, min(limit, 1024))
	for rows.Next() {
		var name []byte
		var own, isDir int
		var e Entry
		var size sql.NullInt64
		var mtime sql.NullTime
		if err := rows.Scan(&name, &own, &isDir, &e.Mode, &e.Revision, &size, &mtime); err != nil {
			return nil, false, err
		}
		if len(out) == limit {
			return out, true, rows.Err()
		}
		e.Name = string(name)
		switch {
		case own == 0: // a directory known only from its descendants
			e.IsDir, e.Mode, e.Revision = true, 0o755, 0
		case isDir == 1:
			e.IsDir, e.Revision = true, 0
			e.MTime = mtime.Time
		default:
			e.Size, e.MTime = size.Int64, mtime.Time
		}
		out = append(out, e)
	}
	return out, false, rows.Err()
}

// dirExists says whether dir is a directory: a directory row, or descendants without a row.
func (s *TenantStore) dirExists(ctx context.Context, dir, prefix string) error {
	var isDir int
	err := s.DB.QueryRowContext(ctx, `SELECT is_dir FROM files WHERE tenant_id = ? AND path = ?`, s.TenantID, dir).Scan(&isDir)
	switch {
	case err == nil && isDir == 1:
		return nil
	case err == nil:
		return ErrNotDir
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	var one int
	err = s.DB.QueryRowContext(ctx, `SELECT 1 FROM files WHERE tenant_id = ? AND path LIKE ? LIMIT 1`, s.TenantID, likeStart(prefix)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNoSuchPath
	}
	return err
}

// likeStart returns a LIKE pattern matching every path that starts with prefix.
func likeStart(prefix string) string {
	return likePrefix(prefix[:len(prefix)-1])
}
