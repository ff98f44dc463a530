package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/child"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/proccpu"
	"github.com/seqgate/seqgate/ledger"
)

func TestParseValues(t *testing.T) {
	for _, c := range []struct {
		list, ramp string
		steps      int
		want       []float64
		err        string
	}{
		{list: "100, 200,400", want: []float64{100, 200, 400}},
		{ramp: "100:2", steps: 4, want: []float64{100, 200, 400, 800}},
		{list: "100,100", err: "must increase"},
		{list: "100,-5", err: `"-5"`},
		{list: "1,x", err: `"x"`},
		{ramp: "100:1", steps: 3, err: "FACTOR > 1"},
		{ramp: "100", steps: 3, err: "START:FACTOR"},
		{ramp: "100:2", steps: 99, err: "--steps 99"},
		{list: "1", ramp: "1:2", err: "not both"},
		{err: "give the steps"},
	} {
		got, err := ParseValues(c.list, c.ramp, c.steps)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q %q: error %v, want %q", c.list, c.ramp, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q %q: %v %v", c.list, c.ramp, got, err)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-9 {
				t.Errorf("%q %q: %v, want %v", c.list, c.ramp, got, c.want)
			}
		}
	}
}

const sweepBase = `name: sw
seed: 1
duration: 10s
drain_timeout: 5s
tenants:
  - {group: cold, count: 1, mode: dedicated, cold: true}
  - {group: a, count: 3, mode: dedicated}
  - {group: b, count: 1, mode: shared}
pods:
  count: 2
load:
  - {tenants: a, executor: constant-arrival-rate, rate: 10}
  - {tenants: b, executor: ramping-arrival-rate, start_rate: 5, stages: [{target: 20, duration: 5s}]}
consumers:
  - count: 1
`

func TestSetsScaleEveryBlock(t *testing.T) {
	sc, err := scenario.Parse("sw.yaml", []byte(sweepBase))
	if err != nil {
		t.Fatal(err)
	}
	if got := OfferedRate(sc); got != 50 { // 3 x 10 + 1 x 20 (ramping at its highest target)
		t.Fatalf("OfferedRate = %g, want 50", got)
	}
	for _, c := range []struct {
		axis  Axis
		v     float64
		group string
		check func(*scenario.Scenario) bool
		err   string
	}{
		{axis: AxisRate, v: 100, check: func(s *scenario.Scenario) bool {
			return s.Load[0].Rate == 20 && s.Load[1].StartRate == 10 && s.Load[1].Stages[0].Target == 40 && OfferedRate(s) == 100
		}},
		{axis: AxisPods, v: 5, check: func(s *scenario.Scenario) bool { return s.Pods.Count == 5 }},
		{axis: AxisTenants, v: 7, check: func(s *scenario.Scenario) bool { return s.Tenants[1].Count == 7 && s.Tenants[0].Count == 1 }},
		{axis: AxisTenants, v: 4, group: "b", check: func(s *scenario.Scenario) bool { return s.Tenants[2].Count == 4 }},
		{axis: AxisTenants, v: 4, group: "zz", err: `no tenant group "zz"`},
		{axis: AxisPods, v: 2.5, err: "whole number"},
		{axis: "cpu", v: 1, err: "rate, pods or tenants"},
	} {
		sets, err := Sets(sc, c.axis, c.v, c.group)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %g: error %v, want %q", c.axis, c.v, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %g: %v", c.axis, c.v, err)
		}
		out, err := scenario.Override([]byte(sweepBase), sets)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := scenario.Parse("step.yaml", out)
		if err != nil {
			t.Fatalf("%s %g: %v", c.axis, c.v, err)
		}
		if !c.check(s2) {
			t.Errorf("%s %g: sets %v gave %+v", c.axis, c.v, sets, s2)
		}
	}
}

