package run

import (
	"context"
	"database/sql"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
	tgt "github.com/seqgate/seqgate/harness/target"
	"github.com/seqgate/seqgate/internal/eventlogdtest"
	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// extScenario has no pods: the service under test is started by the test, outside seqgate.
const extScenario = `name: ext
seed: 3
duration: 3s
drain_timeout: 10s
tenants:
  - {count: 2}
load:
  - {tenants: g1, executor: constant-arrival-rate, rate: 10}
consumers:
  - {count: 1}
`

// externalService is an eventlogd started outside seqgate on a private DB server, each tenant in a
// database of its own (pools tenant_1 and tenant_2 are databases of those names).
type externalService struct {
	URL, ServerDSN string
	root           *sql.DB
}

func startExternal(t *testing.T) *externalService {
	t.Helper()
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	svc := eventlogdtest.StartService(t, eventlogdBin, []eventlogdtest.Pool{{ID: "tenant_1", Role: "dedicated"}, {ID: "tenant_2", Role: "dedicated"}},
		"--pod", "ext-1")
	// The user's DSN names the server only, without parseTime: seqgate adds what it needs.
	return &externalService{URL: svc.URL, ServerDSN: svc.ServerDSN, root: svc.Root}
}

// tenantViews gives each tenant database a twin database (ev_tenant_N) whose fs_events is a view
// without a tenant column: the generic profile's "one tenant per database, no tenant column" layout.
func (e *externalService) tenantViews(t *testing.T) {
	t.Helper()
	for _, p := range []string{"tenant_1", "tenant_2"} {
		for _, q := range []string{"CREATE DATABASE ev_" + p,
			"CREATE VIEW ev_" + p + ".fs_events AS SELECT seq, path, op, created_at FROM " + p + ".fs_events"} {
			if _, err := e.root.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

func runExternal(t *testing.T, o Options) (*Result, *verifier.Summary, []ledger.Record, error) {
	t.Helper()
	sc, err := scenario.Parse("ext.yaml", []byte(extScenario))
	if err != nil {
		t.Fatal(err)
	}
	o.Scenario, o.Dir, o.Log, o.Progress = sc, t.TempDir(), testWriter{t}, testWriter{t}
	o.ProvisionToken = eventlogdtest.ProvisionToken
	res, err := Run(context.Background(), o)
	recs := readLedger(t, filepath.Join(o.Dir, "ledger.jsonl.gz"))
	if err != nil {
		return nil, nil, recs, err
	}
	s := verify(t, res.Ledger)
	return res, s, recs, nil
}

func find(recs []ledger.Record, k string) []ledger.Record {
	var out []ledger.Record
	for _, r := range recs {
		if r.K == k {
			out = append(out, r)
		}
	}
	return out
}

// External mode against eventlogd pods started outside seqgate, each tenant in its own database, and
// against the same tenants seen through databases whose fs_events has no tenant column (generic).
func TestExternalProfilesAudit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile tgt.Options
		want    string
	}{
		{"eventlogd", tgt.Options{}, service.Eventlogd},
		{"generic without a tenant column", tgt.Options{Profile: service.Generic, AuditDB: "ev_{pool}", TenantColumn: "none"}, service.Generic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startExternal(t) // its two dedicated pools take one provisioning each
			e.tenantViews(t)
			res, s, recs, err := runExternal(t, Options{Target: e.URL, DSN: e.ServerDSN, Profile: tc.profile})
			if err != nil {
				t.Fatal(err)
			}
			run := recs[0]
			if run.K != ledger.KindRun || !run.Audit || run.Profile != tc.want || run.Target != "external" {
				t.Errorf("run record: audit %v profile %q target %q", run.Audit, run.Profile, run.Target)
			}
			audits := find(recs, ledger.KindAudit)
			persisted := find(recs, ledger.KindPersisted)
			if len(audits) != 1 || !audits[0].OK || audits[0].AuditTenants != 2 || audits[0].Rows != int64(len(persisted)) || len(persisted) == 0 {
				t.Fatalf("audit records %+v with %d persisted", audits, len(persisted))
			}
			if res.Audit == nil || !res.Audit.OK || !res.Drained {
				t.Errorf("result audit %+v drained %v", res.Audit, res.Drained)
			}
			if !s.Audit.Required || !s.Audit.OK || s.Audit.Rows != int64(len(persisted)) {
				t.Errorf("summary audit %+v", s.Audit)
			}
			if s.Verdict != verifier.VerdictPass || s.Acked == 0 || s.Lost != 0 {
				t.Errorf("verdict %s %v, acked %d lost %d", s.Verdict, s.FailedChecks, s.Acked, s.Lost)
			}
		})
	}
}

// The negative control: the events table disappears mid-run. The audit record says ok=false with the
// error naming the database; the run does not pass on the strength of the other tenant's rows.
func TestExternalAuditFailureIsRecorded(t *testing.T) {
	e := startExternal(t)
	e.tenantViews(t)
	hook := Hook{At: time.Second, Name: "drop the events table of tenant 2", Do: func(context.Context, faults.Env) error {
		_, err := e.root.Exec("DROP VIEW ev_tenant_2.fs_events")
		return err
	}}
	res, s, recs, err := runExternal(t, Options{Target: e.URL, DSN: e.ServerDSN, Hooks: []Hook{hook},
		Profile: tgt.Options{Profile: service.Generic, AuditDB: "ev_{pool}", TenantColumn: "none"}})
	if err != nil {
		t.Fatal(err)
	}
	audits := find(recs, ledger.KindAudit)
	if len(audits) != 1 || audits[0].OK || audits[0].AuditTenants != 1 || !strings.Contains(audits[0].Error, "ev_tenant_2") {
		t.Fatalf("audit records %+v, want one with ok=false naming ev_tenant_2", audits)
	}
	if res.Audit == nil || res.Audit.OK || res.Drained {
		t.Errorf("result audit %+v drained %v: the drain cannot see tenant 2's head either", res.Audit, res.Drained)
	}
	// The verifier takes the audit record as evidence: without a successful audit the run cannot pass.
	if s.Verdict != verifier.VerdictInconclusive || !s.Audit.Required || s.Audit.OK || !strings.Contains(s.Audit.Error, "ev_tenant_2") {
		t.Errorf("verdict %s, summary audit %+v: a run whose audit failed must not pass", s.Verdict, s.Audit)
	}
}

// A schema that does not fit the profile stops the run before any load, naming the column and the profile.
func TestExternalSchemaCheckedBeforeLoad(t *testing.T) {
	e := startExternal(t)
	e.tenantViews(t)
	_, _, recs, err := runExternal(t, Options{Target: e.URL, DSN: e.ServerDSN,
		Profile: tgt.Options{Profile: service.Generic, AuditDB: "ev_{pool}", TenantColumn: "tenant_id"}})
	if err == nil {
		t.Fatal("the run started its load against a table without the tenant column")
	}
	for _, want := range []string{"target profile generic", ".fs_events has no column tenant_id", "table ev_tenant_"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if n := len(find(recs, ledger.KindMut)); n != 0 {
		t.Errorf("%d mutations sent before the schema check failed", n)
	}
}

// v2Wire is a service whose API has other paths than drive9's for everything: the provisioning,
// the status, the file API and its batch, the stream, the change feed and the listing's query.
var v2Wire = &tgt.Wire{
	ProvisionPath: "/api/v2/tenants",
	StatusPath:    "/api/v2/tenant",
	FSPath:        "/api/v2/files",
	BatchPath:     "/api/v2/batch",
	StreamPath:    "/api/v2/stream",
	PullPath:      "/api/v2/feed",
	ListQuery:     "ls=yes",
	ListAfter:     "from",
	Ops:           tgt.Drive9Wire.Ops,
}

// v2Proxy serves v2Wire's paths in front of the eventlogd at backend (v2Handler), counting the
// requests per kind of path.
func v2Proxy(t *testing.T, backend string) (*httptest.Server, func() map[string]int) {
	t.Helper()
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(v2Handler(u, func(kind string) {
		mu.Lock()
		seen[kind]++
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

// v2Handler serves v2Wire's paths (and a health and a metrics path of its own) by rewriting them to
// eventlogd's on backend and refuses every drive9 path, so a request the run builds without the
// service's wire is a 404 the test sees; seen hears the kind of each request ("refused <path>" for
// a refusal).
func v2Handler(backend *url.URL, seen func(kind string)) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(backend)
	rp.FlushInterval = -1 // the stream goes through at once
	rewrite := []struct{ from, to, kind string }{
		{"/api/v2/tenants", "/v1/provision", "provision"},
		{"/api/v2/tenant", "/v1/status", "status"},
		{"/api/v2/batch", "/v1/fs:batch-write", "batch"},
		{"/api/v2/stream", "/v1/events", "stream"},
		{"/api/v2/feed", "/v1/events/changes", "pull"},
		{"/api/v2/files", "/v1/fs", "fs"},
		{"/api/v2/healthz", "/healthz", "health"},
		{"/api/v2/metrics", "/metrics", "metrics"},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := ""
		for _, rw := range rewrite {
			if r.URL.Path == rw.from || strings.HasPrefix(r.URL.Path, rw.from+"/") {
				r.URL.Path = rw.to + strings.TrimPrefix(r.URL.Path, rw.from)
				r.URL.RawPath = ""
				kind = rw.kind
				break
			}
		}
		if kind == "" {
			seen("refused " + r.URL.Path)
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if q.Has("ls") {
			if q.Get("ls") != "yes" {
				http.Error(w, "ls=yes", http.StatusBadRequest)
				return
			}
			q.Del("ls")
			q.Set("list", "1")
			if q.Has("from") {
				q.Set("after", q.Get("from"))
				q.Del("from")
			}
			r.URL.RawQuery = q.Encode()
			kind = "list"
		} else if q.Has("list") {
			http.Error(w, "not this service's listing", http.StatusBadRequest)
			return
		}
		seen(kind)
		rp.ServeHTTP(w, r)
	})
}

// seamScenario is what the tests of a service's seam run: two tenants, writes and the structural
// ops, an SSE consumer that resyncs (the listing) and a pull consumer (the change feed).
const seamScenario = `name: seam
seed: 5
duration: 3s
drain_timeout: 15s
tenants:
  - {count: 2}
load:
  - {tenants: g1, executor: constant-arrival-rate, rate: 10, mix: {write: 4, mkdir: 1, rename: 1, delete: 1}}
consumers:
  - {count: 1, resync: true}
  - {count: 1, kind: pull, interval: 100ms}
`

// TestServiceSeam: a service seqgate does not ship, registered as one value (v2Service) with its own
// paths for every request (served here by eventlogd behind a path-rewriting proxy that refuses
// drive9's paths), runs provisioning, readiness, SSE and pull consumers with their resyncs, the load
// and the audit through that value alone, to a passing verdict. The control: the same service given
// without its wire (drive9's paths) is refused by the proxy before any load.
func TestServiceSeam(t *testing.T) {
	e := startExternal(t)
	proxy, seen := v2Proxy(t, e.URL)
	for _, c := range []struct {
		name string
		wire *tgt.Wire
	}{{"its own wire", v2Wire}, {"no wire: drive9's paths", nil}} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenario.Parse("seam.yaml", []byte(seamScenario))
			if err != nil {
				t.Fatal(err)
			}
			svc := v2Service // the service of TestRegisteredServicePods, here with the case's wire
			svc.Target.Wire = c.wire
			dir := t.TempDir()
			res, err := Run(context.Background(), Options{Scenario: s, Dir: dir, Log: testWriter{t}, Progress: testWriter{t},
				Target: proxy.URL, DSN: e.ServerDSN, Services: service.Shipped.With(&svc), Profile: tgt.Options{Profile: svc.Name},
				ProvisionToken: eventlogdtest.ProvisionToken})
			if c.wire == nil {
				if err == nil || !strings.Contains(err.Error(), "/v1/provision") || !strings.Contains(err.Error(), "404") {
					t.Fatalf("error %v, want drive9's provisioning path refused (404)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sum := verify(t, res.Ledger)
			got := seen()
			for k := range got {
				if strings.HasPrefix(k, "refused ") {
					t.Errorf("a request went to a drive9 path: %s (%d)", k, got[k])
				}
			}
			for _, k := range []string{"provision", "status", "fs", "stream", "pull", "list"} {
				if got[k] == 0 {
					t.Errorf("no %s request went through the service's wire: %v", k, got)
				}
			}
			if sum.Verdict != verifier.VerdictPass || sum.Acked == 0 || res.Audit == nil || !res.Audit.OK || res.Resyncs == 0 {
				t.Errorf("verdict %s failed %v acked %d audit %+v resyncs %d", sum.Verdict, sum.FailedChecks, sum.Acked, res.Audit, res.Resyncs)
			}
			t.Logf("requests by kind %v; verdict %s acked %d", got, sum.Verdict, sum.Acked)
		})
	}
}
