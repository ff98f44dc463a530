package run

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
)

// TestEventlogdCommandKeepsTheDSNOffArgv: the meta DSN (with the --dsn password) goes to the pods
// in their environment, and so do the run's admin and provisioning tokens; a scenario defect brings
// --test-defects with it.
func TestEventlogdCommandKeepsTheDSNOffArgv(t *testing.T) {
	const dsn = "seqgate:pw-XYZ@tcp(127.0.0.1:3306)/run_meta"
	for _, tc := range []struct {
		name        string
		e           scenario.Eventlogd
		wantDefects bool
	}{
		{"plain", scenario.Eventlogd{Retention: scenario.Duration(time.Hour), Flags: map[string]string{"sse-queue-size": "64"}}, false},
		{"defect", scenario.Eventlogd{Retention: scenario.Duration(time.Hour), Defect: "cross-tenant-leak"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prof, err := service.Shipped.Pods(service.Eventlogd)
			if err != nil {
				t.Fatal(err)
			}
			args, env, err := podCommand(prof, tc.e, podprofile.Vars{podprofile.PhListen: "127.0.0.1:0", podprofile.PhPod: "pod-1",
				podprofile.PhPoolsFile: "/run/pools.json", podprofile.PhRetention: tc.e.Retention.D().String(), podprofile.PhMetaDSN: dsn,
				podprofile.PhAdminToken: "adm-TOKEN", podprofile.PhProvisionToken: "prov-TOKEN"})
			if err != nil {
				t.Fatal(err)
			}
			// The arguments eventlogd pods have always had, in their order.
			if want := "--listen 127.0.0.1:0 --pod pod-1 --pools /run/pools.json --fs-events-retention 1h0m0s --admin"; !strings.HasPrefix(strings.Join(args, " "), want) {
				t.Fatalf("args %q, want them to start %q", args, want)
			}
			if a := strings.Join(args, " "); strings.Contains(a, "TOKEN") {
				t.Fatalf("a token is on the command line: %q", args)
			}
			if !slices.Contains(env, "EVENTLOGD_ADMIN_TOKEN=adm-TOKEN") || !slices.Contains(env, "EVENTLOGD_PROVISION_TOKEN=prov-TOKEN") {
				t.Fatalf("env %q lacks the run's admin or provisioning token", env)
			}
			if strings.Contains(strings.Join(args, " "), "pw-XYZ") || slices.Contains(args, "--meta-dsn") {
				t.Fatalf("the meta DSN is on the command line: %q", args)
			}
			if !slices.Contains(env, "EVENTLOGD_META_DSN="+dsn) {
				t.Fatalf("env %q lacks the meta DSN", env)
			}
			if got := slices.Contains(args, "--test-defects"); got != tc.wantDefects {
				t.Fatalf("--test-defects in %q: %v, want %v", args, got, tc.wantDefects)
			}
			if i := slices.Index(args, "--defect"); tc.wantDefects && (i < 0 || args[i+1] != tc.e.Defect) {
				t.Fatalf("--defect %s missing from %q", tc.e.Defect, args)
			}
		})
	}
}
