// Package pods runs a service's pods (eventlogd's, or any a pod profile describes) as child processes:
// each in its own process group with a parent-death signal (nothing outlives the run), stdout and
// stderr kept in one log file per pod, ready-checked on a health path (/healthz), and every start,
// ready, crash and exit written as a ledger `pod` record.
package pods

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/ledger"
)

// Config is what every pod of a fleet shares.
type Config struct {
	Binary     string        // the pod's executable (eventlogd, or a pod profile's)
	Args       []string      // flags every pod gets (pools file, retention...), without --listen/--pod; never a secret
	LogDir     string        // one <pod>.log per pod
	Start      time.Time     // the run's clock origin
	Sink       ledger.Sink   // pod records
	ReadyAfter time.Duration // how long a pod may take to answer /healthz (default 30s)
	// Env is environment (KEY=VALUE) every pod gets on top of the harness's own: where secrets go
	// (EVENTLOGD_META_DSN), since every local user can read a process's argv in /proc/PID/cmdline
	// while its environment is readable by its owner only. Start refuses Args that carry a DSN
	// password.
	Env []string
	// PodEnv, when set, is environment one pod gets on top of Env (by pod name, the same on every
	// restart), e.g. its own meta DSN through its own proxy.
	PodEnv func(pod string) []string
	// Command, when set, gives each start of a pod its whole argument list and extra environment from
	// its name and listen address (a pod profile, harness/podprofile), instead of --listen/--pod, Args,
	// Env and PodEnv.
	Command func(pod, listen string) (args, env []string, err error)
	// AddrLine is the prefix of the stdout line on which a pod prints its bound address; the first
	// start listens on 127.0.0.1:0. Empty with Command: the fleet picks a free loopback port, the pod
	// listens there and no line is awaited. Without Command it is always "listening on ".
	AddrLine string
	// Health is the path a pod answers 200 on once it serves (default /healthz).
	Health string
}

// Pod is one service process (or the slot for one, while it is down).
type Pod struct {
	Name string
	cfg  *Config

	mu       sync.Mutex
	addr     string // 127.0.0.1:port, kept across restarts
	cmd      *exec.Cmd
	done     chan struct{} // closed when the current process has been reaped
	expected bool          // the harness asked it to stop: its end is an exit, not a crash
}

// Fleet is the run's pods.
type Fleet struct {
	pods []*Pod
}

// Start launches n pods named pod-1..pod-n and waits until each answers /healthz.
func Start(ctx context.Context, cfg Config, n int) (*Fleet, error) {
	if cfg.ReadyAfter == 0 {
		cfg.ReadyAfter = 30 * time.Second
	}
	if cfg.Command == nil {
		cfg.AddrLine = "listening on "
	}
	if cfg.Health == "" {
		cfg.Health = "/healthz"
	}
	if err := noSecretArgs(cfg.Args); err != nil {
		return nil, err
	}
	if err := CheckBinary(cfg.Binary); err != nil {
		return nil, err
	}
	f := &Fleet{}
	for i := 1; i <= n; i++ {
		f.pods = append(f.pods, &Pod{Name: fmt.Sprintf("pod-%d", i), cfg: &cfg})
	}
	errs := make(chan error, n)
	for _, p := range f.pods {
		go func() { errs <- p.start(ctx) }()
	}
	var first error
	for range f.pods {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		f.Stop(5 * time.Second)
		return nil, first
	}
	return f, nil
}

// Pods returns the fleet's pods in name order.
func (f *Fleet) Pods() []*Pod { return f.pods }

// Names returns the pod names in order.
func (f *Fleet) Names() []string {
	var out []string
	for _, p := range f.pods {
		out = append(out, p.Name)
	}
	return out
}

// Get returns the pod named name, or nil.
func (f *Fleet) Get(name string) *Pod {
	for _, p := range f.pods {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Stop ends every pod gracefully (SIGTERM, SIGKILL after grace) and waits for them.
func (f *Fleet) Stop(grace time.Duration) {
	var wg sync.WaitGroup
	for _, p := range f.pods {
		wg.Add(1)
		go func() { defer wg.Done(); _ = p.Stop(grace) }()
	}
	wg.Wait()
}

// URL is the pod's base URL (stable across restarts).
func (p *Pod) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "http://" + p.addr
}

// Alive reports whether the pod's process is running (it may be paused).
func (p *Pod) Alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// PID returns the current process id, 0 when down.
func (p *Pod) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *Pod) now() int64 { return time.Since(p.cfg.Start).Nanoseconds() }

