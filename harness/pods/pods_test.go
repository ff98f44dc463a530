package pods

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/ledger"
	"go.uber.org/goleak"
)

// The test binary doubles as a minimal pod: with SEQGATE_FAKE_POD set it serves /healthz on --listen
// and prints the line eventlogd prints, so process management is tested on real processes.
func TestMain(m *testing.M) {
	if os.Getenv("SEQGATE_FAKE_POD") != "" {
		fakePod()
		return
	}
	goleak.VerifyTestMain(m)
}

func fakePod() {
	if os.Getenv("SEQGATE_FAKE_POD") == "exit-early" { // a pod refusing its flags: reasons on stderr, no address
		for i := 1; i <= 15; i++ {
			fmt.Fprintf(os.Stderr, "fake pod: start-up line %d\n", i)
		}
		os.Exit(1)
	}
	listen := "127.0.0.1:0"
	if a := os.Getenv("FAKE_POD_LISTEN"); a != "" { // a pod told where to listen by its environment (drive9's DRIVE9_LISTEN_ADDR)
		listen = a
	}
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
	mux := http.NewServeMux()
	never := os.Getenv("SEQGATE_FAKE_POD") == "never-ready"
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if never {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
	})
	mux.HandleFunc("/exit", func(http.ResponseWriter, *http.Request) { os.Exit(3) }) // a crash of its own
	_ = http.Serve(ln, mux)
}

func phases(s *ledger.Memory, pod string) []string {
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

func TestFleetLifecycle(t *testing.T) {
	t.Setenv("SEQGATE_FAKE_POD", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &ledger.Memory{}
	ctx := context.Background()
	f, err := Start(ctx, Config{Binary: exe, LogDir: t.TempDir(), Start: time.Now(), Sink: s}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop(5 * time.Second)
	p := f.Get("pod-1")
	url := p.URL()
	if err := p.Kill(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if p.Alive() {
		t.Fatal("killed pod is alive")
	}
	if err := p.Kill(syscall.SIGKILL); err != ErrDown {
		t.Errorf("kill of a down pod = %v, want ErrDown", err)
	}
	if err := p.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if p.URL() != url {
		t.Errorf("restarted on %s, was %s", p.URL(), url)
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	f.Stop(5 * time.Second)

	tests := []struct {
		pod  string
		want []string
	}{
		{"pod-1", []string{"start", "ready", "crash:SIGKILL", "start", "ready", "exit:SIGTERM"}},
		{"pod-2", []string{"start", "ready", "exit:SIGTERM"}},
	}
	for _, tc := range tests {
		got := phases(s, tc.pod)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s records = %v, want %v", tc.pod, got, tc.want)
		}
	}
}

// A pod that dies by itself (not asked to) is a crash, with its exit code.
func TestPodExitingByItselfIsACrash(t *testing.T) {
	t.Setenv("SEQGATE_FAKE_POD", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &ledger.Memory{}
	f, err := Start(context.Background(), Config{Binary: exe, LogDir: t.TempDir(), Start: time.Now(), Sink: s}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop(5 * time.Second)
	p := f.Get("pod-1")
	if resp, err := http.Get(p.URL() + "/exit"); err == nil {
		resp.Body.Close()
	}
	if err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := s.Records()
	last := recs[len(recs)-1]
	if last.Phase != "crash" || last.Code == nil || *last.Code != 3 || last.Signal != "" {
		t.Errorf("last record %+v, want a crash with code 3", last)
	}
}

func TestStartFailsOnBadBinary(t *testing.T) {
	_, err := Start(context.Background(), Config{Binary: "/nonexistent/eventlogd", LogDir: t.TempDir(), Start: time.Now()}, 1)
	if err == nil {
		t.Fatal("no error for a missing binary")
	}
}

// TestSecretsStayOffTheCommandLine: a DSN password given in Config.Env reaches the pod but never
// its /proc/PID/cmdline (readable by every local user); Args that carry one are refused (the
// negative control: the check sees a password where there is one).
func TestSecretsStayOffTheCommandLine(t *testing.T) {
	t.Setenv("SEQGATE_FAKE_POD", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const dsn = "root:s3cretpw@tcp(127.0.0.1:1)/meta"
	f, err := Start(context.Background(), Config{Binary: exe, Args: []string{"--pools", "/tmp/pools.json", "--admin"},
		Env: []string{"EVENTLOGD_META_DSN=" + dsn}, LogDir: t.TempDir(), Start: time.Now(), Sink: &ledger.Memory{}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop(5 * time.Second)
	p := f.Get("pod-1")
	p.mu.Lock()
	pid := p.cmd.Process.Pid
	p.mu.Unlock()
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(cmdline, []byte("s3cretpw")) {
		t.Fatalf("the password is on the pod's command line: %q", cmdline)
	}
	if !bytes.Contains(environ, []byte("EVENTLOGD_META_DSN="+dsn)) {
		t.Fatal("the DSN did not reach the pod's environment")
	}
	for _, args := range [][]string{{"--meta-dsn=" + dsn}, {"--pools", "p.json", "--meta-dsn", dsn}, {"-meta-dsn=" + dsn}} {
		if _, err := Start(context.Background(), Config{Binary: exe, Args: args, LogDir: t.TempDir(), Start: time.Now()}, 1); err == nil ||
			!strings.Contains(err.Error(), "password") || strings.Contains(err.Error(), "s3cretpw") {
			t.Fatalf("Start with %q: %v, want a refusal that does not repeat the password", args, err)
		}
	}
}

// TestPodEnvOverridesPerPod: PodEnv gives each pod its own value of a variable Env also sets (each
// pod's own meta DSN through its own proxy): the pod's process sees only its own value.
func TestPodEnvOverridesPerPod(t *testing.T) {
	t.Setenv("SEQGATE_FAKE_POD", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Start(context.Background(), Config{Binary: exe, Env: []string{"EVENTLOGD_META_DSN=shared"},
		PodEnv: func(pod string) []string { return []string{"EVENTLOGD_META_DSN=own-" + pod} },
		LogDir: t.TempDir(), Start: time.Now(), Sink: &ledger.Memory{}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop(5 * time.Second)
	for _, name := range []string{"pod-1", "pod-2"} {
		p := f.Get(name)
		p.mu.Lock()
		pid := p.cmd.Process.Pid
		p.mu.Unlock()
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			t.Fatal(err)
		}
		vars := bytes.Split(environ, []byte{0})
		own := slices.ContainsFunc(vars, func(v []byte) bool { return string(v) == "EVENTLOGD_META_DSN=own-"+name })
		shared := slices.ContainsFunc(vars, func(v []byte) bool { return string(v) == "EVENTLOGD_META_DSN=shared" })
		if !own || shared {
			t.Errorf("%s: own DSN %v, shared DSN %v; want only its own", name, own, shared)
		}
	}
}
