package verifier

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// metrics.max.<family> is the largest sample over pods and label sets, a family never scraped is
// absent (measures 0), and a threshold on it passes or fails the verdict.
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
