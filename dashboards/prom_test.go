package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/internal/wait"
)

// testWindow replaces every range and offset of the rules in the copy a live Prometheus loads, and
// testFor every `for:`: the production windows (5m to 3d) would keep a drop alert firing for five
// minutes after the last drop. Groups are evaluated every second.
const (
	testWindow = "15s"
	testFor    = "2s"
)

var (
	rangeRE  = regexp.MustCompile(`\[\d+[smhdwy]\]`)
	offsetRE = regexp.MustCompile(`offset \d+[smhdwy]`)
)

// shortRules writes a copy of the rule file at src to dst with the windows, `for:` and group
// intervals of a test (see testWindow); everything else is kept as written.
func shortRules(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	groups, _ := doc["groups"].([]any)
	n := 0
	for _, g := range groups {
		gm := g.(map[string]any)
		gm["interval"] = "1s"
		for _, r := range gm["rules"].([]any) {
			rm := r.(map[string]any)
			e := rm["expr"].(string)
			e = rangeRE.ReplaceAllString(e, "["+testWindow+"]")
			e = offsetRE.ReplaceAllString(e, "offset "+testWindow)
			rm["expr"] = e
			if _, ok := rm["for"]; ok {
				rm["for"] = testFor
			}
			n++
		}
	}
	if n == 0 {
		t.Fatalf("%s: no rules", src)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// prom is a Prometheus server of one test: a child process on a free loopback port with its own
// temp storage, killed (with its process group) at the end of the test.
type prom struct {
	base   string
	client *http.Client
}

// startPrometheus runs /usr/bin/prometheus scraping targets (job eventlogd) every second with the
// rule file rules loaded.
func startPrometheus(t *testing.T, targets []string, rules string) *prom {
	t.Helper()
	return startPrometheusConfig(t, map[string]any{
		"global":         map[string]any{"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
		"rule_files":     []string{rules},
		"scrape_configs": []any{map[string]any{"job_name": "eventlogd", "static_configs": []any{map[string]any{"targets": targets}}}},
	})
}

// startPrometheusConfig runs /usr/bin/prometheus with the configuration cfg.
func startPrometheusConfig(t *testing.T, cfg map[string]any) *prom {
	t.Helper()
	bin := promBinary(t, "prometheus")
	dir := t.TempDir()
	b, _ := yaml.Marshal(cfg)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := dbserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p := &prom{base: "http://" + addr, client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		logf.Close()
		p.client.CloseIdleConnections()
		if t.Failed() {
			log, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus log:\n%s", log)
		}
	})
	wait.ForEvery(t, 60*time.Second, 250*time.Millisecond, "prometheus ready", func() bool {
		resp, err := p.client.Get(p.base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return p
}

// api GETs a Prometheus HTTP API path and decodes its data field into out.
func (p *prom) api(t *testing.T, path string, q url.Values, out any) {
	t.Helper()
	resp, err := p.client.Get(p.base + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Status != "success" {
		t.Fatalf("GET %s?%s: %d %s", path, q.Encode(), resp.StatusCode, b)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, env.Data)
	}
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s promSample) float() float64 {
	str, _ := s.Value[1].(string)
	f, _ := strconv.ParseFloat(str, 64)
	return f
}

// query runs an instant query.
func (p *prom) query(t *testing.T, expr string) []promSample {
	t.Helper()
	var d struct {
		Result []promSample `json:"result"`
	}
	p.api(t, "/api/v1/query", url.Values{"query": {expr}}, &d)
	return d.Result
}

type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// alerts returns the pending and firing alerts.
func (p *prom) alerts(t *testing.T) []promAlert {
	t.Helper()
	var d struct {
		Alerts []promAlert `json:"alerts"`
	}
	p.api(t, "/api/v1/alerts", nil, &d)
	return d.Alerts
}

// firing reports whether alert name fires with every label of want.
func firing(as []promAlert, name string, want map[string]string) bool {
	for _, a := range as {
		if a.Labels["alertname"] != name || a.State != "firing" {
			continue
		}
		ok := true
		for k, v := range want {
			ok = ok && a.Labels[k] == v
		}
		if ok {
			return true
		}
	}
	return false
}

// buildBinary builds a main package of this module into dir (tests run from dashboards/).
func buildBinary(t *testing.T, ctx context.Context, dir, name, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

func fmtAlerts(as []promAlert) string {
	var s []string
	for _, a := range as {
		s = append(s, fmt.Sprintf("%s(%s %v)", a.Labels["alertname"], a.State, a.Labels))
	}
	return strings.Join(s, ", ")
}
