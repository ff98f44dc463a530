package verifier

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier/synth"
)

// idleLedger is baseLedger with a third tenant C, named in the run record, that has nothing but a
// durable consumer cC that never got a frame: C and cC are idle.
func idleLedger() string {
	run := runLine(`[{"id":"A","mode":"dedicated"},{"id":"B","mode":"shared"},{"id":"C","mode":"dedicated","name":"tenant_3"}]`, "")
	return edit{replace: map[string]string{"run": run}, after: map[string][]string{"consB": {
		`{"k":"consumer","consumer":"cC","tenant":"C","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":0,"durable":true}`,
	}}}.build()
}

// TestIdleScopesCounted: an idle tenant and an idle consumer have no per_tenant or per_consumer
// entry and are counted in per_tenant_idle and per_consumer_idle; the busy ones keep theirs, and the
// tenants list still names every tenant. The control: the base ledger, where every tenant is busy,
// has no idle count (and no such field in its JSON).
func TestIdleScopesCounted(t *testing.T) {
	for _, tc := range []struct {
		name               string
		ledger             string
		tenants, consumers []string
		idleTen, idleCons  int64
		listed             int
	}{
		{"every tenant busy", edit{}.build(), []string{"A", "B"}, []string{"cA", "cB"}, 0, 0, 2},
		{"an idle tenant and consumer", idleLedger(), []string{"A", "B"}, []string{"cA", "cB"}, 1, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, tc.ledger, Options{})
			if got := slices.Sorted(maps.Keys(s.PerTenant)); !slices.Equal(got, tc.tenants) {
				t.Errorf("per_tenant %v, want %v", got, tc.tenants)
			}
			if got := slices.Sorted(maps.Keys(s.PerConsumer)); !slices.Equal(got, tc.consumers) {
				t.Errorf("per_consumer %v, want %v", got, tc.consumers)
			}
			if s.PerTenantIdle != tc.idleTen || s.PerConsumerIdle != tc.idleCons {
				t.Errorf("idle %d tenants, %d consumers; want %d, %d", s.PerTenantIdle, s.PerConsumerIdle, tc.idleTen, tc.idleCons)
			}
			if len(s.Tenants) != tc.listed {
				t.Errorf("tenants lists %d, want %d", len(s.Tenants), tc.listed)
			}
			var b bytes.Buffer
			if err := WriteJSON(&b, s); err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(b.String(), `"per_tenant_idle"`); has != (tc.idleTen > 0) {
				t.Errorf("summary JSON has per_tenant_idle: %v, want %v", has, tc.idleTen > 0)
			}
			if s.Verdict != VerdictPass {
				t.Errorf("verdict %s (%v), want pass: an idle tenant is no anomaly", s.Verdict, s.FailedChecks)
			}
		})
	}
}

// TestThresholdOnIdleScope: a threshold on an idle tenant's or consumer's field judges its numbers as
// zeros, by the tenant's name or its id: one that 0 satisfies holds, one that 0 breaks fails the run.
// A tenant or consumer the ledger does not have is still refused.
func TestThresholdOnIdleScope(t *testing.T) {
	for _, tc := range []struct {
		name   string
		th     map[string][]string
		failed []string
	}{
		{"holds by name", map[string][]string{"per_tenant.tenant_3.acked": {"== 0"}, "per_tenant.tenant_3.lost_by_reason.silent": {"== 0"}}, nil},
		{"holds by id", map[string][]string{"per_tenant.C.mutations": {"< 1"}}, nil},
		{"broken by name", map[string][]string{"per_tenant.tenant_3.acked": {">= 1"}}, []string{"threshold:per_tenant.tenant_3.acked>=1"}},
		{"broken by id", map[string][]string{"per_tenant.C.deliveries": {"> 0"}}, []string{"threshold:per_tenant.C.deliveries>0"}},
		{"consumer holds", map[string][]string{"per_consumer.cC.skipped": {"== 0"}}, nil},
		{"consumer broken", map[string][]string{"per_consumer.cC.deliveries": {">= 1"}}, []string{"threshold:per_consumer.cC.deliveries>=1"}},
		{"busy tenant broken (control)", map[string][]string{"per_tenant.A.acked": {"< 2"}}, []string{"threshold:per_tenant.A.acked<2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := verifyText(t, idleLedger(), Options{Thresholds: tc.th})
			if !slices.Equal(s.FailedChecks, tc.failed) {
				t.Errorf("failed %v, want %v", s.FailedChecks, tc.failed)
			}
			if s.PerTenantIdle != 1 {
				t.Errorf("per_tenant_idle %d, want 1", s.PerTenantIdle)
			}
			for _, c := range s.Checks {
				if strings.HasPrefix(c.Name, "threshold:per_") && strings.Contains(c.Name, "_3.") && c.Measured != 0 {
					t.Errorf("%s measured %g, want 0", c.Name, c.Measured)
				}
			}
		})
	}
	for _, path := range []string{"per_tenant.tenant_9.acked", "per_consumer.cZ.skipped"} {
		r, err := newTestReader(idleLedger())
		if err != nil {
			t.Fatal(err)
		}
		_, err = Verify(r, Options{Thresholds: map[string][]string{path: {"== 0"}}})
		if err == nil || !strings.Contains(err.Error(), "the ledger has no") {
			t.Errorf("%s: error %v, want one saying the ledger has no such scope", path, err)
		}
	}
}

