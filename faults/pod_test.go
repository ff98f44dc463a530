package faults

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/kinds"
)

// waitProcState polls /proc until the pid is in state want or ~5 s passed (bounded).
func waitProcState(t *testing.T, pid int, want byte) bool {
	t.Helper()
	return eventually(5*time.Second, func() bool {
		st, err := procState(pid)
		if err != nil {
			t.Fatal(err)
		}
		return st == want
	})
}

// TestPodCrash proves pod_crash on a real child process: Inject kills it with SIGKILL and returns once
// it is gone; Heal starts a new process (restart: true) or leaves it dead (restart: false).
func TestPodCrash(t *testing.T) {
	for _, restart := range []bool{true, false} {
		t.Run(map[bool]string{true: "restart", false: "stay_dead"}[restart], func(t *testing.T) {
			env := newTestEnv(t)
			pod := newTestPod(t, "sleep", "60")
			env.pods["p1"] = pod
			oldPID := pod.pid()
			f, err := Build(env, instance(t, kinds.PodCrashName, "p1", time.Second, kinds.PodCrashParams{Restart: restart}))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := f.Inject(ctx); err != nil {
				t.Fatal(err)
			}
			st := pod.lastState()
			if st == nil {
				t.Fatal("Inject returned before the process ended")
			}
			if ws := st.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("process ended by %v, want SIGKILL", st)
			}
			if err := f.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			if pod.running() != restart {
				t.Fatalf("after Heal running=%v, want %v", pod.running(), restart)
			}
			if restart && pod.pid() == oldPID {
				t.Fatal("Heal did not start a new process")
			}
		})
	}
}

// TestPodPause proves pod_pause: the process is stopped (state T) after Inject and running again after
// Heal. The negative control is the process state before Inject (not T).
func TestPodPause(t *testing.T) {
	env := newTestEnv(t)
	pod := newTestPod(t, "sleep", "60")
	env.pods["p1"] = pod
	if st, err := procState(pod.pid()); err != nil || st == 'T' {
		t.Fatalf("before Inject: state %c, %v", st, err)
	}
	f, err := Build(env, instance(t, kinds.PodPauseName, "p1", time.Second, nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	if !waitProcState(t, pod.pid(), 'T') {
		t.Fatal("process not stopped after SIGSTOP")
	}
	if err := f.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if !waitProcState(t, pod.pid(), 'S') {
		t.Fatal("process not running again after SIGCONT")
	}
}

// TestPodRestart proves pod_restart: a pod that honours SIGTERM exits cleanly (code 0, not signalled)
// and a new process runs; a pod that ignores SIGTERM is SIGKILLed after the grace period and restarted.
func TestPodRestart(t *testing.T) {
	cases := []struct {
		name, script string
		graceful     bool
	}{
		{"graceful", `trap "exit 0" TERM; sleep 60 & wait`, true},
		{"ignores_term", `trap "" TERM; while :; do sleep 1; done`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newTestEnv(t)
			pod := newTestPod(t, "sh", "-c", c.script)
			env.pods["p1"] = pod
			oldPID := pod.pid()
			// Give the shell time to install its trap before the signal (bounded poll on /proc).
			waitProcState(t, oldPID, 'S')
			f, err := Build(env, instance(t, kinds.PodRestartName, "p1", 0, kinds.PodRestartParams{Grace: 300 * time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := f.Inject(ctx); err != nil {
				t.Fatal(err)
			}
			ws := pod.lastState().Sys().(syscall.WaitStatus)
			if c.graceful && (ws.Signaled() || ws.ExitStatus() != 0) {
				t.Fatalf("graceful pod ended with %v, want exit 0", pod.lastState())
			}
			if !c.graceful && (!ws.Signaled() || ws.Signal() != syscall.SIGKILL) {
				t.Fatalf("pod ignoring SIGTERM ended with %v, want SIGKILL after grace", pod.lastState())
			}
			if !pod.running() || pod.pid() == oldPID {
				t.Fatal("pod not started again")
			}
			if err := f.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			if pod.starts != 2 {
				t.Fatalf("pod started %d times, want 2", pod.starts)
			}
		})
	}
}

// TestPodRestartHealFinishes proves a restart whose start failed is finished by Heal.
func TestPodRestartHealFinishes(t *testing.T) {
	env := newTestEnv(t)
	pod := newTestPod(t, "sleep", "60")
	env.pods["p1"] = pod
	f, err := Build(env, instance(t, kinds.PodRestartName, "p1", 0, kinds.PodRestartParams{Grace: time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	pod.failRestart = errors.New("image pull failed")
	ctx := context.Background()
	if err := f.Inject(ctx); err == nil {
		t.Fatal("Inject hid the failed start")
	}
	if err := f.Heal(ctx); err == nil {
		t.Fatal("Heal hid the failed start")
	}
	pod.mu.Lock()
	pod.failRestart = nil
	pod.mu.Unlock()
	if err := f.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if !pod.running() {
		t.Fatal("Heal did not finish the restart")
	}
}
