package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// checkPath validates a filesystem path (after cleanPath): absolute, valid UTF-8, no empty, "."
// or ".." segments (so no trailing slash is left: "/a//" is refused, not stored as "/a/"), no NUL,
// at most 1024 bytes, not the root. Every path it accepts is stored and delivered byte for byte.
func checkPath(p string) error {
	switch {
	case p == "" || p[0] != '/':
		return errors.New("path must start with /")
	case p == "/":
		return errors.New("path must not be the root")
	case len(p) > 1024:
		return errors.New("path longer than 1024 bytes")
	case strings.ContainsRune(p, 0):
		return errors.New("path contains NUL")
	case !utf8.ValidString(p):
		return errors.New("path is not valid UTF-8: " + strconv.Quote(p))
	}
	for rest := p[1:]; ; {
		seg, more, found := strings.Cut(rest, "/") // segment by segment, allocating nothing
		if seg == "" || seg == "." || seg == ".." {
			return errors.New("path has an empty, . or .. segment: " + strconv.Quote(p))
		}
		if !found {
			return nil
		}
		rest = more
	}
}

// readBody reads r's body of at most limit bytes, as io.ReadAll(http.MaxBytesReader(w, r.Body,
// limit)) does. A body whose Content-Length is within the limit (net/http never reads past it) is
// read with no limiter, into one buffer of its size up to readBodyFirst (growing past it as
// ReadAll's does, so a dripped large body holds no more memory than it sent): two allocations
// fewer than ReadAll's growing buffer (512 bytes for a one-byte body) and MaxBytesReader's reader.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	n := r.ContentLength
	if r.Body == nil || n < 0 || n > limit {
		return io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	}
	b := make([]byte, 0, min(n, readBodyFirst)+1) // room for the read that says EOF
	for {
		k, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // as ReadAll, grow
		}
	}
}

// readBodyFirst is the most readBody allocates before a body's bytes arrive.
const readBodyFirst = 64 << 10

// cleanPath drops one trailing slash ("/a/" is "/a"); checkPath refuses any further one.
func cleanPath(p string) string {
	if len(p) > 1 {
		return strings.TrimSuffix(p, "/")
	}
	return p
}

// fsOps are the POST verbs, as query flags.
var fsOps = []string{store.OpMkdir, store.OpCreate, store.OpRename, store.OpCopy, store.OpChmod}

