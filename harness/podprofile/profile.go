// Package podprofile says how to start one pod of a service: its binary, arguments and environment
// (with placeholders the run fills for each pod), how the pod says it is ready, where its metrics
// are, which counters explain a loss, how its tenants' databases are laid out, and whether it has
// admin hooks. The built-in profiles are part of the services seqgate ships (package harness/service,
// one file per service); a user writes one as a YAML file (Read). seqgate's own eventlogd pods start
// through the eventlogd profile, so every run exercises this path.
package podprofile

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Placeholders a profile's args and env may use; Expand fills them for each pod.
const (
	PhListen         = "{listen}"          // the pod's host:port (127.0.0.1:0 on a first start when ready.address_line is set)
	PhPod            = "{pod}"             // the pod's name: pod-1, pod-2...
	PhMetaDSN        = "{meta_dsn}"        // the run's meta database, through this pod's own meta proxy
	PhTenantDSN      = "{tenant_dsn}"      // layout admin_dsn: the tenant DB server through its proxy, no database named
	PhPoolsFile      = "{pools_file}"      // layout pools: the 0600 JSON file naming each pool and its DSN
	PhDataDir        = "{data_dir}"        // a directory of the run the pods may write (shared by every pod)
	PhRetention      = "{retention}"       // the scenario's pods.eventlogd.fs_events_retention, as a Go duration
	PhAdminToken     = "{admin_token}"     // the run's admin token (admin hooks)
	PhProvisionToken = "{provision_token}" // the run's provisioning token (sent as X-Provision-Token)
)

// Placeholders lists every placeholder, in the order the docs give them.
var Placeholders = []string{PhListen, PhPod, PhMetaDSN, PhTenantDSN, PhPoolsFile, PhDataDir, PhRetention, PhAdminToken, PhProvisionToken}

// secret placeholders carry a password or a token: they go in env, never in args (every local user
// can read a process's argv in /proc/PID/cmdline).
var secret = []string{PhMetaDSN, PhTenantDSN, PhAdminToken, PhProvisionToken}

// Layouts: how the pods reach their tenants' databases.
const (
	// LayoutPools: the run creates one database per pool (tenant_<n>, shared_pool), each behind its own
	// proxy, and names them in {pools_file}; the provision request names the pool (eventlogd).
	LayoutPools = "pools"
	// LayoutAdminDSN: the pods get one admin DSN ({tenant_dsn}) and create each tenant's database on
	// that server themselves, so every tenant sits behind one DB address and one proxy (drive9's
	// local provisioner).
	LayoutAdminDSN = "admin_dsn"
)

// TenantDBProxy is the proxy in front of the one tenant DB address of layout admin_dsn.
const TenantDBProxy = "tenant_db"

// Ready says how a pod tells the harness it serves.
type Ready struct {
	// AddressLine, when set, is the prefix of the stdout line on which the pod prints its bound
	// address ("listening on "): the first start gets {listen} = 127.0.0.1:0. Empty: the harness picks
	// a free port and the pod must listen on {listen}.
	AddressLine string `yaml:"address_line"`
	// Health is the path a GET must answer 200 on (default /healthz).
	Health string `yaml:"health"`
	// Timeout bounds the wait for one pod (default 30s).
	Timeout time.Duration `yaml:"timeout"`
	// Tenants bounds the wait, for all provisioned tenants together, until the service says each is
	// active, when --ready-timeout does not give it (0: the run's default, 60 s).
	Tenants time.Duration `yaml:"tenants"`
}

// Profile is how to start one pod of a service.
type Profile struct {
	Name string `yaml:"name"`
	// Binary is the executable when --pods-bin does not name one.
	Binary string            `yaml:"binary"`
	Args   []string          `yaml:"args"`
	Env    map[string]string `yaml:"env"`
	Ready  Ready             `yaml:"ready"`
	// Metrics is the path of the pod's Prometheus metrics (default /metrics).
	Metrics string `yaml:"metrics"`
	// LossCounters are the metric families whose increase explains a lost event (scraped every second).
	LossCounters []string `yaml:"loss_counters"`
	// Layout is LayoutPools or LayoutAdminDSN.
	Layout string `yaml:"layout"`
	// Target is the target profile (package harness/target) the pods speak: how they provision
	// tenants, report them active and where each tenant's events live.
	Target string `yaml:"target"`
	// AdminHooks: the pods serve eventlogd's --admin endpoints, so the faults that need one
	// (event_insert_fail, outbox_poller_stall, outbox_commit_delay) can be injected.
	AdminHooks bool `yaml:"admin_hooks"`
	// EventlogdFlags: the scenario's pods.eventlogd.defect and .flags are appended to the args (only a
	// profile that starts eventlogd understands them).
	EventlogdFlags bool `yaml:"eventlogd_flags"`

	file string // where the profile was read from ("" for a built-in)
}

