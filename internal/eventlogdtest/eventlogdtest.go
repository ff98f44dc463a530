// Package eventlogdtest starts an eventlogd binary for a test, outside any harness: the "service
// someone else runs" that external-target tests drive.
package eventlogdtest

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/dbserver"
)

// Start runs bin with --listen on a free loopback port plus args, in its own process group and
// killed with the test process (Pdeathsig), logging to eventlogd.log in a temp dir; it waits until
// /healthz answers 200 and returns the base URL. The process is killed at the test's cleanup.
func Start(t testing.TB, bin string, args ...string) string {
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	url := "http://" + addr
	for i := 0; ; i++ {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if i == 400 {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("eventlogd not ready after 20 s: %v\n%s", err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
