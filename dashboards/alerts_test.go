package dashboards

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/ledger"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sut is a tiny client of eventlogd pods for the alert tests.
type sut struct {
	urls   []string
	token  string // admin token
	client *http.Client
}

func (s *sut) do(t *testing.T, method, url string, body []byte, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (s *sut) provision(t *testing.T) (id, key string) {
	t.Helper()
	code, b := s.do(t, "POST", s.urls[0]+"/v1/provision", []byte("{}"), map[string]string{"Content-Type": "application/json", "X-Provision-Token": provisionToken})
	var out struct {
		TenantID string `json:"tenant_id"`
		APIKey   string `json:"api_key"`
	}
	if code != 200 || json.Unmarshal(b, &out) != nil || out.APIKey == "" {
		t.Fatalf("provision: %d %s", code, b)
	}
	return out.TenantID, out.APIKey
}

// writes PUTs n files, round-robin over the pods; every mutation must succeed (events are derived).
func (s *sut) writes(t *testing.T, key, prefix string, n int) {
	t.Helper()
	for i := range n {
		url := fmt.Sprintf("%s/v1/fs/%s-%d.txt", s.urls[i%len(s.urls)], prefix, i)
		if code, b := s.do(t, "PUT", url, []byte("x"), map[string]string{"X-API-Key": key}); code != 200 {
			t.Fatalf("PUT %s: %d %s", url, code, b)
		}
	}
}

// failInserts arms (or, with 0, disarms) the event-insert failpoint of tenant on every pod.
func (s *sut) failInserts(t *testing.T, tenant string, d time.Duration) {
	t.Helper()
	for _, u := range s.urls {
		url := u + "/v1/admin/failpoint/event-insert?for=" + d.String() + "&tenant=" + tenant
		if code, b := s.do(t, "POST", url, nil, map[string]string{"X-Admin-Token": s.token}); code != 200 {
			t.Fatalf("POST %s: %d %s", url, code, b)
		}
	}
}

// startPods runs n eventlogd pods (built from ./cmd/eventlogd) against the meta DSN with args.
// provisionToken is the pods' provisioning token (startPods), sent by provision.
const provisionToken = "alert-test-provision-token"

func startPods(t *testing.T, ctx context.Context, bin, metaDSN string, n int, args ...string) *pods.Fleet {
	t.Helper()
	logs := t.TempDir()
	// The meta DSN carries the private server's password: in the environment, never on argv.
	fleet, err := pods.Start(ctx, pods.Config{Binary: bin, Args: args,
		Env:    []string{"EVENTLOGD_PROVISION_TOKEN=" + provisionToken, "EVENTLOGD_META_DSN=" + metaDSN},
		LogDir: logs, Start: time.Now(), Sink: &ledger.Memory{}}, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fleet.Stop(5 * time.Second)
		if t.Failed() {
			for _, p := range fleet.Pods() {
				b, _ := os.ReadFile(filepath.Join(logs, p.Name+".log"))
				t.Logf("%s log (tail):\n%s", p.Name, tail(b, 3000))
			}
		}
	})
	return fleet
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// TestDropAlertFiresDuringOverflowAndResolves runs the rules (test windows, see shortRules) in a real
// Prometheus scraping two real eventlogd pods: a clean phase raises nothing (not even pending), a
// tenant whose event inserts fail (the event_insert_fail fault: mutations succeed, every event goes
// to the retry buffer, whose per-tenant cap of 5 overflows) pages EventlogdRetryBufferDrop for that
// tenant with reason tenant_cap, and the alert resolves once the fault is healed.
func TestDropAlertFiresDuringOverflowAndResolves(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB, two eventlogd pods and Prometheus")
	}
	promBinary(t, "prometheus")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	db, err := dbserver.Start(ctx, dbserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Stop() })
	bin := buildBinary(t, ctx, t.TempDir(), "eventlogd", "../cmd/eventlogd")
	const token = "alert-test-token"
	fleet := startPods(t, ctx, bin, db.DSN("meta"), 2, "--admin", "--admin-token", token,
		"--retry-tenant-cap", "5", "--retry-backoff-min", "10s")
	s := &sut{token: token, client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}}
	defer s.client.CloseIdleConnections()
	var targets []string
	for _, p := range fleet.Pods() {
		s.urls = append(s.urls, p.URL())
		targets = append(targets, strings.TrimPrefix(p.URL(), "http://"))
	}
	rules := filepath.Join(t.TempDir(), "rules.yml")
	shortRules(t, "rules/eventlogd.rules.yml", rules)
	p := startPrometheus(t, targets, rules)

	// Clean phase: writes on both pods until the recording rules have seen them, then no alert at
	// all, pending included, over the whole phase.
	victim, key := s.provision(t)
	_, otherKey := s.provision(t)
	wait.ForEvery(t, time.Minute, 250*time.Millisecond, "insert attempts recorded", func() bool {
		s.writes(t, key, "clean", 4)
		s.writes(t, otherKey, "clean", 4)
		r := p.query(t, `eventlogd:events_attempted:rate5m`)
		return len(r) == 1 && r[0].float() > 0
	})
	wait.ForEvery(t, time.Minute, 250*time.Millisecond, "both pods scraped", func() bool { return len(p.query(t, `up{job="eventlogd"} == 1`)) == 2 })
	wait.ForEvery(t, time.Minute, 250*time.Millisecond, "five evaluations on clean data", func() bool {
		return len(p.query(t, `count_over_time(eventlogd:events_attempted:rate5m[1m]) >= 5`)) == 1
	})
	if r := p.query(t, `count_over_time(ALERTS[10m])`); len(r) != 0 {
		t.Fatalf("alerts during the clean phase: %v", r)
	}
	if as := p.alerts(t); len(as) != 0 {
		t.Fatalf("alerts during the clean phase: %s", fmtAlerts(as))
	}

	// Fault: the admin hook needs the token.
	if code, _ := s.do(t, "POST", s.urls[0]+"/v1/admin/failpoint/event-insert?for=1m&tenant="+victim, nil, nil); code != 401 {
		t.Fatalf("admin without the token: %d, want 401", code)
	}
	s.failInserts(t, victim, time.Minute)
	s.writes(t, key, "fault", 40) // 20 per pod well within the 10 s first retry: 15 over each pod's cap
	s.writes(t, otherKey, "fault", 10)
	wait.ForEvery(t, time.Minute, 250*time.Millisecond, "EventlogdRetryBufferDrop firing for the victim", func() bool {
		return firing(p.alerts(t), "EventlogdRetryBufferDrop", map[string]string{"tenant_id": victim, "reason": "tenant_cap", "severity": "page"})
	})
	drops := p.query(t, `sum by (tenant_id) (drive9_sse_event_retry_dropped_total)`)
	if len(drops) != 1 || drops[0].Metric["tenant_id"] != victim || drops[0].float() < 1 {
		t.Fatalf("drops by tenant: %v (only the victim may drop)", drops)
	}
	t.Logf("victim dropped %v events; alerts: %s", drops[0].float(), fmtAlerts(p.alerts(t)))

	// Heal: the other tenant's writes keep flowing; the drop alert resolves one window later.
	s.failInserts(t, victim, 0)
	wait.ForEvery(t, 2*time.Minute, 250*time.Millisecond, "EventlogdRetryBufferDrop resolved", func() bool {
		s.writes(t, otherKey, "after", 2)
		for _, a := range p.alerts(t) {
			if a.Labels["alertname"] == "EventlogdRetryBufferDrop" {
				return false
			}
		}
		return true
	})
	// Every metric the rules and the dashboards name that this run must have produced is in
	// Prometheus under that name: the names are the ones a real pod exports, not only registers.
	var names []string
	p.api(t, "/api/v1/label/__name__/values", nil, &names)
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, m := range []string{"drive9_sse_event_retry_dropped_total", "drive9_sse_event_retry_buffer_depth",
		"drive9_sse_event_retry_flush_total", "eventlogd_event_insert_attempts_total", "eventlogd_event_insert_results_total",
		"drive9_tenant_outbox_backlog_oldest_age_seconds", "eventlogd_event_retry_buffer_residency_seconds_bucket",
		"eventlogd_mutations_total", "drive9_sse_inflight_connections", "eventlogd_sse_replay_handoffs_total",
		"process_start_time_seconds", "eventlogd:event_loss_ratio:rate1h", "eventlogd:event_insert_success_ratio:rate5m"} {
		if !have[m] {
			t.Errorf("Prometheus has no series named %s", m)
		}
	}
}
