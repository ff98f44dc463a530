package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// composeEnv is the environment a user gives `docker compose up` (docs/stack.md): the four secrets.
var composeEnv = map[string]string{
	"MYSQL_ROOT_PASSWORD":       "test-db-password",
	"EVENTLOGD_ADMIN_TOKEN":     "test-admin-token",
	"EVENTLOGD_PROVISION_TOKEN": "test-provision-token",
	"GRAFANA_ADMIN_PASSWORD":    "test-grafana-password",
}

func loadCompose(t *testing.T, env map[string]string) (*types.Project, error) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	envCopy := map[string]string{} // the loader adds COMPOSE_PROJECT_NAME to the map it is given
	for k, v := range env {
		envCopy[k] = v
	}
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, "docker-compose.yml")}},
		Environment: envCopy,
	}, func(o *loader.Options) { o.SetProjectName("seqgate", true) })
}

// flagNames runs bin with args (a help request) and returns the flag names its usage lists.
func flagNames(t *testing.T, bin string, args ...string) map[string]bool {
	t.Helper()
	out, _ := exec.Command(bin, args...).CombinedOutput() // flag's -h exits 0 or 2 depending on the package
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?--?([a-z][a-z0-9-]*)`).FindAllStringSubmatch(string(out), -1) {
		names[m[1]] = true
	}
	if len(names) < 3 {
		t.Fatalf("%s %v lists no flags:\n%s", bin, args, out)
	}
	return names
}

// cmdFlags returns the --flags of a command line, with the value that follows each (or "true").
func cmdFlags(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			continue
		}
		if k, v, ok := strings.Cut(name, "="); ok {
			out[k] = v
		} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			out[name] = args[i+1]
			i++
		} else {
			out[name] = "true"
		}
	}
	return out
}

type toxiproxyConfig []struct {
	Name     string `json:"name"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
	Enabled  bool   `json:"enabled"`
}

func readToxiproxyConfig(t *testing.T, p *types.Project) toxiproxyConfig {
	t.Helper()
	b, err := os.ReadFile(p.Configs["toxiproxy"].File)
	if err != nil {
		t.Fatal(err)
	}
	var c toxiproxyConfig
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("toxiproxy config: %v", err)
	}
	return c
}

