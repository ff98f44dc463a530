package run

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// jsonKeys collects every object key of a JSON document, nested ones included.
func jsonKeys(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			into[k] = true
			jsonKeys(sub, into)
		}
	case []any:
		for _, sub := range x {
			jsonKeys(sub, into)
		}
	}
}

// TestResultFileMatchesDocs: docs/run.md's row for result.json names every field result.json has
// (nested ones too), and result.json has every field the row names, also when a run had no drops, no
// fault error and no audit (no field is left out for being zero).
func TestResultFileMatchesDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/run.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "| `result.json` |") {
			row = strings.TrimPrefix(l, "| `result.json` |")
		}
	}
	if row == "" {
		t.Fatal("docs/run.md has no | `result.json` | row")
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`\"?([a-z_]+)\"?`").FindAllStringSubmatch(row, -1) {
		documented[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`"([a-z_]+)"`).FindAllStringSubmatch(row, -1) {
		documented[m[1]] = true
	}
	for name, res := range map[string]*Result{
		"empty": {},
		"full": {RunID: "r", Tenants: []TenantName{{Name: "tenant_1", ID: "x"}}, DroppedByTenant: map[string]int64{"tenant_1": 2},
			FaultErr: errors.New("boom"), Audit: &AuditResult{OK: true}, ScheduledSeconds: 10, LoadSeconds: 10.2, Offered: 100},
	} {
		b, err := json.Marshal(res.file())
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		jsonKeys(v, keys)
		for k := range keys {
			if !documented[k] && k != "tenant_1" {
				t.Errorf("%s: result.json has %q, which docs/run.md does not list", name, k)
			}
		}
		for _, k := range []string{"run_id", "interrupted", "drained", "fault_error", "tenants", "offered", "offered_per_s",
			"dropped", "dropped_by_tenant", "acked", "acked_per_s", "events_delivered", "scheduled_seconds", "load_seconds",
			"wall_seconds", "audit", "resyncs", "resyncs_failed", "entries_listed", "listing_seconds"} {
			if _, ok := v[k]; !ok {
				t.Errorf("%s: result.json lacks %q (has %v)", name, k, slices.Sorted(maps.Keys(v)))
			}
			if !documented[k] {
				t.Errorf("docs/run.md's result.json row does not name %q", k)
			}
		}
	}
}

// TestPerSecondUsesScheduledDuration: the offered rate agrees with the configured rate when the load
// phase ran a little longer than scheduled, and divides by the elapsed time only when it was cut short.
func TestPerSecondUsesScheduledDuration(t *testing.T) {
	for _, tt := range []struct {
		name            string
		scheduled, load float64
		n               int64
		want            float64
	}{
		{"ran a little long", 30, 30.25, 30000, 1000},
		{"cut short", 30, 10, 10000, 1000},
		{"no schedule known", 0, 20, 1000, 50},
		{"nothing ran", 0, 0, 0, 0},
	} {
		res := &Result{ScheduledSeconds: tt.scheduled, LoadSeconds: tt.load}
		if got := res.PerSecond(tt.n); got != tt.want {
			t.Errorf("%s: PerSecond(%d) = %g, want %g", tt.name, tt.n, got, tt.want)
		}
	}
}
