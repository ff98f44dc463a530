package run

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/report"
	"github.com/seqgate/seqgate/verifier"
)

var (
	drive9shapeOnce sync.Once
	drive9shapeBin  string
	drive9shapeErr  error
)

// buildDrive9shape builds internal/drive9shape, a server shaped like drive9, once per test binary.
func buildDrive9shape(t *testing.T) string {
	t.Helper()
	drive9shapeOnce.Do(func() {
		dir, err := filepathTemp()
		if err != nil {
			drive9shapeErr = err
			return
		}
		drive9shapeBin = filepath.Join(dir, "drive9-server")
		out, err := exec.Command("go", "build", "-o", drive9shapeBin, "../../internal/drive9shape").CombinedOutput()
		if err != nil {
			drive9shapeErr = err
			t.Logf("%s", out)
		}
	})
	if drive9shapeErr != nil {
		t.Fatalf("build drive9shape: %v", drive9shapeErr)
	}
	return drive9shapeBin
}

// filepathTemp is a directory beside eventlogd's in the test binary's temp dir (removed with it).
func filepathTemp() (string, error) { return filepath.Dir(eventlogdBin), nil }

const drive9Scenario = `name: drive9-shape
seed: 4
duration: 9s
drain_timeout: 30s
tenants:
  - {group: hot, count: 2}
pods: {count: 2}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 10, mix: {write: 1}}
consumers:
  - {count: 1}
faults:
  - {at: 1s, for: 2s, kind: tenant_db_stall, target: tenant_1}
  - {at: 4s, for: 1s, kind: pod_pause, target: pod-2}
  - {at: 5s, for: 1s, kind: pod_crash, target: pod-1}
  - {at: 7s, kind: pod_restart, target: pod-2}
`

// The drive9 pod profile on a drive9-shaped server: pods configured by drive9's environment on a
// port seqgate chose, tenants provisioned with 202 then active, every tenant database made by the
// pods on the admin DSN's server behind the one tenant_db proxy (so tenant_1's stall reaches
// tenant_2 too, and its fault record, the summary and the report say so), a pod pause, a pod
// crash and restart, a graceful pod restart, the audit read from each tenant's fs_events, and drive9's
// counters scraped. The negative control: the same run whose pods never answer /healthz (a wrong
// health path in a user profile) ends before any load, naming the pod, and leaves nothing running.
func TestE2EDrive9Profile(t *testing.T) {
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	bin := buildDrive9shape(t)
	d9, err := service.Shipped.Pods(service.Drive9)
	if err != nil {
		t.Fatal(err)
	}
	never := *d9
	never.Ready.Health, never.Ready.Timeout = "/not-served", 3e9
	for _, c := range []struct {
		name    string
		prof    *podprofile.Profile
		wantErr string
	}{
		{"runs to a verdict", d9, ""},
		{"never ready", &never, "GET http://127.0.0.1:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, err := scenario.Parse("drive9-shape.yaml", []byte(drive9Scenario))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			res, err := Run(context.Background(), Options{Scenario: sc, Dir: dir, Eventlogd: bin, PodProfile: c.prof, Log: testWriter{t}, Progress: testWriter{t}})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "/not-served") {
					t.Fatalf("error %v, want the pod never ready", err)
				}
				noChildren(t)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			recs := readLedger(t, res.Ledger)
			sum := verify(t, res.Ledger)
			noChildren(t)
			var faultPhases, crashes, scraped, tenantDBSamples int
			exits := map[string]int{}
			var run ledger.Record
			for _, rec := range recs {
				switch {
				case rec.K == ledger.KindRun:
					run = rec
				case rec.K == ledger.KindFault:
					faultPhases++
				case rec.K == ledger.KindPod && rec.Pod == "pod-1" && rec.Phase == "crash":
					crashes++
				case rec.K == ledger.KindPod && rec.Phase == "exit":
					exits[rec.Pod]++
				case rec.K == ledger.KindMetric && strings.HasPrefix(rec.Name, "drive9_"):
					scraped++
				case rec.K == ledger.KindProxy && rec.Name == podprofile.TenantDBProxy:
					tenantDBSamples++
				}
			}
			if run.Target != "external" || run.Profile != "drive9" || !run.Audit || len(run.Pods) != 2 {
				t.Errorf("run record target %q profile %q audit %v pods %v", run.Target, run.Profile, run.Audit, run.Pods)
			}
			// pod_restart stops pod-2 gracefully once (an exit, not a crash) before the run's end stops both.
			if faultPhases != 8 || crashes != 1 || exits["pod-2"] != exits["pod-1"]+1 || scraped == 0 || tenantDBSamples == 0 {
				t.Errorf("fault records %d (want 8), pod-1 crashes %d, exits %v (want one more of pod-2: pod_restart), drive9 metric samples %d, tenant_db proxy samples %d",
					faultPhases, crashes, exits, scraped, tenantDBSamples)
			}
			for _, rec := range recs {
				if rec.K == ledger.KindFault && rec.Err != "" {
					t.Errorf("fault %s %s %s: %s", rec.ID, rec.Kind, rec.Phase, rec.Err)
				}
			}
			checkReached(t, res.Ledger, recs, sum, run, "tenant_db_stall")
			if res.Audit == nil || !res.Audit.OK || res.Audit.Tenants != 2 || res.Audit.Rows == 0 {
				t.Errorf("audit %+v", res.Audit)
			}
			// tenant_1's stall is on the one address every tenant's database is behind: both tenants'
			// mutations stop being answered while it lasts.
			var from, to int64
			for _, rec := range recs {
				if rec.K == ledger.KindFault && rec.Kind == "tenant_db_stall" {
					if rec.Phase == "start" {
						from = rec.T
					} else {
						to = rec.T
					}
				}
			}
			stalled := map[string]int{}
			for _, rec := range recs {
				if rec.K == ledger.KindMut && rec.T >= from && rec.T < to && rec.Res != ledger.ResOK {
					stalled[rec.Tenant]++
				}
			}
			if b, _ := os.ReadFile(filepath.Join(res.Dir, "run.log")); !strings.Contains(string(b), "reaches=tenant_1,tenant_2") {
				t.Error("run.log does not say that tenant_1's DB fault reaches tenant_2 too")
			}
			if len(stalled) != 2 {
				t.Errorf("mutations not answered during the stall, by tenant: %v; want both tenants (one DB address)", stalled)
			}
			if sum.Verdict != verifier.VerdictPass || sum.Acked == 0 {
				t.Errorf("verdict %s failed %v acked %d lost %d %v skipped %d", sum.Verdict, sum.FailedChecks, sum.Acked, sum.Lost, sum.LostByReason, sum.Skipped)
			}
			t.Logf("verdict %s acked %d lost %d skipped %d audit rows %d, wall %s", sum.Verdict, sum.Acked, sum.Lost, sum.Skipped, res.Audit.Rows, res.Wall)
		})
	}
}

