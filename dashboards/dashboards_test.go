package dashboards

//lint:file-ignore SA1019 the v1 dashboard model is what Grafana's file provisioning loads (see render.go)

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/seqgate/seqgate/live"
	"go.yaml.in/yaml/v3"

	"github.com/seqgate/seqgate/reference-impl/metrics"
)

var update = flag.Bool("update", false, "rewrite grafana/*.json from the code")

// TestGeneratedJSONIsCurrent regenerates every dashboard and compares it with the committed JSON
// that Grafana provisions: a change to the code must come with `go generate ./dashboards`.
func TestGeneratedJSONIsCurrent(t *testing.T) {
	plugins.RegisterDefaultPlugins() // panels and queries unmarshal into their typed models
	files, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	committed, _ := filepath.Glob("grafana/*.json")
	if len(committed) != len(files) {
		t.Errorf("grafana/ holds %v, the code builds %d dashboards", committed, len(files))
	}
	for name, b := range files {
		path := filepath.Join("grafana", name)
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go generate ./dashboards)", err)
		}
		if !bytes.Equal(old, b) {
			t.Errorf("%s differs from what the code builds: run go generate ./dashboards", path)
		}
		var d struct {
			UID    string `json:"uid"`
			Title  string `json:"title"`
			Panels []struct {
				ID   int    `json:"id"`
				Type string `json:"type"`
			} `json:"panels"`
		}
		if err := json.Unmarshal(old, &d); err != nil || d.UID == "" || d.Title == "" || len(d.Panels) < 5 {
			t.Errorf("%s: uid %q title %q panels %d (%v)", path, d.UID, d.Title, len(d.Panels), err)
		}
		// The committed JSON reads back into the SDK's dashboard model and passes its validation.
		var model dashboard.Dashboard
		if err := json.Unmarshal(old, &model); err != nil {
			t.Errorf("%s: not a dashboard: %v", path, err)
		} else if err := model.Validate(); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		seen := map[int]bool{}
		for _, p := range d.Panels {
			if p.ID == 0 || seen[p.ID] {
				t.Errorf("%s: panel id %d missing or repeated", path, p.ID)
			}
			seen[p.ID] = true
		}
	}
}

// nameRecorder is a Registerer that keeps the fully-qualified name of every metric described to it:
// what a registry would expose, including vectors that have no child yet (Gather would omit them).
type nameRecorder map[string]bool

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r nameRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			r[m[1]] = true
		}
	}
	return nil
}

func (r nameRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r nameRecorder) Unregister(prometheus.Collector) bool { return false }

// registered is every metric name an eventlogd pod exports: its instruments (metrics.New), the Go
// and process collectors api.New adds, and what Prometheus itself makes (up, ALERTS). Histograms
// (found by the instrument's Go type) also export their _bucket, _sum and _count series.
func registered() nameRecorder {
	r := nameRecorder{"up": true, "ALERTS": true, "ALERTS_FOR_STATE": true}
	m := metrics.New(r)
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// seqgate run --metrics-addr's own metrics, which the run dashboard shows beside the pods'.
	if _, err := live.NewMetrics(r); err != nil {
		panic(err)
	}
	r["seqgate_schedule_slip_seconds_bucket"], r["seqgate_schedule_slip_seconds_sum"], r["seqgate_schedule_slip_seconds_count"] = true, true, true
	hist := nameRecorder{}
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		switch c := v.Field(i).Interface().(type) {
		case prometheus.Histogram:
			hist.MustRegister(c)
		case *prometheus.HistogramVec:
			hist.MustRegister(c)
		}
	}
	for h := range hist {
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			r[h+suf] = true
		}
	}
	return r
}

// ruleFile is the part of a Prometheus rule file the tests read.
type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Record string            `yaml:"record"`
			Alert  string            `yaml:"alert"`
			Expr   string            `yaml:"expr"`
			For    string            `yaml:"for"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readRules(t *testing.T, path string) ruleFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rf
}

// exprs collects every "expr" string of a dashboard's JSON (panel targets and annotations).
func exprs(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "expr" {
				*out = append(*out, s)
			}
			exprs(e, out)
		}
	case []any:
		for _, e := range x {
			exprs(e, out)
		}
	}
}

// unknownMetrics returns the names expr selects that are neither registered nor recorded.
func unknownMetrics(expr string, known nameRecorder, recorded map[string]bool) ([]string, error) {
	names, err := metricNames(expr)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, n := range names {
		if !known[n] && !recorded[n] {
			bad = append(bad, n)
		}
	}
	return bad, nil
}

// TestQueriesNameRegisteredMetrics checks every metric a dashboard query or a rule names against the
// metrics eventlogd really registers, and the recording rules the rule file defines.
func TestQueriesNameRegisteredMetrics(t *testing.T) {
	known := registered()
	rf := readRules(t, "rules/eventlogd.rules.yml")
	recorded := map[string]bool{}
	type src struct{ where, expr string }
	var all []src
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				recorded[r.Record] = true
			}
			all = append(all, src{"rules/eventlogd.rules.yml " + g.Name + "/" + r.Record + r.Alert, r.Expr})
		}
	}
	files, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var v any
		if err := json.Unmarshal(files[n], &v); err != nil {
			t.Fatal(err)
		}
		var es []string
		exprs(v, &es)
		if len(es) < 10 {
			t.Errorf("%s: only %d queries found", n, len(es))
		}
		for _, e := range es {
			all = append(all, src{n, e})
		}
	}
	used := map[string]bool{}
	for _, s := range all {
		bad, err := unknownMetrics(s.expr, known, recorded)
		if err != nil {
			t.Errorf("%s: %v", s.where, err)
		}
		if len(bad) > 0 {
			t.Errorf("%s: %q names metrics eventlogd does not register: %v", s.where, s.expr, bad)
		}
		ns, _ := metricNames(s.expr)
		for _, n := range ns {
			used[n] = true
		}
	}
	// The service's SLIs are all on a dashboard or in a rule.
	for _, m := range []string{"eventlogd_event_insert_results_total", "drive9_sse_event_retry_buffer_depth",
		"drive9_sse_event_retry_flush_total", "drive9_sse_event_retry_dropped_total", "drive9_sse_resets_sent_total",
		"drive9_tenant_outbox_backlog_oldest_age_seconds", "eventlogd_event_retry_buffer_residency_seconds_bucket",
		"drive9_sse_inflight_connections", "eventlogd_sse_replay_handoffs_total"} {
		if !used[m] {
			t.Errorf("no query uses %s", m)
		}
	}
	// Negative control: a misspelt metric and a histogram suffix on a counter are caught.
	for _, e := range []string{`rate(drive9_sse_event_retry_droped_total[5m])`, `eventlogd_mutations_total_bucket`, `eventlogd:nope`} {
		if bad, _ := unknownMetrics(e, known, recorded); len(bad) != 1 {
			t.Errorf("control %q: unknown = %v, want one", e, bad)
		}
	}
}
