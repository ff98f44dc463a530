package run

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/scenario"
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
	r, err := ledger.Open(res.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := verifier.Verify(r, verifier.Options{})
	if err != nil {
		t.Fatalf("the run's ledger is not verifiable: %v", err)
	}
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
		{"eventlogd", tgt.Options{}, tgt.Eventlogd},
		{"generic without a tenant column", tgt.Options{Profile: tgt.Generic, AuditDB: "ev_{pool}", TenantColumn: "none"}, tgt.Generic},
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
		Profile: tgt.Options{Profile: tgt.Generic, AuditDB: "ev_{pool}", TenantColumn: "none"}})
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
		Profile: tgt.Options{Profile: tgt.Generic, AuditDB: "ev_{pool}", TenantColumn: "tenant_id"}})
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
