package stats

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// The interval of one group's mean (see the package doc for why these):
// Agresti–Coull for 0/1 units, else the hull of the BCa and the
// studentized bootstrap intervals over the same resamples.

// Interval methods (Interval.Method).
const (
	MethodConstant     = "constant"        // every unit the same: no spread to resample
	MethodNoneDiffer   = "no unit differs" // Diff: every difference 0, ends [0, 0]
	MethodAgrestiCoull = "agresti-coull"   // 0/1 units: a binomial proportion
	MethodBootstrap    = "bca+studentized" // one group: the hull of the BCa and studentized bootstrap intervals
	// several groups: MethodSeeds (seeds.go)
)

// minAgrestiCoull is the fewest units at which the Agresti–Coull interval
// covers at least 93 % for every proportion (its exact coverage, the
// minimum over p: 0.925 at 10 units, 0.932 at 15, 0.929 at 20, 0.939 at
// 100; Brown, Cai & DasGupta 2001): fewer are flagged.
const minAgrestiCoull = 15

// cochran is Cochran's rule (Sampling Techniques, 1977, §2.15) for the
// mean of n values of sample skewness g1 to be near enough normal for a
// 95 % interval: n > 25·g1². Fewer units are flagged (Interval.Few).
func cochran(n int, g1 float64) bool { return float64(n) <= 25*g1*g1 }

// PooledSkewness is the skewness of a score's values across a run, for
// Interval.Few's rule (Bootstrap.Skewness): each series — one method's
// values under one seed, or one pair's differences — centred on its own
// mean and scaled by its own standard deviation, the series pooled, and
// the adjusted Fisher–Pearson skewness G1 of the pool. A run's methods
// and seeds draw a score from distributions of much the same shape, and
// their hundreds of values tell that shape where one series' tens cannot:
// 20 lognormal values often look symmetric, so that the intervals a
// series' own skewness leaves unflagged are the ones that undercover
// (the package doc's table). NaN values are left out, and series of
// fewer than 3 values or none apart; NaN where fewer than 3 values are
// left.
func PooledSkewness(series [][]float64) float64 {
	var m2, m3 float64
	n := 0
	for _, x := range series {
		var vals []float64
		for _, v := range x {
			if !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
		if len(vals) < 3 {
			continue
		}
		k := newCentred(vals)
		if !(k.sd > 0) || math.IsInf(k.sd, 0) {
			continue
		}
		for _, c := range k.c {
			z := c / k.sd
			m2 += z * z
			m3 += z * z * z
		}
		n += len(vals)
	}
	if n < 3 || m2 == 0 {
		return math.NaN()
	}
	nf := float64(n)
	g := (m3 / nf) / math.Pow(m2/nf, 1.5)
	return g * math.Sqrt(nf*(nf-1)) / (nf - 2)
}

// binary reports whether every value is 0 or 1.
func binary(x []float64) bool {
	for _, v := range x {
		if v != 0 && v != 1 {
			return false
		}
	}
	return true
}

// agrestiCoull is the Agresti–Coull interval (Agresti & Coull 1998) of
// the proportion of ones among n 0/1 values at the level: add z²/2
// successes and failures, then the Wald interval, clamped to [0, 1].
func agrestiCoull(ones, n int, level float64) (lo, hi float64) {
	z := normalQuantile(1 - (1-level)/2)
	nt := float64(n) + z*z
	p := (float64(ones) + z*z/2) / nt
	h := z * math.Sqrt(p*(1-p)/nt)
	return max(0, p-h), min(1, p+h)
}

// centred is one group's values less their mean, with what the one-level
// bootstrap needs of them.
type centred struct {
	c    []float64 // x − mean
	mean float64
	sd   float64 // sample standard deviation (n − 1)
	skew float64 // adjusted Fisher–Pearson skewness G1 (NaN below 3 values)
	acc  float64 // BCa's acceleration Σc³ / (6 (Σc²)^{3/2}): the jackknife's, in closed form for a mean
	tie  float64 // a resample's deviation this small is rounding: the resample ties the data's mean
	off  int     // where most units tie at one value, the units off it; else n
	at   float64 // that value
}

func newCentred(x []float64) centred {
	n := float64(len(x))
	var s float64
	for _, v := range x {
		s += v
	}
	k := centred{c: make([]float64, len(x)), mean: s / n, skew: math.NaN()}
	var m2, m3, top float64
	for i, v := range x {
		d := v - k.mean
		k.c[i] = d
		m2 += d * d
		m3 += d * d * d
		top = max(top, math.Abs(d))
	}
	k.tie = 1e-9 * top
	k.off = len(x)
	if c, at := mostCommon(x); 2*c > len(x) {
		k.off, k.at = len(x)-c, at
	}
	k.sd = math.Sqrt(m2 / (n - 1))
	if m2 > 0 {
		k.acc = m3 / (6 * math.Pow(m2, 1.5))
		if len(x) >= 3 {
			g := (m3 / n) / math.Pow(m2/n, 1.5)
			k.skew = g * math.Sqrt(n*(n-1)) / (n - 2)
		}
	}
	return k
}

// draws writes, for each of len(dev) resamples of the centred values
// (drawn as sample.replicate draws one group's units: the same indices
// from the same generator), the resample's mean less the data's, and its
// studentized value dev / (s.d. / √n): ±Inf for a resample of one
// repeated value unequal to the mean, 0 for one equal to it.
func (k centred) draws(rng *rand.PCG, dev, t []float64) {
	c := k.c
	n := len(c)
	n32, n64, nf := uint32(n), uint64(n), float64(n)
	for r := range dev {
		var s0, s1, q0, q1 float64
		for range n / 2 {
			x := rng.Uint64()
			lo, hi := (x&(1<<32-1))*n64, (x>>32)*n64
			if uint32(lo) < n32 || uint32(hi) < n32 {
				lo, hi = rejectPair(rng, n32, lo, hi)
			}
			a, b := c[lo>>32], c[hi>>32]
			s0, s1, q0, q1 = s0+a, s1+b, q0+a*a, q1+b*b
		}
		if n%2 == 1 {
			a := c[one(rng, n32)]
			s0, q0 = s0+a, q0+a*a
		}
		s, q := s0+s1, q0+q1
		d := s / nf
		if math.Abs(d) <= k.tie {
			d = 0
		}
		v := (q - s*d) / (nf - 1)
		dev[r] = d
		switch {
		case v > 1e-12*q/(nf-1): // a spread beyond rounding
			t[r] = d / math.Sqrt(v/nf)
		case d > 0:
			t[r] = math.Inf(1)
		case d < 0:
			t[r] = math.Inf(-1)
		default:
			t[r] = 0
		}
	}
}

// mostCommon is how many of x share its most common value.
func mostCommon(x []float64) (int, float64) {
	s := slices.Clone(x)
	slices.Sort(s)
	best, at := 0, math.NaN()
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if j-i > best {
			best, at = j-i, s[i]
		}
		i = j
	}
	return best, at
}

