package verifier

import (
	"encoding/json"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func runLine(tenants, thresholds string) string {
	r := `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":` + tenants + `,"pods":["p1","p2"],"target":"eventlogd"`
	if thresholds != "" {
		r += `,"thresholds":` + thresholds
	}
	return r + "}"
}

const namedTenants = `[{"id":"A","mode":"dedicated","cold":false,"name":"tenant_1"},{"id":"B","mode":"shared","cold":false,"name":"tenant_2"}]`

// TestTenantNames: a run record that names its tenants makes the summary name them so everywhere
// (per_tenant keys, the tenant of per-consumer entries and of witnesses) with the id beside; a ledger
// without names, or with names that would merge two tenants, keeps the ids.
func TestTenantNames(t *testing.T) {
	lost := []string{"persA1", "evA1"} // m1 of tenant A is lost
	for _, tc := range []struct {
		name     string
		tenants  string
		keys     []string // per_tenant keys
		aName    string   // how tenant A is named
		warnings int
	}{
		{"named", namedTenants, []string{"tenant_1", "tenant_2"}, "tenant_1", 0},
		{"old ledger, no names", `[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":false}]`, []string{"A", "B"}, "A", 0},
		{"two tenants, one name", `[{"id":"A","mode":"dedicated","name":"x"},{"id":"B","mode":"shared","name":"x"}]`, []string{"A", "B"}, "A", 2},
		{"a name that is another tenant's id", `[{"id":"A","mode":"dedicated","name":"B"},{"id":"B","mode":"shared"}]`, []string{"A", "B"}, "A", 1},
		{"one named, one not", `[{"id":"A","mode":"dedicated","name":"tenant_1"},{"id":"B","mode":"shared"}]`, []string{"B", "tenant_1"}, "tenant_1", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, edit{drop: lost, replace: map[string]string{"run": runLine(tc.tenants, "")}}.build(), Options{})
			if got := slices.Sorted(maps.Keys(s.PerTenant)); !slices.Equal(got, tc.keys) {
				t.Fatalf("per_tenant keys %v, want %v", got, tc.keys)
			}
			a := s.PerTenant[tc.aName]
			if a.Tenant != tc.aName || a.TenantID != "A" || a.Lost != 1 {
				t.Errorf("per_tenant[%s] = tenant %q, tenant_id %q, lost %d; want %s, A, 1", tc.aName, a.Tenant, a.TenantID, a.Lost, tc.aName)
			}
			if c := s.PerConsumer["cA"]; c.Tenant != tc.aName || c.TenantID != "A" {
				t.Errorf("per_consumer[cA] tenant %q (%q), want %s (A)", c.Tenant, c.TenantID, tc.aName)
			}
			if w := s.Witnesses["lost"]; len(w) != 1 || w[0].(lostWitness).Tenant != tc.aName {
				t.Errorf("loss witnesses %+v, want one of tenant %s", w, tc.aName)
			}
			if len(s.Tenants) != 2 || s.Tenants[0] != (TenantInfo{Name: tc.aName, ID: "A", Mode: "dedicated"}) {
				t.Errorf("tenants %+v", s.Tenants)
			}
			n := 0
			for _, w := range s.Warnings {
				if strings.Contains(w, "not unique") {
					n++
				}
			}
			if n != tc.warnings {
				t.Errorf("%d naming warnings, want %d: %v", n, tc.warnings, s.Warnings)
			}
		})
	}
}

