package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// userEventlogdProfile is a pod profile as a user writes it, starting eventlogd; it differs from the
// built-in one (no --admin, its own address line and health path spelled out).
const userEventlogdProfile = `name: my-eventlogd
args: ["--listen", "{listen}", "--pod", "{pod}", "--pools", "{pools_file}", "--fs-events-retention", "{retention}"]
env:
  EVENTLOGD_META_DSN: "{meta_dsn}"
  EVENTLOGD_PROVISION_TOKEN: "{provision_token}"
ready: {address_line: "listening on ", health: /healthz, timeout: 30s}
loss_counters: [drive9_sse_event_retry_dropped_total]
layout: pools
target: eventlogd
`

// A fault scenario (a tenant-DB stall, a pod pause, a pod crash and restart, a graceful pod
// restart) on eventlogd pods started by a
// user's pod profile runs to a verdict; the same profile without the provisioning token makes every
// pod refuse to start, and the run ends before any load with the pod's own reason quoted.
func TestE2EUserPodProfile(t *testing.T) {
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	const sc = `name: user-profile
seed: 3
duration: 9s
drain_timeout: 30s
tenants:
  - {group: hot, count: 2}
pods: {count: 2}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 10}
consumers:
  - {count: 1}
faults:
  - {at: 1s, for: 2s, kind: tenant_db_stall, target: tenant_1}
  - {at: 3.5s, for: 1s, kind: pod_pause, target: pod-2}
  - {at: 5s, for: 1s, kind: pod_crash, target: pod-1}
  - {at: 7s, kind: pod_restart, target: pod-2}
`
	for _, c := range []struct {
		name, profile, wantErr string
	}{
		{"runs to a verdict", userEventlogdProfile, ""},
		{"no provisioning token: the pods refuse to start", strings.Replace(userEventlogdProfile, `  EVENTLOGD_PROVISION_TOKEN: "{provision_token}"`+"\n", "", 1), "provision"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "profile.yaml")
			if err := os.WriteFile(path, []byte(c.profile), 0o600); err != nil {
				t.Fatal(err)
			}
			prof, err := service.Shipped.ReadPods(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := scenario.Parse("user-profile.yaml", []byte(sc))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), Options{Scenario: s, Dir: filepath.Join(dir, "run"), Eventlogd: eventlogdBin, PodProfile: prof,
				Log: testWriter{t}, Progress: testWriter{t}})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "pod-") {
					t.Fatalf("error %v, want the pod's start-up failure naming %q", err, c.wantErr)
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
			var faultPhases, crashes int
			exits := map[string]int{}
			for _, rec := range recs {
				if rec.K == ledger.KindFault {
					faultPhases++
					if rec.Err != "" || rec.Reached != nil {
						t.Errorf("fault %s %s %s: err %q, reached %v (a dedicated pool reaches its tenant only)", rec.ID, rec.Kind, rec.Phase, rec.Err, rec.Reached)
					}
				}
				if rec.K == ledger.KindPod && rec.Pod == "pod-1" && rec.Phase == "crash" {
					crashes++
				}
				if rec.K == ledger.KindPod && rec.Phase == "exit" {
					exits[rec.Pod]++
				}
			}
			if b, _ := os.ReadFile(filepath.Join(res.Dir, "run.log")); strings.Contains(string(b), "reaches=") {
				t.Error("run.log says a dedicated pool's fault reaches other tenants")
			}
			// pod_restart stops pod-2 gracefully once (an exit, not a crash) before the run's end stops both.
			if faultPhases != 8 || crashes != 1 || exits["pod-2"] != exits["pod-1"]+1 {
				t.Errorf("fault records %d (want a start and a stop of each of 4), pod-1 crashes %d, exits %v (want one more of pod-2)", faultPhases, crashes, exits)
			}
			if sum.Verdict == verifier.VerdictInconclusive || sum.LostByReason["silent"] != 0 || sum.Acked == 0 {
				t.Errorf("verdict %s failed %v acked %d lost %v", sum.Verdict, sum.FailedChecks, sum.Acked, sum.LostByReason)
			}
			t.Logf("verdict %s acked %d lost %d %v skipped %d, wall %s", sum.Verdict, sum.Acked, sum.Lost, sum.LostByReason, sum.Skipped, res.Wall)
		})
	}
}
