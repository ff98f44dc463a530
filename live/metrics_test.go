package live

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
	"github.com/seqgate/seqgate/verifier/synth"
)

func TestMetricsFollowPrometheusConventions(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	// Give every vector a child, so the lint sees every family.
	m.Observe(&ledger.Record{K: ledger.KindMut, Res: ledger.ResTimeout, IntendedT: 1, T: 2})
	m.Observe(&ledger.Record{K: ledger.KindReset, Reason: "initial_sync", Consumer: "c", Tenant: "a"})
	m.Observe(&ledger.Record{K: ledger.KindFault, ID: "f", Kind: "pod_crash", Phase: "start"})
	m.anomalies.WithLabelValues("lost").Set(1)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	n, err := testutil.GatherAndCount(reg)
	if err != nil {
		t.Fatal(err)
	}
	if n < 11 {
		t.Errorf("%d series gathered, want every family (11)", n)
	}
	// The lint has teeth: a counter without _total is reported.
	bad := prometheus.NewRegistry()
	bad.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "seqgate_bad", Help: "x"}))
	if p, _ := testutil.GatherAndLint(bad); len(p) == 0 {
		t.Error("the lint found nothing wrong with a counter named without _total")
	}
}

func TestMetricsCount(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	recs := []ledger.Record{
		{K: ledger.KindConn, Consumer: "a/c1", Tenant: "a", Conn: "a/c1#1", Phase: "open"},
		{K: ledger.KindConn, Consumer: "a/c2", Tenant: "a", Conn: "a/c2#1", Phase: "open"},
		{K: ledger.KindMut, Res: ledger.ResOK, IntendedT: 1e9, T: 1.5e9},
		{K: ledger.KindMut, Res: ledger.ResOK, IntendedT: 2e9, T: 2e9},
		{K: ledger.KindMut, Res: ledger.ResTimeout, IntendedT: 3e9, T: 3e9},
		{K: ledger.KindDrop, IntendedT: 4e9},
		{K: ledger.KindEv, Consumer: "a/c1", Tenant: "a", Seq: 1},
		{K: ledger.KindEv, Consumer: "a/c1", Tenant: "a", Seq: 2},
		{K: ledger.KindEv, Consumer: "a/c2", Tenant: "a", Seq: 1},
		{K: ledger.KindFault, ID: "f1", Kind: "pod_crash", Phase: "start"},
		{K: ledger.KindFault, ID: "f2", Kind: "pod_crash", Phase: "start"},
		{K: ledger.KindFault, ID: "f1", Phase: "stop"},
		{K: ledger.KindFault, ID: "f9", Phase: "stop"}, // a stop without a start changes nothing
		{K: ledger.KindConn, Consumer: "a/c2", Tenant: "a", Conn: "a/c2#1", Phase: "fail"},
	}
	for i := range recs {
		m.Observe(&recs[i])
	}
	for _, c := range []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"offered", m.offered, 4}, {"acked", m.acked, 2}, {"failed timeout", m.failed.WithLabelValues("timeout"), 1},
		{"dropped", m.dropped, 1}, {"delivered", m.delivered, 3}, {"open connections", m.conns, 1},
		{"lag", m.lag, 1}, {"active pod_crash", m.faults.WithLabelValues("pod_crash"), 1},
	} {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%s = %g, want %g", c.name, got, c.want)
		}
	}
	// The consumer that was behind catches up: the lag goes back to 0.
	m.Observe(&ledger.Record{K: ledger.KindEv, Consumer: "a/c2", Tenant: "a", Seq: 2})
	if got := testutil.ToFloat64(m.lag); got != 0 {
		t.Errorf("lag after catching up = %g, want 0", got)
	}
	if err := testutil.CollectAndCompare(m.slip, strings.NewReader(`
# HELP seqgate_schedule_slip_seconds How late each mutation was sent after the time the schedule intended (coordinated omission shows here).
# TYPE seqgate_schedule_slip_seconds histogram
seqgate_schedule_slip_seconds_bucket{le="0.001"} 2
seqgate_schedule_slip_seconds_bucket{le="0.005"} 2
seqgate_schedule_slip_seconds_bucket{le="0.01"} 2
seqgate_schedule_slip_seconds_bucket{le="0.05"} 2
seqgate_schedule_slip_seconds_bucket{le="0.1"} 2
seqgate_schedule_slip_seconds_bucket{le="0.5"} 3
seqgate_schedule_slip_seconds_bucket{le="1"} 3
seqgate_schedule_slip_seconds_bucket{le="5"} 3
seqgate_schedule_slip_seconds_bucket{le="10"} 3
seqgate_schedule_slip_seconds_bucket{le="30"} 3
seqgate_schedule_slip_seconds_bucket{le="+Inf"} 3
seqgate_schedule_slip_seconds_sum 0.5
seqgate_schedule_slip_seconds_count 3
`)); err != nil {
		t.Error(err)
	}
}

// TestDocsListEveryMetric keeps docs/report.md's table of live metrics true to the code.
func TestDocsListEveryMetric(t *testing.T) {
	doc, err := os.ReadFile("../docs/report.md")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{"seqgate_mutations_failed_total": true, "seqgate_resets_received_total": true, "seqgate_faults_active": true, "seqgate_anomalies": true} // vectors with no child yet
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	for n := range names {
		if !strings.Contains(string(doc), "`"+n) {
			t.Errorf("docs/report.md does not list %s", n)
		}
	}
}

// TestShowVerdict: the anomaly gauges are the verifier's counts of a ledger with losses and skips;
// a clean ledger's verdict shows none, and no verdict changes nothing.
func TestShowVerdict(t *testing.T) {
	verify := func(cfg synth.Config) *verifier.Summary {
		var buf bytes.Buffer
		w := ledger.NewWriter(&buf)
		if _, err := synth.Generate(cfg, w); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := ledger.NewReader("synth", &buf)
		if err != nil {
			t.Fatal(err)
		}
		s, err := verifier.Verify(r, verifier.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.ShowVerdict(nil)
	if n := testutil.CollectAndCount(m.anomalies); n != 0 {
		t.Fatalf("no verdict yet: %d anomaly series", n)
	}
	s := verify(synth.Config{Seed: 3, Tenants: 3, ConsumersPerTenant: 2, Events: 2000, Lost: 2, Silent: 1, Skipped: 3})
	m.ShowVerdict(s)
	for _, c := range []struct {
		kind string
		want int64
	}{{"lost", s.Lost}, {"silent", s.LostByReason[verifier.ReasonSilent]}, {"skipped", s.Skipped}} {
		if c.want == 0 {
			t.Fatalf("the ledger has no %s: the test proves nothing", c.kind)
		}
		if got := testutil.ToFloat64(m.anomalies.WithLabelValues(c.kind)); got != float64(c.want) {
			t.Errorf("seqgate_anomalies{kind=%q} = %g, the verifier counts %d", c.kind, got, c.want)
		}
	}
	clean := prometheus.NewRegistry()
	mc, err := NewMetrics(clean)
	if err != nil {
		t.Fatal(err)
	}
	mc.ShowVerdict(verify(synth.Config{Seed: 3, Tenants: 3, ConsumersPerTenant: 2, Events: 2000}))
	if n := testutil.CollectAndCount(mc.anomalies); n != 0 {
		t.Errorf("clean run: %d anomaly series", n)
	}
}
