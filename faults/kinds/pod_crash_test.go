package kinds_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// TestPodCrash proves pod_crash on a real child process: Inject kills it with SIGKILL and returns once
// it is gone; Heal starts a new process (restart: true) or leaves it dead (restart: false).
func TestPodCrash(t *testing.T) {
	for _, restart := range []bool{true, false} {
		t.Run(map[bool]string{true: "restart", false: "stay_dead"}[restart], func(t *testing.T) {
			env := faultstest.NewEnv(t)
			pod := faultstest.NewPod(t, "sleep", "60")
			env.Pods["p1"] = pod
			oldPID := pod.PID()
			f := build(t, kinds.PodCrash(), env, "p1", time.Second, kinds.PodCrashParams{Restart: restart})
			ctx := context.Background()
			if err := f.Inject(ctx); err != nil {
				t.Fatal(err)
			}
			st := pod.LastState()
			if st == nil {
				t.Fatal("Inject returned before the process ended")
			}
			if ws := st.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("process ended by %v, want SIGKILL", st)
			}
			if err := f.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			if pod.Running() != restart {
				t.Fatalf("after Heal running=%v, want %v", pod.Running(), restart)
			}
			if restart && pod.PID() == oldPID {
				t.Fatal("Heal did not start a new process")
			}
		})
	}
}
