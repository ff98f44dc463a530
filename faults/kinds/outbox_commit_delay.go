package kinds

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// OutboxCommitDelayName is the name of the held outbox transaction fault.
const OutboxCommitDelayName = "outbox_commit_delay"

// OutboxCommitDelayParams are the parameters of outbox_commit_delay.
type OutboxCommitDelayParams struct {
	// Delay is how long each outbox transaction of the pod stays open after its outbox insert.
	Delay time.Duration `yaml:"delay" help:"how long each outbox transaction of the pod stays open between its outbox insert (its ids taken) and its commit; (0s, 1m]"`
}

// OutboxCommitDelay declares outbox_commit_delay.
func OutboxCommitDelay() fault.Def[OutboxCommitDelayParams] {
	return fault.Def[OutboxCommitDelayParams]{
		Name:      OutboxCommitDelayName,
		Simulates: "a pod that stalls in the middle of its outbox transactions (a GC pause, a starved CPU, a slow link to the meta DB): their outbox ids are taken long before they become visible, while the other pods' hints commit; an ordered outbox makes the others wait, an unordered one lets pollers pass the held ids for good",
		Mechanism: "eventlogd's test-only admin failpoint (--admin) on the pod: POST /v1/admin/failpoint/outbox-hold?delay=DELAY&for=FOR (each outbox transaction waits delay after its outbox insert, before its commit); Heal posts for=0s. The request carries the span, so the pod disarms by itself if the harness dies; a pod restarted during the fault comes back without it",
		Targets:   fault.TargetPod,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourcePod,
		Defaults:  OutboxCommitDelayParams{Delay: 300 * time.Millisecond},
		Build: func(env fault.Env, target string, span time.Duration, p OutboxCommitDelayParams) (fault.Fault, error) {
			if p.Delay <= 0 || p.Delay > time.Minute {
				return nil, fmt.Errorf("%s: params.delay %v: want a duration in (0s, 1m]", OutboxCommitDelayName, p.Delay)
			}
			a, err := adminOf(env, target)
			if err != nil {
				return nil, err
			}
			return &outboxCommitDelay{admin: a, delay: p.Delay, span: span}, nil
		},
	}
}

// outboxCommitDelay holds one pod's outbox transactions open through its admin failpoint.
type outboxCommitDelay struct {
	admin       *admin
	delay, span time.Duration
}

func (f *outboxCommitDelay) Inject(ctx context.Context) error { return f.arm(ctx, f.span) }

func (f *outboxCommitDelay) Heal(ctx context.Context) error { return f.arm(ctx, 0) }

func (f *outboxCommitDelay) arm(ctx context.Context, span time.Duration) error {
	return f.admin.post(ctx, "/v1/admin/failpoint/outbox-hold?delay="+url.QueryEscape(f.delay.String())+"&for="+url.QueryEscape(span.String()))
}
