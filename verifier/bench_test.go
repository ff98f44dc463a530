package verifier

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier/synth"
)

// BenchmarkVerify verifies an in-memory synth ledger (6 tenants x 2 consumers, a few of each anomaly)
// and, in the same run, times a plain read-and-decode of the same bytes: the floor. It reports
// records/s and the ratio verify/decode.
func BenchmarkVerify(b *testing.B) {
	var buf bytes.Buffer
	w := ledger.NewWriter(&buf)
	tr, err := synth.Generate(synth.Config{Seed: 1, Tenants: 6, ConsumersPerTenant: 2, Events: 60000, Lost: 3,
		Silent: 2, CrashLoss: 2, Skipped: 3, Undelivered: 2, Duplicates: 3, Leaks: 1, Unexpected: 1, Reorder: 3,
		Recovered: 2, SeqTooOld: 2, SpuriousResets: 1}, w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	var decode, verify time.Duration
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		r, _ := ledger.NewReader("bench", bytes.NewReader(data))
		for {
			if _, err := r.Next(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		r, _ = ledger.NewReader("bench", bytes.NewReader(data))
		s, err := Verify(r, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if s.Skipped != int64(tr.Skipped) || s.Records != tr.Records {
			b.Fatalf("skipped %d records %d, want %d %d", s.Skipped, s.Records, tr.Skipped, tr.Records)
		}
		decode += t1.Sub(t0)
		verify += time.Since(t1)
	}
	b.ReportMetric(float64(tr.Records)*float64(b.N)/verify.Seconds(), "records/s")
	b.ReportMetric(verify.Seconds()/decode.Seconds(), "verify/decode")
}
