package verifier

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/seqgate/seqgate/ledger"
)

// TestVerifyFindsExactlyTheInjected generates ledgers with random anomalies and checks that the
// verifier reports exactly what was injected, and the verdict that follows from it.
func TestVerifyFindsExactlyTheInjected(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := genCfg{
			seed:       rapid.Uint64().Draw(t, "seed"),
			tenants:    rapid.IntRange(1, 3).Draw(t, "tenants"),
			consumers:  rapid.IntRange(1, 2).Draw(t, "consumers"),
			events:     rapid.IntRange(2, 40).Draw(t, "events"),
			silent:     rapid.IntRange(0, 2).Draw(t, "silent"),
			crash:      rapid.IntRange(0, 2).Draw(t, "crash"),
			skipped:    rapid.IntRange(0, 3).Draw(t, "skipped"),
			dups:       rapid.IntRange(0, 3).Draw(t, "dups"),
			reorder:    rapid.IntRange(0, 2).Draw(t, "reorder"),
			stall:      rapid.Bool().Draw(t, "stall"),
			leaks:      rapid.IntRange(0, 2).Draw(t, "leaks"),
			unexpected: rapid.IntRange(0, 2).Draw(t, "unexpected"),
		}
		var buf bytes.Buffer
		w := ledger.NewWriter(&buf)
		tr, err := genLedger(cfg, w)
		if err != nil {
			t.Fatal(err)
		}
		r, err := newTestReader(buf.String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := Verify(r, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][2]int64{
			"acked":       {s.Acked, tr.acked},
			"lost":        {s.Lost, tr.lost},
			"silent":      {s.LostByReason[ReasonSilent], tr.silent},
			"crash":       {s.LostByReason[ReasonCrash], tr.crash},
			"skipped":     {s.Skipped, tr.skipped},
			"undelivered": {s.Undelivered, tr.undelivered},
			"duplicates":  {s.Duplicates, tr.dups},
			"leaks":       {s.Leaks, tr.leaks},
			"unexpected":  {s.Unexpected, tr.unexpected},
			"overtaken":   {s.Reorder.Overtaken, tr.overtaken},
			"records":     {s.Records, tr.records},
		}
		for k, v := range got {
			if v[0] != v[1] {
				t.Errorf("%s = %d, injected %d", k, v[0], v[1])
			}
		}
		if want := tr.verdict(s.Budget); s.Verdict != want {
			t.Errorf("verdict %s, want %s (failed %v)", s.Verdict, want, s.FailedChecks)
		}
		if n := len(s.Witnesses["skipped"]); int64(n) != min(tr.skipped, DefaultWitnesses) {
			t.Errorf("%d skipped witnesses for %d skipped", n, tr.skipped)
		}
	})
}
