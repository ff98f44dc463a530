package verifier

import (
	"strings"
	"testing"
)

// TestProofNeeded: the acked count that proves a budget with k losses is the smallest n whose
// one-sided 95% bound is within it (a known answer for k = 0: 29956 for 1e-4), and none for a zero
// budget.
func TestProofNeeded(t *testing.T) {
	for _, c := range []struct {
		lost   int64
		budget float64
		want   int64 // 0: check only the defining property
	}{
		{0, 1e-4, 29956}, {0, 0.9, 2}, {1, 1e-4, 0}, {5, 1e-4, 0}, {3, 0.01, 0}, {0, 0, 0},
	} {
		got := ProofNeeded(c.lost, c.budget)
		if c.budget == 0 {
			if got != 0 {
				t.Errorf("budget 0: %d, want 0 (not provable)", got)
			}
			continue
		}
		if c.want != 0 && got != c.want {
			t.Errorf("ProofNeeded(%d, %g) = %d, want %d", c.lost, c.budget, got, c.want)
		}
		if LossUpper95(c.lost, got) > c.budget || LossUpper95(c.lost, got-1) <= c.budget {
			t.Errorf("ProofNeeded(%d, %g) = %d: bound %g there, %g one below; want the first within the budget",
				c.lost, c.budget, got, LossUpper95(c.lost, got), LossUpper95(c.lost, got-1))
		}
	}
}

// TestBudgetProofThreshold: with a threshold budget_provable == 1 (budget_proof: required), a clean
// run too small to prove its budget is inconclusive (exit 2) and says how much more load would prove
// it; the same run without the threshold passes, a run that proves a looser budget passes with it,
// and a run whose loss breaks the budget still fails (fail beats inconclusive).
func TestBudgetProofThreshold(t *testing.T) {
	run := func(budget, thresholds string) string {
		return strings.Replace(strings.Replace(baseLedger[0].json, `"budget":0.0001`, `"budget":`+budget, 1), `"target"`, thresholds+`"target"`, 1)
	}
	required := `"thresholds":{"budget_provable":["== 1"]},`
	for _, c := range []struct {
		name    string
		e       edit
		verdict string
		why     string
	}{
		{"required, too few acked", edit{replace: map[string]string{"run": run("0.0001", required)}}, VerdictInconclusive,
			"loss budget not provable: 3 acked, 29956 needed; 29953 more, about "},
		{"optional, too few acked", edit{replace: map[string]string{"run": run("0.0001", "")}}, VerdictPass, ""},
		{"required and proven", edit{replace: map[string]string{"run": run("0.9", required)}}, VerdictPass, ""},
		{"required, a loss breaks the budget", edit{replace: map[string]string{"run": run("0.0001", required)}, drop: []string{"evA2", "persA2"}}, VerdictFail, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := verifyText(t, c.e.build(), Options{})
			if s.Verdict != c.verdict {
				t.Fatalf("verdict %s (failed %v, inconclusive %v), want %s", s.Verdict, s.FailedChecks, s.InconclusiveBecause, c.verdict)
			}
			if c.why == "" {
				return
			}
			if ExitCode(s) != 2 || len(s.InconclusiveBecause) != 1 || !strings.Contains(s.InconclusiveBecause[0], c.why) ||
				!strings.Contains(s.InconclusiveBecause[0], "more minutes at") {
				t.Errorf("exit %d, inconclusive because %q, want %q", ExitCode(s), s.InconclusiveBecause, c.why)
			}
			var b strings.Builder
			WriteText(&b, s)
			first, _, _ := strings.Cut(b.String(), "\n")
			if !strings.HasPrefix(first, "verdict: INCONCLUSIVE ("+c.why) {
				t.Errorf("verdict line %q lacks %q", first, c.why)
			}
		})
	}
}
