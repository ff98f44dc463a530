package verifier

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// metrics.max.<family> is the largest sample over pods and label sets, a family never scraped is
// absent (measures 0: a threshold on it cannot fail, so the verdict is inconclusive, see
// TestMetricsMissing), and a threshold on it passes or fails the verdict.
func TestMetricsMaxAndItsThreshold(t *testing.T) {
	const fam = "drive9_tenant_outbox_backlog_oldest_age_seconds"
	samples := []string{
		`{"k":"metric","pod":"p1","t":1000000,"name":"` + fam + `","labels":{},"value":3}`,
		`{"k":"metric","pod":"p2","t":1000000,"name":"` + fam + `","labels":{},"value":41.5}`,
		`{"k":"metric","pod":"p1","t":2000000,"name":"` + fam + `","labels":{},"value":7}`,
		`{"k":"metric","pod":"p1","t":2000000,"name":"drive9_sse_event_retry_buffer_depth","labels":{},"value":0}`,
	}
	run := func(thresholds string) string {
		return strings.Replace(baseLedger[0].json, `"target":"eventlogd"`, `"target":"eventlogd","thresholds":`+thresholds, 1)
	}
	tests := []struct {
		name       string
		thresholds string
		samples    []string
		wantMax    float64
		wantFail   bool
	}{
		{"pinned outbox fails an upper bound", `{"metrics.max.` + fam + `":["< 30"]}`, samples, 41.5, true},
		{"bounded outbox passes", `{"metrics.max.` + fam + `":["< 60"]}`, samples, 41.5, false},
		{"never scraped measures 0", `{"metrics.max.` + fam + `":["< 30"]}`, samples[3:], 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, edit{replace: map[string]string{"run": run(tc.thresholds)}, after: map[string][]string{"openB": tc.samples}}.build(), Options{})
			if got := s.Metrics.Max[fam]; got != tc.wantMax {
				t.Errorf("metrics.max.%s = %g, want %g", fam, got, tc.wantMax)
			}
			failed := slices.Contains(s.FailedChecks, "threshold:metrics.max."+fam+"<30")
			if failed != tc.wantFail {
				t.Errorf("failed checks %v, want the threshold failed = %v", s.FailedChecks, tc.wantFail)
			}
		})
	}
}

// metrics.increase.<family> sums each series' growth from 0, across a restart's reset, over pods and
// label sets.
func TestMetricsIncrease(t *testing.T) {
	const fam = "drive9_sse_event_retry_dropped_total"
	m := func(pod, tenant string, v float64) string {
		return `{"k":"metric","pod":"` + pod + `","t":1000000,"name":"` + fam + `","labels":{"tenant_id":"` + tenant + `","reason":"tenant_cap"},"value":` + strconv.FormatFloat(v, 'g', -1, 64) + `}`
	}
	tests := []struct {
		name    string
		samples []string
		want    float64
	}{
		{"one series born mid-run", []string{m("p1", "A", 5), m("p1", "A", 9)}, 9},
		{"two pods, two tenants", []string{m("p1", "A", 5), m("p2", "A", 3), m("p1", "B", 2), m("p1", "A", 6)}, 11},
		{"a restart resets the counter", []string{m("p1", "A", 5), m("p1", "A", 8), m("p1", "A", 2), m("p1", "A", 4)}, 12},
		{"never scraped", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, edit{after: map[string][]string{"openB": tc.samples}}.build(), Options{})
			if got := s.Metrics.Increase[fam]; got != tc.want {
				t.Errorf("metrics.increase.%s = %g, want %g", fam, got, tc.want)
			}
		})
	}
}

// metric builds a metric record line.
func metric(pod, name, typ string, v float64, labels string) string {
	t := ""
	if typ != "" {
		t = `,"type":"` + typ + `"`
	}
	return `{"k":"metric","pod":"` + pod + `","t":1000000,"name":"` + name + `","labels":{` + labels + `},"value":` + strconv.FormatFloat(v, 'g', -1, 64) + t + `}`
}

