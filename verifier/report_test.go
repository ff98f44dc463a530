package verifier

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"github.com/seqgate/seqgate/ledger"
	"strings"
	"testing"
)

func TestWriteText(t *testing.T) {
	s := verifyText(t, edit{drop: []string{"evA1"}}.build(), Options{})
	var b bytes.Buffer
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "verdict: FAIL") {
		t.Errorf("text does not start with the verdict:\n%s", out)
	}
	fc := strings.Index(out, "failed checks:\n  skipped: measured 1, want == 0 (cA 1) — "+skippedCheckDesc.Meaning+"\n")
	wi := strings.Index(out, `"seq":1,"path":"/x/A/m1"`)
	if fc < 0 || wi < 0 || wi < fc {
		t.Errorf("want failed checks then the skipped witness:\n%s", out)
	}
}

func TestWriteJSONFieldNames(t *testing.T) {
	s := verifyText(t, edit{}.build(), Options{})
	var b bytes.Buffer
	if err := WriteJSON(&b, s); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"verdict", "failed_checks", "acked", "lost", "lost_by_reason", "event_loss_fraction",
		"loss_upper_95", "budget", "skipped", "undelivered", "reset_covered", "spurious_resets", "duplicates",
		"unexpected", "leaks", "recovered", "latency_ms", "reorder", "resets_by_reason", "reconnects",
		"cold_wakeups", "projection", "witnesses", "per_tenant", "per_consumer"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("summary JSON lacks %q", k)
		}
	}
	pt := doc["per_tenant"].(map[string]any)
	if a := pt["A"].(map[string]any)["acked"]; a != 2.0 {
		t.Errorf("per_tenant.A.acked = %v, want 2", a)
	}
	if d := doc["per_consumer"].(map[string]any)["cB"].(map[string]any)["deliveries"]; d != 1.0 {
		t.Errorf("per_consumer.cB.deliveries = %v, want 1", d)
	}
}

func TestWriteJUnit(t *testing.T) {
	s := verifyText(t, edit{drop: []string{"evA1"}}.build(), Options{})
	var b bytes.Buffer
	if err := WriteJUnit(&b, s); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	su := doc.Suites[0]
	if su.Tests != len(s.Checks)+len(reportOnly(s)) || su.Failures != 1 {
		t.Errorf("tests=%d failures=%d, want %d and 1", su.Tests, su.Failures, len(s.Checks)+len(reportOnly(s)))
	}
	for _, c := range su.Cases {
		if (c.Failure != nil) != (c.Name == CheckSkipped) {
			t.Errorf("testcase %s failure=%v", c.Name, c.Failure != nil)
		}
	}
}

func TestBudgetOverride(t *testing.T) {
	text := edit{drop: []string{"evA2", "persA2"}, after: map[string][]string{
		"mutA2": {`{"k":"pod","pod":"p1","phase":"crash","t":7000000}`}}}.build()
	if s := verifyText(t, text, Options{}); s.Verdict != VerdictFail || s.Budget != 1e-4 {
		t.Errorf("run budget: verdict %s budget %g", s.Verdict, s.Budget)
	}
	if s := verifyText(t, text, Options{Budget: ptrF(0.5)}); s.Verdict != VerdictPass || s.Budget != 0.5 {
		t.Errorf("--budget 0.5: verdict %s budget %g, failed %v", s.Verdict, s.Budget, s.FailedChecks)
	}
}

func TestUnusable(t *testing.T) {
	bad := strings.Replace(edit{}.build(), `"target":"eventlogd"}`, `"target":"eventlogd","thresholds":{"p99":["< 1"]}}`, 1)
	r, _ := newTestReader(bad)
	_, err := Verify(r, Options{})
	if _, ok := err.(*UnusableError); !ok || !strings.Contains(err.Error(), `"p99"`) || !strings.Contains(err.Error(), "latency_ms.p99") {
		t.Errorf("bad threshold: %v", err)
	}
	inf := strings.Replace(edit{}.build(), `"target":"eventlogd"}`, `"target":"eventlogd","crashes_per_pod_year":1e308}`, 1)
	r, _ = newTestReader(inf)
	if _, err := Verify(r, Options{}); err == nil || !strings.Contains(err.Error(), "crashes_per_pod_year") {
		t.Errorf("absurd crashes_per_pod_year: %v", err)
	}
	r, _ = newTestReader("{\"k\":\"mut\"}\n")
	if _, err := Verify(r, Options{}); err == nil {
		t.Error("ledger without run record: no error")
	} else if !strings.Contains(err.Error(), "test.jsonl:1") {
		t.Errorf("error does not name the line: %v", err)
	}
}

// TestDocExamples keeps the example ledgers that docs/verify.md runs honest.
func TestDocExamples(t *testing.T) {
	for file, want := range map[string]string{"testdata/clean.jsonl": VerdictPass, "testdata/skipped.jsonl": VerdictFail} {
		r, err := ledger.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Verify(r, Options{})
		r.Close()
		if err != nil || s.Verdict != want {
			t.Errorf("%s: %v verdict %v, want %s", file, err, s, want)
		}
	}
}

// TestVerdictLineSaysWhenThePassProvesNoBudget: a pass on too few acked events says so in the verdict
// line itself; a pass that proves the budget, and a fail, do not carry the note.
func TestVerdictLineSaysWhenThePassProvesNoBudget(t *testing.T) {
	s := verifyText(t, edit{}.build(), Options{})
	var b strings.Builder
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	want := fmt.Sprintf("verdict: PASS (loss budget not provable: %d acked, %d needed; %d more, about ", s.Acked, s.MinAckedForBudget, s.MinAckedForBudget-s.Acked)
	if s.Verdict != VerdictPass || !strings.HasPrefix(first, want) {
		t.Errorf("verdict line %q, want it to start with %q", first, want)
	}
	for _, c := range []*Summary{{Verdict: VerdictPass, BoundWithinBudget: true}, {Verdict: VerdictFail}} {
		if got := notProvable(c); got != "" {
			t.Errorf("%s (bound within budget %v): note %q, want none", c.Verdict, c.BoundWithinBudget, got)
		}
	}
}
