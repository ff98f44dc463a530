// Package helperproc runs an HTTP server in a helper process for benchmarks: the test binary is
// re-executed to run one test function that serves, so the server's CPU is not charged to the code
// being measured. The child dies with its parent (Pdeathsig) and stops when its stdin closes.
package helperproc

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// Start re-executes the test binary running only the test testName with the extra environment env
// (which the helper test uses to know it is the helper), and returns the base URL it printed. The
// helper is stopped when tb ends.
func Start(tb testing.TB, testName string, env ...string) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+testName+"$")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatalf("helper %s printed no address: %v", testName, err)
	}
	return "http://" + strings.TrimSpace(line)
}

// Serve is the helper's side: it serves h on a free loopback port, prints the address for Start,
// and returns when stdin closes (the parent ended).
func Serve(t *testing.T, h http.Handler) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(ln.Addr().String())
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	io.Copy(io.Discard, os.Stdin)
	srv.Close()
}