// TestMetricKinds: a family is a counter or a gauge by its recorded TYPE, else by the _total suffix;
// a gauge gets max and last (the largest last sample of any series), never an increase; a counter gets
// its increase and no last.
func TestMetricKinds(t *testing.T) {
	samples := []string{
		// a gauge whose name ends in _total: the recorded TYPE wins over the suffix
		metric("p1", "odd_total", "gauge", 5, ""), metric("p1", "odd_total", "gauge", 2, ""),
		// an old ledger's counter: no type, _total suffix
		metric("p1", "drops_total", "", 3, ""), metric("p1", "drops_total", "", 4, ""),
		// untyped, no suffix: a gauge; two pods end at 3 and 4 (last 4: the highest level a pod ended at)
		metric("p1", "depth", "untyped", 9, ""), metric("p1", "depth", "untyped", 3, ""), metric("p2", "depth", "untyped", 4, ""),
		// untyped with the suffix: a counter
		metric("p1", "flush_total", "untyped", 1, ""), metric("p1", "flush_total", "untyped", 6, ""),
	}
	s := verifyText(t, edit{after: map[string][]string{"openB": samples}}.build(), Options{})
	m := s.Metrics
	for _, tc := range []struct {
		name, kind          string
		max, last, increase float64
	}{
		{"odd_total", MetricGauge, 5, 2, 0},
		{"drops_total", MetricCounter, 4, 0, 4},
		{"depth", MetricGauge, 9, 4, 0},
		{"flush_total", MetricCounter, 6, 0, 6},
	} {
		_, hasLast := m.Last[tc.name]
		_, hasInc := m.Increase[tc.name]
		if m.Types[tc.name] != tc.kind || m.Max[tc.name] != tc.max || m.Last[tc.name] != tc.last || m.Increase[tc.name] != tc.increase ||
			hasLast != (tc.kind == MetricGauge) || hasInc != (tc.kind == MetricCounter) {
			t.Errorf("%s: type %q max %g last %g (%v) increase %g (%v); want %s, %g, %g, %g", tc.name, m.Types[tc.name], m.Max[tc.name],
				m.Last[tc.name], hasLast, m.Increase[tc.name], hasInc, tc.kind, tc.max, tc.last, tc.increase)
		}
	}
	if s.Verdict != VerdictPass {
		t.Errorf("verdict %s %v", s.Verdict, s.InconclusiveBecause)
	}
}

// TestMetricsMissing: a family the scenario's metrics: names, or a threshold bounds, with no sample
// from any pod makes the verdict inconclusive, naming it; the same run with the family exported passes
// (the control). A threshold on a gauge's increase or a counter's last is unusable input, named.
func TestMetricsMissing(t *testing.T) {
	run := func(metrics, thresholds string) string {
		r := strings.Replace(baseLedger[0].json, `"target":"eventlogd"`, `"target":"eventlogd","metrics":`+metrics, 1)
		if thresholds != "" {
			r = strings.Replace(r, `"target":"eventlogd"`, `"target":"eventlogd","thresholds":`+thresholds, 1)
		}
		return r
	}
	flush := metric("p1", "drive9_sse_event_retry_flush_total", "counter", 2, "")
	depth := metric("p1", "depth", "gauge", 2, "")
	for _, tc := range []struct {
		name, metrics, thresholds string
		samples                   []string
		verdict                   string
		why                       string // in inconclusive_because
		unusable                  string
	}{
		{"named, exported", `["drive9_sse_event_retry_flush_total"]`, "", []string{flush}, VerdictPass, "", ""},
		{"named, never exported", `["drive9_sse_event_retry_flush_total"]`, "", nil, VerdictInconclusive,
			"metrics: no pod exported a sample of drive9_sse_event_retry_flush_total, which the scenario's metrics: names", ""},
		{"bounded, never exported", `[]`, `{"metrics.max.nope":["< 5"]}`, []string{flush}, VerdictInconclusive,
			"metrics: no pod exported a sample of nope, which threshold metrics.max.nope bounds", ""},
		{"a gauge's increase", `[]`, `{"metrics.increase.depth":["< 5"]}`, []string{depth}, "", "",
			`threshold "metrics.increase.depth": depth is a gauge, which has no increase; bound metrics.max.depth or metrics.last.depth`},
		{"a counter's last", `[]`, `{"metrics.last.drive9_sse_event_retry_flush_total":["< 5"]}`, []string{flush}, "", "",
			`drive9_sse_event_retry_flush_total is a counter, which has no last level`},
		{"a gauge's last, kept", `[]`, `{"metrics.last.depth":["< 5"]}`, []string{depth}, VerdictPass, "", ""},
		{"a metric per tenant", `[]`, `{"per_tenant.A.metrics.max.depth":["< 5"]}`, []string{depth}, "", "",
			`threshold "per_tenant.A.metrics.max.depth": metrics are summarised over the whole run, not per tenant or consumer; bound metrics.max.depth`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := edit{replace: map[string]string{"run": run(tc.metrics, tc.thresholds)}, after: map[string][]string{"openB": tc.samples}}.build()
			r, err := newTestReader(text)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Verify(r, Options{})
			if tc.unusable != "" {
				if err == nil || !strings.Contains(err.Error(), tc.unusable) {
					t.Fatalf("error %v, want %q", err, tc.unusable)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Verdict != tc.verdict {
				t.Errorf("verdict %s (%v), want %s", s.Verdict, s.InconclusiveBecause, tc.verdict)
			}
			if tc.why != "" && !slices.ContainsFunc(s.InconclusiveBecause, func(w string) bool { return strings.HasPrefix(w, tc.why) }) {
				t.Errorf("inconclusive_because %v lacks %q", s.InconclusiveBecause, tc.why)
			}
			if tc.why != "" {
				var b strings.Builder
				if err := WriteText(&b, s); err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(b.String(), "\n")
				if !strings.HasPrefix(lines[1], "not judged: metrics_exported: measured 1, want == 0 (no sample from any pod: ") ||
					!strings.HasPrefix(lines[2], "inconclusive because: "+tc.why) {
					t.Errorf("the reason is not right under the verdict:\n%s", b.String())
				}
			}
		})
	}
}
