package verifier

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

var (
	run0Line        = strings.Replace(baseLedger[0].json, `"budget":0.0001`, `"budget":0`, 1)
	runNoBudgetLine = strings.Replace(baseLedger[0].json, `"budget":0.0001,`, ``, 1)
	auditRunLine    = strings.Replace(baseLedger[0].json, `"target":"eventlogd"`, `"target":"eventlogd","audit":true`, 1)
	coldRunLine     = `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":true}],"pods":["p1"],"target":"eventlogd"}`
)

// withThresholds returns the base run line with a thresholds field.
func withThresholds(th string) string {
	return strings.Replace(baseLedger[0].json, `"target":"eventlogd"}`, `"target":"eventlogd","thresholds":`+th+`}`, 1)
}

// TestPerScopeThresholds: per_tenant.<id>.<field> and per_consumer.<id>.<field>
// are accepted and judged on that scope only; an id the ledger lacks is unusable input.
func TestPerScopeThresholds(t *testing.T) {
	dupA := map[string][]string{"evA2": {`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":6500000,"seq":2,"op":"write","path":"/x/A/m2","pod":"p1"}`}}
	cases := []struct {
		name    string
		th      string
		after   map[string][]string
		verdict string
		failed  []string
	}{
		{"tenant A duplicate fails", `{"per_tenant.A.duplicates":["== 0"]}`, dupA, VerdictFail, []string{"threshold:per_tenant.A.duplicates==0"}},
		{"tenant B bound ignores A's duplicate", `{"per_tenant.B.duplicates":["== 0"]}`, dupA, VerdictPass, nil},
		{"no duplicate passes", `{"per_tenant.A.duplicates":["== 0"]}`, nil, VerdictPass, nil},
		{"consumer cA duplicate fails", `{"per_consumer.cA.duplicates":["< 1"]}`, dupA, VerdictFail, []string{"threshold:per_consumer.cA.duplicates<1"}},
		{"consumer cB passes", `{"per_consumer.cB.duplicates":["< 1"]}`, dupA, VerdictPass, nil},
		{"per-tenant latency", `{"per_tenant.A.latency_ms.max":["< 0.5"]}`, nil, VerdictFail, []string{"threshold:per_tenant.A.latency_ms.max<0.5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := verifyText(t, edit{replace: map[string]string{"run": withThresholds(c.th)}, after: c.after}.build(), Options{})
			if s.Verdict != c.verdict || !slices.Equal(s.FailedChecks, c.failed) && len(c.failed)+len(s.FailedChecks) > 0 {
				t.Errorf("verdict %s failed %v, want %s %v", s.Verdict, s.FailedChecks, c.verdict, c.failed)
			}
		})
	}
	for _, th := range []string{`{"per_tenant.Z.duplicates":["== 0"]}`, `{"per_consumer.cZ.duplicates":["== 0"]}`} {
		r, _ := newTestReader(edit{replace: map[string]string{"run": withThresholds(th)}}.build())
		_, err := Verify(r, Options{})
		var ue *UnusableError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "Z") || !strings.Contains(err.Error(), "has no") {
			t.Errorf("%s: error %v, want unusable naming the id", th, err)
		}
	}
}

// feedChecks runs a ledger text through the index and the given checkers, record by record.
func feedChecks(t *testing.T, text string, ix *index, cs ...checker) {
	t.Helper()
	r, err := newTestReader(text)
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if err := ix.observe(rec); err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			c.Observe(rec)
		}
	}
}

