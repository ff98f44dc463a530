package run

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/service"
	tgt "github.com/seqgate/seqgate/harness/target"
	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// v2Service is a service seqgate does not ship, in the one value a newcomer writes: v2Wire's paths
// for every request, a database per pool with a tenant column, and pods started by its own pod
// profile, whose health and metrics paths are its own too. Its pods are this test binary (v2Pod):
// eventlogd behind v2Handler.
var v2Service = service.Def{Name: "v2",
	Target: tgt.Service{Ready: tgt.ReadyStatusIfServed, Wire: v2Wire, AuditDB: "{pool}", TenantColumn: "tenant_id"},
	Pods: &podprofile.Profile{
		Args: []string{"--listen", podprofile.PhListen, "--pod", podprofile.PhPod, "--pools", podprofile.PhPoolsFile,
			"--fs-events-retention", podprofile.PhRetention},
		Env: map[string]string{v2PodEnv: "1", "EVENTLOGD_META_DSN": podprofile.PhMetaDSN,
			"EVENTLOGD_PROVISION_TOKEN": podprofile.PhProvisionToken},
		Ready:        podprofile.Ready{Health: "/api/v2/healthz"},
		Metrics:      "/api/v2/metrics",
		LossCounters: []string{"drive9_sse_event_retry_dropped_total"},
		Layout:       podprofile.LayoutPools,
	},
}

// v2PodEnv in a process's environment makes this test binary one pod of v2Service instead of
// running the tests (TestMain); v2EventlogdEnv names the eventlogd it runs.
const (
	v2PodEnv       = "SEQGATE_TEST_V2_POD"
	v2EventlogdEnv = "SEQGATE_TEST_V2_EVENTLOGD"
)

// v2Pod is one pod of v2Service: a real eventlogd with the pod's arguments on a port of its own,
// behind v2Handler on the pod's --listen address. It writes each kind of request the first time it
// sees it ("v2pod: served stream") and every refused path to stderr, the pod's log, and ends with
// eventlogd (a SIGTERM, which reaches both, stops it gracefully).
func v2Pod() int {
	args := slices.Clone(os.Args[1:])
	i := slices.Index(args, "--listen")
	if i < 0 || i+1 >= len(args) {
		fmt.Fprintln(os.Stderr, "v2pod: no --listen")
		return 2
	}
	listen := args[i+1]
	args[i+1] = "127.0.0.1:0"
	cmd := exec.Command(os.Getenv(v2EventlogdEnv), args...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "v2pod:", err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	lines := bufio.NewReader(out)
	var backend *url.URL
	for backend == nil {
		line, err := lines.ReadString('\n')
		fmt.Print(line)
		if err != nil {
			_ = cmd.Wait()
			fmt.Fprintln(os.Stderr, "v2pod: eventlogd printed no address")
			return 1
		}
		if a, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on "); ok {
			backend = &url.URL{Scheme: "http", Host: a}
		}
	}
	go func() { _, _ = io.Copy(os.Stdout, lines) }()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "v2pod:", err)
		_ = cmd.Process.Kill()
		return 1
	}
	var mu sync.Mutex
	told := map[string]bool{}
	go func() {
		_ = http.Serve(ln, v2Handler(backend, func(kind string) {
			mu.Lock()
			defer mu.Unlock()
			if !told[kind] || strings.HasPrefix(kind, "refused ") {
				told[kind] = true
				fmt.Fprintln(os.Stderr, "v2pod: served", kind)
			}
		}))
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case s := <-sigs:
		_ = cmd.Process.Signal(s)
		<-done
		return 0
	case err := <-done:
		fmt.Fprintln(os.Stderr, "v2pod: eventlogd ended:", err)
		return 1
	}
}

// TestRegisteredServicePods: a service added to the registry as one value (v2Service) shows up in
// the registry's names and errors, and a run starts its pods by its pod profile, provisions through
// its wire, streams, pulls, lists and writes through it, scrapes its metrics path and audits its
// layout, to a passing verdict, no request taking a drive9 path. The control: the shipped registry
// does not know the service, and the same run ends before any load, naming the allowed ones.
func TestRegisteredServicePods(t *testing.T) {
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reg := service.Shipped.With(&v2Service)
	if !slices.Contains(reg.Names(), "v2") || !slices.Contains(reg.PodNames(), "v2") {
		t.Fatalf("names %v, pod names %v", reg.Names(), reg.PodNames())
	}
	if _, err := reg.Lookup("v3"); err == nil || !strings.Contains(err.Error(), "(allowed: eventlogd, drive9, generic, v2)") {
		t.Fatalf("unknown service: %v", err)
	}
	prof, err := reg.Pods("v2")
	if err != nil {
		t.Fatal(err)
	}
	sc := seamScenario + "pods: {count: 2}\n"
	for _, c := range []struct {
		name     string
		services service.Registry
		wantErr  string
	}{
		{"its own registry", reg, ""},
		{"the shipped registry does not know it", service.Shipped, `--target-profile "v2": unknown (allowed: eventlogd, drive9, generic)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenario.Parse("registered.yaml", []byte(sc))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			res, err := Run(context.Background(), Options{Scenario: s, Dir: dir, Eventlogd: exe, PodProfile: prof, Services: c.services,
				Log: testWriter{t}, Progress: testWriter{t}})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				noChildren(t)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			noChildren(t)
			sum := verify(t, res.Ledger)
			var logs strings.Builder
			for _, pod := range []string{"pod-1", "pod-2"} {
				b, err := os.ReadFile(filepath.Join(res.Dir, "pods", pod+".log"))
				if err != nil {
					t.Fatal(err)
				}
				logs.Write(b)
			}
			if strings.Contains(logs.String(), "served refused") {
				t.Errorf("a request went to a drive9 path:\n%s", logs.String())
			}
			for _, k := range []string{"health", "provision", "status", "fs", "stream", "pull", "list", "metrics"} {
				if !strings.Contains(logs.String(), "v2pod: served "+k+"\n") {
					t.Errorf("no %s request went through the service's wire", k)
				}
			}
			var scraped int
			for _, rec := range readLedger(t, res.Ledger) {
				if rec.K == ledger.KindMetric && strings.HasPrefix(rec.Name, "drive9_") {
					scraped++
				}
			}
			if scraped == 0 || sum.Verdict != verifier.VerdictPass || sum.Acked == 0 || res.Audit == nil || !res.Audit.OK || res.Resyncs == 0 {
				t.Errorf("scraped %d, verdict %s failed %v acked %d audit %+v resyncs %d", scraped, sum.Verdict, sum.FailedChecks, sum.Acked, res.Audit, res.Resyncs)
			}
		})
	}
}
