package synth

import (
	"io"
	"testing"

	"github.com/seqgate/seqgate/ledger"
)

// BenchmarkGenerate writes a ledger of about 800k records (to io.Discard) per iteration.
func BenchmarkGenerate(b *testing.B) {
	cfg := Config{Seed: 1, Tenants: 6, ConsumersPerTenant: 2, Events: 200_000, Lost: 3, Skipped: 3, Duplicates: 3}
	var recs int64
	for b.Loop() {
		w := ledger.NewWriter(io.Discard)
		tr, err := Generate(cfg, w)
		if err != nil {
			b.Fatal(err)
		}
		w.Close()
		recs += tr.Records
	}
	b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
}
