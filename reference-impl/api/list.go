package api

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// Listing page sizes: a client that ignores "next" still gets a full folder up to
// listDefaultLimit entries, and sees "next" when there are more.
const (
	listDefaultLimit = 1000
	listMaxLimit     = 10000
)

// listParams are the query keys GET ?list reads; any other key is refused (drive9 refuses unknown
// keys on a list request too, so a typo never silently lists something else).
var listParams = []string{"list", "limit", "after"}

// listEntry is one entry of a listing, in drive9's shape (its field names and types).
type listEntry struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	IsDir    bool   `json:"isDir"`
	Mtime    int64  `json:"mtime,omitempty"`
	Revision int64  `json:"revision,omitempty"`
	Mode     uint32 `json:"mode,omitempty"`
}

// handleList serves GET /v1/fs/<dir>?list=1[&limit=N][&after=NAME]: the direct children of one
// directory of the caller's tenant, in byte order of their names, at most limit of them after
// after. 200 {"entries":[...],"next":NAME}: next, the last entry's name, is present only when more
// children remain (ask again with after=next); 404 when dir does not exist, 409 when it is a file,
// 400 naming the parameter for a bad limit or after, or an unknown key.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request, dir string, q url.Values) {
	if dir == "" {
		dir = "/"
	}
	if dir != "/" {
		if err := checkPath(dir); err != nil {
			writeErr(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	for k := range q {
		if !slices.Contains(listParams, k) {
			writeErr(w, http.StatusBadRequest, "query: "+strconv.Quote(k)+" is not a list parameter (allowed: "+strings.Join(listParams, ", ")+")")
			return
		}
	}
	limit, err := intParam(q.Get("limit"), "limit", listDefaultLimit, 1, listMaxLimit)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	after := q.Get("after")
	if err := checkName(after); err != nil {
		writeErr(w, http.StatusBadRequest, "after: "+err.Error())
		return
	}
	entries, more, err := tenantStore(r).ListDir(r.Context(), dir, after, int(limit))
	switch {
	case errors.Is(err, store.ErrNoSuchPath):
		writeErr(w, http.StatusNotFound, "list: "+dir+": "+err.Error())
		return
	case errors.Is(err, store.ErrNotDir):
		writeErr(w, http.StatusConflict, "list: "+dir+": "+err.Error())
		return
	case err != nil:
		writeErr(w, http.StatusServiceUnavailable, "list: "+err.Error())
		return
	}
	out := make([]listEntry, len(entries))
	for i, e := range entries {
		out[i] = listEntry{Name: e.Name, Size: e.Size, IsDir: e.IsDir, Revision: e.Revision, Mode: uint32(e.Mode)}
		if !e.MTime.IsZero() {
			out[i].Mtime = e.MTime.Unix()
		}
	}
	body := map[string]any{"entries": out}
	if more {
		body["next"] = out[len(out)-1].Name
	}
	writeJSON(w, http.StatusOK, body)
}

// checkName validates a listing's after: empty (from the start), or one path segment as checkPath
// accepts them (valid UTF-8, no "/", no NUL, at most 1024 bytes).
func checkName(n string) error {
	switch {
	case len(n) > 1024:
		return errors.New("longer than 1024 bytes")
	case strings.ContainsAny(n, "/\x00"):
		return errors.New("a name, not a path: must not contain / or NUL: " + strconv.Quote(n))
	case !utf8.ValidString(n):
		return errors.New("not valid UTF-8: " + strconv.Quote(n))
	}
	return nil
}
