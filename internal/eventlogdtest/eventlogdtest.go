// Package eventlogdtest starts an eventlogd binary for a test, outside any harness (the "service
// someone else runs" that external-target tests drive), alone or with a private MariaDB of its own.
package eventlogdtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // the test server's driver

	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/internal/wait"
)

// ProvisionToken is the provisioning token Start gives eventlogd (EVENTLOGD_PROVISION_TOKEN) unless
// args choose one or --open-provisioning: callers provision with it (X-Provision-Token, or
// SEQGATE_PROVISION_TOKEN for a seqgate run against the service).
const ProvisionToken = "eventlogdtest-provision-token"

// Start runs bin with --listen on a free loopback port plus args, in its own process group and
// killed with the test process (Pdeathsig), logging to eventlogd.log in a temp dir; it waits until
// /healthz answers 200 and returns the base URL. The process is killed at the test's cleanup.
func Start(t testing.TB, bin string, args ...string) string {
	t.Helper()
	return start(t, bin, nil, args...)
}

// start is Start with env added to the process's environment.
func start(t testing.TB, bin string, env []string, args ...string) string {
	t.Helper()
	port, err := dbserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	logPath := filepath.Join(t.TempDir(), "eventlogd.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--listen", addr}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	if !slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--open-provisioning") || strings.HasPrefix(a, "--provision-token")
	}) {
		cmd.Env = append(cmd.Env, "EVENTLOGD_PROVISION_TOKEN="+ProvisionToken)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			logTail(t, logPath, 60)
		}
	})
	url := "http://" + addr
	if !wait.UntilEvery(20*time.Second, 50*time.Millisecond, func() bool {
		var resp *http.Response
		if resp, err = http.Get(url + "/healthz"); err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("eventlogd not ready after 20 s: %v\n%s", err, b)
	}
	return url
}

// Pool is one pool of a test service: a database named ID on the service's server.
type Pool struct {
	ID   string
	Role string // dedicated | shared
}

// Service is an eventlogd on a private MariaDB of its own.
type Service struct {
	URL       string           // eventlogd's base URL
	ServerDSN string           // the DB server, as a user names it: root:PASSWORD@tcp(host:port)/
	DB        *dbserver.Server // the private server
	Root      *sql.DB          // a connection to it without a database, closed at cleanup
}

// StartService starts a private MariaDB (the test is skipped where none is installed), creates the
// meta database and one database per pool, writes the pools file (0600) and starts bin on them
// with args (Start). Everything stops at the test's cleanup.
func StartService(t testing.TB, bin string, pools []Pool, args ...string) *Service {
	t.Helper()
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	srv, err := dbserver.Start(context.Background(), dbserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	root, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	specs := []map[string]string{}
	for _, db := range append([]Pool{{ID: "meta"}}, pools...) {
		if _, err := root.Exec("CREATE DATABASE " + db.ID); err != nil {
			t.Fatal(err)
		}
		if db.Role != "" {
			specs = append(specs, map[string]string{"id": db.ID, "role": db.Role, "dsn": srv.DSN(db.ID)})
		}
	}
	b, _ := json.Marshal(map[string]any{"pools": specs})
	poolsPath := filepath.Join(t.TempDir(), "pools.json")
	if err := os.WriteFile(poolsPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// The meta DSN carries the server's password: in the environment, never on the command line.
	url := start(t, bin, []string{"EVENTLOGD_META_DSN=" + srv.DSN("meta")}, append([]string{"--pools", poolsPath}, args...)...)
	return &Service{URL: url, ServerDSN: srv.UserDSN(), DB: srv, Root: root}
}

// logTail logs the last n lines of the pod's log, so a failed test shows what the pod said.
func logTail(t testing.TB, path string, n int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	t.Logf("last %d lines of %s:\n%s", min(n, len(lines)), path, strings.Join(lines[max(0, len(lines)-n):], "\n"))
}
