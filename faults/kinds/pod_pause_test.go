package kinds_test

import (
	"context"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// TestPodPause proves pod_pause: the process is stopped (state T) after Inject and running again after
// Heal. The negative control is the process state before Inject (not T).
func TestPodPause(t *testing.T) {
	env := faultstest.NewEnv(t)
	pod := faultstest.NewPod(t, "sleep", "60")
	env.Pods["p1"] = pod
	if st, err := faultstest.ProcState(pod.PID()); err != nil || st == 'T' {
		t.Fatalf("before Inject: state %c, %v", st, err)
	}
	f := build(t, kinds.PodPause(), env, "p1", time.Second, kinds.PodPauseParams{})
	ctx := context.Background()
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	if !faultstest.WaitProcState(t, pod.PID(), 'T') {
		t.Fatal("process not stopped after SIGSTOP")
	}
	if err := f.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if !faultstest.WaitProcState(t, pod.PID(), 'S') {
		t.Fatal("process not running again after SIGCONT")
	}
}
