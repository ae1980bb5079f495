package report

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// A curve's point is a mean over test inputs; its band is the normal
// approximation of that mean's 95 % interval: mean ± 1.96·s.d./√n, from
// the inputs' spread the protocol kept (protocol.Curve.SD). Over several
// seeds, the point is the mean of the seeds' means, whose variance is
// estimated by the seeds' spread (which holds the retraining noise and the
// inputs' alike), but never below what the inputs' spread alone gives;
// with Student's t on k − 1 degrees of freedom where the seeds' spread
// decides, as k is small. Scalars get bootstrap intervals (Confidence);
// bands are for figures and the CSV's curve rows.

// z95 is the normal quantile of a two-sided 95 % interval.
const z95 = 1.959963984540054

// normalBand is y ± 1.96·sd/√n (NaN ends without a spread or with fewer
// than two inputs).
func normalBand(y, sd float64, n int) (lo, hi float64) {
	if math.IsNaN(sd) || n < 2 {
		return math.NaN(), math.NaN()
	}
	h := z95 * sd / math.Sqrt(float64(n))
	return y - h, y + h
}

// pointSD is a curve's spread at point j (NaN where it kept none).
func pointSD(cv protocol.Curve, j int) float64 {
	if j < len(cv.SD) {
		return cv.SD[j]
	}
	return math.NaN()
}

// band is a curve point pooled over seeds.
type band struct {
	mean, lo, hi float64
	n, seeds     int // inputs per seed; seeds
}

// pooledBand pools the point at x of the named curve over the records'
// seeds (see above).
func pooledBand(recs []store.Record, curve string, j int, x float64) band {
	var means, vars []float64
	n := 0
	for _, r := range recs {
		for _, cv := range r.Result.Curves {
			if cv.Name != curve || j >= len(cv.X) || cv.X[j] != x || !defined(cv.Y[j]) {
				continue
			}
			means = append(means, cv.Y[j])
			if j < len(cv.SD) && !math.IsNaN(cv.SD[j]) && cv.N > 1 {
				vars = append(vars, cv.SD[j]*cv.SD[j]/float64(cv.N))
				n = cv.N
			}
		}
	}
	b := band{mean: math.NaN(), lo: math.NaN(), hi: math.NaN(), n: n, seeds: len(means)}
	k := len(means)
	if k == 0 {
		return b
	}
	m, sd := meanSD(means)
	b.mean = m
	within := math.NaN() // the variance of one seed's mean from its inputs, averaged
	if len(vars) == k {
		within, _ = meanSD(vars)
	}
	switch {
	case k == 1 && !math.IsNaN(within):
		b.lo, b.hi = m-z95*math.Sqrt(within), m+z95*math.Sqrt(within)
	case k >= 2:
		between := sd * sd
		q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.Quantile(0.975)
		v := between
		if !math.IsNaN(within) && within > between {
			v, q = within, z95
		}
		h := q * math.Sqrt(v/float64(k))
		b.lo, b.hi = m-h, m+h
	}
	return b
}
