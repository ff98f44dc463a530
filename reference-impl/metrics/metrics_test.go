package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestFixedLabelFamiliesExportedAtZero: the families whose labels come from a fixed list are on
// /metrics from the start, at 0, so a scraper can tell them from a family the service lacks; a
// per-tenant vector is not (its labels are unbounded until tenants exist): the control.
func TestFixedLabelFamiliesExportedAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			if c := m.GetCounter(); c != nil && c.GetValue() != 0 {
				t.Errorf("%s starts at %g", f.GetName(), c.GetValue())
			}
			series[f.GetName()]++
		}
	}
	for name, want := range map[string]int{"drive9_sse_event_retry_flush_total": 4, "eventlogd_event_insert_results_total": 4,
		"eventlogd_event_insert_attempts_total": 2, "drive9_sse_event_retry_dropped_total": 0} {
		if series[name] != want {
			t.Errorf("%s: %d series at start, want %d", name, series[name], want)
		}
	}
}
