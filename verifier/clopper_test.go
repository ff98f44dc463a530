package verifier

import (
	"math"
	"testing"
)

// binomCDF is P(Binomial(n, p) <= x), summed directly: an independent check of the beta quantile.
func binomCDF(x, n int64, p float64) float64 {
	var sum float64
	for k := int64(0); k <= x; k++ {
		lc, _ := math.Lgamma(float64(n + 1))
		l1, _ := math.Lgamma(float64(k + 1))
		l2, _ := math.Lgamma(float64(n - k + 1))
		sum += math.Exp(lc - l1 - l2 + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	return sum
}

func TestLossUpper95(t *testing.T) {
	cases := []struct {
		lost, n int64
		want    float64 // known values (R: binom.test(x, n, alternative="less")$conf.int[2])
		tol     float64
	}{
		{0, 10, 1 - math.Pow(0.05, 0.1), 1e-12},
		{0, 30000, 1 - math.Pow(0.05, 1.0/30000), 1e-15},
		{1, 10, 0.3941633, 1e-6},
		{10, 10, 1, 0},
		{0, 0, 1, 0},
	}
	for _, c := range cases {
		if got := LossUpper95(c.lost, c.n); math.Abs(got-c.want) > c.tol {
			t.Errorf("LossUpper95(%d, %d) = %.9g, want %.9g", c.lost, c.n, got, c.want)
		}
	}
	// Zero losses: about 3/n.
	if got := LossUpper95(0, 1_000_000); math.Abs(got*1e6-2.9957) > 1e-3 {
		t.Errorf("LossUpper95(0, 1e6) = %g, want ~3e-6", got)
	}
	// The defining property, checked by a direct binomial sum, across shapes.
	for _, c := range []struct{ x, n int64 }{{1, 10}, {3, 50}, {5, 100}, {20, 1000}, {2, 100000}, {40, 60}} {
		p := LossUpper95(c.x, c.n)
		if cdf := binomCDF(c.x, c.n, p); math.Abs(cdf-0.05) > 1e-7 {
			t.Errorf("x=%d n=%d: P(X<=x | p=%g) = %g, want 0.05", c.x, c.n, p, cdf)
		}
	}
	if got := minAckedFor(1e-4); got != 29956 {
		t.Errorf("minAckedFor(1e-4) = %d, want 29956", got)
	}
}