func (p *Pod) record(r *ledger.Record) {
	r.K, r.Pod, r.T = ledger.KindPod, p.Name, p.now()
	if p.cfg.Sink != nil {
		_ = p.cfg.Sink.Write(r)
	}
}

// start launches the process (on its previous address after a restart) and waits for /healthz.
func (p *Pod) start(ctx context.Context) error {
	p.mu.Lock()
	listen := p.addr
	p.mu.Unlock()
	if listen == "" && p.cfg.AddrLine != "" {
		listen = "127.0.0.1:0"
	} else if listen == "" {
		a, err := freePort()
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		listen = a
	}
	logf, err := os.OpenFile(filepath.Join(p.cfg.LogDir, p.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o644) // never through a link planted in the run directory
	if err != nil {
		return err
	}
	defer logf.Close()
	var cmd *exec.Cmd
	if p.cfg.Command != nil {
		args, env, err := p.cfg.Command(p.Name, listen)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		if err := noSecretArgs(args); err != nil {
			return err
		}
		cmd = exec.Command(p.cfg.Binary, args...)
		cmd.Env = append(os.Environ(), env...)
	} else {
		args := append([]string{"--listen", listen, "--pod", p.Name}, p.cfg.Args...)
		cmd = exec.Command(p.cfg.Binary, args...)
		cmd.Env = append(os.Environ(), p.cfg.Env...)
		if p.cfg.PodEnv != nil {
			cmd.Env = append(cmd.Env, p.cfg.PodEnv(p.Name)...)
		}
	}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start %s: %w", p.Name, p.cfg.Binary, err)
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.done, p.expected = cmd, done, false
	p.mu.Unlock()
	p.record(&ledger.Record{Phase: "start", PID: cmd.Process.Pid})

	// Copy stdout to the log, catching the bound address on the way.
	addrc := make(chan string, 1)
	logOut, err := os.OpenFile(filepath.Join(p.cfg.LogDir, p.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o644) // never through a link planted in the run directory
	if err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return err
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		defer logOut.Close()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logOut, line)
			if a, ok := strings.CutPrefix(strings.TrimSpace(line), p.cfg.AddrLine); ok && p.cfg.AddrLine != "" {
				select {
				case addrc <- strings.TrimSpace(a):
				default:
				}
			}
		}
		_, _ = io.Copy(logOut, stdout)
	}()
	go func() {
		<-copied // Wait closes the pipe: read it all first
		err := cmd.Wait()
		p.reaped(cmd, err)
		close(done)
	}()

	timer := time.NewTimer(p.cfg.ReadyAfter)
	defer timer.Stop()
	if p.cfg.AddrLine == "" {
		p.mu.Lock()
		p.addr = listen
		p.mu.Unlock()
		return p.waitReady(ctx, done, timer.C)
	}
	select {
	case a := <-addrc:
		p.mu.Lock()
		p.addr = a
		p.mu.Unlock()
	case <-done:
		return fmt.Errorf("%s exited before printing its address%s", p.Name, p.logHint())
	case <-timer.C:
		_ = p.Kill(syscall.SIGKILL)
		return fmt.Errorf("%s printed no %q line within %v%s", p.Name, p.cfg.AddrLine, p.cfg.ReadyAfter, p.logHint())
	case <-ctx.Done():
		_ = p.Kill(syscall.SIGKILL)
		return ctx.Err()
	}
	return p.waitReady(ctx, done, timer.C)
}

