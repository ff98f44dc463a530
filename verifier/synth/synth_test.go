package synth

import (
	"bytes"
	"io"
	"testing"

	"github.com/seqgate/seqgate/verifier/ledger"
)

func generate(t *testing.T, cfg Config) ([]byte, Truth) {
	t.Helper()
	var buf bytes.Buffer
	w := ledger.NewWriter(&buf)
	truth, err := Generate(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), truth
}

func TestSmoke(t *testing.T) {
	b, truth := generate(t, Config{Seed: 1, Tenants: 4, ConsumersPerTenant: 2, Events: 5000, Cold: 1, Lost: 2, Silent: 1, CrashLoss: 1,
		Skipped: 1, Undelivered: 1, Duplicates: 1, Leaks: 1, Unexpected: 1, Reorder: 1, Recovered: 1, SeqTooOld: 1, SpuriousResets: 1, ColdWakeups: 1})
	r, err := ledger.NewReader("synth", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	t.Logf("%d records, truth %+v", n, truth)
}
