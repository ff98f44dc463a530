package kinds

import (
	"context"
	"net/url"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// OutboxPollerStallName is the name of the stalled outbox poller fault.
const OutboxPollerStallName = "outbox_poller_stall"

// PollerStallParams are the parameters of outbox_poller_stall (none: the stall lasts `for`).
type PollerStallParams struct{}

// OutboxPollerStall declares outbox_poller_stall.
func OutboxPollerStall() fault.Def[PollerStallParams] {
	return fault.Def[PollerStallParams]{
		Name:      OutboxPollerStallName,
		Simulates: "an alive pod whose outbox poller is stuck: heartbeats stay healthy, but its outbox cursor pins the MIN(cursor) pruning gate and its subscribers get no cross-pod wakeups",
		Mechanism: "eventlogd's test-only admin hook (--admin): POST /v1/admin/poller/stall?for=FOR; Heal POSTs /v1/admin/poller/resume",
		Targets:   fault.TargetPod,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourcePod,
		Build: func(env fault.Env, target string, span time.Duration, _ PollerStallParams) (fault.Fault, error) {
			a, err := adminOf(env, target)
			if err != nil {
				return nil, err
			}
			return &pollerStall{admin: a, span: span}, nil
		},
	}
}

// pollerStall stalls one pod's outbox poller through its admin endpoint. The stall request carries the
// span too, so a pod whose harness died resumes on its own.
type pollerStall struct {
	admin *admin
	span  time.Duration
}

func (s *pollerStall) Inject(ctx context.Context) error {
	return s.admin.post(ctx, "/v1/admin/poller/stall?for="+url.QueryEscape(s.span.String()))
}

func (s *pollerStall) Heal(ctx context.Context) error {
	return s.admin.post(ctx, "/v1/admin/poller/resume")
}
