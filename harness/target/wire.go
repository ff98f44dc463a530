package target

import (
	"net/http"
	"net/url"
	"strconv"
)

// Wire is the HTTP API a service speaks, in one place: where a tenant is provisioned and asked for
// its status, and the request of each mutation the load sends. Every profile today speaks drive9's
// wire (Drive9Wire); a service with another API is a Wire of its own, returned by its profile.
type Wire struct {
	ProvisionPath string // POST, body {} or {"pool": ...}; answers tenant_id and api_key
	StatusPath    string // GET with the tenant's key; answers {"status": "active"} when usable
	FSPath        string // the file API: each op's request goes to FSPath + the file's path
	BatchPath     string // POST, a batch of writes in one request
	// StreamPath is the SSE stream of a tenant's events (GET, the tenant's key); a durable
	// consumer resumes with ?since=<cursor> (StreamURL).
	StreamPath string
	// PullPath is the polled change feed: GET ?since=<checkpoint>&limit=<page> (PullURL).
	PullPath string
	// ListQuery is the query that makes a GET of FSPath + a folder a listing of that folder, and
	// ListAfter the parameter naming the last entry of the previous page (ListURL).
	ListQuery, ListAfter string
	// Ops is each mutation's request, by the op's ledger name.
	Ops map[string]OpRequest
}

// OpRequest is how one mutation is sent.
type OpRequest struct {
	Method string
	Query  string // appended to the URL (with its ?)
	// SourceHeader, when set, is the header that names the op's source path (rename, copy).
	SourceHeader string
}

// Drive9Wire is drive9's API, which eventlogd implements too (docs/eventlogd.md): writes are PUT
// /v1/fs/<path>, the structural ops POSTs with a query naming them.
var Drive9Wire = &Wire{
	ProvisionPath: "/v1/provision",
	StatusPath:    "/v1/status",
	FSPath:        "/v1/fs",
	BatchPath:     "/v1/fs:batch-write",
	StreamPath:    "/v1/events",
	PullPath:      "/v1/events/changes",
	ListQuery:     "list=1",
	ListAfter:     "after",
	Ops: map[string]OpRequest{
		"write":  {Method: http.MethodPut},
		"mkdir":  {Method: http.MethodPost, Query: "?mkdir"},
		"rename": {Method: http.MethodPost, Query: "?rename", SourceHeader: "X-Dat9-Rename-Source"},
		"copy":   {Method: http.MethodPost, Query: "?copy", SourceHeader: "X-Dat9-Copy-Source"},
		"chmod":  {Method: http.MethodPost, Query: "?chmod&mode=0600"},
		"delete": {Method: http.MethodDelete},
	},
}

// Wire is the API the profile's service speaks.
func (p *Profile) Wire() *Wire {
	if p.wire != nil {
		return p.wire
	}
	return Drive9Wire
}

// StreamURL is where a consumer opens its stream on base: a fresh subscription, or with resume
// from the cursor since.
func (w *Wire) StreamURL(base string, resume bool, since int64) string {
	u := base + w.StreamPath
	if resume {
		u += "?since=" + strconv.FormatInt(since, 10)
	}
	return u
}

// PullURL is one page of the change feed on base after the checkpoint since.
func (w *Wire) PullURL(base string, since int64, limit int) string {
	return base + w.PullPath + "?since=" + strconv.FormatInt(since, 10) + "&limit=" + strconv.Itoa(limit)
}

// ListURL is one page of the listing of folder escapedDir (a URL path, each segment escaped) on
// base, after the entry named after ("" for the first page).
func (w *Wire) ListURL(base, escapedDir, after string) string {
	u := base + w.FSPath + escapedDir + "?" + w.ListQuery
	if after != "" {
		u += "&" + w.ListAfter + "=" + url.QueryEscape(after)
	}
	return u
}
