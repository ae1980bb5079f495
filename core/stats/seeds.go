package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Several groups (seeds): the seed is the unit. Each seed is one trained
// model, and its mean over the inputs varies from seed to seed by the
// retraining noise, which no resampling of inputs sees and which g seeds
// measure with g − 1 degrees of freedom only. Mean's interval and
// Paired's test of several groups are therefore Student's t on the seeds'
// means (the "summary statistics" analysis of clustered data): the mean of
// the g seed means, its standard error from their spread, t at g − 1
// degrees of freedom. Exact where the seed means are normal with one
// variance — whatever the share of it retraining makes, as a resample of
// g seeds (the two-level bootstrap this package gave: 0.83–0.85 coverage
// at 3 seeds when retraining noise is 4 times an input mean's) is not.
//
// The variance of a seed's mean is at least its inputs' noise over their
// number, f, which the inputs measure far better than g seed means do.
// Seed means that agree more closely than f allows 39 times in 40 — their
// variance below f·χ²₀.₀₂₅(g−1)/(g−1), where retraining adds nothing —
// are taken to agree by chance: the variance is floored there. The floor
// only ever widens Student's interval, keeps seeds whose means tie
// exactly (on a grid) from a zero width, and costs little power: it
// binds in 2.5 % of runs without retraining noise. (A floor at f itself
// binds in half of them and makes t at g − 1 degrees of freedom far
// more conservative there: 3 seeds' 95 % intervals then covered 100 %, and
// their test found 5 % of the differences the pooled inputs find 80 % of
// the time.)

// MethodSeeds is Interval.Method of several groups' interval.
const MethodSeeds = "t over seed means"

// seedLevel is what several groups' interval and test need: the mean of
// the seed means, its standard error and its degrees of freedom.
type seedLevel struct {
	est, se float64
	df      int
}

// newSeedLevel summarises s's groups (two or more, one series).
func newSeedLevel(s sample) seedLevel {
	g := len(s.groups)
	means := make([]float64, g)
	var within, wdf, inv float64 // Σ squared deviations within seeds, their degrees of freedom, Σ 1/n
	for j, vals := range s.groups {
		var sum float64
		for _, v := range vals {
			sum += v
		}
		n := float64(len(vals))
		means[j] = sum / n
		for _, v := range vals {
			within += (v - means[j]) * (v - means[j])
		}
		wdf += n - 1
		inv += 1 / n
	}
	var est float64
	for _, m := range means {
		est += m
	}
	est /= float64(g)
	var between float64
	for _, m := range means {
		between += (m - est) * (m - est)
	}
	between /= float64(g - 1)
	v := between
	if wdf > 0 {
		f := within / wdf * inv / float64(g) // a seed mean's variance from its inputs' noise alone
		q := distuv.ChiSquared{K: float64(g - 1)}.Quantile(0.025) / float64(g-1)
		v = max(v, q*f)
	}
	return seedLevel{est: est, se: math.Sqrt(v / float64(g)), df: g - 1}
}

// quantile is Student's t quantile at the seeds' degrees of freedom.
func (l seedLevel) quantile(p float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(l.df)}.Quantile(p)
}

// interval is the level interval of the mean of seed means.
func (l seedLevel) interval(level float64) (lo, hi float64) {
	h := l.quantile(1-(1-level)/2) * l.se
	return l.est - h, l.est + h
}

// p is the two-sided p-value of a zero mean of seed means.
func (l seedLevel) p() PValue {
	v := PValue{Exact: true, Settled: true, Test: TestSeeds}
	switch {
	case l.est == 0:
		v.P = 1
	case l.se == 0 || math.IsInf(l.est, 0):
		v.P = 0
	default:
		v.P = min(1, 2*distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(l.df)}.Survival(math.Abs(l.est)/l.se))
	}
	if math.IsNaN(l.est) || math.IsNaN(l.se) {
		v.P = math.NaN()
	}
	return v
}

// DetectableSeeds is Detectable where the seeds are the unit: iv is a
// difference's interval over its iv.Groups seeds, Student's t at g − 1
// degrees of freedom (MethodSeeds), and the smallest true difference its
// t test at level alpha finds with probability power is about
// (t₁₋α/₂ + t_power)·se at g − 1 degrees of freedom, se the interval's
// half-width over t₍₁₊level₎/₂. (Detectable's normal quantiles would
// read 3 seeds' se 2.2 times too large.) NaN where iv has no ends or
// fewer than 2 groups.
func DetectableSeeds(iv Interval, level, alpha, power float64) float64 {
	se, ok := seedSE(iv, level, alpha, power)
	if !ok {
		return math.NaN()
	}
	return tPlan(iv.Groups, alpha, power) * se
}

// SeedsFor is UnitsFor where the seeds are the unit: about how many
// seeds a t test at level alpha needs to find a true difference d with
// probability power — the fewest g′ ≥ g with (t₁₋α/₂ + t_power)·se·√(g/g′)
// ≤ |d| at g′ − 1 degrees of freedom, se as DetectableSeeds reads it; at
// most 10⁶. 0 where d is 0 or not a number, or iv has no ends.
func SeedsFor(iv Interval, d, level, alpha, power float64) int {
	se, ok := seedSE(iv, level, alpha, power)
	if !ok || math.IsNaN(d) || d == 0 {
		return 0
	}
	g := iv.Groups
	sd := se * math.Sqrt(float64(g)) // of a seed's mean difference
	if math.IsInf(sd, 0) || sd == 0 {
		return g
	}
	// The normal formula's answer, then up while t's quantiles exceed it.
	z := normalQuantile(1-alpha/2) + normalQuantile(power)
	n := max(g, int(math.Ceil(float64(g)*math.Pow(z*se/math.Abs(d), 2))))
	for n < 1e6 && tPlan(n, alpha, power)*sd/math.Sqrt(float64(n)) > math.Abs(d)*(1+1e-12) {
		n = max(n+1, int(float64(n)*1.01))
	}
	return min(n, 1e6)
}

// seedSE is the standard error a seeds' interval rests on.
func seedSE(iv Interval, level, alpha, power float64) (float64, bool) {
	w := iv.Hi - iv.Lo
	if math.IsNaN(w) || iv.Groups < 2 || !(level > 0 && level < 1) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) {
		return 0, false
	}
	l := seedLevel{df: iv.Groups - 1}
	return w / (2 * l.quantile((1+level)/2)), true
}

// tPlan is t₁₋α/₂ + t_power at g − 1 degrees of freedom.
func tPlan(g int, alpha, power float64) float64 {
	l := seedLevel{df: g - 1}
	return l.quantile(1-alpha/2) + l.quantile(power)
}