// minStudentized is the fewest units whose resamples studentize well:
// below, a resample of a few values is often nearly constant, its t*
// huge, and the studentized interval of 5 normal values covers no more
// than Student's t interval (0.95) at 1.7 times its width (1.1 times at
// 8, 1.02 at 15).
const minStudentized = 10

// oneLevel is the interval of one group's mean from resamples bootstrap
// resamples: the hull of the BCa interval and the studentized
// (bootstrap-t) interval of the same resamples, inside rng when it is
// given. Each undercovers where the other does not — BCa on skewed
// continuous scores at tens of units, the studentized interval on sparse
// discrete ones — and the hull covers where either does (the package
// doc's table). A studentized end that the resamples cannot bound is
// left to BCa. Below minStudentized units Student's t interval stands in
// for the studentized one (and the interval is flagged: Interval.Few).
func oneLevel(k centred, resamples int, level float64, seed uint64, rng []float64) (lo, hi float64) {
	dev, t := make([]float64, resamples), make([]float64, resamples)
	k.draws(newRNG(seed), dev, t)
	bLo, bHi := k.bca(dev, level)
	tLo, tHi := k.studentized(t, level)
	if n := len(k.c); n < minStudentized {
		q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-level)/2)
		se := k.sd / math.Sqrt(float64(n))
		tLo, tHi = k.mean-q*se, k.mean+q*se
	}
	// An infinite studentized end — more than (1−level)/2 of the
	// resamples one repeated value, as where 2 of 200 inputs differ —
	// bounds nothing: BCa's alone counts there.
	if math.IsInf(tLo, 0) {
		tLo = bLo
	}
	if math.IsInf(tHi, 0) {
		tHi = bHi
	}
	lo, hi = min(bLo, tLo), max(bHi, tHi)
	if n := len(k.c); k.off < n {
		// Most units tied at one value (two methods alike on most inputs)
		// carry little of the mean's noise, which the k.off others carry:
		// Student's t at their degrees of freedom joins the hull. (The
		// resamples of a few differing values undercover: 95 % of 100
		// differences 0, the hull alone covered 0.85–0.90.)
		q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(max(k.off-1, 1))}.Quantile(1 - (1-level)/2)
		se := k.sd / math.Sqrt(float64(n))
		lo, hi = min(lo, k.mean-q*se), max(hi, k.mean+q*se)
		if len(rng) == 2 {
			// Within a known range a few differing units cannot move the
			// mean further than their share allows: the mean is the tied
			// value plus the share off it times their pull, each unit at
			// most the range away. A share bounded above (Agresti–Coull,
			// at the level) bounds the mean, where t at a few degrees of
			// freedom bounds little (2 of 200 inputs that differ: t with
			// one degree gave ±0.09 on a mean difference of 0.01).
			_, share := agrestiCoull(k.off, n, level)
			lo, hi = max(lo, k.at+share*(rng[0]-k.at)), min(hi, k.at+share*(rng[1]-k.at))
		}
	}
	if len(rng) == 2 {
		lo, hi = max(lo, rng[0]), min(hi, rng[1])
	}
	return lo, hi
}