// TestReorderMemoryBoundedWithoutHorizon: with no horizon, a delivery whose mut
// never comes (an unexpected event) holds back only the deliveries acked before it arrived; the
// thousand after it are judged on arrival. The control: an early delivery that is acked late holds
// the ones acked before its delivery, and they are judged once it resolves.
func TestReorderMemoryBoundedWithoutHorizon(t *testing.T) {
	var b strings.Builder
	b.WriteString(baseLedger[0].json + "\n")
	b.WriteString(`{"k":"conn","consumer":"cA","tenant":"A","conn":"c1","t":0,"phase":"open","pod":"p1","since":0}` + "\n")
	b.WriteString(`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":1000,"seq":1,"op":"write","path":"/x/A/ghost","pod":"p1"}` + "\n")
	for i := range 1000 {
		at := int64(10_000 + i*10_000)
		fmt.Fprintf(&b, `{"k":"mut","mid":"m%d","tenant":"A","op":"write","path":"/x/A/m%d","intended_t":%d,"t":%d,"done_t":%d,"res":"ok","pod":"p1"}`+"\n", i, i, at, at, at+1000)
		fmt.Fprintf(&b, `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":%d,"seq":%d,"op":"write","path":"/x/A/m%d","pod":"p1"}`+"\n", at+2000, i+2, i)
	}
	ix := newIndex()
	c := newReorderCheck(ix, newWitnessSet(0))
	feedChecks(t, b.String(), ix, c)
	if st := c.state[0]; len(st.open) != 1 || st.open[0].resolved {
		t.Errorf("open deliveries after an orphan: %d, want only the orphan", len(st.open))
	}

	// control: a delivery acked long after, with deliveries acked before it arrived behind it
	b.Reset()
	b.WriteString(baseLedger[0].json + "\n")
	b.WriteString(`{"k":"mut","mid":"a","tenant":"A","op":"write","path":"/x/A/a","intended_t":100,"t":100,"done_t":900,"res":"ok","pod":"p1"}` + "\n")
	b.WriteString(`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":1000,"seq":2,"op":"write","path":"/x/A/late","pod":"p1"}` + "\n")
	b.WriteString(`{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":1100,"seq":1,"op":"write","path":"/x/A/a","pod":"p1"}` + "\n")
	ix = newIndex()
	c = newReorderCheck(ix, newWitnessSet(0))
	feedChecks(t, b.String(), ix, c)
	if st := c.state[0]; len(st.open) != 2 {
		t.Fatalf("open deliveries before the late ack: %d, want 2", len(st.open))
	}
	feedChecks(t, baseLedger[0].json+"\n"+`{"k":"mut","mid":"late","tenant":"A","op":"write","path":"/x/A/late","intended_t":950,"t":950,"done_t":9999999999,"res":"ok","pod":"p1"}`+"\n", ix, c)
	if st := c.state[0]; len(st.open) != 0 || c.per[0] == nil || c.per[0].Overtaken != 1 {
		t.Errorf("after the late ack: open %d, reorder %+v; want 0 open and 1 overtaken", len(st.open), c.per[0])
	}
}

// TestConsumerOfTwoTenantsIsUnusable: a consumer id used by two tenants is unusable input, named
// (the spec's decision); the control is the same ledger with distinct ids.
func TestConsumerOfTwoTenantsIsUnusable(t *testing.T) {
	bad := edit{after: map[string][]string{"evB3": {`{"k":"ev","consumer":"cA","tenant":"B","conn":"c2","t":4500000,"seq":1,"op":"write","path":"/x/B/m3","pod":"p1"}`}}}.build()
	r, _ := newTestReader(bad)
	_, err := Verify(r, Options{})
	var ue *UnusableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `consumer "cA"`) || !strings.Contains(err.Error(), `"B"`) {
		t.Errorf("error %v, want unusable naming consumer cA and tenant B", err)
	}
	good := edit{after: map[string][]string{"evB3": {`{"k":"ev","consumer":"cB","tenant":"B","conn":"c2","t":4500000,"seq":1,"op":"write","path":"/x/B/m3","pod":"p1"}`}}}.build()
	if s := verifyText(t, good, Options{}); s.Verdict != VerdictPass || s.Duplicates != 1 {
		t.Errorf("control: verdict %s duplicates %d", s.Verdict, s.Duplicates)
	}
}