// TestThresholdByTenantName: a per-tenant threshold may name the tenant by its scenario name or by
// its id, and both judge the same numbers; a tenant the ledger does not have is unusable input.
func TestThresholdByTenantName(t *testing.T) {
	for _, tc := range []struct {
		name, tenants, th string
		broken            bool   // the threshold fails (tenant A lost one)
		unusable          string // else the error names this
	}{
		{"by name", namedTenants, `{"per_tenant.tenant_1.lost":["< 1"]}`, true, ""},
		{"by id", namedTenants, `{"per_tenant.A.lost":["< 1"]}`, true, ""},
		{"the other tenant by name (control)", namedTenants, `{"per_tenant.tenant_2.lost":["< 1"]}`, false, ""},
		{"unknown name", namedTenants, `{"per_tenant.tenant_3.lost":["< 1"]}`, false, `no tenant "tenant_3" (its tenants: tenant_1, tenant_2)`},
		{"a name an old ledger lacks", `[{"id":"A","mode":"dedicated"},{"id":"B","mode":"shared"}]`, `{"per_tenant.tenant_1.lost":["< 1"]}`, false, `no tenant "tenant_1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := edit{drop: []string{"persA1", "evA1"}, replace: map[string]string{"run": runLine(tc.tenants, tc.th)}}.build()
			r, err := newTestReader(text)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Verify(r, Options{})
			if tc.unusable != "" {
				var ue *UnusableError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.unusable) {
					t.Fatalf("error %v, want an unusable input naming %q", err, tc.unusable)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			broken := slices.ContainsFunc(s.FailedChecks, func(c string) bool { return strings.HasPrefix(c, "threshold:") })
			if broken != tc.broken {
				t.Errorf("failed checks %v: threshold broken = %v, want %v", s.FailedChecks, broken, tc.broken)
			}
		})
	}
}

// TestFaultTargetByName: a fault whose target is a tenant's scenario name (what the harness writes)
// affects that tenant only; with a ledger that does not name its tenants the same target matches no
// tenant and the fault counts for every tenant (the control).
func TestFaultTargetByName(t *testing.T) {
	fault := map[string][]string{"mutA1": {
		`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"tenant_1","phase":"start","t":2500000}`,
		`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"tenant_1","phase":"stop","t":3500000}`}}
	for _, tc := range []struct {
		tenants string
		want    string
	}{
		{namedTenants, "tenant_1"},
		{`[{"id":"A","mode":"dedicated"},{"id":"B","mode":"shared"}]`, "*"},
	} {
		s := verifyText(t, edit{after: fault, replace: map[string]string{"run": runLine(tc.tenants, "")}}.build(), Options{})
		if len(s.Faults) != 1 || !slices.Equal(s.Faults[0].Tenants, []string{tc.want}) {
			t.Errorf("tenants %s: faults %+v, want the fault to affect %s", tc.tenants, s.Faults, tc.want)
		}
	}
}

// TestGivenThresholds: thresholds given in Options replace the run record's expressions for their
// path and add new paths; the run record's other paths still judge; the summary records the gate used.
func TestGivenThresholds(t *testing.T) {
	run := runLine(namedTenants, `{"latency_ms.max":["< 0.5"],"duplicates":["== 0"]}`)
	for _, tc := range []struct {
		name   string
		given  map[string][]string
		failed []string
	}{
		{"the run record's gate", nil, []string{"threshold:latency_ms.max<0.5"}},
		{"a looser bound replaces it", map[string][]string{"latency_ms.max": {"< 500"}}, nil},
		{"an added bound judges too", map[string][]string{"latency_ms.max": {"< 500"}, "per_tenant.tenant_2.acked": {">= 2"}},
			[]string{"threshold:per_tenant.tenant_2.acked>=2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, edit{replace: map[string]string{"run": run}}.build(), Options{Thresholds: tc.given})
			if !slices.Equal(s.FailedChecks, tc.failed) {
				t.Errorf("failed %v, want %v", s.FailedChecks, tc.failed)
			}
			if got := s.Thresholds["duplicates"]; !slices.Equal(got, []string{"== 0"}) {
				t.Errorf("summary thresholds %v: the run record's duplicates bound is gone", s.Thresholds)
			}
			for p, e := range tc.given {
				if !slices.Equal(s.Thresholds[p], e) {
					t.Errorf("summary thresholds[%s] = %v, want %v", p, s.Thresholds[p], e)
				}
			}
		})
	}
	r, err := newTestReader(edit{}.build())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Verify(r, Options{Thresholds: map[string][]string{"nope": {"< 1"}}, ThresholdsFrom: "--threshold"})
	if err == nil || !strings.HasPrefix(err.Error(), `--threshold: threshold path "nope"`) {
		t.Errorf("error %v, want one naming --threshold", err)
	}
}

// TestNamesEverywhere: in a ledger that names its tenants, no per-tenant entry and no witness names a
// tenant by its id (a guard over every checker: drops, cold wakeups, losses, leaks, skips), while the
// same ledger without names is all ids (the control).
func TestNamesEverywhere(t *testing.T) {
	coldNamed := `[{"id":"A","mode":"dedicated","name":"tenant_1"},{"id":"B","mode":"shared","cold":true,"name":"tenant_2"}]`
	coldIDs := `[{"id":"A","mode":"dedicated"},{"id":"B","mode":"shared","cold":true}]`
	e := func(tenants string) edit {
		return edit{drop: []string{"persA1", "evA1", "evA2"},
			replace: map[string]string{"run": runLine(tenants, "")},
			after: map[string][]string{
				"openB": {`{"k":"proxy","name":"db_B","tenant":"B","t":0,"conns":1,"bytes_up":10,"bytes_down":10}`,
					`{"k":"drop","tenant":"A","intended_t":1500000,"block":"0"}`},
				"evB3": {`{"k":"proxy","name":"db_B","tenant":"B","t":7000000,"conns":1,"bytes_up":30,"bytes_down":10}`,
					`{"k":"ev","consumer":"cB","tenant":"B","conn":"c2","t":7000000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p1"}`}}}
	}
	idField := regexp.MustCompile(`"(tenant|consumer_tenant|owner_tenant)":"(A|B)"`)
	for _, tc := range []struct {
		tenants string
		keys    []string
		ids     bool // witnesses name tenants by id
	}{{coldNamed, []string{"tenant_1", "tenant_2"}, false}, {coldIDs, []string{"A", "B"}, true}} {
		s := verifyText(t, e(tc.tenants).build(), Options{})
		if got := slices.Sorted(maps.Keys(s.PerTenant)); !slices.Equal(got, tc.keys) {
			t.Errorf("per_tenant keys %v, want %v", got, tc.keys)
		}
		if s.ColdWakeups != 1 || s.Drops != 1 || s.Lost == 0 || s.Leaks == 0 {
			t.Fatalf("the anomalies did not happen: cold %d drops %d lost %d leaks %d", s.ColdWakeups, s.Drops, s.Lost, s.Leaks)
		}
		b, err := json.Marshal(s.Witnesses)
		if err != nil {
			t.Fatal(err)
		}
		if got := idField.Match(b); got != tc.ids {
			t.Errorf("tenants %s: witnesses name a tenant by id = %v, want %v:\n%s", tc.tenants, got, tc.ids, b)
		}
	}
}

