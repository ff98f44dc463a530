package kinds

import (
	"context"
	"fmt"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// PodRestartName is the name of the graceful pod restart fault.
const PodRestartName = "pod_restart"

// PodRestartParams are the parameters of pod_restart.
type PodRestartParams struct {
	// Grace is how long the pod may take to exit after SIGTERM before it is SIGKILLed.
	Grace time.Duration `yaml:"grace" help:"how long the pod may take to shut down after SIGTERM before it is SIGKILLed (a rolling deploy's termination grace period)"`
}

// PodRestart declares pod_restart.
func PodRestart() fault.Def[PodRestartParams] {
	return fault.Def[PodRestartParams]{
		Name:      PodRestartName,
		Simulates: "a rolling deploy restarts a pod: it shuts down gracefully (flushes its retry buffer within its budget, closes SSE streams) and starts again at once",
		Mechanism: "Pod.Stop: SIGTERM to the pod's process group, SIGKILL if it has not exited after grace (recorded as an exit, not a crash); then Pod.Restart; instant (no `for`)",
		Targets:   fault.TargetPod,
		Timing:    fault.TimingInstant,
		Resource:  fault.ResourcePod,
		Defaults:  PodRestartParams{Grace: 30 * time.Second},
		Build: func(env fault.Env, target string, _ time.Duration, p PodRestartParams) (fault.Fault, error) {
			pod, err := env.Pod(target)
			if err != nil {
				return nil, err
			}
			return &podRestart{name: target, pod: pod, grace: p.Grace}, nil
		},
	}
}

// podRestart stops a pod gracefully and starts it again. needStart remembers a start that has not
// happened yet, so Heal can finish a restart whose Inject failed halfway.
type podRestart struct {
	name      string
	pod       fault.Pod
	grace     time.Duration
	needStart bool
}

func (r *podRestart) Inject(ctx context.Context) error {
	r.needStart = true
	if err := r.pod.Stop(r.grace); err != nil {
		return fmt.Errorf("pod %s: graceful stop: %w", r.name, err)
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
	if err := r.pod.Restart(ctx); err != nil {
		return fmt.Errorf("pod %s: start again: %w", r.name, err)
	}
	r.needStart = false
	return nil
}