// handleFS serves /v1/fs/<path>: PUT write, POST ?mkdir|?create|?rename|?copy|?chmod, DELETE, GET
// (GET ?list: a directory listing, list.go).
func (s *Server) handleFS(w http.ResponseWriter, r *http.Request) {
	path := cleanPath(strings.TrimPrefix(r.URL.Path, "/v1/fs"))
	var q url.Values // nil (reads as empty) without a query: a write pays no parse
	if r.URL.RawQuery != "" {
		q = r.URL.Query()
	}
	if r.Method == http.MethodGet && q.Has("list") {
		s.handleList(w, r, path, q) // the only request that may name the root
		return
	}
	if err := checkPath(path); err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	st := tenantStore(r)
	ctx := r.Context()
	switch r.Method {
	case http.MethodGet:
		f, err := st.ReadFile(ctx, path)
		if err != nil {
			s.fsError(w, "read", err)
			return
		}
		if f.IsDir {
			writeJSON(w, http.StatusOK, map[string]any{"path": path, "is_dir": true, "mode": f.Mode})
			return
		}
		w.Header().Set("X-Dat9-Revision", strconv.FormatInt(f.Revision, 10))
		_, _ = w.Write(f.Content)
	case http.MethodPut:
		body, err := readBody(w, r, s.cfg.MaxBody)
		if err != nil {
			writeErr(w, http.StatusRequestEntityTooLarge, "body: "+err.Error())
			return
		}
		var rev int64
		if s.cfg.EventCommit == EventCommitGrouped {
			rev, err = s.groupedWrite(ctx, st, path, body)
			if err != nil {
				s.fsError(w, "write", err)
				return
			}
			writeRevision(w, rev)
			return
		}
		err = s.commit(r, st, store.Event{Path: path, Op: store.OpWrite},
			func(ctx context.Context) (err error) { rev, err = st.WriteFile(ctx, path, body); return err },
			func(ctx context.Context, tx *sql.Tx) (err error) {
				rev, err = st.WriteFileTx(ctx, tx, path, body)
				return err
			})
		if err != nil {
			s.fsError(w, "write", err)
			return
		}
		writeRevision(w, rev)
	case http.MethodDelete:
		_, recursive := q["recursive"]
		if err := s.commit(r, st, store.Event{Path: path, Op: store.OpDelete},
			func(ctx context.Context) error { return st.Delete(ctx, path, recursive) },
			func(ctx context.Context, tx *sql.Tx) error { return st.DeleteTx(ctx, tx, path, recursive) }); err != nil {
			s.fsError(w, "delete", err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	case http.MethodPost:
		var op string
		for _, o := range fsOps {
			if _, ok := q[o]; ok {
				if op != "" {
					writeErr(w, http.StatusBadRequest, "query: more than one operation ("+op+", "+o+")")
					return
				}
				op = o
			}
		}
		s.post(w, r, st, path, op)
	default:
		writeErr(w, http.StatusMethodNotAllowed, "method "+r.Method+" (allowed: GET, PUT, POST, DELETE)")
	}
}

func (s *Server) post(w http.ResponseWriter, r *http.Request, st *store.TenantStore, path, op string) {
	var src string // a rename's or copy's source: the structural payload's old path
	resp := map[string]any{"status": "ok"}
	var sep func(context.Context) error // the mutation on its own (--event-commit separate)
	var joined func(context.Context, *sql.Tx) error
	switch op {
	case store.OpMkdir:
		sep = func(ctx context.Context) error { return st.Mkdir(ctx, path) }
		joined = func(ctx context.Context, tx *sql.Tx) error { return st.MkdirTx(ctx, tx, path) }
	case store.OpCreate:
		sep = func(ctx context.Context) error { return st.Create(ctx, path) }
		joined = func(ctx context.Context, tx *sql.Tx) error { return st.CreateTx(ctx, tx, path) }
		resp["revision"] = 1
	case store.OpRename, store.OpCopy:
		hdr := "X-Dat9-Rename-Source"
		if op == store.OpCopy {
			hdr = "X-Dat9-Copy-Source"
		}
		src = cleanPath(r.Header.Get(hdr))
		if perr := checkPath(src); perr != nil {
			writeErr(w, http.StatusBadRequest, "header "+hdr+": "+perr.Error())
			return
		}
		if op == store.OpRename {
			sep = func(ctx context.Context) error { return st.Rename(ctx, src, path) }
			joined = func(ctx context.Context, tx *sql.Tx) error { return st.RenameTx(ctx, tx, src, path) }
		} else {
			sep = func(ctx context.Context) error {
				rev, err := st.Copy(ctx, src, path)
				resp["revision"] = rev
				return err
			}
			joined = func(ctx context.Context, tx *sql.Tx) error {
				rev, err := st.CopyTx(ctx, tx, src, path)
				resp["revision"] = rev
				return err
			}
		}
	case store.OpChmod:
		mode, merr := chmodMode(r)
		if merr != nil {
			writeErr(w, http.StatusBadRequest, merr.Error())
			return
		}
		if err := st.Chmod(r.Context(), path, mode); err != nil {
			s.fsError(w, op, err)
			return
		}
		s.m.Mutations.WithLabelValues(op, "ok").Inc()
		writeJSON(w, http.StatusOK, resp) // silent: chmod emits no event (a documented gap)
		return
	default:
		writeErr(w, http.StatusBadRequest, "query: want one of ?"+strings.Join(fsOps, ", ?"))
		return
	}
	if err := s.commit(r, st, store.Event{Path: path, Op: op, Src: src}, sep, joined); err != nil {
		s.fsError(w, op, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// chmodMode reads the mode from ?mode=0644 or a JSON body {"mode":420}.
func chmodMode(r *http.Request) (int, error) {
	if v := r.URL.Query().Get("mode"); v != "" {
		n, err := strconv.ParseInt(v, 8, 32)
		if err != nil || n < 0 || n > 0o7777 {
			return 0, errors.New("mode: want an octal mode such as 0644, got " + strconv.Quote(v))
		}
		return int(n), nil
	}
	var body struct {
		Mode *int `json:"mode"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<12)).Decode(&body); err != nil || body.Mode == nil {
		return 0, errors.New(`mode: give ?mode=0644 or a JSON body {"mode":420}`)
	}
	if *body.Mode < 0 || *body.Mode > 0o7777 {
		return 0, errors.New("mode: out of range 0..07777")
	}
	return *body.Mode, nil
}

// commit runs a mutation and publishes its event; it fails only when the mutation did. Under
// --event-commit separate (the default) sep commits the mutation on its own, then mutated inserts
// the event (two commits). Under joined, tx runs the mutation's statements in the transaction that
// inserts and commits its event (events.Publisher.Joined: one commit); AfterMutation then runs
// between the mutation's statements and the event's insert, before anything is committed. Under
// grouped every operation but PUT commits as under joined (PUTs go through groupedWrite).
//
// The mutation runs under detached(r): a client that hangs up does not cut its statements short.
// Cut short, an autocommit statement the server already ran commits while the driver reports an
// error (the mutation happened, its event was never published), and a transaction whose events
// took their seqs rolls back, leaving a hole every stream of the pool waits on.
func (s *Server) commit(r *http.Request, st *store.TenantStore, ev store.Event, sep func(context.Context) error, tx func(context.Context, *sql.Tx) error) error {
	ctx, cancel := s.detached(r)
	defer cancel()
	if s.cfg.EventCommit == EventCommitSeparate {
		if err := sep(ctx); err != nil {
			return err
		}
		s.mutated(r, st, ev)
		return nil
	}
	ev.CreatedAt = time.Now()
	err := s.publisher.Joined(ctx, st, ev, func(ctx context.Context, t *sql.Tx) error {
		if err := tx(ctx, t); err != nil {
			return err
		}
		if s.cfg.AfterMutation != nil {
			s.cfg.AfterMutation(st.TenantID)
		}
		return nil
	})
	if err == nil {
		s.m.Mutations.WithLabelValues(ev.Op, "ok").Inc()
	}
	return err
}

// detached is the request's context without the client's cancellation, bounded by the request's
// deadline (--request-timeout when it has none): a mutation the pod started is finished or failed
// by the pod, never abandoned half way because its client left.
func (s *Server) detached(r *http.Request) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(r.Context())
	if dl, ok := r.Context().Deadline(); ok {
		return context.WithDeadline(ctx, dl)
	}
	return context.WithTimeout(ctx, s.cfg.RequestTimeout)
}

// mutated runs the publish path for a committed mutation; it never fails the mutation.
func (s *Server) mutated(r *http.Request, st *store.TenantStore, ev store.Event) {
	s.m.Mutations.WithLabelValues(ev.Op, "ok").Inc()
	if s.cfg.AfterMutation != nil {
		s.cfg.AfterMutation(st.TenantID)
	}
	ev.CreatedAt = time.Now()
	s.publisher.Publish(r.Context(), st, ev)
}

func (s *Server) fsError(w http.ResponseWriter, op string, err error) {
	code := http.StatusInternalServerError
	result := "client_error"
	switch {
	case errors.Is(err, store.ErrNoSuchPath):
		code = http.StatusNotFound
	case errors.Is(err, store.ErrExists), errors.Is(err, store.ErrNotEmpty), errors.Is(err, store.ErrIsDir), errors.Is(err, store.ErrInvalidMove):
		code = http.StatusConflict
	default:
		result = "error"
		code = http.StatusServiceUnavailable
	}
	s.m.Mutations.WithLabelValues(op, result).Inc()
	writeErr(w, code, op+": "+err.Error())
}
