// Package toxiserver runs a toxiproxy server (cmd/server of github.com/Shopify/toxiproxy/v2, the
// module seqgate already depends on) as a child process on a free loopback port, for tests of
// seqgate's toxiproxy-server mode (seqgate run --toxiproxy). v2.5.0's HTTP API server has no clean
// shutdown, hence a process, killed by Stop (and by Pdeathsig if the test dies).
package toxiserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Server is a running toxiproxy server.
type Server struct {
	URL  string // http://127.0.0.1:PORT, the HTTP API
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
}

// Build compiles the server into dir and returns the binary's path (the go tool must be on PATH and
// the working directory inside the seqgate module).
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "toxiproxy-server")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/Shopify/toxiproxy/v2/cmd/server").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build the toxiproxy server: %v\n%s", err, out)
	}
	return bin, nil
}

// Start runs bin (from Build) on a free loopback port, with the proxies of the -config file config
// when it is not empty, and waits until its API answers.
func Start(ctx context.Context, bin, config string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	args := []string{"-host", "127.0.0.1", "-port", port}
	if config != "" {
		args = append(args, "-config", config)
	}
	cmd := exec.Command(bin, args...)
	// Its own log (every link at trace level) stays out of test output: stdout and stderr are /dev/null.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{URL: "http://127.0.0.1:" + port, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	client := &http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	for {
		resp, err := client.Get(s.URL + "/version")
		if err == nil {
			resp.Body.Close()
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("toxiproxy server %s exited before answering", bin)
		case <-ctx.Done():
			s.Stop()
			return nil, fmt.Errorf("toxiproxy server on %s not ready: %w", s.URL, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop kills the server and waits for it to exit. Safe to call more than once.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
	})
}
