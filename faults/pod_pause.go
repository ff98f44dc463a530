package faults

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// KindPodPause is the name of the pod pause fault.
const KindPodPause = "pod_pause"

// PodPauseParams are the parameters of pod_pause (none: the pause lasts `for`).
type PodPauseParams struct{}

func podPauseKind() Kind {
	return defineKind(Kind{
		Name:      KindPodPause,
		Simulates: "a pod freezes (long GC pause, CPU starvation, a VM migration): its sockets stay open but nothing answers for `for`, then it carries on as if nothing happened",
		Mechanism: "SIGSTOP to the pod's process group; Heal sends SIGCONT",
		Targets:   TargetPod,
		Timing:    TimingSpan,
		resource:  "pod",
	}, PodPauseParams{}, func(env Env, target string, _ time.Duration, _ PodPauseParams) (Fault, error) {
		pod, err := env.Pod(target)
		if err != nil {
			return nil, err
		}
		return &podPause{name: target, pod: pod}, nil
	})
}

// podPause stops a pod's processes for the span.
type podPause struct {
	name string
	pod  Pod
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
