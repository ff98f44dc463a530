package verifier

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/seqgate/seqgate/verifier/ledger"
)

// BenchmarkVerify verifies an in-memory generated ledger (6 tenants x 2 consumers, a few anomalies)
// and, in the same run, times a plain read-and-decode of the same bytes: the floor. It reports
// records/s and the ratio verify/decode.
func BenchmarkVerify(b *testing.B) {
	var buf bytes.Buffer
	tr, err := genLedger(genCfg{seed: 1, tenants: 6, consumers: 2, events: 8000, silent: 2, crash: 2, skipped: 3,
		dups: 3, reorder: 3, leaks: 1, unexpected: 1}, ledger.NewWriter(&buf))
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
		if s.Skipped != tr.skipped || s.Records != tr.records {
			b.Fatalf("skipped %d records %d, want %d %d", s.Skipped, s.Records, tr.skipped, tr.records)
		}
		decode += t1.Sub(t0)
		verify += time.Since(t1)
	}
	b.ReportMetric(float64(tr.records)*float64(b.N)/verify.Seconds(), "records/s")
	b.ReportMetric(verify.Seconds()/decode.Seconds(), "verify/decode")
}