// bca is the BCa interval (Efron 1987) from the resample means' deviations
// from the data's (sorted in place): their percentiles at levels moved by
// the bias z₀ — from the share of deviations below 0, ties counted half,
// kept within the resamples' resolution — and the acceleration.
func (k centred) bca(dev []float64, level float64) (lo, hi float64) {
	alpha := (1 - level) / 2
	below := 0.0
	for _, d := range dev {
		switch {
		case d < 0:
			below++
		case d == 0:
			below += 0.5
		}
	}
	b := float64(len(dev))
	z0 := normalQuantile(min(max(below/b, 0.5/b), 1-0.5/b))
	adjust := func(a float64) float64 {
		z := z0 + normalQuantile(a)
		return normalCDF(z0 + z/(1-k.acc*z))
	}
	slices.Sort(dev)
	return k.mean + quantile(dev, adjust(alpha)), k.mean + quantile(dev, adjust(1-alpha))
}

// studentized is the bootstrap-t interval (Efron & Tibshirani 1993,
// §12.5) from the resamples' studentized deviations (sorted in place):
// mean − t*₁₋α·se, mean − t*α·se.
func (k centred) studentized(t []float64, level float64) (lo, hi float64) {
	alpha := (1 - level) / 2
	slices.Sort(t)
	se := k.sd / math.Sqrt(float64(len(k.c)))
	return k.mean - quantile(t, 1-alpha)*se, k.mean - quantile(t, alpha)*se
}

// normalQuantile is the standard normal distribution's p-quantile.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// normalCDF is the standard normal distribution function.
func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// studentizedP is the studentized bootstrap test's p-value of "the mean
// is 0" (Efron & Tibshirani 1993, §16.4; Hall 1988): the data's t =
// mean/se against the resamples' studentized deviations t* from the
// data's mean, two-sided both ways — equal-tailed, 2·min(share t* ≥ t,
// share t* ≤ t), and symmetric, share |t*| ≥ |t| — the larger of the
// two, settled against the thresholds. Each alone rejects 5.5–6 % of
// centred exponential differences at 20 to 100 inputs; the larger, 4 %.
func studentizedP(k centred, seed uint64, thresholds []float64) PValue {
	se := k.sd / math.Sqrt(float64(len(k.c)))
	obs := k.mean / se
	rng := newRNG(seed)
	var dev, t []float64
	ge, le, far, n := 0, 0, 0, 0
	p := settle(thresholds, settleWork/len(k.c), func(more int, fresh bool) float64 {
		if fresh {
			ge, le, far, n = 0, 0, 0, 0
		}
		dev, t = slices.Grow(dev[:0], more)[:more], slices.Grow(t[:0], more)[:more]
		k.draws(rng, dev, t)
		for _, x := range t {
			if x >= obs {
				ge++
			}
			if x <= obs {
				le++
			}
			if math.Abs(x) >= math.Abs(obs) {
				far++
			}
		}
		n += more
		return max(min(1, 2*hitsP(min(ge, le), n)), hitsP(far, n))
	})
	p.Test = TestStudentized
	return p
}