// TestFitUSLRecoversKnownCoefficients: points drawn from a known law are fitted back to it, with R²
// near 1 and the right peak; points with no contention fit σ = κ = 0 (no peak); too few points are
// refused.
func TestFitUSLRecoversKnownCoefficients(t *testing.T) {
	truth := USL{Lambda: 100, Sigma: 0.05, Kappa: 0.002}
	var n, x []float64
	for _, v := range []float64{1, 2, 4, 8, 16, 32, 48} {
		n, x = append(n, v), append(x, truth.X(v))
	}
	u, err := FitUSL(n, x)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(u.Lambda-100) > 0.01 || math.Abs(u.Sigma-0.05) > 1e-4 || math.Abs(u.Kappa-0.002) > 1e-5 || u.R2 < 0.9999 || !u.Peaks {
		t.Errorf("fit %+v, want %+v", u, truth)
	}
	wantPeakN := math.Sqrt((1 - 0.05) / 0.002)
	if math.Abs(u.PeakN-wantPeakN) > 0.01 || math.Abs(u.PeakX-truth.X(wantPeakN)) > 0.1 {
		t.Errorf("peak %g at %g, want %g at %g", u.PeakX, u.PeakN, truth.X(wantPeakN), wantPeakN)
	}
	// Linear scaling: no contention, no peak.
	lin, err := FitUSL([]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40})
	if err != nil || lin.Sigma > 1e-9 || lin.Kappa > 1e-9 || lin.Peaks || math.Abs(lin.Lambda-10) > 1e-6 {
		t.Errorf("linear fit %+v %v", lin, err)
	}
	if _, err := FitUSL([]float64{1, 2}, []float64{1, 2}); err == nil {
		t.Error("two points fitted")
	}
	if _, err := FitUSL([]float64{1, 1, 1}, []float64{1, 2, 3}); err == nil {
		t.Error("one distinct load fitted")
	}
}

func TestRanOut(t *testing.T) {
	w := func(cores ...float64) *proccpu.Window {
		win := &proccpu.Window{WallSeconds: 10, Cores: 2}
		for i, c := range cores {
			win.Components = append(win.Components, proccpu.Usage{Name: []string{"seqgate", "pod-1", "db"}[i], Cores: c, CPUSeconds: 10 * c, Measured: true})
		}
		return win
	}
	lim := Limits{Cores: 2}
	for _, c := range []struct {
		name string
		st   Step
		want string
	}{
		{"no block", Step{}, "not measured (the run wrote no cpu block)"},
		{"idle", Step{Components: w(0.2, 0.1, 0.3), CPUCores: 0.6, MachineBusy: 0.3}, "none; busiest db at 0.30 cores"},
		{"db near a core", Step{Components: w(0.4, 0.2, 0.95), CPUCores: 1.55, MachineBusy: 0.8}, "db: 0.95 cores, near a full core"},
		{"machine busy", Step{Components: w(0.5, 0.5, 0.7), CPUCores: 1.7, MachineBusy: 0.95}, "the machine: all 2 cores busy (95%); busiest db at 0.70 cores"},
		{"run's own cores", Step{Components: w(0.9, 0.5, 0.5), CPUCores: 1.9, MachineBusy: 0.5}, "the machine: all 2 cores busy (95%)"},
		{"nothing measured", Step{Components: &proccpu.Window{Components: []proccpu.Usage{{Name: "db", Note: "not measured: x"}}}}, "not measured: db not measured: x"},
	} {
		if got := ranOut(&c.st, lim); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: ran out %q, want %q", c.name, got, c.want)
		}
	}
}

