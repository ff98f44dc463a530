package sweep

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// USL is a fit of Gunther's Universal Scalability Law, X(N) = λN / (1 + σ(N-1) + κN(N-1)), to
// measured (N, X) points: N the load (mean concurrency, pods or tenants), X the throughput (acked/s).
// σ is contention (queueing on a shared resource), κ coherency (crosstalk that makes throughput fall
// past a peak).
type USL struct {
	Lambda float64 `json:"lambda"` // throughput of one unit of load with no contention
	Sigma  float64 `json:"sigma"`
	Kappa  float64 `json:"kappa"`
	R2     float64 `json:"r2"` // coefficient of determination of X over the points
	// Peaks is true when κ > 0: throughput rises to PeakX at load PeakN and falls after it. With κ = 0
	// it only approaches the asymptote λ/σ (PeakX; PeakN 0), or grows linearly (both 0) when σ = 0 too.
	Peaks  bool    `json:"peaks"`
	PeakN  float64 `json:"peak_n"`
	PeakX  float64 `json:"peak_x"`
	Points int     `json:"points"`
}

// X is the model's throughput at load n.
func (u USL) X(n float64) float64 {
	return u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))
}

// FitUSL fits the law by least squares on the linearised form N/X = a + b(N-1) + cN(N-1) (a = 1/λ,
// b = σ/λ, c = κ/λ), keeping σ and κ non-negative (a negative one is fixed at 0 and the rest refitted).
// It needs three points with distinct N and positive X.
func FitUSL(n, x []float64) (USL, error) {
	if len(n) != len(x) {
		return USL{}, errors.New("usl: n and x differ in length")
	}
	var ns, xs []float64
	seen := map[float64]bool{}
	for i := range n {
		if n[i] > 0 && x[i] > 0 && !math.IsNaN(n[i]) && !math.IsNaN(x[i]) {
			ns, xs = append(ns, n[i]), append(xs, x[i])
			seen[n[i]] = true
		}
	}
	if len(seen) < 3 {
		return USL{}, errors.New("usl: need at least three steps with distinct load and positive throughput")
	}
	var best USL
	var bestErr error = errors.New("usl: no fit")
	// Try the full model, then with σ or κ pinned at 0, then both; keep the first with non-negative
	// coefficients (the full model when it is admissible).
	for _, cols := range [][2]bool{{true, true}, {true, false}, {false, true}, {false, false}} {
		u, err := fit(ns, xs, cols[0], cols[1])
		if err != nil {
			bestErr = err
			continue
		}
		if u.Sigma >= 0 && u.Kappa >= 0 && u.Lambda > 0 {
			best, bestErr = u, nil
			break
		}
	}
	if bestErr != nil {
		return USL{}, bestErr
	}
	best.Points = len(ns)
	var mean, ssTot, ssRes float64
	for _, v := range xs {
		mean += v
	}
	mean /= float64(len(xs))
	for i := range xs {
		ssTot += (xs[i] - mean) * (xs[i] - mean)
		d := xs[i] - best.X(ns[i])
		ssRes += d * d
	}
	best.R2 = 1
	if ssTot > 0 {
		best.R2 = 1 - ssRes/ssTot
	}
	switch {
	case best.Kappa > 0:
		best.Peaks = true
		best.PeakN = math.Sqrt((1 - best.Sigma) / best.Kappa)
		if best.Sigma >= 1 {
			best.PeakN = 1
		}
		best.PeakX = best.X(best.PeakN)
	case best.Sigma > 0:
		best.PeakX = best.Lambda / best.Sigma
	}
	return best, nil
}

func fit(ns, xs []float64, withSigma, withKappa bool) (USL, error) {
	cols := 1
	if withSigma {
		cols++
	}
	if withKappa {
		cols++
	}
	a := mat.NewDense(len(ns), cols, nil)
	y := mat.NewVecDense(len(ns), nil)
	for i, n := range ns {
		j := 0
		a.Set(i, j, 1)
		if withSigma {
			j++
			a.Set(i, j, n-1)
		}
		if withKappa {
			j++
			a.Set(i, j, n*(n-1))
		}
		y.SetVec(i, n/xs[i])
	}
	var coef mat.VecDense
	if err := coef.SolveVec(a, y); err != nil {
		return USL{}, err
	}
	c := coef.RawVector().Data
	if c[0] <= 0 {
		return USL{Lambda: -1}, nil
	}
	u := USL{Lambda: 1 / c[0]}
	j := 1
	if withSigma {
		u.Sigma = c[j] * u.Lambda
		j++
	}
	if withKappa {
		u.Kappa = c[j] * u.Lambda
	}
	return u, nil
}
