package kinds

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// adminTimeout bounds one admin request.
const adminTimeout = 10 * time.Second

// admin talks to one pod's test-only admin endpoints (eventlogd --admin, docs/eventlogd.md).
type admin struct {
	pod    string
	base   string // without a trailing slash
	token  string // the pods' admin token ("": none)
	client *http.Client
}

// adminOf returns the admin client of a pod; an error when the Env has no admin hook for it.
func adminOf(env fault.Env, pod string) (*admin, error) {
	base, err := env.AdminURL(pod)
	if err != nil {
		return nil, err
	}
	a := &admin{pod: pod, base: strings.TrimRight(base, "/"), client: &http.Client{Timeout: adminTimeout}}
	if t, ok := env.(fault.AdminTokens); ok {
		a.token = t.AdminToken()
	}
	return a, nil
}

// post POSTs path (with its query) and fails on anything but a 2xx answer, quoting the answer.
func (a *admin) post(ctx context.Context, path string) error { return a.do(ctx, http.MethodPost, path) }

// do sends method path and fails on anything but a 2xx answer, quoting the answer.
func (a *admin) do(ctx context.Context, method, path string) error {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, nil)
	if err != nil {
		return err
	}
	if a.token != "" {
		req.Header.Set("X-Admin-Token", a.token)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("pod %s: admin %s %s: %w", a.pod, method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("pod %s: admin %s %s: HTTP %d: %s", a.pod, method, path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}