func TestJudge(t *testing.T) {
	lim := Limits{P99Ms: 500, MaxDropped: 0.01, MaxSlipMs: 20, Cores: 2}
	for _, c := range []struct {
		st             Step
		broke, harness string
	}{
		{st: Step{Verdict: "pass", P99Ms: 100}},
		{st: Step{Verdict: "fail", Failed: []string{"skipped"}}, broke: "skipped"},
		{st: Step{Verdict: "inconclusive"}, broke: "verdict inconclusive"},
		{st: Step{Verdict: "pass", P99Ms: 900}, broke: "latency p99 900 ms > 500 ms"},
		{st: Step{Verdict: "pass", DroppedFrac: 0.2}, broke: "dropped 20.0%"},
		{st: Step{Verdict: "pass", SlipP99Ms: 50}, harness: "slipped behind its schedule"},
		{st: Step{Verdict: "pass", CPUCores: 1.95}, harness: "machine was saturated"},
		{st: Step{Verdict: "pass", CPUCores: 0.5, MachineBusy: 0.97}, harness: "97% busy"},
		{st: Step{Verdict: "pass", CPUCores: 0.5, MachineBusy: 0.5}},
	} {
		st := c.st
		judge(&st, lim)
		if got := strings.Join(st.Broke, "; "); (c.broke == "") != (got == "") || !strings.Contains(got, c.broke) {
			t.Errorf("%+v: broke %q, want %q", c.st, got, c.broke)
		}
		if (c.harness == "") != (st.Harness == "") || !strings.Contains(st.Harness, c.harness) {
			t.Errorf("%+v: harness %q, want %q", c.st, st.Harness, c.harness)
		}
	}
}

// TestRunStopsAtTheFirstBreak drives Run with a RunFunc that writes what a run leaves (summary.json,
// result.json, a real ledger): the sweep measures each step from it, stops after the step that broke,
// names the highest value that held, and fits the law over the steps.
func TestRunStopsAtTheFirstBreak(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "sw.yaml")
	os.WriteFile(scen, []byte(sweepBase), 0o644)
	out := filepath.Join(dir, "out")
	var ran []string
	run := fakeRun(t, 400, &ran)
	var progress bytes.Buffer
	p := Plan{Scenario: scen, Axis: AxisRate, Values: []float64{50, 100, 200, 400, 800}, Limits: Limits{MaxDropped: 0.01, MaxSlipMs: 20, Cores: 2}}
	r, err := Run(context.Background(), p, out, run, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != 4 || r.Held != 200 || r.BrokeAt != 400 || r.Harness != "" {
		t.Fatalf("ran %v, held %g, broke at %g (%v), harness %q", ran, r.Held, r.BrokeAt, r.BrokeBy, r.Harness)
	}
	if st := r.Steps[1]; math.Abs(st.SlipP99Ms-1) > 0.01 || math.Abs(st.Concurrency-2) > 0.1 || st.CPUCores != 0.1 {
		t.Errorf("step 2 measured %+v", st)
	}
	if r.Fit == nil || r.Fit.Points != 4 || r.Fit.R2 < 0.99 {
		t.Errorf("fit %+v (%s)", r.Fit, r.FitError)
	}
	var md, svg bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if st := r.Steps[3]; st.Components == nil || len(st.Components.Components) != 3 || !strings.HasPrefix(st.RanOut, "seqgate: 0.90 cores") {
		t.Errorf("step 4's cpu by component %+v, ran out %q", st.Components, st.RanOut)
	}
	for _, want := range []string{"highest rate that held every SLI is **200**", "At 400 the service broke", "USL fit over 4 steps",
		"| CPU by component (cores) | ran out |", "seqgate 0.45, pod-1 0.10, db not measured: not started by this run (dsn) | none; busiest seqgate at 0.45 cores |",
		"| seqgate: 0.90 cores, near a full core |", "CPU at 400 (per component, over the load phase): seqgate 0.90"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("sweep.md lacks %q:\n%s", want, md.String())
		}
	}
	if err := WriteSVG(&svg, r); err != nil || !strings.Contains(svg.String(), "<svg") || !strings.Contains(svg.String(), "held at 200") {
		t.Errorf("svg: %v (%d bytes)", err, svg.Len())
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
}

var fakeTruth = USL{Lambda: 40, Sigma: 0.1, Kappa: 0.01}