// Check validates a profile written in Go (a service's built-in one) and fills its defaults;
// targets are the target profiles its Target may name.
func (p *Profile) Check(targets []string) error { return p.check(nil, targets) }

// File is where the profile was read from, or "" for a built-in one.
func (p *Profile) File() string { return p.file }

// HealthPath is the readiness path.
func (p *Profile) HealthPath() string { return p.Ready.Health }

// ReadyTimeout is the bound on one pod's start.
func (p *Profile) ReadyTimeout() time.Duration { return p.Ready.Timeout }

// MetricsPath is where the pod serves its metrics.
func (p *Profile) MetricsPath() string { return p.Metrics }

// Vars are the values of the placeholders for one pod.
type Vars map[string]string

// Expand returns the pod's arguments and its extra environment (KEY=VALUE, sorted by key), every
// placeholder replaced by its value in vars. A placeholder vars has no value for is an error naming it.
func (p *Profile) Expand(vars Vars) (args, env []string, err error) {
	fill := func(field, s string) (string, error) {
		var out strings.Builder
		rest := s
		for {
			i := strings.IndexByte(rest, '{')
			if i < 0 {
				out.WriteString(rest)
				return out.String(), nil
			}
			j := strings.IndexByte(rest[i:], '}')
			if j < 0 {
				out.WriteString(rest)
				return out.String(), nil
			}
			ph := rest[i : i+j+1]
			v, ok := vars[ph]
			if !ok {
				return "", fmt.Errorf("pod profile %s: %s: placeholder %s has no value in this run (layout %s)", p.Name, field, ph, p.Layout)
			}
			out.WriteString(rest[:i])
			out.WriteString(v)
			rest = rest[i+j+1:]
		}
	}
	for i, a := range p.Args {
		v, err := fill(fmt.Sprintf("args[%d]", i), a)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, v)
	}
	keys := make([]string, 0, len(p.Env))
	for k := range p.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := fill("env."+k, p.Env[k])
		if err != nil {
			return nil, nil, err
		}
		env = append(env, k+"="+v)
	}
	return args, env, nil
}

// Uses reports whether the profile's args or env use placeholder ph.
func (p *Profile) Uses(ph string) bool {
	for _, a := range p.Args {
		if strings.Contains(a, ph) {
			return true
		}
	}
	for _, v := range p.Env {
		if strings.Contains(v, ph) {
			return true
		}
	}
	return false
}

// fieldError is a profile error at a field; at finds its line in the file (0: unknown).
type fieldError struct {
	file  string
	line  int
	field string
	msg   string
}

func (e *fieldError) Error() string {
	where := e.file
	if where == "" {
		where = "pod profile"
	}
	if e.line > 0 {
		where = fmt.Sprintf("%s:%d", where, e.line)
	}
	return fmt.Sprintf("%s: %s: %s", where, e.field, e.msg)
}