// hostPort returns the tcp(host:port) address of a go-sql-driver DSN.
func dsnAddr(dsn string) string {
	m := regexp.MustCompile(`@tcp\(([^)]+)\)`).FindStringSubmatch(dsn)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestComposeFileMatchesTheCode loads docker-compose.yml with compose-go (as `docker compose` does)
// and checks what it names against the code: services, published ports, mounted files, every
// eventlogd and seqgate flag and EVENTLOGD_* variable, the pools and the toxiproxy proxies behind
// them, Prometheus's targets and rules, Grafana's provisioning, and that no secret has a default.
func TestComposeFileMatchesTheCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds eventlogd and seqgate")
	}
	p, err := loadCompose(t, composeEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"eventlogd-1", "eventlogd-2", "eventlogd-3", "grafana", "mysql", "prometheus", "seqgate", "toxiproxy"}
	if got := p.ServiceNames(); !slices.Equal(sorted(got), want) {
		t.Fatalf("services %v, want %v", got, want)
	}
	// Secrets: loading without each one fails and names it (no default in the file).
	for k := range composeEnv {
		env := map[string]string{}
		for k2, v := range composeEnv {
			if k2 != k {
				env[k2] = v
			}
		}
		if _, err := loadCompose(t, env); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("docker-compose.yml loads without %s: %v", k, err)
		}
	}
	// Published: only what a user opens, on loopback.
	published := map[string]uint32{}
	for name, s := range p.Services {
		for _, port := range s.Ports {
			if port.HostIP != "127.0.0.1" {
				t.Errorf("%s publishes %s:%s beyond loopback", name, port.HostIP, port.Published)
			}
			published[name] = port.Target
		}
	}
	if len(published) != 2 || published["grafana"] != 3000 || published["prometheus"] != 9090 {
		t.Errorf("published ports %v, want grafana 3000 and prometheus 9090 only", published)
	}
	// Mounted files exist (./runs is the seqgate service's output).
	root, _ := filepath.Abs("..")
	for name, s := range p.Services {
		for _, v := range s.Volumes {
			if v.Type != types.VolumeTypeBind || strings.HasPrefix(v.Source, filepath.Join(root, "runs")) {
				continue
			}
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("%s mounts %s: %v", name, v.Source, err)
			}
		}
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	eventlogdFlags := flagNames(t, buildBinary(t, ctx, dir, "eventlogd", "../cmd/eventlogd"), "-h")
	seqgateFlags := flagNames(t, buildBinary(t, ctx, dir, "seqgate", "../cmd/seqgate"), "run", "--help")

	// Pools and proxies: each pool (and the meta DB) is reached through the toxiproxy proxy of its name.
	proxies := map[string]string{} // name -> toxiproxy:port
	for _, px := range readToxiproxyConfig(t, p) {
		_, port, _ := net.SplitHostPort(px.Listen)
		proxies[px.Name] = "toxiproxy:" + port
		if px.Upstream != "mysql:3306" || !px.Enabled {
			t.Errorf("toxiproxy proxy %s: upstream %s enabled %v", px.Name, px.Upstream, px.Enabled)
		}
	}
	poolsFile := filepath.Join(dir, "pools.json")
	if err := os.WriteFile(poolsFile, []byte(p.Configs["pools"].Content), 0o644); err != nil {
		t.Fatal(err)
	}
	pools, err := store.LoadPools(poolsFile)
	if err != nil {
		t.Fatalf("pools config: %v", err)
	}
	for _, pl := range pools {
		if got := dsnAddr(pl.DSN); got != proxies[pl.ID] {
			t.Errorf("pool %s reaches %s, want its proxy %s", pl.ID, got, proxies[pl.ID])
		}
		if !strings.Contains(pl.DSN, composeEnv["MYSQL_ROOT_PASSWORD"]) {
			t.Errorf("pool %s DSN does not carry MYSQL_ROOT_PASSWORD", pl.ID)
		}
	}
	// The eventlogd pods.
	var targets []string
	for _, name := range []string{"eventlogd-1", "eventlogd-2", "eventlogd-3"} {
		s := p.Services[name]
		for _, e := range checkEventlogdService(s, eventlogdFlags, proxies["meta"]) {
			t.Errorf("%s: %s", name, e)
		}
		_, port, _ := net.SplitHostPort(cmdFlags(s.Command[1:])["listen"])
		targets = append(targets, name+":"+port)
	}
	// Control: the check catches a misspelt variable, an unknown flag, and admin without a token.
	bad := p.Services["eventlogd-1"]
	bad.Command = append(slices.Clone(bad.Command), "--no-such-flag", "1")
	bad.Environment = types.MappingWithEquals{"EVENTLOGD_ADMIN_TOKN": bad.Environment["EVENTLOGD_ADMIN_TOKEN"],
		"EVENTLOGD_META_DSN": bad.Environment["EVENTLOGD_META_DSN"]}
	errs := strings.Join(checkEventlogdService(bad, eventlogdFlags, proxies["meta"]), "\n")
	for _, want := range []string{"--no-such-flag", "EVENTLOGD_ADMIN_TOKN", "needs --admin-token"} {
		if !strings.Contains(errs, want) {
			t.Errorf("control: the service check missed %s:\n%s", want, errs)
		}
	}
	// Prometheus scrapes exactly those pods and loads the rules from the mounted rules directory.
	var pc struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	promSvc := p.Services["prometheus"]
	readYAML(t, mountSource(t, promSvc, "/etc/prometheus/prometheus.yml"), &pc)
	var scraped []string
	for _, sc := range pc.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			scraped = append(scraped, st.Targets...)
		}
	}
	if !slices.Equal(sorted(scraped), targets) {
		t.Errorf("prometheus scrapes %v, want %v", scraped, targets)
	}
	for _, rf := range pc.RuleFiles {
		if _, err := os.Stat(mountSource(t, promSvc, rf)); err != nil {
			t.Errorf("prometheus rule file %s: %v", rf, err)
		}
	}
	// Grafana: the generated dashboards and the stack's Prometheus.
	g := p.Services["grafana"]
	if pw := g.Environment["GF_SECURITY_ADMIN_PASSWORD"]; pw == nil || *pw != composeEnv["GRAFANA_ADMIN_PASSWORD"] {
		t.Errorf("grafana admin password not from GRAFANA_ADMIN_PASSWORD: %v", pw)
	}
	var prov struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, mountSource(t, g, "/etc/grafana/provisioning/dashboards/seqgate.yml"), &prov)
	if len(prov.Providers) != 1 || mountSource(t, g, prov.Providers[0].Options.Path) != filepath.Join(root, "dashboards", "grafana") {
		t.Errorf("grafana dashboards provider %+v does not load dashboards/grafana", prov)
	}
	var ds struct {
		Datasources []struct {
			UID  string `yaml:"uid"`
			Type string `yaml:"type"`
			URL  string `yaml:"url"`
		} `yaml:"datasources"`
	}
	readYAML(t, mountSource(t, g, "/etc/grafana/provisioning/datasources/seqgate.yml"), &ds)
	if len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" || ds.Datasources[0].URL != "http://prometheus:9090" {
		t.Errorf("grafana datasources %+v", ds)
	}
	// seqgate runs the mounted scenario against eventlogd-1, DB faults through the toxiproxy server.
	sg := p.Services["seqgate"]
	if len(sg.Command) < 3 || sg.Command[0] != "seqgate" || sg.Command[1] != "run" {
		t.Fatalf("seqgate command %v", sg.Command)
	}
	fl := cmdFlags(sg.Command[3:])
	for f := range fl {
		if !seqgateFlags[f] {
			t.Errorf("seqgate: --%s is not a seqgate run flag", f)
		}
	}
	if fl["target"] != "http://"+targets[0] || fl["toxiproxy"] != "http://toxiproxy:8474" {
		t.Errorf("seqgate --target %q --toxiproxy %q", fl["target"], fl["toxiproxy"])
	}
	if _, err := scenario.ReadFile(mountSource(t, sg, sg.Command[2])); err != nil {
		t.Errorf("seqgate scenario: %v", err)
	}
	tx := p.Services["toxiproxy"]
	if !slices.Contains(tx.Command, "-port=8474") || !slices.Contains(tx.Command, "-config="+tx.Configs[0].Target) {
		t.Errorf("toxiproxy command %v does not serve 8474 with its mounted config", tx.Command)
	}
}

