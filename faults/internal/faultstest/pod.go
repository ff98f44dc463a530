package faultstest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// Pod is a real child process in its own process group (it dies with the test), restartable: a
// fault.Pod as harness/pods runs one, for any command line.
type Pod struct {
	argv []string

	mu          sync.Mutex
	cmd         *exec.Cmd
	done        chan struct{}
	state       *os.ProcessState // of the last process that ended
	failRestart error            // when set, Restart fails with it (heal-failure tests)
	starts      int
}

var _ fault.Pod = (*Pod)(nil)

// NewPod starts argv as a pod; the test's cleanup kills it.
func NewPod(t *testing.T, argv ...string) *Pod {
	t.Helper()
	p := &Pod{argv: argv}
	if err := p.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Kill(syscall.SIGKILL)
		_ = p.Wait(context.Background())
	})
	return p
}

// Kill signals the process group; an error when the pod is down.
func (p *Pod) Kill(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exited() {
		return errors.New("pod is down")
	}
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}

func (p *Pod) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits until the current process has exited or ctx is done.
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

// Stop sends SIGTERM, then SIGKILL after grace, and waits.
func (p *Pod) Stop(grace time.Duration) error {
	_ = p.Kill(syscall.SIGCONT)
	if err := p.Kill(syscall.SIGTERM); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if p.Wait(ctx) != nil {
		_ = p.Kill(syscall.SIGKILL)
		return p.Wait(context.Background())
	}
	return nil
}

// Restart starts a down pod again; it fails while the pod runs, on a cancelled ctx (as harness/pods:
// a start interrupted before the pod is ready fails) and with the error set by FailRestart.
func (p *Pod) Restart(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.failRestart != nil {
		return p.failRestart
	}
	if p.cmd != nil && !p.exited() {
		return errors.New("still running")
	}
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	p.starts++
	go func() {
		_ = cmd.Wait()
		p.mu.Lock()
		p.state = cmd.ProcessState
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// FailRestart makes every Restart fail with err (nil: Restart works again).
func (p *Pod) FailRestart(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failRestart = err
}

// PID returns the current process's pid.
func (p *Pod) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// LastState returns the state of the last process that ended (nil if none has).
func (p *Pod) LastState() *os.ProcessState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Running reports whether a process is running.
func (p *Pod) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && !p.exited()
}

// Starts returns how many processes the pod has started.
func (p *Pod) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}
