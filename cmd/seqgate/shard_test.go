package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/internal/eventlogdtest"
)

// asSeqgate makes the test binary run seqgate's main instead of the tests (TestMain): the agents of
// the sharded run are real seqgate processes, without a second build of this package.
const asSeqgate = "SEQGATE_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asSeqgate) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// shardScenario: two groups, so the split deals each group over the agents; writes and mkdirs only
// (ops whose choice does not depend on which earlier writes were answered), so the single agent and
// the three agents send exactly the same mutations. The rates are low and the request timeout long:
// on a loaded machine a slow answer must still be an answer (a timeout or a dropped arrival in one
// run and not in the other would make the counts differ for a reason that is not the merge).
const shardScenario = `name: shardtest
seed: 11
duration: 12s
drain_timeout: 60s
tenants:
  - {group: hot, count: 4, mode: shared}
  - {group: calm, count: 2, mode: shared}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 3, timeout: 60s}
  - {tenants: calm, executor: constant-arrival-rate, rate: 2, timeout: 60s, mix: {write: 4, mkdir: 1}}
consumers:
  - {count: 1}
`

// verdictNumbers are the summary fields a sharded run must reproduce.
type verdictNumbers struct {
	Verdict     string `json:"verdict"`
	Acked       int64  `json:"acked"`
	Lost        int64  `json:"lost"`
	Skipped     int64  `json:"skipped"`
	Undelivered int64  `json:"undelivered"`
	Mutations   int64  `json:"mutations"`
	Drops       int64  `json:"drops"`
	Audit       struct {
		OK      bool  `json:"ok"`
		Tenants int64 `json:"tenants"`
		Rows    int64 `json:"rows"`
	} `json:"audit"`
	PerTenant map[string]struct {
		Acked int64 `json:"acked"`
	} `json:"per_tenant"`
}

// tenantAcked is the sorted list of per-tenant acked counts (tenant ids differ between runs).
func (v verdictNumbers) tenantAcked() []int64 {
	var out []int64
	for _, t := range v.PerTenant {
		out = append(out, t.Acked)
	}
	slices.Sort(out)
	return out
}

// TestShardedRunMatchesOneAgent: three seqgate processes, each --shard K/3, drive one eventlogd
// started outside seqgate; seqgate verify merges their ledgers into one verdict, which must equal
// that of one seqgate process running the same scenario against the same service at the same time
// (same acked, lost, skipped, undelivered, audited tenants and verdict). The merge must also refuse
// the sets that are not the run: a shard missing, a shard twice, a ledger of another run.
func TestShardedRunMatchesOneAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB, eventlogd and four seqgate processes (about 30 s)")
	}
	svc := startService(t)
	dir := t.TempDir()
	sc := writeTestFile(t, dir, "shardtest.yaml", shardScenario)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"run", sc, "--target", svc.url, "--dsn", svc.dsn}
	type agent struct {
		name   string
		args   []string
		out    bytes.Buffer
		errOut bytes.Buffer
		err    error
	}
	agents := []*agent{{name: "single", args: append(base, "--out", filepath.Join(dir, "single"))}}
	for k := 1; k <= 3; k++ {
		agents = append(agents, &agent{name: fmt.Sprintf("shard%d", k),
			args: append(base, "--shard", fmt.Sprintf("%d/3", k), "--out", filepath.Join(dir, fmt.Sprintf("shard%d", k)))})
	}
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.err = seqgate(ctx, &a.out, &a.errOut, a.args...)
		}()
	}
	wg.Wait()
	for _, a := range agents {
		if a.err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", a.name, a.err, tail(a.out.String()), tail(a.errOut.String()))
		}
	}
	for _, a := range agents[1:] {
		if !strings.Contains(a.out.String(), "shard "+a.name[5:]+"/3 of run shardtest-s11-") {
			t.Errorf("%s printed %q, want its shard and the derived run id", a.name, a.out.String())
		}
	}
	single := readSummary(t, filepath.Join(dir, "single", "summary.json"))

	ledgers := []string{filepath.Join(dir, "shard1", "ledger.jsonl.gz"), filepath.Join(dir, "shard2", "ledger.jsonl.gz"), filepath.Join(dir, "shard3", "ledger.jsonl.gz")}
	mergedJSON := filepath.Join(dir, "merged.json")
	var out, errOut bytes.Buffer
	if err := seqgate(ctx, &out, &errOut, append([]string{"verify", "--json", mergedJSON}, ledgers...)...); err != nil {
		t.Fatalf("verify of the three ledgers: %v\n%s\n%s", err, tail(out.String()), tail(errOut.String()))
	}
	merged := readSummary(t, mergedJSON)
	t.Logf("one agent: %+v, per tenant acked %v", single, single.tenantAcked())
	t.Logf("three agents merged: %+v, per tenant acked %v", merged, merged.tenantAcked())
	if single.Acked == 0 || single.Verdict != "pass" || !single.Audit.OK || single.Audit.Tenants != 6 {
		t.Fatalf("the single-agent run itself: %+v, want a pass with acked events and all 6 tenants audited", single)
	}
	if merged.Verdict != single.Verdict || merged.Acked != single.Acked || merged.Lost != single.Lost ||
		merged.Skipped != single.Skipped || merged.Undelivered != single.Undelivered || merged.Mutations != single.Mutations ||
		merged.Drops != single.Drops || merged.Audit != single.Audit ||
		!slices.Equal(merged.tenantAcked(), single.tenantAcked()) {
		t.Errorf("merged verdict differs from the single agent's:\nmerged %+v\nsingle %+v", merged, single)
	}

	// Sets that are not the run are refused (exit 3), naming the file.
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"a shard missing", ledgers[:2], "missing 3/3"},
		{"a shard twice", []string{ledgers[0], ledgers[1], ledgers[1]}, ledgers[1] + `:1: field "shard": shard 2/3 is also ` + ledgers[1]},
		{"another run's ledger", append(append([]string{}, ledgers...), filepath.Join(dir, "single", "ledger.jsonl.gz")), "ledgers of different runs"},
		{"one shard alone", ledgers[2:], "alone is not the run"},
	} {
		var o, e bytes.Buffer
		err := seqgate(ctx, &o, &e, append([]string{"verify"}, tc.files...)...)
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != exitUnusable || !strings.Contains(e.String(), tc.want) {
			t.Errorf("%s: verify = %v, stderr %q; want exit 3 and %q", tc.name, err, e.String(), tc.want)
		}
	}
}

// tail is the end of a long output (a failing run prints every witness).
func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}

// seqgate runs this test binary as seqgate with args, in its own process group, killed with the test.
func seqgate(ctx context.Context, stdout, stderr *bytes.Buffer, args ...string) error {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), asSeqgate+"=1", "SEQGATE_PROVISION_TOKEN="+eventlogdtest.ProvisionToken)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd.Run()
}

func readSummary(t *testing.T, path string) verdictNumbers {
	t.Helper()
	var v verdictNumbers
	readJSON(t, path, &v)
	return v
}

type extService struct{ url, dsn string }

// startService starts one eventlogd on a private MariaDB, outside seqgate: the external service the
// agents share. Every tenant goes to its shared pool.
func startService(t *testing.T) extService {
	t.Helper()
	bin := buildEventlogd(t)
	svc := eventlogdtest.StartService(t, bin, []eventlogdtest.Pool{{ID: "shared_pool", Role: "shared"}}, "--pod", "ext-1")
	return extService{url: svc.URL, dsn: svc.ServerDSN}
}
