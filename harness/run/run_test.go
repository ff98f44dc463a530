package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/internal/proccpu"
	"github.com/seqgate/seqgate/internal/toxiserver"
	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

var eventlogdBin string

func TestMain(m *testing.M) {
	if os.Getenv(v2PodEnv) != "" { // this binary is a pod of v2Service (registry_test.go)
		os.Exit(v2Pod())
	}
	dir, err := os.MkdirTemp("", "seqgate-run-test-")
	if err != nil {
		panic(err)
	}
	eventlogdBin = filepath.Join(dir, "eventlogd")
	out, err := exec.Command("go", "build", "-o", eventlogdBin, "../../cmd/eventlogd").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build eventlogd: %v\n%s", err, out)
		eventlogdBin = ""
	}
	os.Setenv(v2EventlogdEnv, eventlogdBin) // what v2Service's pods run
	code := 0
	func() {
		defer os.RemoveAll(dir)
		code = m.Run()
	}()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// e2eScenario is a short version of smoke: one dedicated and one shared pair of hot tenants, one
// cold tenant, 2 pods, 2 consumers per tenant, 20 mutations/s per hot tenant for 8 s (the pair for
// the first 6 s only: the load phase still lasts the scenario's 8 s).
const e2eScenario = `name: e2e
seed: 5
duration: 8s
drain_timeout: 20s
tenants:
  - {group: hot, count: 1}
  - {group: pair, count: 2, mode: shared}
  - {group: cold, count: 1, cold: true}
pods: {count: 2}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 20, mix: {write: 8, mkdir: 1, rename: 1}}
  - {tenants: pair, executor: constant-arrival-rate, rate: 20, duration: 6s}
consumers:
  - {count: 2}
`