// checkEventlogdService checks an eventlogd service against the binary's flags: its command's flags
// and EVENTLOGD_* variables exist, it mounts the pools config it names, reaches the meta DB through
// metaProxy, and serves --admin only behind the admin token from EVENTLOGD_ADMIN_TOKEN.
func checkEventlogdService(s types.ServiceConfig, flags map[string]bool, metaProxy string) []string {
	var errs []string
	if len(s.Command) == 0 || s.Command[0] != "eventlogd" {
		return []string{fmt.Sprintf("command %v does not run eventlogd", s.Command)}
	}
	fl := cmdFlags(s.Command[1:])
	for f := range fl {
		if !flags[f] {
			errs = append(errs, fmt.Sprintf("--%s is not an eventlogd flag", f))
		}
	}
	env := map[string]string{}
	for k, v := range s.Environment {
		if v == nil {
			errs = append(errs, k+" has no value")
			continue
		}
		env[k] = *v
		f, ok := strings.CutPrefix(k, "EVENTLOGD_")
		if !ok || !flags[strings.ReplaceAll(strings.ToLower(f), "_", "-")] {
			errs = append(errs, k+" is no eventlogd flag's variable")
		}
	}
	if fl["pod"] != s.Name || !slices.ContainsFunc(s.Configs, func(c types.ServiceConfigObjConfig) bool {
		return c.Source == "pools" && c.Target == fl["pools"]
	}) {
		errs = append(errs, fmt.Sprintf("--pod %q, --pools %q: not the service name and the mounted pools config", fl["pod"], fl["pools"]))
	}
	if got := dsnAddr(env["EVENTLOGD_META_DSN"]); got != metaProxy {
		errs = append(errs, fmt.Sprintf("meta DSN reaches %s, want %s", got, metaProxy))
	}
	if fl["admin"] != "true" {
		errs = append(errs, "no --admin: the admin token rule is not exercised")
	}
	if err := api.CheckAdminExposure(fl["listen"], fl["admin"] == "true", env["EVENTLOGD_ADMIN_TOKEN"]); err != nil {
		errs = append(errs, err.Error())
	}
	if env["EVENTLOGD_ADMIN_TOKEN"] != "" && env["EVENTLOGD_ADMIN_TOKEN"] != composeEnv["EVENTLOGD_ADMIN_TOKEN"] {
		errs = append(errs, "admin token not from EVENTLOGD_ADMIN_TOKEN")
	}
	return errs
}

// mountSource maps a path inside a service's container to the repository file bind-mounted there.
func mountSource(t *testing.T, s types.ServiceConfig, inContainer string) string {
	t.Helper()
	for _, v := range s.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		if inContainer == v.Target {
			return v.Source
		}
		if rest, ok := strings.CutPrefix(inContainer, v.Target+"/"); ok {
			return filepath.Join(v.Source, rest)
		}
	}
	t.Fatalf("%s: nothing is mounted at %s", s.Name, inContainer)
	return ""
}

func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}