// TestIsIdle: an entry is idle only when every number in it is 0, nested and mapped ones included.
func TestIsIdle(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   func(*Stats)
		idle bool
	}{
		{"fresh", func(*Stats) {}, true},
		{"named, zero reasons", func(st *Stats) { st.Tenant, st.LostByReason["crash"], st.LostByReason["silent"] = "x", 0, 0 }, true},
		{"acked", func(st *Stats) { st.Acked = 1 }, false},
		{"a fraction", func(st *Stats) { st.LossUpper95 = 0.5 }, false},
		{"nested", func(st *Stats) { st.Reorder.MaxMs = 1 }, false},
		{"deeper", func(st *Stats) { st.Reconnects.Opens = 1 }, false},
		{"a reset reason", func(st *Stats) { st.ResetsByReason["seq_too_old"] = 1 }, false},
		{"a latency count", func(st *Stats) { st.LatencyMs.Count = 1 }, false},
		{"a metric", func(st *Stats) { st.Metrics.Max = map[string]float64{"f": 2} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStats()
			tc.st(st)
			if got := isIdle(st); got != tc.idle {
				t.Errorf("isIdle = %v, want %v", got, tc.idle)
			}
		})
	}
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// TestIdleTenantsSummarySize: a run of 100,000 tenants, one busy and the rest named in tenant records
// and silent, writes a summary.json of at most 16 MiB (it was 147 MiB with a block of zeros per
// tenant), with one per_tenant entry and 99,999 counted idle; a threshold on an idle tenant is
// judged. What is measured is the summary's size, not the time it takes.
func TestIdleTenantsSummarySize(t *testing.T) {
	const tenants = 100_000
	var buf bytes.Buffer
	w := ledger.NewWriter(&buf)
	if _, err := synth.Generate(synth.Config{Seed: 1, Tenants: 1, ConsumersPerTenant: 1, Events: 200, Idle: tenants - 1}, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := ledger.NewReader("idle.jsonl", &buf)
	if err != nil {
		t.Fatal(err)
	}
	last := "t" + strconv.Itoa(tenants-1)
	s, err := Verify(r, Options{Thresholds: map[string][]string{
		"per_tenant." + last + ".acked": {"== 0"}, // holds: an idle tenant's acked is 0
		"per_tenant.t5.ok":              {"> 0"},  // broken: t5 wrote nothing
	}})
	if err != nil {
		t.Fatal(err)
	}
	var size countingWriter
	if err := WriteJSON(&size, s); err != nil {
		t.Fatal(err)
	}
	if size.n > 16<<20 {
		t.Errorf("summary.json of %d tenants is %d bytes, over 16 MiB", tenants, size.n)
	}
	if len(s.Tenants) != tenants || len(s.PerTenant) != 1 || s.PerTenantIdle != tenants-1 {
		t.Errorf("tenants %d, per_tenant %d, per_tenant_idle %d; want %d, 1, %d", len(s.Tenants), len(s.PerTenant), s.PerTenantIdle, tenants, tenants-1)
	}
	if want := []string{"threshold:per_tenant.t5.ok>0"}; !slices.Equal(s.FailedChecks, want) {
		t.Errorf("failed %v, want %v", s.FailedChecks, want)
	}
	t.Logf("summary.json of %d tenants: %d bytes", tenants, size.n)
}
