package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/ledger"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

const fakePodEnv = "SEQGATE_FAULTS_FAKE_POD"

// fakePod is a minimal eventlogd for process-level tests: it prints its address like eventlogd, serves
// /healthz and the --admin poller endpoints (state readable with GET /v1/admin/poller), and exits 0 on
// SIGTERM like a graceful shutdown.
func fakePod() {
	listen := "127.0.0.1:0"
	for i, a := range os.Args {
		if a == "--listen" && i+1 < len(os.Args) {
			listen = os.Args[i+1]
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("listening on", ln.Addr().String())
	var stalled atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	mux.HandleFunc("POST /v1/admin/poller/stall", func(w http.ResponseWriter, r *http.Request) {
		if _, err := time.ParseDuration(r.URL.Query().Get("for")); err != nil {
			http.Error(w, "bad for", 400)
			return
		}
		stalled.Store(true)
	})
	mux.HandleFunc("POST /v1/admin/poller/resume", func(http.ResponseWriter, *http.Request) { stalled.Store(false) })
	mux.HandleFunc("GET /v1/admin/poller", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]bool{"stalled": stalled.Load()})
	})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	go func() { <-sig; os.Exit(0) }()
	_ = http.Serve(ln, mux)
}

// podPhases lists one pod's record phases (with the signal of a crash) in order.
func podPhases(s *ledger.Memory, pod string) []string {
	var out []string
	for _, r := range s.Records() {
		if r.Pod == pod {
			p := r.Phase
			if r.Signal != "" {
				p += ":" + r.Signal
			}
			out = append(out, p)
		}
	}
	return out
}

// fleetEnv is faultstest.Env with the harness's real pod fleet.
type fleetEnv struct {
	*faultstest.Env
	fleet *pods.Fleet
}

func (e fleetEnv) PodNames() []string { return e.fleet.Names() }
func (e fleetEnv) Pod(name string) (Pod, error) {
	if p := e.fleet.Get(name); p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("no pod %q", name)
}
func (e fleetEnv) AdminURL(pod string) (string, error) { return e.fleet.Get(pod).URL(), nil }

func pollerStalled(t *testing.T, url string) bool {
	t.Helper()
	resp, err := http.Get(url + "/v1/admin/poller")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Stalled bool }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Stalled
}

// TestRunnerWithHarnessPods drives the pod kinds through the Runner against the harness's own pod
// fleet (harness/pods, real processes): the exact code path of `seqgate run`. The pod ledger records
// the harness writes show what happened: a crash by SIGKILL then a restart for pod_crash; an exit by
// SIGTERM (not a crash) then a restart for pod_restart.
func TestRunnerWithHarnessPods(t *testing.T) {
	t.Setenv(fakePodEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sink := &ledger.Memory{}
	ctx := context.Background()
	fleet, err := pods.Start(ctx, pods.Config{Binary: exe, LogDir: t.TempDir(), Start: time.Now(), Sink: sink, ReadyAfter: 20 * time.Second}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Stop(5 * time.Second)
	env := fleetEnv{Env: faultstest.NewEnv(t), fleet: fleet}
	in := []Instance{
		{ID: "f001", Kind: kinds.PodPauseName, Target: "pod-1", Targets: []string{"pod-1"}, At: 0, For: 400 * time.Millisecond},
		{ID: "f002", Kind: kinds.OutboxPollerStallName, Target: "pod-2", Targets: []string{"pod-2"}, At: 0, For: 400 * time.Millisecond},
		{ID: "f003", Kind: kinds.PodCrashName, Target: "pod-1", Targets: []string{"pod-1"}, At: 600 * time.Millisecond, For: 200 * time.Millisecond, Params: paramsOf(t, kinds.PodCrashName, kinds.PodCrashParams{Restart: true})},
		{ID: "f004", Kind: kinds.PodRestartName, Target: "pod-2", Targets: []string{"pod-2"}, At: 600 * time.Millisecond, Params: paramsOf(t, kinds.PodRestartName, kinds.PodRestartParams{Grace: 5 * time.Second})},
	}
	var rec records
	r, err := NewRunner(env, in, rec.add, sinceStart())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	// While f001 and f002 are active: pod-1 is stopped (state T), pod-2's poller is stalled.
	wait.Until(time.Second, func() bool { return len(r.activeIDs()) >= 2 })
	if got := r.activeIDs(); slices.Equal(got, []string{"f001", "f002"}) {
		if !faultstest.WaitProcState(t, fleet.Get("pod-1").PID(), 'T') {
			t.Error("pod-1 not stopped during pod_pause")
		}
		if !pollerStalled(t, fleet.Get("pod-2").URL()) {
			t.Error("pod-2's poller not stalled during outbox_poller_stall")
		}
	} else {
		t.Logf("machine too slow to observe the first faults while active (active %v); checking records only", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := r.HealAll(ctx); err != nil {
		t.Fatal(err)
	}
	if pollerStalled(t, fleet.Get("pod-2").URL()) {
		t.Error("pod-2's poller still stalled after the run")
	}
	for _, p := range fleet.Pods() {
		if !p.Alive() {
			t.Errorf("%s is down after the run", p.Name)
		}
	}
	want := map[string][]string{
		"pod-1": {"start", "ready", "crash:SIGKILL", "start", "ready"},
		"pod-2": {"start", "ready", "exit", "start", "ready"},
	}
	for pod, w := range want {
		if got := podPhases(sink, pod); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("%s pod records %v, want %v", pod, got, w)
		}
	}
	for _, id := range []string{"f001", "f002", "f003", "f004"} {
		if got := rec.phases(id); !slices.Equal(got, []string{"start", "stop"}) {
			t.Errorf("%s fault records %v", id, got)
		}
	}
}
