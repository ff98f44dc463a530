package dashboards

import (
	"bufio"
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/go-sql-driver/mysql"

	"github.com/seqgate/seqgate/internal/dbserver"
	"github.com/seqgate/seqgate/internal/toxiserver"
	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/ledger"
)

// hosts maps the compose network's service:port addresses to the loopback addresses that stand in
// for them in a run without Docker.
type hosts map[string]string

// rewrite replaces every service:port the string names with its loopback address.
func (h hosts) rewrite(s string) string {
	for from, to := range h {
		s = strings.ReplaceAll(s, from, to)
	}
	return s
}

func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := dbserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

// startProcess runs bin with args and env (on top of this process's environment, less EVENTLOGD_*),
// logging to dir/name.log, killed with its process group at the end of the test.
func startProcess(t *testing.T, dir, name, bin string, args []string, env map[string]string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EVENTLOGD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log (tail):\n%s", name, tail(b, 2000))
		}
	})
	return cmd
}

// TestComposeTopologyWithoutDocker runs docker-compose.yml's topology as local processes: MariaDB for
// mysql, toxiproxy's own server with the stack's proxy config, the three eventlogd services with
// their own command lines, environment and pools config, Prometheus with the stack's configuration
// and rules, and the seqgate service's own command, every service:port mapped to a loopback port.
// The seqgate run must pass with its two DB faults driven through the toxiproxy server (which keeps
// its proxies), and Prometheus must scrape all three pods and load both rule groups.
func TestComposeTopologyWithoutDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	promBinary(t, "prometheus")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	logs := t.TempDir()
	eventlogd := buildBinary(t, ctx, dir, "eventlogd", "../cmd/eventlogd")
	seqgate := buildBinary(t, ctx, dir, "seqgate", "../cmd/seqgate")
	toxiBin, err := toxiserver.Build(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}

	// mysql
	db, err := dbserver.Start(ctx, dbserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Stop() })
	h := hosts{"mysql:3306": db.Addr}
	// The stack's MYSQL_ROOT_PASSWORD is the private server's own (generated per server).
	cfg, err := mysql.ParseDSN(db.UserDSN())
	if err != nil {
		t.Fatal(err)
	}
	env := maps.Clone(composeEnv)
	env["MYSQL_ROOT_PASSWORD"] = cfg.Passwd
	p, err := loadCompose(t, env)
	if err != nil {
		t.Fatal(err)
	}

	// toxiproxy: the stack's proxies, listening on loopback ports, in front of the private server.
	var txCfg toxiproxyConfig
	for _, px := range readToxiproxyConfig(t, p) {
		_, port, _ := net.SplitHostPort(px.Listen)
		local := freeAddr(t)
		h["toxiproxy:"+port] = local
		px.Listen, px.Upstream = local, h.rewrite(px.Upstream)
		txCfg = append(txCfg, px)
	}
	b, _ := json.Marshal(txCfg)
	txPath := filepath.Join(dir, "toxiproxy.json")
	if err := os.WriteFile(txPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tx, err := toxiserver.Start(ctx, toxiBin, txPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tx.Stop)
	h["toxiproxy:8474"] = strings.TrimPrefix(tx.URL, "http://")

	// eventlogd-1..3
	pools := filepath.Join(dir, "pools.json")
	var targets []string
	for _, name := range []string{"eventlogd-1", "eventlogd-2", "eventlogd-3"} {
		h[name+":7070"] = freeAddr(t)
		targets = append(targets, h[name+":7070"])
	}
	if err := os.WriteFile(pools, []byte(h.rewrite(p.Configs["pools"].Content)), 0o644); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, name := range []string{"eventlogd-1", "eventlogd-2", "eventlogd-3"} {
		s := p.Services[name]
		args := mapArgs(s.Command[1:], map[string]string{"listen": h[name+":7070"], "pools": pools})
		env := map[string]string{}
		for k, v := range s.Environment {
			env[k] = h.rewrite(*v)
		}
		startProcess(t, logs, name, eventlogd, args, env)
	}
	for _, a := range targets {
		wait.ForEvery(t, time.Minute, 250*time.Millisecond, "eventlogd on "+a, func() bool {
			resp, err := client.Get("http://" + a + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	}

	// prometheus: the stack's configuration, targets mapped, rules from the mounted directory.
	var pc map[string]any
	promSvc := p.Services["prometheus"]
	readYAML(t, mountSource(t, promSvc, "/etc/prometheus/prometheus.yml"), &pc)
	var rules []string
	for _, rf := range pc["rule_files"].([]any) {
		rules = append(rules, mountSource(t, promSvc, rf.(string)))
	}
	pc["rule_files"] = rules
	for _, sc := range pc["scrape_configs"].([]any) {
		for _, st := range sc.(map[string]any)["static_configs"].([]any) {
			sm := st.(map[string]any)
			var ts []string
			for _, tg := range sm["targets"].([]any) {
				ts = append(ts, h.rewrite(tg.(string)))
			}
			sm["targets"] = ts
		}
	}
	prom := startPrometheusConfig(t, pc)
	wait.ForEvery(t, time.Minute, 250*time.Millisecond, "prometheus scraping the three pods", func() bool {
		return len(prom.query(t, `up{job="eventlogd"} == 1`)) == 3
	})

	// seqgate: the service's own command, hosts mapped, the scenario and /runs from its mounts.
	sg := p.Services["seqgate"]
	out := filepath.Join(dir, "runs")
	args := []string{"run", mountSource(t, sg, sg.Command[2])}
	for _, a := range sg.Command[3:] {
		if strings.HasPrefix(a, "/runs/") {
			a = filepath.Join(out, strings.TrimPrefix(a, "/runs/"))
		}
		args = append(args, h.rewrite(a))
	}
	cmd := exec.CommandContext(ctx, seqgate, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = os.Environ() // and the service's own environment (its provisioning token)
	for k, v := range sg.Environment {
		if v != nil {
			cmd.Env = append(cmd.Env, k+"="+h.rewrite(*v))
		}
	}
	stdout, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("seqgate %v: %v\n%s", args, err, tail(stdout, 6000))
	}
	t.Logf("seqgate: %s", lastLines(stdout, 3))

	// The faults went through the toxiproxy server, whose proxies stay for the next run.
	runDir := filepath.Join(out, "demo")
	faults := map[string][]string{}
	r, err := ledger.Open(filepath.Join(runDir, "ledger.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	var held time.Duration // the longest tenant_1 mutation: the 5 s stall holds some
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		switch rec.K {
		case ledger.KindRun:
			victim = rec.Tenants[0].ID
		case ledger.KindFault:
			faults[rec.Kind] = append(faults[rec.Kind], rec.Phase)
		case ledger.KindMut:
			if rec.Tenant == victim && rec.DoneT > 0 {
				held = max(held, time.Duration(rec.DoneT-rec.T))
			}
		}
	}
	r.Close()
	// Evidence that each fault hit the stack through the adopted proxies: tenant_1's mutations were
	// held by its stall (then=resume holds them for its 5 s), and the pods' outbox polls failed while
	// the meta proxy was down.
	if held < 4*time.Second {
		t.Errorf("the longest tenant_1 mutation took %v: the stall on the tenant_1 proxy held nothing", held)
	}
	m := prom.query(t, `sum(eventlogd_outbox_polls_total{result="error"})`)
	if len(m) != 1 || m[0].float() == 0 {
		t.Errorf("no outbox poll failed: the meta proxy never went down (%v)", m)
	} else {
		t.Logf("longest tenant_1 mutation %v; outbox poll errors %v", held, m[0].float())
	}
	for _, k := range []string{"tenant_db_stall", "meta_db_down"} {
		if strings.Join(faults[k], ",") != "start,stop" {
			t.Errorf("%s fault records %v, want start,stop", k, faults[k])
		}
	}
	if ps, err := toxiclient.NewClient(tx.URL).Proxies(); err != nil || len(ps) != len(txCfg) {
		t.Errorf("toxiproxy proxies after the run: %d (%v), want the stack's %d", len(ps), err, len(txCfg))
	}
	var groups struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []any  `json:"rules"`
		} `json:"groups"`
	}
	prom.api(t, "/api/v1/rules", nil, &groups)
	if len(groups.Groups) != 2 {
		t.Errorf("prometheus rule groups %+v, want 2", groups.Groups)
	}
	if m := prom.query(t, `sum(eventlogd_mutations_total{result="ok"})`); len(m) != 1 || m[0].float() == 0 {
		t.Errorf("prometheus saw no mutations of the run: %v", m)
	}
}

// mapArgs returns command-line arguments with the values of the flags in repl replaced.
func mapArgs(args []string, repl map[string]string) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(out); i++ {
		if v, ok := repl[strings.TrimPrefix(out[i], "--")]; ok && strings.HasPrefix(out[i], "--") {
			out[i+1] = v
		}
	}
	return out
}

func lastLines(b []byte, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
