package verifier

import "math"

// LossUpper95 is the one-sided 95% Clopper-Pearson upper bound of a loss fraction after observing
// lost of n: the p at which P(Binomial(n, p) <= lost) = 0.05, i.e. the 0.95 quantile of
// Beta(lost+1, n-lost). With zero losses it is 1 - 0.05^(1/n) (about 3/n). n = 0 gives 1.
func LossUpper95(lost, n int64) float64 {
	return clopperPearsonUpper(lost, n, 0.05)
}

func clopperPearsonUpper(x, n int64, alpha float64) float64 {
	switch {
	case n <= 0 || x >= n:
		return 1
	case x <= 0:
		return -math.Expm1(math.Log(alpha) / float64(n))
	}
	return betaQuantile(1-alpha, float64(x+1), float64(n-x))
}

// betaQuantile inverts the regularized incomplete beta function by bisection (monotone in x, so
// bisection cannot diverge; 200 halvings reach float64 resolution anywhere in [0, 1]).
func betaQuantile(q, a, b float64) float64 {
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if regIncBeta(mid, a, b) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// regIncBeta is I_x(a, b), the regularized incomplete beta function, by its continued fraction
// (Lentz's method), using the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges slowly.
func regIncBeta(x, a, b float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(x, a, b) / a
	}
	return 1 - front*betaCF(1-x, b, a)/b
}

func betaCF(x, a, b float64) float64 {
	const tiny = 1e-300
	const eps = 1e-15
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 100000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// minAckedFor is the smallest |W| at which zero losses prove a loss fraction <= budget at 95%.
func minAckedFor(budget float64) int64 {
	if budget <= 0 || budget >= 1 {
		return 0
	}
	return int64(math.Ceil(math.Log(0.05) / math.Log1p(-budget)))
}
