package verifier

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/seqgate/seqgate/internal/linereader"
	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier/synth"
)

// TestLentStringsKeepNothing: Verify lends the records' paths and mids (Reader.BorrowStrings), so a
// checker that kept one without copying it would report another line's bytes. Read one line per
// Read call (the reader's buffer is overwritten by every line), every summary must equal the one
// judged from records that own their strings, for ledgers with every anomaly synth plants and the
// testdata ledgers. The control: without the copies, a kept lent string does change (ledger's
// TestBorrowStrings).
func TestLentStringsKeepNothing(t *testing.T) {
	ledgers := map[string][]byte{}
	for i, cfg := range []synth.Config{
		{Seed: 1, Tenants: 3, ConsumersPerTenant: 2, Events: 3000, Lost: 3, Silent: 2, CrashLoss: 2, Skipped: 3,
			Undelivered: 2, Duplicates: 3, Leaks: 2, Unexpected: 2, Reorder: 3, Recovered: 2, SeqTooOld: 2,
			SpuriousResets: 1, SeqMismatch: 3, MaskedSkips: 2, Cold: 1, ColdWakeups: 1},
		{Seed: 7, Tenants: 2, ConsumersPerTenant: 3, Events: 2000, Duplicates: 5, Reorder: 4, SeqMismatch: 4, Unexpected: 3},
	} {
		ledgers["synth"+string(rune('0'+i))] = []byte(synthText(t, cfg))
	}
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ledgers[f] = b
	}
	summary := func(s *Summary, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := WriteJSON(&out, s); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	for name, data := range ledgers {
		owned, err := ledger.NewReader(name, bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		want := summary(VerifySource(owned, Options{}))
		lent, err := ledger.NewReader(name, linereader.New(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(Verify(lent, Options{})); got != want {
			t.Errorf("%s: the summary from lent strings differs:\n%s\nwant\n%s", name, got, want)
		}
	}
}
