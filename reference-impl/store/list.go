package store

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"strings"
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
// them (a page may hold fewer than limit entries and still say more). A name is the segment after
// dir: a row at dir/name is that child (a file, or a directory made by mkdir), and deeper rows
// dir/name/... make name a directory when it has no row of its own (a file row wins: its
// descendants, which a write under a file path can leave, are not listed). It answers
// ErrNoSuchPath when dir has neither a row nor descendants, ErrNotDir when dir is a file. Only this
// tenant's rows are read, also in a shared DB.
//
// A page reads the rows after its start in path order, 2*limit of them (listScan), which is the
// rows of its entries for a folder of files. Path order is the names' byte order but for one case:
// a directory known only from its descendants (dir/a/...) sorts after a sibling whose name extends
// its own with a byte below '/' (dir/a-b). So a scan answers only the names below the shortest
// such prefix of the last name it read; when that leaves nothing (one child's subtree filled the
// scan), the page falls back to one statement that groups every row after the start by name.
func (s *TenantStore) ListDir(ctx context.Context, dir, after string, limit int) ([]Entry, bool, error) {
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	} else if err := s.dirExists(ctx, dir, prefix); err != nil {
		return nil, false, err
	}
	if out, more, ok, err := s.listScan(ctx, prefix, after, limit); err != nil || ok {
		return out, more, err
	}
	return s.listGrouped(ctx, prefix, after, limit)
}

// listScan is ListDir's page from 2*limit rows in path order; ok false when those rows settle no
// name (the caller groups instead).
func (s *TenantStore) listScan(ctx context.Context, prefix, after string, limit int) (out []Entry, more, ok bool, err error) {
	n := 2 * limit
	rows, err := s.DB.QueryContext(ctx, `SELECT path, is_dir, mode, revision, LENGTH(content), updated_at FROM files
		WHERE tenant_id = ? AND path LIKE ? AND path > ? ORDER BY path LIMIT ?`, s.TenantID, likeStart(prefix), []byte(prefix+after), n)
	if err != nil {
		return nil, false, false, err
	}
	defer rows.Close()
	byName := map[string]*Entry{}
	var names []string
	read, last := 0, ""
	for rows.Next() {
		var path []byte
		var isDir int
		var size sql.NullInt64
		var mtime sql.NullTime
		var e Entry
		if err := rows.Scan(&path, &isDir, &e.Mode, &e.Revision, &size, &mtime); err != nil {
			return nil, false, false, err
		}
		read++
		rest := string(path[len(prefix):])
		name, deeper := rest, false
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			name, deeper = rest[:i], true
		}
		last = name
		if name <= after {
			continue // after's own subtree, or a directory below after known from its descendants
		}
		cur, seen := byName[name]
		if !seen {
			cur = &Entry{Name: name, IsDir: true, Mode: 0o755}
			byName[name] = cur
			names = append(names, name)
		}
		if !deeper { // its own row (it comes before its descendants)
			e.Name, e.IsDir = name, isDir == 1
			if e.IsDir {
				e.Revision = 0
			} else {
				e.Size = size.Int64
			}
			e.MTime = mtime.Time
			*cur = e
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, false, err
	}
	full := read == n
	bound := ""
	if full {
		bound = last
		for i := 1; i < len(last); i++ {
			if last[i] < '/' { // last[:i] may be a directory known only from rows after the scan
				bound = last[:i]
				break
			}
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if full && name >= bound {
			more = true
			break
		}
		if len(out) == limit {
			return out, true, true, nil
		}
		out = append(out, *byName[name])
	}
	if full && len(out) == 0 {
		return nil, false, false, nil
	}
	return out, more || full, true, nil
}

// listGrouped is ListDir's page from one statement grouping every row after the start by name.
func (s *TenantStore) listGrouped(ctx context.Context, prefix, after string, limit int) ([]Entry, bool, error) {
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
