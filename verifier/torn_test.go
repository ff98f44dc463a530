package verifier

import (
	"strings"
	"testing"
)

// TestTornTailKeepsTheVerdict: a clean ledger and a failing one (a write lost) keep their verdicts
// when a NUL tail longer than the 16 MiB line cap and without a newline follows their end record
// (a power loss): the tail is a warning. Ended by a newline, the same tail is unusable input.
func TestTornTailKeepsTheVerdict(t *testing.T) {
	tail := strings.Repeat("\x00", 17<<20)
	lost := edit{drop: []string{"evA2", "persA2"}}.build()
	for _, tc := range []struct {
		name, ledger, verdict string
	}{
		{"clean", edit{}.build(), VerdictPass},
		{"a write lost", lost, VerdictFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := verifyText(t, tc.ledger, Options{})
			torn := verifyText(t, tc.ledger+tail, Options{})
			if plain.Verdict != tc.verdict || torn.Verdict != tc.verdict || torn.Lost != plain.Lost || torn.Acked != plain.Acked {
				t.Errorf("verdict %s (lost %d of %d) with the tail, %s (lost %d of %d) without; want %s", torn.Verdict, torn.Lost, torn.Acked, plain.Verdict, plain.Lost, plain.Acked, tc.verdict)
			}
			found := false
			for _, w := range torn.Warnings {
				found = found || strings.Contains(w, "torn last line ignored")
			}
			if !found {
				t.Errorf("no torn-line warning: %q", torn.Warnings)
			}
			r, err := newTestReader(tc.ledger + tail + "\n")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Verify(r, Options{}); err == nil || !strings.Contains(err.Error(), "line longer than") {
				t.Errorf("the tail with a newline: %v, want unusable input", err)
			}
		})
	}
}