// fakeRun is a child.Func that writes what a run leaves (summary.json, result.json, a real ledger)
// for a service that follows fakeTruth and breaks its p99 at breakAt offered mutations/s; it appends
// each run directory's name to ran.
func fakeRun(t *testing.T, breakAt float64, ran *[]string) child.Func {
	return func(_ context.Context, scenPath, runDir string) (child.Result, error) {
		b, _ := os.ReadFile(scenPath)
		sc, err := scenario.Parse(scenPath, b)
		if err != nil {
			t.Fatal(err)
		}
		offered := OfferedRate(sc)
		*ran = append(*ran, filepath.Base(runDir))
		// Concurrency n gives throughput X(n).
		n := offered / 50
		acked := math.Min(offered, fakeTruth.X(n))
		os.MkdirAll(runDir, 0o755)
		verdict, failed, p99 := "pass", []string{}, 50.0
		if offered >= breakAt {
			verdict, failed, p99 = "fail", []string{"threshold:latency_ms.p99<1000"}, 3000
		}
		sum, _ := json.Marshal(map[string]any{"verdict": verdict, "failed_checks": failed, "latency_ms": map[string]any{"p50": 10, "p99": p99}, "lost": 0})
		os.WriteFile(filepath.Join(runDir, "summary.json"), sum, 0o644)
		// seqgate's CPU grows with the rate: 0.9 of a core at 400/s.
		cpu := proccpu.Window{WallSeconds: 10, Cores: 2, Components: []proccpu.Usage{
			{Name: "seqgate", CPUSeconds: offered / 400 * 9, Cores: offered / 400 * 0.9, Measured: true},
			{Name: "pod-1", CPUSeconds: 1, Cores: 0.1, Measured: true},
			{Name: "db", Note: "not measured: not started by this run (dsn)"}}}
		res, _ := json.Marshal(map[string]any{"offered": int(offered * 10), "dropped": 0, "acked": int(acked * 10), "events_delivered": int(acked * 10), "load_seconds": 10.0, "cpu": cpu})
		os.WriteFile(filepath.Join(runDir, "result.json"), res, 0o644)
		// A ledger whose mutations keep n in flight on average: each lasts n/acked seconds.
		w, err := ledger.Create(filepath.Join(runDir, "ledger.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(&ledger.Record{K: "run", V: 1, RunID: "r", Scenario: "sw", Tenants: []ledger.Tenant{{ID: "t1", Mode: "dedicated"}}, Pods: []string{"pod-1"}, Target: "eventlogd"})
		dur := int64(n / acked * 1e9)
		for i := range int(acked * 10) {
			ts := int64(i) * int64(1e9/acked)
			w.Write(&ledger.Record{K: "mut", MID: "m" + strconv.Itoa(i), Tenant: "t1", Op: "write", Path: "/p/" + strconv.Itoa(i), IntendedT: ts, T: ts + 1e6, DoneT: ts + 1e6 + dur, Res: "ok", Pod: "pod-1"})
		}
		w.Close()
		return child.Result{Exit: map[bool]int{true: 0, false: 1}[verdict == "pass"], CPU: time.Second, Wall: 10 * time.Second}, nil
	}
}

func TestRateSeconds(t *testing.T) {
	for _, tc := range []struct {
		scheduled, load, want float64
	}{
		{scheduled: 10, load: 10.4, want: 10},  // the phase overran its schedule: rates over the schedule
		{scheduled: 10, load: 6, want: 6},      // cut short (Ctrl-C): over what ran
		{scheduled: 0, load: 10.4, want: 10.4}, // a result.json without scheduled_seconds
		{scheduled: 10, load: 0, want: 10},
	} {
		if got := rateSeconds(tc.scheduled, tc.load); got != tc.want {
			t.Errorf("rateSeconds(%v, %v) = %v, want %v", tc.scheduled, tc.load, got, tc.want)
		}
	}
}
