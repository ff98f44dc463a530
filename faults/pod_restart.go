package faults

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// KindPodRestart is the name of the graceful pod restart fault.
const KindPodRestart = "pod_restart"

// PodRestartParams are the parameters of pod_restart.
type PodRestartParams struct {
	Grace time.Duration `yaml:"grace" help:"how long the pod may take to shut down after SIGTERM before it is SIGKILLed (a rolling deploy's termination grace period)"`
}

func podRestartKind() Kind {
	return defineKind(Kind{
		Name:      KindPodRestart,
		Simulates: "a rolling deploy restarts a pod: it shuts down gracefully (flushes its retry buffer within its budget, closes SSE streams) and starts again at once",
		Mechanism: "SIGTERM to the pod's process group, wait up to grace for the exit (then SIGKILL), start again; instant (no `for`)",
		Targets:   TargetPod,
		Timing:    TimingInstant,
		resource:  "pod",
	}, PodRestartParams{Grace: 30 * time.Second}, func(env Env, target string, _ time.Duration, p PodRestartParams) (Fault, error) {
		pod, err := env.Pod(target)
		if err != nil {
			return nil, err
		}
		return &podRestart{name: target, pod: pod, grace: p.Grace}, nil
	})
}

// podRestart stops a pod gracefully and starts it again. needStart remembers a start that has not
// happened yet, so Heal can finish a restart whose Inject failed halfway.
type podRestart struct {
	name      string
	pod       Pod
	grace     time.Duration
	needStart bool
}

func (r *podRestart) Inject(ctx context.Context) error {
	if err := r.pod.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("pod %s: SIGTERM: %w", r.name, err)
	}
	r.needStart = true
	wctx, cancel := context.WithTimeout(ctx, r.grace)
	err := r.pod.Wait(wctx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Past the grace period: what a kubelet does.
		if err := r.pod.Signal(syscall.SIGKILL); err != nil {
			return fmt.Errorf("pod %s: SIGKILL after %s grace: %w", r.name, r.grace, err)
		}
		if err := waitExit(ctx, r.name, r.pod); err != nil {
			return err
		}
	}
	return r.start(ctx)
}

func (r *podRestart) Heal(ctx context.Context) error {
	if !r.needStart {
		return nil
	}
	if err := waitExit(ctx, r.name, r.pod); err != nil {
		return err
	}
	return r.start(ctx)
}

func (r *podRestart) start(ctx context.Context) error {
	if err := r.pod.Start(ctx); err != nil {
		return errors.Join(fmt.Errorf("pod %s: start again", r.name), err)
	}
	r.needStart = false
	return nil
}
