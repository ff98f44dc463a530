package verifier

import "testing"

// Lines of tenant A's consumer cA around a row swept during the run: m2 (seq 2) persisted at 5 ms
// and an audit pass saw it; the sweep deleted it before the final audit (absent); cA never got it.
const (
	swMutA2   = `{"k":"mut","mid":"m2","tenant":"A","op":"write","path":"/x/A/m2","intended_t":4000000,"t":4000000,"done_t":5000000,"res":"ok","pod":"p1"}`
	swPersA2  = `{"k":"persisted","tenant":"A","seq":2,"op":"write","path":"/x/A/m2","created_unix_ns":1000004500000,"absent":true}`
	swPersA2F = `{"k":"persisted","tenant":"A","seq":2,"op":"write","path":"/x/A/m2","created_unix_ns":1000004500000}`
	swMutA3   = `{"k":"mut","mid":"m7","tenant":"A","op":"write","path":"/x/A/m7","intended_t":6000000,"t":6000000,"done_t":6500000,"res":"ok","pod":"p1"}`
	swReset   = `{"k":"reset","consumer":"cA","tenant":"A","conn":"c1","t":7000000,"seq":2,"reason":"seq_too_old"}`
	swEvA3    = `{"k":"ev","consumer":"cA","tenant":"A","conn":"c1","t":7500000,"seq":3,"op":"write","path":"/x/A/m7","pod":"p1"}`
	swPersA3  = `{"k":"persisted","tenant":"A","seq":3,"op":"write","path":"/x/A/m7"}`
	swConsA   = `{"k":"consumer","consumer":"cA","tenant":"A","from_t":0,"to_t":9000000,"first_since":0,"final_cursor":3,"durable":true}`
)

// TestSweptRows: a row an audit pass saw during the run and the sweep deleted before the final audit
// (persisted absent) persisted: it is not a loss, and a consumer that did not get it must have been
// told (reset-covered by a later seq_too_old) or it skipped it. Its seq_too_old is not spurious
// (the row is gone), while the same reset over a row still in the audit is.
func TestSweptRows(t *testing.T) {
	tests := []struct {
		name             string
		persA2           string // "" = no audit pass saw it (the old evidence)
		reset            bool
		verdict          string
		lost, skipped    int64
		covered, spuriou int64
	}{
		{name: "swept, reset-covered", persA2: swPersA2, reset: true, verdict: VerdictPass, covered: 1},
		{name: "swept, skipped without a reset", persA2: swPersA2, verdict: VerdictFail, skipped: 1},
		{name: "old evidence: unseen row is a silent loss", persA2: "", reset: true, verdict: VerdictFail, lost: 1},
		{name: "row still in the audit: the reset is spurious", persA2: swPersA2F, reset: true, verdict: VerdictPass, covered: 1, spuriou: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := []string{swMutA3}
			if tc.reset {
				run = append(run, swReset)
			}
			run = append(run, swEvA3)
			pers := []string{swPersA3}
			if tc.persA2 != "" {
				pers = append(pers, tc.persA2)
			}
			e := edit{
				drop:    []string{"evA2", "persA2"},
				replace: map[string]string{"mutA2": swMutA2, "consA": swConsA},
				after:   map[string][]string{"mutA2": run, "persA1": pers},
			}
			s := verifyText(t, e.build(), Options{Budget: ptrF(0.5)})
			if s.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (failed %v)", s.Verdict, tc.verdict, s.FailedChecks)
			}
			if s.Lost != tc.lost || s.Skipped != tc.skipped || s.ResetCovered != tc.covered || s.SpuriousResets != tc.spuriou {
				t.Errorf("lost %d skipped %d reset_covered %d spurious %d, want %d %d %d %d",
					s.Lost, s.Skipped, s.ResetCovered, s.SpuriousResets, tc.lost, tc.skipped, tc.covered, tc.spuriou)
			}
		})
	}
}