func runE2E(t *testing.T, hooks []Hook, ctx context.Context) (*Result, *verifier.Summary, []ledger.Record) {
	t.Helper()
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	sc, err := scenario.Parse("e2e.yaml", []byte(e2eScenario))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Run(ctx, Options{Scenario: sc, Dir: dir, Eventlogd: eventlogdBin, Hooks: hooks, Log: testWriter{t}, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	recs := readLedger(t, res.Ledger)
	s := verify(t, res.Ledger)
	noChildren(t)
	return res, s, recs
}

// checkCPU: the run measured each named component over its load phase, with CPU seconds above 0
// and no more than the window's wall time on every core; result.json holds the same block.
func checkCPU(t *testing.T, res *Result, names ...string) {
	t.Helper()
	w := res.CPU
	if w == nil {
		t.Fatal("the run has no cpu block")
	}
	if w.WallSeconds < 7 || w.Cores < 1 {
		t.Errorf("cpu window %.2f s on %d cores, want the 8 s load phase", w.WallSeconds, w.Cores)
	}
	byName := map[string]proccpu.Usage{}
	for _, c := range w.Components {
		byName[c.Name] = c
	}
	for _, n := range names {
		c, ok := byName[n]
		switch {
		case !ok:
			t.Errorf("cpu: no component %s in %+v", n, w.Components)
		case !c.Measured || c.CPUSeconds <= 0 || c.CPUSeconds > w.WallSeconds*float64(w.Cores):
			t.Errorf("cpu: %s measured=%v %.3f s (%s), want > 0 and <= %.1f s x %d cores", n, c.Measured, c.CPUSeconds, c.Note, w.WallSeconds, w.Cores)
		}
	}
	t.Logf("cpu during the load: %s", w)
	b, err := os.ReadFile(filepath.Join(res.Dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		CPU *proccpu.Window `json:"cpu"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.CPU == nil || len(f.CPU.Components) != len(w.Components) {
		t.Errorf("result.json's cpu block: %v %+v", err, f.CPU)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// noChildren fails when a process this test started (a pod, the DB server) is still alive.
func noChildren(t *testing.T) {
	t.Helper()
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(me) && f[0] != "Z" {
			t.Errorf("child process %d (%s) outlived the run", pid, strings.Fields(string(b))[1])
		}
	}
}

func TestE2ESmokePasses(t *testing.T) {
	res, s, recs := runE2E(t, nil, context.Background())
	if s.Verdict != verifier.VerdictPass {
		t.Errorf("verdict %s, failed %v", s.Verdict, s.FailedChecks)
	}
	if !res.Drained {
		t.Error("not drained")
	}
	if b, err := os.ReadFile(filepath.Join(res.Dir, "result.json")); err != nil || !strings.Contains(string(b), `"offered": 400`) {
		t.Errorf("result.json: %v\n%s", err, b) // 20/s x 8 s + 2 x 20/s x 6 s
	}
	if res.LoadSeconds < 8 {
		t.Errorf("load phase %.1f s: it ended with its last block, not at the scenario's 8 s", res.LoadSeconds)
	}
	checkCPU(t, res, "seqgate", "pod-1", "pod-2", "db")
	if s.Acked == 0 || s.Lost != 0 || s.Skipped != 0 || s.Undelivered != 0 || s.Leaks != 0 || s.ColdWakeups != 0 {
		t.Errorf("acked %d lost %d skipped %d undelivered %d leaks %d cold wakeups %d", s.Acked, s.Lost, s.Skipped, s.Undelivered, s.Leaks, s.ColdWakeups)
	}
	// Every acked event reached every consumer of its tenant: deliveries = sum over tenants of acked x 2.
	var want int64
	for _, st := range s.PerTenant {
		want += st.Acked * 2
	}
	if s.Deliveries != want {
		t.Errorf("deliveries %d, want %d (every acked event to both consumers of its tenant)", s.Deliveries, want)
	}
	var cold, coldProxy int
	for _, r := range recs {
		if r.K == ledger.KindRun {
			for _, tn := range r.Tenants {
				if tn.Cold {
					cold++
				}
			}
		}
		if r.K == ledger.KindProxy && r.Tenant != "" {
			coldProxy++
		}
	}
	if cold != 1 || coldProxy == 0 {
		t.Errorf("cold tenants %d, tenant proxy samples %d: the cold check had nothing to look at", cold, coldProxy)
	}
}

// The negative control: the test kills a pod mid-run and restarts it. The ledger must show the crash,
// and the run must still verify (the consumers fail over; nothing is skipped or silently lost).
func TestE2EPodKilledMidRun(t *testing.T) {
	hook := Hook{At: 3 * time.Second, Name: "kill pod-2", Do: func(ctx context.Context, env faults.Env) error {
		p, err := env.Pod("pod-2")
		if err != nil {
			return err
		}
		if err := p.Kill(syscall.SIGKILL); err != nil {
			return err
		}
		if err := p.Wait(ctx); err != nil {
			return err
		}
		time.Sleep(time.Second) // holds the fault: pod-2 stays down a second, so its consumers fail over
		return p.Restart(ctx)
	}}
	res, s, recs := runE2E(t, []Hook{hook}, context.Background())
	checkCPU(t, res, "seqgate", "pod-1", "db")
	for _, c := range res.CPU.Components {
		if c.Name == "pod-2" && (c.Measured || !strings.Contains(c.Note, "restarted")) {
			t.Errorf("pod-2 was restarted during the load, yet its cpu figure is %+v", c)
		}
	}
	var phases []string
	for _, r := range recs {
		if r.K == ledger.KindPod && r.Pod == "pod-2" {
			phases = append(phases, r.Phase+":"+r.Signal)
		}
	}
	want := "[start: ready: crash:SIGKILL start: ready: exit:]" // eventlogd exits 0 on SIGTERM
	if fmt.Sprint(phases) != want {
		t.Errorf("pod-2 records %v, want %s", phases, want)
	}
	if s.Skipped != 0 || s.Undelivered != 0 || s.LostByReason["silent"] != 0 || s.Leaks != 0 {
		t.Errorf("skipped %d undelivered %d silent %d leaks %d", s.Skipped, s.Undelivered, s.LostByReason["silent"], s.Leaks)
	}
	if s.Reconnects.Total == 0 {
		t.Error("no consumer reconnected after its pod was killed")
	}
	t.Logf("verdict %s failed %v acked %d lost %d %v", s.Verdict, s.FailedChecks, s.Acked, s.Lost, s.LostByReason)
}

// Ctrl-C in the middle of the load: the run stops cleanly, the ledger is finished and marked
// interrupted, and nothing it started is left running.
func TestE2EInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	hook := Hook{At: 2 * time.Second, Name: "ctrl-c", Do: func(context.Context, faults.Env) error { cancel(); return nil }}
	res, s, recs := runE2E(t, []Hook{hook}, ctx)
	if !res.Interrupted {
		t.Error("result not marked interrupted")
	}
	if s == nil || s.Verdict != verifier.VerdictInconclusive {
		t.Errorf("an interrupted run's ledger must verify as inconclusive, got %+v", s)
	}
	last := recs[len(recs)-1]
	if last.K != ledger.KindEnd || last.Reason != "interrupted" {
		t.Errorf("last record %+v, want end with reason interrupted", last)
	}
}

// TestE2EToxiproxyServer runs the e2e scenario with a 2 s tenant_db_down on tenant_1 through a real
// toxiproxy server (seqgate run --toxiproxy): the fault is injected and healed over the server's
// API, mutations of tenant_1 fail while it lasts (the proxy really went down), the byte-counting
// relay still feeds the proxy records, the run verifies, and the proxies it made are deleted from
// the server at the end.
func TestE2EToxiproxyServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pods, a DB and a toxiproxy server")
	}
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := toxiserver.Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := toxiserver.Start(ctx, bin, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	sc, err := scenario.Parse("e2e-toxiproxy.yaml", []byte(e2eScenario+"faults:\n  - {at: 3s, for: 2s, kind: tenant_db_down, target: tenant_1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, Options{Scenario: sc, Dir: t.TempDir(), Eventlogd: eventlogdBin, Toxiproxy: srv.URL, Log: testWriter{t}, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FaultErr != nil {
		t.Fatalf("fault through the toxiproxy server: %v", res.FaultErr)
	}
	recs := readLedger(t, res.Ledger)
	var victim string
	var faultPhases []string
	var victimErrs, proxyBytes int64
	for _, rec := range recs {
		switch rec.K {
		case ledger.KindRun:
			victim = rec.Tenants[0].ID // tenant_1, the dedicated hot tenant
		case ledger.KindFault:
			if rec.Kind == "tenant_db_down" {
				faultPhases = append(faultPhases, rec.Phase)
			}
		case ledger.KindMut:
			if rec.Tenant == victim && rec.Res == ledger.ResErr {
				victimErrs++
			}
		case ledger.KindProxy:
			proxyBytes += rec.BytesUp
		}
	}
	if !slices.Contains(faultPhases, "start") || !slices.Contains(faultPhases, "stop") {
		t.Errorf("tenant_db_down fault records: %v, want start and stop", faultPhases)
	}
	if victimErrs == 0 {
		t.Error("no mutation of tenant_1 failed: the proxy on the toxiproxy server did not go down")
	}
	if proxyBytes == 0 {
		t.Error("proxy records count no bytes: the relay behind the server's proxies is missing")
	}
	s := verify(t, res.Ledger)
	if s.Verdict != verifier.VerdictPass {
		t.Errorf("verdict %s, failed %v", s.Verdict, s.FailedChecks)
	}
	ps, err := toxiclient.NewClient(srv.URL).Proxies()
	if err != nil || len(ps) != 0 {
		t.Errorf("proxies left on the toxiproxy server after the run: %v (%v)", ps, err)
	}
	t.Logf("tenant_1 mutations failed during the outage: %d; verdict %s", victimErrs, s.Verdict)
}
