package report

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"faithlab/core/protocol"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// A curve's point is a mean over test inputs; its band is that mean's
// 95 % interval, inside the curve's natural range. Where the inputs'
// values are 0/1 — an accuracy: the spread the protocol kept
// (protocol.Curve.SD) is exactly a proportion's — it is the Agresti–Coull
// interval, which stays in [0, 1] and never has zero width; otherwise the
// normal approximation, mean ± 1.96·s.d./√n, clipped to the range. Over
// several seeds, the point is the mean of the seeds' means, whose variance
// is estimated by the seeds' spread (which holds the retraining noise and
// the inputs' alike), but never below what the inputs' spread alone gives;
// with Student's t on k − 1 degrees of freedom where the seeds' spread
// decides, as k is small. Scalars get bootstrap intervals (Confidence);
// bands are for figures and the CSV's curve rows.

// z95 is the normal quantile of a two-sided 95 % interval.
const z95 = 1.959963984540054

// pointBand is the band of a point y whose n inputs spread by sd, inside
// rng (nil: none). NaN ends without a spread or with fewer than two
// inputs.
func pointBand(y, sd float64, n int, rng []float64) (lo, hi float64) {
	if math.IsNaN(sd) || n < 2 {
		return math.NaN(), math.NaN()
	}
	if len(rng) == 2 && twoPoint(y, sd, n, rng) {
		w := rng[1] - rng[0]
		ones := int(math.Round((y - rng[0]) / w * float64(n)))
		iv := stats.Bootstrap{Range: []float64{0, 1}}.Mean([][]float64{proportion(ones, n)})
		return rng[0] + w*iv.Lo, rng[0] + w*iv.Hi
	}
	h := z95 * sd / math.Sqrt(float64(n))
	return clipTo(y-h, y+h, rng)
}

// twoPoint reports whether n values of mean y and sample s.d. sd can only
// be values at the range's two ends: a whole count of them at the top,
// and the spread such values have, Σ(x−ȳ)² = n·p(1−p)·w², to rounding.
func twoPoint(y, sd float64, n int, rng []float64) bool {
	w := rng[1] - rng[0]
	if !(w > 0) {
		return false
	}
	p := (y - rng[0]) / w
	k := math.Round(p * float64(n))
	if math.Abs(p*float64(n)-k) > 1e-6 || k < 0 || k > float64(n) {
		return false
	}
	p = k / float64(n)
	want := math.Sqrt(float64(n)*p*(1-p)/float64(n-1)) * w
	return math.Abs(sd-want) <= 1e-6*max(w, sd)
}

// proportion is n values, ones of them 1, the rest 0.
func proportion(ones, n int) []float64 {
	x := make([]float64, n)
	for i := range ones {
		x[i] = 1
	}
	return x
}

// clipTo keeps [lo, hi] inside rng (nil: unchanged).
func clipTo(lo, hi float64, rng []float64) (float64, float64) {
	if len(rng) == 2 {
		lo, hi = max(lo, rng[0]), min(hi, rng[1])
	}
	return lo, hi
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
// seeds (see above), inside rng (nil: none).
func pooledBand(recs []store.Record, curve string, j int, x float64, rng []float64) band {
	var means, vars []float64
	n, spread := 0, math.NaN() // inputs per seed; the inputs' spread of the first seed that kept one
	for _, r := range recs {
		for _, cv := range r.Result.Curves {
			if cv.Name != curve || j >= len(cv.X) || cv.X[j] != x || !defined(cv.Y[j]) {
				continue
			}
			means = append(means, cv.Y[j])
			if j < len(cv.SD) && !math.IsNaN(cv.SD[j]) && cv.N > 1 {
				vars = append(vars, cv.SD[j]*cv.SD[j]/float64(cv.N))
				n = cv.N
				if math.IsNaN(spread) {
					spread = cv.SD[j]
				}
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
	case k == 1:
		b.lo, b.hi = pointBand(m, spread, n, rng)
	case k >= 2:
		between := sd * sd
		q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.Quantile(0.975)
		v := between
		if !math.IsNaN(within) && within > between {
			v, q = within, z95
		}
		h := q * math.Sqrt(v/float64(k))
		b.lo, b.hi = clipTo(m-h, m+h, rng)
	}
	return b
}
