package target

import "net/http"

// Wire is the HTTP API a service speaks, in one place: where a tenant is provisioned and asked for
// its status, and the request of each mutation the load sends. Every profile today speaks drive9's
// wire (Drive9Wire); a service with another API is a Wire of its own, returned by its profile.
type Wire struct {
	ProvisionPath string // POST, body {} or {"pool": ...}; answers tenant_id and api_key
	StatusPath    string // GET with the tenant's key; answers {"status": "active"} when usable
	FSPath        string // the file API: each op's request goes to FSPath + the file's path
	BatchPath     string // POST, a batch of writes in one request
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
func (p *Profile) Wire() *Wire { return Drive9Wire }