// TestMoreThan65536Tenants: tenant indices are wide, so the audit rows of tenant
// 65,536 are not charged to tenant 0 (whose durable consumer would then miss them: a false fail).
// The control drops that tenant's row and delivery: a real loss, which must fail.
func TestMoreThan65536Tenants(t *testing.T) {
	const n = 70_000
	var b strings.Builder
	b.WriteString(`{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"tenants":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"t%d","mode":"shared"}`, i)
	}
	b.WriteString(`],"pods":["p1"],"target":"eventlogd"}` + "\n")
	head := b.String()
	body := func(withFar bool) string {
		var b strings.Builder
		b.WriteString(head)
		b.WriteString(`{"k":"conn","consumer":"c0","tenant":"t0","conn":"k0","t":0,"phase":"open","pod":"p1","since":0}` + "\n")
		b.WriteString(`{"k":"mut","mid":"m0","tenant":"t0","op":"write","path":"/x/t0/m0","intended_t":1000,"t":1000,"done_t":2000,"res":"ok","pod":"p1"}` + "\n")
		b.WriteString(`{"k":"ev","consumer":"c0","tenant":"t0","conn":"k0","t":3000,"seq":1,"op":"write","path":"/x/t0/m0","pod":"p1"}` + "\n")
		b.WriteString(`{"k":"mut","mid":"m1","tenant":"t65536","op":"write","path":"/x/t65536/m1","intended_t":1000,"t":1000,"done_t":2000,"res":"ok","pod":"p1"}` + "\n")
		if withFar {
			b.WriteString(`{"k":"persisted","tenant":"t65536","seq":2,"op":"write","path":"/x/t65536/m1"}` + "\n")
		}
		b.WriteString(`{"k":"persisted","tenant":"t0","seq":1,"op":"write","path":"/x/t0/m0"}` + "\n")
		b.WriteString(`{"k":"consumer","consumer":"c0","tenant":"t0","from_t":0,"to_t":9000,"first_since":0,"final_cursor":1,"durable":true}` + "\n")
		b.WriteString(`{"k":"end","t":10000,"drained":true}` + "\n")
		return b.String()
	}
	s := verifyText(t, body(true), Options{})
	if s.Verdict != VerdictPass || s.Undelivered+s.Skipped+s.Lost != 0 || s.PerTenant["t65536"].Acked != 1 || s.PerTenant["t0"].Acked != 1 {
		t.Errorf("verdict %s failed %v (undelivered %d skipped %d lost %d)", s.Verdict, s.FailedChecks, s.Undelivered, s.Skipped, s.Lost)
	}
	s = verifyText(t, body(false), Options{})
	if s.Verdict != VerdictFail || s.Lost != 1 || s.PerTenant["t65536"].Lost != 1 || s.PerTenant["t0"].Lost != 0 {
		t.Errorf("control: verdict %s lost %d (t65536 %d, t0 %d)", s.Verdict, s.Lost, s.PerTenant["t65536"].Lost, s.PerTenant["t0"].Lost)
	}
}

