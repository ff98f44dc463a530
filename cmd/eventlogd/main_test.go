package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/internal/dbserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEnvFillsUnsetFlagsAndCommandLineWins(t *testing.T) {
	t.Setenv("EVENTLOGD_FS_EVENTS_RETENTION", "168h")
	t.Setenv("EVENTLOGD_RETRY_TENANT_CAP", "7")
	t.Setenv("EVENTLOGD_POD", "from-env")
	var o options
	fs := flags(&o, &bytes.Buffer{})
	if err := fs.Parse([]string{"--pod", "from-flag"}); err != nil {
		t.Fatal(err)
	}
	if err := applyEnv(fs); err != nil {
		t.Fatal(err)
	}
	if o.cfg.Retention != 168*time.Hour || o.cfg.Buffer.TenantCap != 7 || o.cfg.PodID != "from-flag" {
		t.Fatalf("retention %v tenant cap %d pod %q", o.cfg.Retention, o.cfg.Buffer.TenantCap, o.cfg.PodID)
	}
	t.Setenv("EVENTLOGD_SSE_QUEUE_SIZE", "many")
	fs = flags(&o, &bytes.Buffer{})
	_ = fs.Parse(nil)
	if err := applyEnv(fs); err == nil || !strings.Contains(err.Error(), "EVENTLOGD_SSE_QUEUE_SIZE") {
		t.Fatalf("bad env value: %v", err)
	}
}

func TestBadInputIsNamed(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "pools.json")
	_ = os.WriteFile(bad, []byte(`{"pools":[{"id":"a","role":"primary","dsn":"root@tcp(127.0.0.1:1)/a"}]}`), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--defect", "nope", "--meta-dsn", "root@tcp(127.0.0.1:1)/m"}, `--defect "nope": unknown (allowed: drop-on-insert-failure`},
		{[]string{"--pools", bad, "--meta-dsn", "root@tcp(127.0.0.1:1)/m"}, `pools[0].role: "primary" (allowed: dedicated, shared)`},
		{[]string{"--log-level", "loud"}, `--log-level "loud"`},
		{[]string{"--structural-events", "both", "--meta-dsn", "root@tcp(127.0.0.1:1)/m"}, `--structural-events "both": allowed reset, dual, file_changed`},
		{[]string{"--event-commit", "both", "--meta-dsn", "root@tcp(127.0.0.1:1)/m"}, `--event-commit "both": allowed separate, joined`},
		{[]string{"--late-commit-guard", "none"}, `invalid value "none" for flag -late-commit-guard: "none" is not a guard (allowed: horizon, lock)`},
		{[]string{"--sse-horizon-wait", "soon"}, `-sse-horizon-wait`},
		{[]string{"--admin", "--listen", "0.0.0.0:0", "--meta-dsn", "root@tcp(127.0.0.1:1)/m"}, `--admin on --listen 0.0.0.0:0 (beyond loopback) needs --admin-token`},
		{[]string{"--meta-dsn", "root@tcp(127.0.0.1:1)/m"}, `provisioning needs a token (--provision-token`},
		{[]string{"--meta-dsn", "root@tcp(127.0.0.1:1)/m", "--open-provisioning", "--provision-token", "x"}, `exclude each other`},
	}
	for _, c := range cases {
		err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: got %v, want %q", c.args, err, c.want)
		}
	}
}

// TestProcessServesAndStopsOnSIGTERM runs the real binary as the harness does: ":0" port found from
// stdout, provision + write + health, then SIGTERM exits 0 and deregisters the pod.
func TestProcessServesAndStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// Every step below is bounded by this deadline: the build, the process (killed at the
	// deadline, which also ends a blocked stdout read) and the HTTP calls.
	ctx, srv := privateDB(t)
	bin := filepath.Join(t.TempDir(), "eventlogd")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, bin, "--listen", "127.0.0.1:0", "--pod", "proc1")
	cmd.Env = append(os.Environ(), "EVENTLOGD_META_DSN="+srv.DSN("meta"), "EVENTLOGD_PROVISION_TOKEN=proc1-token")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("first stdout line %q (%v); stderr:\n%s", line, err, stderr.String())
	}
	client := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	preq, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/v1/provision", nil)
	preq.Header.Set("X-Provision-Token", "proc1-token")
	resp, err = client.Do(preq)
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ TenantID, APIKey string }
	_ = json.NewDecoder(resp.Body).Decode(&struct {
		TenantID *string `json:"tenant_id"`
		APIKey   *string `json:"api_key"`
	}{&p.TenantID, &p.APIKey})
	resp.Body.Close()
	req, _ := http.NewRequest("PUT", "http://"+addr+"/v1/fs/a.txt", strings.NewReader("x"))
	req.Header.Set("X-API-Key", p.APIKey)
	resp, err = client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("write: %v %v", resp, err)
	}
	resp.Body.Close()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v (killed at the test deadline: %v)\n%s", err, ctx.Err() != nil, stderr.String())
	}
	if !strings.Contains(stderr.String(), "fs_events_retention=1h0m0s") {
		t.Fatalf("effective retention not logged:\n%s", stderr.String())
	}
}

// privateDB starts a throwaway MariaDB for one test, stopped at its end, and a context that bounds
// every step of the test (2 minutes).
func privateDB(t *testing.T) (context.Context, *dbserver.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	srv, err := dbserver.Start(ctx, dbserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return ctx, srv
}

// TestVersion: --version prints the build and exits; EVENTLOGD_VERSION in the environment does not
// turn a pod into a version print (the pod goes on and asks for its meta DSN).
func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"--version"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "eventlogd github.com/seqgate/seqgate ") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("--version printed %q", out.String())
	}
	t.Setenv("EVENTLOGD_VERSION", "true")
	out.Reset()
	err := run([]string{"--listen", "127.0.0.1:0"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "meta DSN is required") || strings.Contains(out.String(), "eventlogd github.com") {
		t.Errorf("with EVENTLOGD_VERSION: %v, printed %q", err, out.String())
	}
}
