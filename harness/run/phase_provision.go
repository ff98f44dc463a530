package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/seqgate/seqgate/harness/consumer"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/ledger"
)

// provisionPhase creates every tenant of the scenario on the target, then writes the run record (and
// the pod records held back until now) and builds the faults' view of the run.
func provisionPhase(ctx context.Context, s *state, log *slog.Logger) error {
	tenants, err := s.target.provision(ctx, s, log)
	if err != nil {
		return err
	}
	s.tenants = tenants
	s.env = &env{pool: map[string]string{}, ids: map[string]string{}, consumers: map[string][]*consumer.Consumer{}, proxies: s.sys.proxies, fleet: s.sys.fleet}
	for _, t := range s.tenants {
		s.env.tenants = append(s.env.tenants, t.Name())
		s.env.pool[t.Name()] = t.Pool
		s.env.ids[t.Name()] = t.ID
	}
	rec := &ledger.Record{K: ledger.KindRun, V: ledger.Version, RunID: s.id, Scenario: s.sc.Name, Seed: s.sc.Seed,
		StartUnixNs: s.start.UnixNano(), Budget: s.sc.Budget, Target: s.sys.name, Thresholds: s.sc.Thresholds, Pods: s.sys.podNames()}
	for _, t := range s.tenants {
		rec.Tenants = append(rec.Tenants, ledger.Tenant{ID: t.ID, Mode: t.Mode, Cold: t.Cold})
	}
	return s.sink.header(rec)
}

var provisionClient = &http.Client{Timeout: 30 * time.Second}

// provisionHTTP creates one tenant through POST base/v1/provision with body and returns its id and
// key, and the pool the service says it put the tenant in ("" when the answer does not say).
func provisionHTTP(ctx context.Context, base string, slot scenario.Tenant, body []byte) (tenant, string, error) {
	var out struct {
		TenantID string `json:"tenant_id"`
		APIKey   string `json:"api_key"`
		Pool     string `json:"pool"` // eventlogd says where it put the tenant; drive9 does not
	}
	var resp *http.Response
	var b []byte
	// eventlogd rate-limits provisioning (--provision-rate): a 429 is waited out (Retry-After).
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/provision", bytes.NewReader(body))
		if err != nil {
			return tenant{}, "", err
		}
		req.Header.Set("Content-Type", "application/json")
		if resp, err = provisionClient.Do(req); err != nil {
			return tenant{}, "", err
		}
		b, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || attempt >= 60 {
			break
		}
		wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		select {
		case <-ctx.Done():
			return tenant{}, "", ctx.Err()
		case <-time.After(time.Duration(max(1, wait)) * time.Second):
		}
	}
	if resp.StatusCode/100 != 2 || json.Unmarshal(b, &out) != nil || out.TenantID == "" || out.APIKey == "" {
		return tenant{}, "", fmt.Errorf("POST /v1/provision (pool %s): HTTP %d %s", slot.Pool, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return tenant{Tenant: slot, ID: out.TenantID, Key: out.APIKey}, out.Pool, nil
}
