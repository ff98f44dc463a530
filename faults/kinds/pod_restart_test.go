package kinds_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

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
			env := faultstest.NewEnv(t)
			pod := faultstest.NewPod(t, "sh", "-c", c.script)
			env.Pods["p1"] = pod
			oldPID := pod.PID()
			// Give the shell time to install its trap before the signal (bounded poll on /proc).
			faultstest.WaitProcState(t, oldPID, 'S')
			f := build(t, kinds.PodRestart(), env, "p1", 0, kinds.PodRestartParams{Grace: 300 * time.Millisecond})
			ctx := context.Background()
			if err := f.Inject(ctx); err != nil {
				t.Fatal(err)
			}
			ws := pod.LastState().Sys().(syscall.WaitStatus)
			if c.graceful && (ws.Signaled() || ws.ExitStatus() != 0) {
				t.Fatalf("graceful pod ended with %v, want exit 0", pod.LastState())
			}
			if !c.graceful && (!ws.Signaled() || ws.Signal() != syscall.SIGKILL) {
				t.Fatalf("pod ignoring SIGTERM ended with %v, want SIGKILL after grace", pod.LastState())
			}
			if !pod.Running() || pod.PID() == oldPID {
				t.Fatal("pod not started again")
			}
			if err := f.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			if pod.Starts() != 2 {
				t.Fatalf("pod started %d times, want 2", pod.Starts())
			}
		})
	}
}

// TestPodRestartHealFinishes proves a restart whose start failed is finished by Heal.
func TestPodRestartHealFinishes(t *testing.T) {
	env := faultstest.NewEnv(t)
	pod := faultstest.NewPod(t, "sleep", "60")
	env.Pods["p1"] = pod
	f := build(t, kinds.PodRestart(), env, "p1", 0, kinds.PodRestartParams{Grace: time.Second})
	pod.FailRestart(errors.New("image pull failed"))
	ctx := context.Background()
	if err := f.Inject(ctx); err == nil {
		t.Fatal("Inject hid the failed start")
	}
	if err := f.Heal(ctx); err == nil {
		t.Fatal("Heal hid the failed start")
	}
	pod.FailRestart(nil)
	if err := f.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if !pod.Running() {
		t.Fatal("Heal did not finish the restart")
	}
}
