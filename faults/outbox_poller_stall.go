package faults

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// KindOutboxPollerStall is the name of the stalled outbox poller fault.
const KindOutboxPollerStall = "outbox_poller_stall"

// PollerStallParams are the parameters of outbox_poller_stall (none: the stall lasts `for`).
type PollerStallParams struct{}

// adminTimeout bounds one admin request.
const adminTimeout = 10 * time.Second

func outboxPollerStallKind() Kind {
	return defineKind(Kind{
		Name:      KindOutboxPollerStall,
		Simulates: "an alive pod whose outbox poller is stuck: heartbeats stay healthy, but its outbox cursor pins the MIN(cursor) pruning gate and its subscribers get no cross-pod wakeups",
		Mechanism: "eventlogd's test-only admin hook (--admin): POST /v1/admin/poller/stall?for=FOR; Heal POSTs /v1/admin/poller/resume",
		Targets:   TargetPod,
		Timing:    TimingSpan,
		resource:  "pod",
	}, PollerStallParams{}, func(env Env, target string, span time.Duration, _ PollerStallParams) (Fault, error) {
		base, err := env.AdminURL(target)
		if err != nil {
			return nil, err
		}
		return &pollerStall{pod: target, base: strings.TrimRight(base, "/"), span: span, client: &http.Client{Timeout: adminTimeout}}, nil
	})
}

// pollerStall stalls one pod's outbox poller through its admin endpoint. The stall request carries the
// span too, so a pod whose harness died resumes on its own.
type pollerStall struct {
	pod    string
	base   string
	span   time.Duration
	client *http.Client
}

func (s *pollerStall) Inject(ctx context.Context) error {
	return s.post(ctx, "/v1/admin/poller/stall?for="+url.QueryEscape(s.span.String()))
}

func (s *pollerStall) Heal(ctx context.Context) error {
	return s.post(ctx, "/v1/admin/poller/resume")
}

func (s *pollerStall) post(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("pod %s: admin %s: %w", s.pod, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("pod %s: admin %s: HTTP %d: %s", s.pod, path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}