// check validates the profile against the target profiles there are (targets); line finds a field's
// line (nil: none).
func (p *Profile) check(line func(path ...string) int, targets []string) error {
	at := func(path ...string) int {
		if line == nil {
			return 0
		}
		return line(path...)
	}
	bad := func(msg string, path ...string) error {
		return &fieldError{file: p.file, line: at(path...), field: strings.Join(path, "."), msg: msg}
	}
	if p.Name == "" {
		return bad("required (the profile's name, for the run record and messages)", "name")
	}
	if len(p.Args) == 0 && len(p.Env) == 0 {
		return bad("the profile gives the pod neither args nor env: it cannot tell the pod where to listen ({listen})", "args")
	}
	for i, a := range p.Args {
		if err := checkPlaceholders(a, false); err != nil {
			return bad(err.Error(), "args", fmt.Sprint(i))
		}
	}
	for k, v := range p.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return bad(fmt.Sprintf("%q is not an environment variable name", k), "env")
		}
		if err := checkPlaceholders(v, true); err != nil {
			return bad(err.Error(), "env", k)
		}
	}
	if !p.Uses(PhListen) {
		return bad("no arg or env uses {listen}: the pod would not listen where the harness looks", "args")
	}
	switch p.Layout {
	case "":
		return bad(fmt.Sprintf("required (allowed: %s, %s)", LayoutPools, LayoutAdminDSN), "layout")
	case LayoutPools:
		if p.Uses(PhTenantDSN) {
			return bad("{tenant_dsn} is for layout admin_dsn; layout pools names each pool's DSN in {pools_file}", "layout")
		}
	case LayoutAdminDSN:
		if p.Uses(PhPoolsFile) {
			return bad("{pools_file} is for layout pools; layout admin_dsn gives {tenant_dsn}", "layout")
		}
	default:
		return bad(fmt.Sprintf("%q: unknown (allowed: %s, %s)", p.Layout, LayoutPools, LayoutAdminDSN), "layout")
	}
	switch {
	case p.Target == "":
		return bad(fmt.Sprintf("required: the wire API the pods speak (allowed: %s)", strings.Join(targets, ", ")), "target")
	case !slices.Contains(targets, p.Target):
		return bad(fmt.Sprintf("%q: unknown (allowed: %s)", p.Target, strings.Join(targets, ", ")), "target")
	}
	if p.Ready.Health == "" {
		p.Ready.Health = "/healthz"
	}
	if !strings.HasPrefix(p.Ready.Health, "/") {
		return bad(fmt.Sprintf("%q: want a path starting with /", p.Ready.Health), "ready", "health")
	}
	if p.Ready.Timeout < 0 {
		return bad("want a positive duration", "ready", "timeout")
	}
	if p.Ready.Timeout == 0 {
		p.Ready.Timeout = 30 * time.Second
	}
	if p.Ready.Tenants < 0 {
		return bad("want a positive duration", "ready", "tenants")
	}
	if p.Metrics == "" {
		p.Metrics = "/metrics"
	}
	if !strings.HasPrefix(p.Metrics, "/") {
		return bad(fmt.Sprintf("%q: want a path starting with /", p.Metrics), "metrics")
	}
	for i, c := range p.LossCounters {
		if !validMetricName(c) {
			return bad(fmt.Sprintf("%q: not a Prometheus metric name", c), "loss_counters", fmt.Sprint(i))
		}
		if !strings.HasSuffix(c, "_retry_dropped_total") {
			return bad(fmt.Sprintf("%q: the verifier explains a loss only by a counter named *_retry_dropped_total, labelled tenant_id and reason (the ledger's rule); one of another name would be scraped and never explain a loss", c), "loss_counters", fmt.Sprint(i))
		}
	}
	return nil
}

// checkPlaceholders refuses an unknown or unclosed placeholder, and a secret one outside env.
func checkPlaceholders(s string, inEnv bool) error {
	rest := s
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return nil
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return fmt.Errorf("unclosed %q (placeholders: %s)", rest[i:], strings.Join(Placeholders, ", "))
		}
		ph := rest[i : i+j+1]
		if !slices.Contains(Placeholders, ph) {
			return fmt.Errorf("unknown placeholder %s (allowed: %s)", ph, strings.Join(Placeholders, ", "))
		}
		if !inEnv && slices.Contains(secret, ph) {
			return fmt.Errorf("%s carries a secret: put it in env, since every local user can read a process's arguments", ph)
		}
		rest = rest[i+j+1:]
	}
}

func validMetricName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// AdminHookKinds are the fault kinds made through eventlogd's --admin endpoints: a profile without
// admin_hooks cannot have them.
var AdminHookKinds = []string{"event_insert_fail", "outbox_commit_delay", "outbox_poller_stall", "tenant_delete"}

// Refuses says why the profile's pods cannot take fault kind, or "" when they can: a kind made
// through an admin hook needs a profile with admin_hooks.
func (p *Profile) Refuses(kind string) string {
	if p.AdminHooks || !slices.Contains(AdminHookKinds, kind) {
		return ""
	}
	return fmt.Sprintf("fault kind %s needs an admin hook (eventlogd's --admin endpoints), and the pod profile %s has none (admin_hooks: false): its service cannot be told to fail that way; drop the fault or use a profile with admin_hooks",
		kind, p.Name)
}