// TestFaultReached: a tenant-DB fault whose start record lists the tenants it reached (a DB address
// every tenant shares) affects those tenants, named, in the summary; without the list the same fault
// affects its target only (the control); ids the run does not declare are left out.
func TestFaultReached(t *testing.T) {
	for _, tc := range []struct {
		name, reached string
		want          []string
	}{
		{"reached both", `,"reached":["A","B"]`, []string{"tenant_1", "tenant_2"}},
		{"no reached list", ``, []string{"tenant_1"}},
		{"an undeclared id", `,"reached":["A","nope","B"]`, []string{"tenant_1", "tenant_2"}},
	} {
		fault := map[string][]string{"mutA1": {
			`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"tenant_1","tenant":"A"` + tc.reached + `,"phase":"start","t":2500000}`,
			`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"tenant_1","phase":"stop","t":3500000}`}}
		s := verifyText(t, edit{after: fault, replace: map[string]string{"run": runLine(namedTenants, "")}}.build(), Options{})
		if len(s.Faults) != 1 || !slices.Equal(s.Faults[0].Tenants, tc.want) {
			t.Errorf("%s: faults %+v, want the fault to affect %v", tc.name, s.Faults, tc.want)
		}
		var tb strings.Builder
		if err := WriteText(&tb, s); err != nil {
			t.Fatal(err)
		}
		text := tb.String()
		if shown := strings.Contains(text, "tenant_1 (reached 2 tenants: tenant_1,tenant_2)"); shown != (len(tc.want) == 2) {
			t.Errorf("%s: summary.txt shows the reached tenants = %v:\n%s", tc.name, shown, text)
		}
	}
}
