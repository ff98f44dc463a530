package run

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/dbserver"
)

// TestE2EAdminNeedsTheRunsToken: during a run, another local user who reaches a pod's loopback port
// gets 401 from the admin endpoints and from provisioning (the pods' tokens are the run's, never
// on a command line), while the run's own admin fault (outbox_poller_stall) and its provisioning,
// which carry the tokens, still work. The control in the hook is the same admin call with the token:
// 2xx, so the 401 is the token's doing, not a missing endpoint.
func TestE2EAdminNeedsTheRunsToken(t *testing.T) {
	if eventlogdBin == "" {
		t.Fatal("eventlogd did not build")
	}
	if _, err := dbserver.FindBinary(); err != nil {
		t.Skip(err)
	}
	sc, err := scenario.Parse("admin.yaml", []byte(`name: admin-token
seed: 3
duration: 6s
drain_timeout: 20s
tenants:
  - {group: hot, count: 1}
pods: {count: 1}
load:
  - {tenants: hot, executor: constant-arrival-rate, rate: 10}
consumers:
  - {count: 1}
faults:
  - {at: 3s, for: 2s, kind: outbox_poller_stall, target: pod-1}
`))
	if err != nil {
		t.Fatal(err)
	}
	type call struct {
		what, method, path string
		hdr                map[string]string
		want               int // status class: 2 or 4xx exact
	}
	var got []string
	hook := Hook{At: time.Second, Name: "other user", Do: func(ctx context.Context, env faults.Env) error {
		base, err := env.AdminURL("pod-1")
		if err != nil {
			return err
		}
		tok := env.(faults.AdminTokens).AdminToken()
		if tok == "" {
			return fmt.Errorf("the run's pods have no admin token")
		}
		for _, c := range []call{
			{"admin without the token", "POST", "/v1/admin/poller/stall?for=1s", nil, 401},
			{"admin with a wrong token", "POST", "/v1/admin/poller/stall?for=1s", map[string]string{"X-Admin-Token": "guess"}, 401},
			{"provision without the token", "POST", "/v1/provision", nil, 401},
			{"control: admin with the run's token", "POST", "/v1/admin/poller/resume", map[string]string{"X-Admin-Token": tok}, 2},
		} {
			req, _ := http.NewRequestWithContext(ctx, c.method, base+c.path, strings.NewReader(""))
			for k, v := range c.hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("%s: %w", c.what, err)
			}
			resp.Body.Close()
			ok := resp.StatusCode == c.want || (c.want == 2 && resp.StatusCode/100 == 2)
			got = append(got, fmt.Sprintf("%s: %d ok=%v", c.what, resp.StatusCode, ok))
		}
		return nil
	}}
	res, err := Run(context.Background(), Options{Scenario: sc, Dir: t.TempDir(), Eventlogd: eventlogdBin, Hooks: []Hook{hook},
		Log: testWriter{t}, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FaultErr != nil {
		t.Fatalf("the run's admin fault failed: %v", res.FaultErr)
	}
	if len(got) != 4 {
		t.Fatalf("the hook made %d of its 4 calls: %q", len(got), got)
	}
	for _, g := range got {
		if !strings.HasSuffix(g, "ok=true") {
			t.Errorf("%s", g)
		}
	}
	noChildren(t)
}
