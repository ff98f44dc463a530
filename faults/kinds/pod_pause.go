package kinds

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// PodPauseName is the name of the pod pause fault.
const PodPauseName = "pod_pause"

// PodPauseParams are the parameters of pod_pause (none: the pause lasts `for`).
type PodPauseParams struct{}

// PodPause declares pod_pause.
func PodPause() fault.Def[PodPauseParams] {
	return fault.Def[PodPauseParams]{
		Name:      PodPauseName,
		Simulates: "a pod freezes (long GC pause, CPU starvation, a VM migration): its sockets stay open but nothing answers for `for`, then it carries on as if nothing happened",
		Mechanism: "SIGSTOP to the pod's process group; Heal sends SIGCONT",
		Targets:   fault.TargetPod,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourcePod,
		Build: func(env fault.Env, target string, _ time.Duration, _ PodPauseParams) (fault.Fault, error) {
			pod, err := env.Pod(target)
			if err != nil {
				return nil, err
			}
			return &podPause{name: target, pod: pod}, nil
		},
	}
}

// podPause stops a pod's processes for the span.
type podPause struct {
	name string
	pod  fault.Pod
}

func (p *podPause) Inject(context.Context) error {
	if err := p.pod.Kill(syscall.SIGSTOP); err != nil {
		return fmt.Errorf("pod %s: SIGSTOP: %w", p.name, err)
	}
	return nil
}

func (p *podPause) Heal(context.Context) error {
	if err := p.pod.Kill(syscall.SIGCONT); err != nil {
		return fmt.Errorf("pod %s: SIGCONT: %w", p.name, err)
	}
	return nil
}