// TestTimeDifferencesSaturate: done_t - intended_t of extreme times does not wrap
// to a negative latency; the control is an ordinary difference.
func TestTimeDifferencesSaturate(t *testing.T) {
	cases := []struct{ a, b, want int64 }{
		{math.MaxInt64, -1, math.MaxInt64}, {math.MinInt64, 1, math.MinInt64}, {math.MaxInt64 - 5, math.MinInt64 + 5, math.MaxInt64},
		{10, 3, 7}, {-3, 10, -13}, {0, math.MinInt64 + 1, math.MaxInt64},
	}
	for _, c := range cases {
		if got := subSat(c.a, c.b); got != c.want {
			t.Errorf("subSat(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	text := edit{replace: map[string]string{"mutB3": `{"k":"mut","mid":"m3","tenant":"B","op":"write","path":"/x/B/m3","intended_t":-9000000000000000000,"t":1000000,"done_t":2000000,"res":"ok","pod":"p2"}`}}.build()
	s := verifyText(t, text, Options{})
	if s.IssueLatencyMs.Max < 1e6 {
		t.Errorf("issue latency max %v ms: a huge difference must clamp high (1 day), not wrap", s.IssueLatencyMs.Max)
	}
}

// TestFaultWindowsAndRecovery: a fault's span, its recovery_ms (until the
// consumers of the affected tenants reach the head seq at the stop), the windowed numbers, and
// thresholds on them; each with its control.
func TestFaultWindowsAndRecovery(t *testing.T) {
	fault := func(target string) map[string][]string {
		return map[string][]string{
			"evB3":  {`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"` + target + `","phase":"start","t":2500000}`},
			"mutA2": {`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"` + target + `","phase":"stop","t":5500000}`},
			"openB": {`{"k":"drop","tenant":"A","intended_t":1500000}`}}
	}
	type want struct {
		verdict     string
		failed      []string
		recovery    float64
		unrecovered int64
		values      map[string]float64
	}
	cases := []struct {
		name  string
		th    string
		drop  []string
		after map[string][]string
		cons  string
		want  want
	}{
		{name: "tenant fault recovers when its consumer reaches the head at the stop", th: `{"latency_ms.max@steady":["<= 2"],"dropped_fraction@fault":["== 0"]}`,
			after: fault("A"),
			want: want{verdict: VerdictPass, recovery: 0.5, values: map[string]float64{
				"windows.steady.latency_ms.max": 0, "windows.fault.latency_ms.max": 2, "windows.fault.acked": 1, "windows.steady.acked": 2,
				"windows.steady.drops": 1, "windows.steady.mutations": 2, "windows.fault.dropped_fraction": 0, "dropped_fraction": 0.25,
				// m1 and m3 were sent before the fault and delivered inside it: their deliveries are the fault's
				"windows.recovery.deliveries": 0, "windows.steady.deliveries": 0, "windows.fault.deliveries": 3, "recovery_ms.f1": 0.5}}},
		{name: "a windowed threshold fails on its window only", th: `{"latency_ms.max@fault":["< 0.5"],"latency_ms.max@steady":["<= 2"],"dropped_fraction@steady":["<= 0.5"]}`,
			after: fault("A"),
			want:  want{verdict: VerdictFail, failed: []string{"threshold:latency_ms.max@fault<0.5"}, recovery: 0.5}},
		{name: "a pod fault affects every tenant", th: `{"dropped_fraction":["<= 1"]}`, after: fault("p1"),
			want: want{verdict: VerdictPass, recovery: 0.5, values: map[string]float64{"recovery_max_ms": 0.5}}},
		{name: "a consumer that never catches up leaves the fault unrecovered", th: `{"unrecovered_faults":["== 0"],"dropped_fraction":["<= 1"]}`,
			after: fault("A"), drop: []string{"evA2"},
			cons: `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":1,"durable":true}`,
			want: want{verdict: VerdictFail, failed: []string{CheckUndelivered, "threshold:unrecovered_faults==0"}, recovery: 4.5, unrecovered: 1}},
		{name: "no fault: nothing to recover, everything steady", th: `{"latency_ms.max@steady":["<= 2"],"latency_ms.max@fault":["== 0"]}`,
			want: want{verdict: VerdictPass, recovery: -1, values: map[string]float64{"windows.steady.acked": 3, "windows.fault.acked": 0, "windows.recovery.acked": 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := edit{drop: c.drop, after: c.after, replace: map[string]string{"run": withThresholds(c.th)}}
			if c.cons != "" {
				e.replace["consA"] = c.cons
			}
			s := verifyText(t, e.build(), Options{})
			failed := c.want.failed
			if failed == nil {
				failed = []string{}
			}
			if s.Verdict != c.want.verdict || !slices.Equal(s.FailedChecks, failed) {
				t.Errorf("verdict %s failed %v, want %s %v", s.Verdict, s.FailedChecks, c.want.verdict, failed)
			}
			if c.want.recovery < 0 {
				if len(s.Faults) != 0 || s.RecoveryMaxMs != 0 {
					t.Errorf("faults %+v recovery max %v, want none", s.Faults, s.RecoveryMaxMs)
				}
			} else if len(s.Faults) != 1 || s.Faults[0].RecoveryMs == nil || *s.Faults[0].RecoveryMs != c.want.recovery || s.UnrecoveredFaults != c.want.unrecovered {
				t.Errorf("faults %+v unrecovered %d, want recovery %v unrecovered %d", s.Faults, s.UnrecoveredFaults, c.want.recovery, c.want.unrecovered)
			}
			doc := summaryDoc(s)
			for p, v := range c.want.values {
				if got := measure(doc, p); got != v {
					t.Errorf("%s = %v, want %v", p, got, v)
				}
			}
		})
	}
}

// TestReportsShowTheAdditions: the text and JUnit outputs carry what the JSON gained: a check not
// judged for want of the audit (a skipped testcase, not a failure), drops, seq_mismatch, faults.
func TestReportsShowTheAdditions(t *testing.T) {
	text := edit{drop: []string{"evA2", "persA2"}, replace: map[string]string{"run": auditRunLine},
		after: map[string][]string{"mutA2": {`{"k":"drop","tenant":"A","intended_t":4500000}`,
			`{"k":"fault","id":"f1","kind":"pod_kill","target":"p1","phase":"start","t":5000000}`,
			`{"k":"fault","id":"f1","kind":"pod_kill","target":"p1","phase":"stop","t":5100000}`}}}.build()
	s := verifyText(t, text, Options{})
	var out, junit strings.Builder
	if err := WriteText(&out, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&junit, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"verdict: FAIL", "dropped_fraction: measured 0.25", "not judged: loss_budget", "load: mutations 3, drops 1",
		"seq mismatch 0", "  f1  pod_kill  p1  start 0.005s  healed 0.005s", "audit: required true, attempts 0, ok false", "also missing: evidence"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	for _, want := range []string{`<testcase name="loss_budget" classname="seqgate.verify">`, `not judged: needs the audit`,
		`<testcase name="dropped_fraction" classname="seqgate.verify">`, `<failure message="dropped_fraction: measured 0.25`,
		`name="seq_mismatch" classname="seqgate.report"`, `name="recovery" classname="seqgate.report"`} {
		if !strings.Contains(junit.String(), want) {
			t.Errorf("junit lacks %q:\n%s", want, junit.String())
		}
	}
	if strings.Contains(junit.String(), `<failure message="loss_budget`) {
		t.Errorf("a check not judged must not be a JUnit failure")
	}
}
