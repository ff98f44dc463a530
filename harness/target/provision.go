package target

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Provision creates one tenant through POST /v1/provision on base (for eventlogd, in pool). Any 2xx
// with a tenant_id and an api_key is success (drive9 answers 202 while it is still provisioning).
func (p *Profile) Provision(ctx context.Context, c *http.Client, base, pool string) (Tenant, error) {
	body := []byte("{}")
	if p.SendPool {
		body, _ = json.Marshal(map[string]string{"pool": pool})
	}
	var resp *http.Response
	var b []byte
	// A service may rate-limit provisioning (eventlogd's --provision-rate): a 429 is waited out
	// (Retry-After, at least 1 s), up to 60 times.
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+p.Wire().ProvisionPath, bytes.NewReader(body))
		if err != nil {
			return Tenant{}, fmt.Errorf("POST %s%s: %w", base, p.Wire().ProvisionPath, err)
		}
		req.Header.Set("Content-Type", "application/json")
		if p.ProvisionToken != "" {
			req.Header.Set("X-Provision-Token", p.ProvisionToken)
		}
		if resp, err = c.Do(req); err != nil {
			return Tenant{}, fmt.Errorf("POST %s%s: %w", base, p.Wire().ProvisionPath, err)
		}
		b, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || attempt >= 60 {
			break
		}
		wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		select {
		case <-ctx.Done():
			return Tenant{}, ctx.Err()
		case <-time.After(time.Duration(max(1, wait)) * time.Second):
		}
	}
	var out struct {
		TenantID string `json:"tenant_id"`
		APIKey   string `json:"api_key"`
		Pool     string `json:"pool"`
	}
	if resp.StatusCode/100 != 2 || json.Unmarshal(b, &out) != nil || out.TenantID == "" || out.APIKey == "" {
		where := ""
		if p.SendPool {
			where = " (pool " + pool + ")"
		}
		return Tenant{}, fmt.Errorf("POST %s%s%s: HTTP %d %s (profile %s wants a 2xx answer with tenant_id and api_key)",
			base, p.Wire().ProvisionPath, where, resp.StatusCode, snippet(b), p.Name)
	}
	if out.Pool == "" {
		out.Pool = pool
	}
	return Tenant{ID: out.TenantID, Key: out.APIKey, Pool: out.Pool}, nil
}

// StatusActive is what GET /v1/status says of a usable tenant (drive9's meta.TenantActive).
const StatusActive = "active"

// NotReadyError is a tenant the service did not report usable in time, or reported failed.
type NotReadyError struct {
	Tenant  string
	Status  string // the last status seen ("" when none was read)
	Message string // the service's message, or the last transport error
	Waited  time.Duration
	Failed  bool // the service said the tenant failed: waiting longer would not help
	Refused bool // GET /v1/status answered a 4xx (a wrong key, no such endpoint): waiting would not help
}

func (e *NotReadyError) Error() string {
	last := e.Status
	if last == "" {
		last = "no status"
	}
	if e.Message != "" {
		last += ": " + e.Message
	}
	if e.Failed {
		return fmt.Sprintf("tenant %s: GET /v1/status says %s: it will not become active", e.Tenant, last)
	}
	if e.Refused {
		return fmt.Sprintf("tenant %s: GET /v1/status answers %s; this profile waits for it to say %q (a service without /v1/status: --target-profile generic)",
			e.Tenant, last, StatusActive)
	}
	return fmt.Sprintf("tenant %s is not active after %s (GET /v1/status: %s); raise --ready-timeout if the service is slow to provision",
		e.Tenant, e.Waited.Round(time.Millisecond), last)
}

// WaitReady returns once base reports t usable, as the profile learns it, or a *NotReadyError after
// timeout (polling every `every`). Statuses other than active, and 5xx answers, are waited out.
func (p *Profile) WaitReady(ctx context.Context, c *http.Client, base string, t Tenant, timeout, every time.Duration) error {
	if p.Ready == ReadyAtOnce {
		return nil
	}
	begin := time.Now()
	nr := &NotReadyError{Tenant: t.ID}
	for {
		ready, final := p.pollStatus(ctx, c, base, t, nr)
		if ready {
			return nil
		}
		nr.Waited = time.Since(begin)
		if final {
			return nr
		}
		if nr.Waited >= timeout {
			return nr
		}
		select {
		case <-ctx.Done():
			nr.Message = ctx.Err().Error()
			return nr
		case <-time.After(min(every, timeout-nr.Waited)):
		}
	}
}

// pollStatus asks once; final means the answer cannot change by waiting.
func (p *Profile) pollStatus(ctx context.Context, c *http.Client, base string, t Tenant, nr *NotReadyError) (ready, final bool) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, base+p.Wire().StatusPath, nil)
	if err != nil {
		nr.Message = err.Error()
		return false, true
	}
	req.Header.Set("Authorization", "Bearer "+t.Key)
	resp, err := c.Do(req)
	if err != nil {
		nr.Message = err.Error()
		return false, false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if p.Ready == ReadyStatusIfServed && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed) {
		return true, true
	}
	var st struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &st) != nil {
		nr.Status, nr.Message = fmt.Sprintf("HTTP %d", resp.StatusCode), snippet(b)
		// 4xx other than 429 will not get better (a wrong key, no status endpoint for drive9).
		nr.Refused = resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusTooManyRequests
		return false, nr.Refused
	}
	nr.Status, nr.Message = st.Status, st.Message
	switch st.Status {
	case StatusActive:
		return true, true
	case "failed", "suspended", "deleting", "deleted":
		nr.Failed = true
		return false, true
	}
	return false, false
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