func (p *Pod) waitReady(ctx context.Context, done chan struct{}, deadline <-chan time.Time) error {
	client := &http.Client{Timeout: time.Second}
	url := p.URL() + p.cfg.Health
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				p.record(&ledger.Record{Phase: "ready", PID: p.PID()})
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("%s exited before %s answered 200%s", p.Name, p.cfg.Health, p.logHint())
		case <-deadline:
			_ = p.Kill(syscall.SIGKILL)
			last := "no answer"
			if err != nil {
				last = err.Error()
			} else if resp != nil {
				last = resp.Status
			}
			return fmt.Errorf("%s: GET %s not 200 within %v (last: %s)%s", p.Name, url, p.cfg.ReadyAfter, last, p.logHint())
		case <-ctx.Done():
			_ = p.Kill(syscall.SIGKILL)
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// reaped writes the pod record for a process that ended: exit when the harness stopped it, crash otherwise.
func (p *Pod) reaped(cmd *exec.Cmd, waitErr error) {
	p.mu.Lock()
	expected := p.expected
	p.mu.Unlock()
	r := &ledger.Record{Phase: "crash", PID: cmd.Process.Pid}
	if expected {
		r.Phase = "exit"
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		if ws.Signaled() {
			r.Signal = ws.Signal().String()
			if s, ok := sigNames[ws.Signal()]; ok {
				r.Signal = s
			}
		} else {
			code := ws.ExitStatus()
			r.Code = &code
		}
	} else if waitErr != nil {
		r.Err = waitErr.Error()
	}
	p.record(r)
}

var sigNames = map[syscall.Signal]string{
	syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT", syscall.SIGQUIT: "SIGQUIT",
}

// ErrDown is returned when a pod has no running process.
var ErrDown = errors.New("pod is down")

// Kill sends sig to the pod's process group. A pod killed this way (SIGKILL, a crash fault) is
// recorded as a crash; SIGSTOP/SIGCONT pause and resume it.
func (p *Pod) Kill(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil || p.done == nil {
		return ErrDown
	}
	select {
	case <-p.done:
		return ErrDown
	default:
	}
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}

// Wait blocks until the current process has ended or ctx is done.
func (p *Pod) Wait(ctx context.Context) error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop asks the pod to shut down gracefully (SIGTERM; SIGKILL after grace) and waits; its end is
// recorded as an exit. Stopping a down pod is a no-op.
func (p *Pod) Stop(grace time.Duration) error {
	p.mu.Lock()
	p.expected = true
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return nil
	}
	if err := p.Kill(syscall.SIGCONT); err != nil { // a paused pod cannot act on SIGTERM
		return nil
	}
	_ = p.Kill(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = p.Kill(syscall.SIGKILL)
		<-done
	}
	return nil
}

// Restart starts a down pod again on its previous address and waits until it is ready.
func (p *Pod) Restart(ctx context.Context) error {
	if p.Alive() {
		return fmt.Errorf("%s is still running", p.Name)
	}
	return p.start(ctx)
}

// noSecretArgs refuses pod arguments that carry a DSN password ("--meta-dsn=u:pw@tcp(h)/db" or a
// separate value): argv is world-readable in /proc/PID/cmdline. Secrets go in Config.Env.
func noSecretArgs(args []string) error {
	for i, a := range args {
		v := a
		if strings.HasPrefix(a, "-") {
			_, after, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			v = after
		}
		if c, err := mysql.ParseDSN(v); err == nil && c.Passwd != "" {
			name := a
			if i > 0 && !strings.HasPrefix(a, "-") {
				name = args[i-1]
			}
			return fmt.Errorf("pods: argument %d (%s) carries a DSN password, which every local user could read on the pod's command line; pass it in Config.Env (EVENTLOGD_META_DSN)",
				i, strings.SplitN(name, "=", 2)[0])
		}
	}
	return nil
}

// CheckBinary refuses a pod binary that is missing, a directory or not executable, naming it, before
// any pod starts.
func CheckBinary(bin string) error {
	if bin == "" {
		return errors.New("pods: no pod binary given")
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return fmt.Errorf("pod binary %s: %w", bin, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("pod binary %s: %w", bin, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("pod binary %s: not an executable file (mode %v)", bin, st.Mode())
	}
	return nil
}

// freePort picks a free loopback port for a pod that listens where it is told: bound, then closed,
// so the pod can take it (another process taking it first makes the pod fail its start, loudly).
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
