package live

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/seqgate/seqgate/ledger"
)

// TestResetReasonLabelBounded: 50,000 distinct reasons from a service give at most the known
// reasons, 16 others and "other" as label values, and every frame is still counted; the known
// reasons keep their own series with exact counts (the honest case).
func TestResetReasonLabelBounded(t *testing.T) {
	cases := []struct {
		name    string
		reasons func(i int) string
		n       int
		series  int
	}{
		{"known reasons", func(i int) string { return knownResetReasons[i%len(knownResetReasons)] }, 400, len(knownResetReasons)},
		{"a new reason per frame", func(i int) string { return fmt.Sprintf("r%d", i) }, 50_000, maxOtherResetReasons + 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMetrics(prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.n {
				m.Observe(&ledger.Record{K: ledger.KindReset, Reason: tc.reasons(i), Consumer: "c", Tenant: "a", Seq: int64(i)})
			}
			if got := testutil.CollectAndCount(m.resets); got != tc.series {
				t.Errorf("%d series, want %d", got, tc.series)
			}
			total := 0.0
			for _, k := range knownResetReasons {
				total += testutil.ToFloat64(m.resets.WithLabelValues(k))
			}
			for i := range maxOtherResetReasons {
				total += testutil.ToFloat64(m.resets.WithLabelValues(fmt.Sprintf("r%d", i)))
			}
			total += testutil.ToFloat64(m.resets.WithLabelValues(otherLabel))
			if total != float64(tc.n) {
				t.Errorf("%g frames counted, want %d", total, tc.n)
			}
		})
	}
}