// On an existing server (--dsn) the run creates its meta database, the pods create one database per
// tenant, and the run drops all of them at its end, leaving the server's own databases alone.
func TestE2EDrive9ProfileOnDSN(t *testing.T) {
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	bin := buildDrive9shape(t)
	srv, err := dbserver.Start(context.Background(), dbserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	root, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := root.Exec("CREATE DATABASE users_own"); err != nil {
		t.Fatal(err)
	}
	d9, _ := service.Shipped.Pods(service.Drive9)
	sc, err := scenario.Parse("d.yaml", []byte("name: d\nduration: 3s\ndrain_timeout: 20s\ntenants: [{count: 2}]\npods: {count: 2}\nload:\n  - {tenants: g1, executor: constant-arrival-rate, rate: 10}\nconsumers: [{count: 1}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Scenario: sc, Dir: t.TempDir(), Eventlogd: bin, PodProfile: d9, DSN: srv.DSN(""), Log: testWriter{t}, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Audit == nil || !res.Audit.OK || res.Audit.Tenants != 2 || res.Audit.Rows == 0 {
		t.Fatalf("audit %+v: the tenants' databases were not there to read", res.Audit)
	}
	rows, err := root.Query("SHOW DATABASES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var left []string
	own := false
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		own = own || n == "users_own"
		if strings.HasPrefix(n, "drive9_") || strings.HasPrefix(n, "sg") {
			left = append(left, n)
		}
	}
	if len(left) > 0 || !own {
		t.Errorf("databases left by the run: %v; the server's own database kept: %v", left, own)
	}
	_ = srv.Stop() // the test's own server; then nothing the run started may be left
	noChildren(t)
}

// checkReached: the start record of the run's one fault of kind names every tenant of the run as
// reached (every tenant's database is behind one DB address), the summary (what summary.json holds)
// names them all for that fault, and the report's fault table lists them and its band counts them.
// The other faults reach no list (the control).
func checkReached(t *testing.T, path string, recs []ledger.Record, sum *verifier.Summary, run ledger.Record, kind string) {
	t.Helper()
	var ids, names []string
	for _, tn := range run.Tenants {
		ids, names = append(ids, tn.ID), append(names, tn.Name)
	}
	slices.Sort(ids)
	var starts int
	for _, rec := range recs {
		if rec.K != ledger.KindFault || rec.Phase != "start" {
			continue
		}
		if rec.Kind != kind {
			if rec.Reached != nil {
				t.Errorf("fault %s %s: reached %v, want none", rec.ID, rec.Kind, rec.Reached)
			}
			continue
		}
		starts++
		if len(ids) < 2 || !slices.Equal(rec.Reached, ids) {
			t.Errorf("fault %s start record: reached %v, want every tenant %v", rec.ID, rec.Reached, ids)
		}
	}
	if starts != 1 {
		t.Fatalf("%d start records of %s", starts, kind)
	}
	js, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	var back verifier.Summary
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	for _, f := range back.Faults {
		got := slices.Clone(f.Tenants)
		slices.Sort(got)
		want := slices.Clone(names)
		slices.Sort(want)
		if f.Kind == kind && !slices.Equal(got, want) {
			t.Errorf("summary.json fault %s: tenants %v, want %v", f.ID, f.Tenants, want)
		}
	}
	in, err := report.Build([]string{path}, sum, nil, verifier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, in); err != nil {
		t.Fatal(err)
	}
	// the cell lists the names in the order of the record's ids, which the service chose
	cell := ""
	if _, rest, ok := strings.Cut(page.String(), fmt.Sprintf(">%d: ", len(ids))); ok {
		cell, _, _ = strings.Cut(rest, "<")
	}
	listed := strings.Split(cell, ", ")
	slices.Sort(listed)
	want := slices.Clone(names)
	slices.Sort(want)
	if !strings.Contains(page.String(), fmt.Sprintf("%s %s (reached %d tenants)", kind, "tenant_1", len(ids))) || !slices.Equal(listed, want) {
		i := strings.Index(page.String(), `id="fault-table"`)
		t.Errorf("report: the %s fault does not list the %d tenants it reached (%v): %.2000s", kind, len(ids), names, page.String()[max(i, 0):])
	}
}
