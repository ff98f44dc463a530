package kinds

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// PodCrashName is the name of the pod crash fault.
const PodCrashName = "pod_crash"

// podExitWait bounds how long a fault waits for a signalled pod to exit.
const podExitWait = 30 * time.Second

// PodCrashParams are the parameters of pod_crash.
type PodCrashParams struct {
	// Restart starts the pod again when the fault heals; false leaves it dead for the rest of the run.
	Restart bool `yaml:"restart" help:"start the pod again when the fault ends (after its for); false leaves it dead for the rest of the run"`
}

// PodCrash declares pod_crash.
func PodCrash() fault.Def[PodCrashParams] {
	return fault.Def[PodCrashParams]{
		Name:      PodCrashName,
		Simulates: "a pod dies without warning (OOM kill, node loss): its unflushed retry buffer and open SSE connections die with it; it comes back after `for`",
		Mechanism: "SIGKILL to the pod's process group, then wait for the exit; Heal starts the pod again (restart: true)",
		Targets:   fault.TargetPod,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourcePod,
		Defaults:  PodCrashParams{Restart: true},
		Build: func(env fault.Env, target string, _ time.Duration, p PodCrashParams) (fault.Fault, error) {
			pod, err := env.Pod(target)
			if err != nil {
				return nil, err
			}
			return &podCrash{name: target, pod: pod, restart: p.Restart}, nil
		},
	}
}

// podCrash kills a pod and optionally starts it again at the end of the span.
type podCrash struct {
	name    string
	pod     fault.Pod
	restart bool
}

func (c *podCrash) Inject(ctx context.Context) error {
	if err := c.pod.Kill(syscall.SIGKILL); err != nil {
		return fmt.Errorf("pod %s: SIGKILL: %w", c.name, err)
	}
	return waitExit(ctx, c.name, c.pod)
}

func (c *podCrash) Heal(ctx context.Context) error {
	if !c.restart {
		return nil
	}
	if err := waitExit(ctx, c.name, c.pod); err != nil {
		return err
	}
	if err := c.pod.Restart(ctx); err != nil {
		return fmt.Errorf("pod %s: start again: %w", c.name, err)
	}
	return nil
}

// waitExit waits, bounded, for a signalled pod's process to be gone.
func waitExit(ctx context.Context, name string, pod fault.Pod) error {
	ctx, cancel := context.WithTimeout(ctx, podExitWait)
	defer cancel()
	if err := pod.Wait(ctx); err != nil {
		return fmt.Errorf("pod %s: wait for exit: %w", name, err)
	}
	return nil
}
