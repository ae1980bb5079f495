package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is an estimate with its confidence interval.
type Interval struct {
	Estimate float64 // the mean of the data (over the units that are not NaN; for several groups, the mean of the group means)
	Lo, Hi   float64 // the interval's ends (NaN when it cannot be had: fewer than 2 units, say)
	Units    int     // units with a value (not NaN), summed over groups
	Groups   int     // groups (seeds) with at least one unit
	Method   string  // how the ends were had: Method… ("" without ends)
	// Few: too few units for how skewed they are (Cochran's rule, n ≤
	// 25·g₁²; for 0/1 units, fewer than 15; any others fewer than 10),
	// where no interval is known to cover 95 %: the interval may be too
	// narrow.
	Few bool
}

// Bootstrap is a seeded bootstrap of means. Zero fields take the
// defaults.
type Bootstrap struct {
	Resamples int     // default 2000
	Level     float64 // default 0.95
	Seed      uint64  // the same seed gives the same intervals, bit for bit
	// Range is the values' natural bounds [lo, hi] (an accuracy's [0, 1]),
	// nil for none: intervals stay inside it, and units all at its ends
	// are a proportion (Agresti–Coull). Diff's differences lie within
	// [lo − hi, hi − lo].
	Range []float64
	// Skewness, where given (not nil, not NaN), is the skewness of the
	// score's values across the run — PooledSkewness of the other
	// methods' and seeds' series of it, or of the other pairs'
	// differences for Diff — and Interval.Few's rule reads the larger of
	// it and the sample's own: a sample's own skewness at tens of units
	// is too noisy to tell a skewed score from a symmetric one, and the
	// intervals it alone leaves unflagged undercover (the package doc
	// measures both).
	Skewness *float64
}

// Defaults of Bootstrap's zero fields.
const (
	DefaultResamples = 2000
	DefaultLevel     = 0.95
)

// Validate reports settings that cannot give an interval: a negative
// number of resamples, a level outside (0, 1), a range that is not two
// ordered numbers. The methods give NaN ends (and a NaN p) for such
// settings; Validate says why, for the caller to report where the
// settings came from.
func (b Bootstrap) Validate() error {
	var errs []error
	if b.Resamples < 0 {
		errs = append(errs, fmt.Errorf("bootstrap: %d resamples: want a positive number (0 for the default %d)", b.Resamples, DefaultResamples))
	}
	if b.Level != 0 && !(b.Level > 0 && b.Level < 1) {
		errs = append(errs, fmt.Errorf("bootstrap: level %v: want a confidence level in (0, 1), such as 0.95 (0 for the default)", b.Level))
	}
	if b.Range != nil && (len(b.Range) != 2 || !(b.Range[0] <= b.Range[1])) {
		errs = append(errs, fmt.Errorf("bootstrap: range %v: want [lo, hi] with lo ≤ hi, or none", b.Range))
	}
	return errors.Join(errs...)
}

// settings returns the resamples and level with the defaults filled in,
// and false when they are invalid.
func (b Bootstrap) settings() (resamples int, level float64, ok bool) {
	if b.Validate() != nil {
		return 0, 0, false
	}
	resamples, level = b.Resamples, b.Level
	if resamples == 0 {
		resamples = DefaultResamples
	}
	if level == 0 {
		level = DefaultLevel
	}
	return resamples, level, true
}

// Mean: data[g][i] is unit i of group g (a seed's run; units are test
// inputs; NaN = no value, ignored).
//
// One group: units all at the ends of the range (0/1 without one) are a
// proportion, with the Agresti–Coull interval; other units get the hull
// of the BCa and studentized bootstrap intervals of their resamples,
// inside the range; a constant series, a zero-width interval.
//
// Several groups (seeds): the seed is the unit — Student's t on the
// group means at g − 1 degrees of freedom, its standard error floored at
// the units' own noise (seeds.go), so that the variation between groups
// (retraining noise) counts however few the groups; the estimate is the
// mean of group means, the interval inside the range.
//
// The package doc gives the intervals' measured coverage.
func (b Bootstrap) Mean(data [][]float64) Interval {
	ends := []float64{0, 1}
	if b.Range != nil {
		ends = b.Range
	}
	return b.interval(data, b.Range, ends)
}

// Diff is the interval of the paired difference a − b: a[g][i] and
// b[g][i] are the same unit (input i of seed g) under two methods; units
// where either is NaN (or missing from the shorter of the two) are
// dropped. Mean's interval of the differences, inside [lo − hi, hi − lo]
// for a range [lo, hi] (differences all at its ends are a proportion;
// without a range, none are). Where no unit differs its Method is
// MethodNoneDiffer, with the ends [0, 0]: what the units say, not an
// interval of what other units would (to be written "no input differs").
// Paired tests the difference.
func (b Bootstrap) Diff(a, b2 [][]float64) Interval {
	var rng []float64
	if len(b.Range) == 2 {
		w := b.Range[1] - b.Range[0]
		rng = []float64{-w, w}
	}
	iv := b.interval(diffs(a, b2), rng, rng)
	if iv.Method == MethodConstant && iv.Estimate == 0 {
		iv.Method = MethodNoneDiffer
	}
	return iv
}

// interval is Mean's interval of data inside rng; units all at the two
// ends (nil: none) are a proportion.
func (b Bootstrap) interval(data [][]float64, rng, ends []float64) Interval {
	s := newSample([][][]float64{data})
	iv := Interval{Estimate: s.estimate(0), Lo: math.NaN(), Hi: math.NaN(), Units: s.units, Groups: len(s.groups)}
	resamples, level, ok := b.settings()
	if !ok || s.units < 2 {
		return iv
	}
	if ends, ok := twoPoint(s, ends); ok && len(s.groups) == 1 {
		// A proportion of the way from one end to the other.
		ones := 0
		for _, v := range s.groups[0] {
			if v == ends[1] {
				ones++
			}
		}
		lo, hi := agrestiCoull(ones, s.units, level)
		w := ends[1] - ends[0]
		iv.Lo, iv.Hi, iv.Method, iv.Few = ends[0]+w*lo, ends[0]+w*hi, MethodAgrestiCoull, s.units < minAgrestiCoull
		return iv
	}
	if s.constant() {
		// Every resample gives the same mean: say so exactly, not to
		// within the rounding of unequal group sizes.
		c := s.groups[0][0]
		iv.Estimate, iv.Lo, iv.Hi, iv.Method = c, c, c, MethodConstant
		return iv
	}
	if len(s.groups) == 1 {
		k := newCentred(s.groups[0])
		iv.Lo, iv.Hi = oneLevel(k, resamples, level, b.Seed, rng)
		iv.Method, iv.Few = MethodBootstrap, s.units < minStudentized || k.off < minStudentized || cochran(s.units, b.skew(k.skew))
		return iv
	}
	iv.Lo, iv.Hi = newSeedLevel(s).interval(level)
	if len(rng) == 2 {
		iv.Lo, iv.Hi = max(iv.Lo, rng[0]), min(iv.Hi, rng[1])
	}
	var all []float64
	for _, g := range s.groups {
		all = append(all, g...)
	}
	iv.Method, iv.Few = MethodSeeds, cochran(s.units, b.skew(newCentred(all).skew))
	return iv
}

// skew is the skewness Interval.Few is decided from: the larger of the
// sample's own and Bootstrap.Skewness, where that is given (and a
// number).
func (b Bootstrap) skew(own float64) float64 {
	if b.Skewness == nil || math.IsNaN(*b.Skewness) {
		return own
	}
	if math.IsNaN(own) {
		return *b.Skewness
	}
	return max(math.Abs(own), math.Abs(*b.Skewness))
}

// twoPoint reports whether every unit lies at one of the two ends (none
// without them), and which they are.
func twoPoint(s sample, ends []float64) ([2]float64, bool) {
	if len(ends) != 2 || !(ends[0] < ends[1]) {
		return [2]float64{}, false
	}
	for _, vals := range s.groups {
		for _, v := range vals {
			if v != ends[0] && v != ends[1] {
				return [2]float64{}, false
			}
		}
	}
	return [2]float64{ends[0], ends[1]}, true
}

// Paired tests "no difference" between a and b (paired as Diff pairs
// them) and returns the larger of two p-values, each settled against the
// thresholds it will be read against (see SignFlip):
//
//   - SignFlip's, exact where the methods are exchangeable on each unit
//     (each difference's distribution symmetric about 0), at any number of
//     units;
//   - one that does not need that symmetry: one group, the studentized
//     bootstrap test of a zero mean (the larger of its equal-tailed and
//     symmetric p-values); several groups, Student's t test on the
//     groups' mean differences at g − 1 degrees of freedom (seeds.go) —
//     which counts the noise between groups (retraining) that flipping
//     units' signs cannot, however few the groups.
//
// A difference is called only where both reject: the test's level is
// the sign-flip test's where that is exact, the bootstrap's where the
// differences are skewed with a zero mean, and the seeds' t test's where
// retraining noise dominates (the package doc gives all three). P is 1
// without a nonzero difference, NaN for invalid settings; PValue.Test
// names the test whose p it is.
func (b Bootstrap) Paired(a, b2 [][]float64, thresholds []float64) PValue {
	if _, _, ok := b.settings(); !ok {
		return PValue{P: math.NaN()}
	}
	d := diffs(a, b2)
	flip := SignFlip(a, b2, b.Seed, thresholds)
	s := newSample([][][]float64{d})
	if flip.P == 1 || s.units < 2 || s.constant() {
		return flip
	}
	var other PValue
	if len(s.groups) == 1 {
		// The larger p decides: at a threshold the sign-flip p already
		// lies above (settled), the bootstrap p decides nothing, and need
		// not be drawn until settled against it (among many pairs' Holm
		// levels, that drew millions of resamples a pair for nothing).
		var open []float64
		for _, t := range thresholds {
			if !(flip.P > t && (flip.Exact || flip.Settled)) {
				open = append(open, t)
			}
		}
		other = studentizedP(newCentred(s.groups[0]), b.Seed^bootSalt, open)
	} else {
		other = newSeedLevel(s).p()
	}
	if other.P > flip.P {
		return other
	}
	return flip
}

// bootSalt sets Paired's bootstrap stream apart from its sign flips'.
const bootSalt = 0x6a09e667f3bcc908

// Replicates returns, for several series measured on the same units
// (series[m][g][i]), the mean of each series in each bootstrap resample,
// all series under the SAME resampled indices: out[r][m]. The resampling
// is over the units where no series is NaN (a unit missing from a shorter
// series counts as NaN): one group, its units with replacement (the
// resamples behind Mean's one-group interval: the same indices); several,
// two levels — groups with replacement, then units within each chosen
// group — whose spread, with few groups, understates the noise between
// them (the package doc; Mean's several-group interval is Student's t
// over the groups instead). Nil when no unit has every value or the
// settings are invalid. (Used for rank probabilities: the share of
// resamples in which a method ranks first.)
func (b Bootstrap) Replicates(series [][][]float64) [][]float64 {
	resamples, _, ok := b.settings()
	s := newSample(series)
	if !ok || s.units == 0 {
		return nil
	}
	flat := make([]float64, resamples*s.m)
	s.replicate(resamples, b.Seed, flat)
	out := make([][]float64, resamples)
	for r := range out {
		out[r] = flat[r*s.m : (r+1)*s.m : (r+1)*s.m]
	}
	return out
}

// sample is the data a bootstrap resamples: the groups that have a unit,
// each holding its units' values for the m series unit-major
// (groups[g][u*m+s]), so one drawn index reads m adjacent values.
type sample struct {
	m      int
	groups [][]float64
	units  int
}

// newSample keeps the units where every series has a value.
func newSample(series [][][]float64) sample {
	s := sample{m: len(series)}
	if s.m == 0 {
		return s
	}
	ngroups := 0
	for _, x := range series {
		ngroups = max(ngroups, len(x))
	}
	for g := range ngroups {
		nunits := 0
		for _, x := range series {
			nunits = max(nunits, len(row(x, g)))
		}
		var vals []float64
	unit:
		for i := range nunits {
			for _, x := range series {
				if math.IsNaN(at(row(x, g), i)) {
					continue unit
				}
			}
			for _, x := range series {
				vals = append(vals, x[g][i])
			}
		}
		if len(vals) > 0 {
			s.groups = append(s.groups, vals)
			s.units += len(vals) / s.m
		}
	}
	return s
}

// estimate is series k's mean of group means (NaN without units).
func (s sample) estimate(k int) float64 {
	if len(s.groups) == 0 {
		return math.NaN()
	}
	var acc float64
	for _, vals := range s.groups {
		var sum float64
		for u := k; u < len(vals); u += s.m {
			sum += vals[u]
		}
		acc += sum / float64(len(vals)/s.m)
	}
	return acc / float64(len(s.groups))
}

// constant reports whether every value (of every series) is the same.
func (s sample) constant() bool {
	if len(s.groups) == 0 {
		return false
	}
	c := s.groups[0][0]
	for _, vals := range s.groups {
		for _, v := range vals {
			if v != c {
				return false
			}
		}
	}
	return true
}

// replicate writes the series' means in each of resamples bootstrap
// resamples into out[r*m+k]. One group: units drawn with replacement.
// Several: groups drawn with replacement, then each chosen group's units
// with replacement; the resample's mean is the mean of the chosen groups'
// means. Its cost is resamples × units draws, with no allocation beyond
// a buffer of 3m. A group holds fewer than 2³² units (2³² would take
// 32 GiB a series).
//
// Draws come in pairs (one PCG output each; see rng.go) and their values
// go to two sums, of the even and of the odd draws, added at the end: one
// running sum would make each addition wait for the last. Both paths (one
// series, several) add in that order, so a series' means do not depend on
// the series beside it.
func (s sample) replicate(resamples int, seed uint64, out []float64) {
	s.replicateWith(newRNG(seed), out[:resamples*s.m])
}

// replicateWith is replicate drawing from rng, len(out)/m resamples.
func (s sample) replicateWith(rng *rand.PCG, out []float64) {
	resamples := len(out) / s.m
	ng, m := len(s.groups), s.m
	acc := make([]float64, 3*m)
	acc, even, odd := acc[:m], acc[m:2*m], acc[2*m:]
	for r := range resamples {
		clear(acc)
		for k := range ng {
			g := k
			if ng > 1 {
				g = int(below(rng, uint64(ng)))
			}
			vals := s.groups[g]
			n := len(vals) / m
			n32, n64 := uint32(n), uint64(n)
			if m == 1 {
				var t0, t1 float64
				for range n / 2 {
					x := rng.Uint64()
					lo, hi := (x&(1<<32-1))*n64, (x>>32)*n64
					if uint32(lo) < n32 || uint32(hi) < n32 {
						lo, hi = rejectPair(rng, n32, lo, hi)
					}
					t0 += vals[lo>>32]
					t1 += vals[hi>>32]
				}
				if n%2 == 1 {
					t0 += vals[one(rng, n32)]
				}
				acc[0] += (t0 + t1) / float64(n)
				continue
			}
			clear(even)
			clear(odd)
			for range n / 2 {
				x := rng.Uint64()
				lo, hi := (x&(1<<32-1))*n64, (x>>32)*n64
				if uint32(lo) < n32 || uint32(hi) < n32 {
					lo, hi = rejectPair(rng, n32, lo, hi)
				}
				for k, v := range vals[int(lo>>32)*m:][:m] {
					even[k] += v
				}
				for k, v := range vals[int(hi>>32)*m:][:m] {
					odd[k] += v
				}
			}
			if n%2 == 1 {
				for k, v := range vals[int(one(rng, n32))*m:][:m] {
					even[k] += v
				}
			}
			for k := range acc {
				acc[k] += (even[k] + odd[k]) / float64(n)
			}
		}
		for k := range acc {
			out[r*m+k] = acc[k] / float64(ng)
		}
	}
}

// Percentiles are the ends of the central level interval of sorted x
// (linear interpolation between order statistics); x must not be empty.
func Percentiles(x []float64, level float64) (lo, hi float64) {
	alpha := (1 - level) / 2
	return quantile(x, alpha), quantile(x, 1-alpha)
}

// quantile is the p-quantile of sorted x by linear interpolation between
// order statistics (Hyndman and Fan's type 7, R's and NumPy's default),
// which stays within the range of x.
//
// An infinite order statistic (a studentized resample of one repeated
// value) makes the quantile infinite where it takes part.
func quantile(x []float64, p float64) float64 {
	h := p * float64(len(x)-1)
	i := int(math.Floor(h))
	if i >= len(x)-1 {
		return x[len(x)-1]
	}
	f := h - float64(i)
	switch {
	case f == 0 || x[i] == x[i+1]:
		return x[i]
	case math.IsInf(x[i], -1):
		return x[i]
	case math.IsInf(x[i+1], 1):
		return x[i+1]
	}
	return x[i] + f*(x[i+1]-x[i])
}

// row is x[g], nil beyond x's end.
func row(x [][]float64, g int) []float64 {
	if g < len(x) {
		return x[g]
	}
	return nil
}

// at is x[i], NaN (missing) beyond x's end.
func at(x []float64, i int) float64 {
	if i < len(x) {
		return x[i]
	}
	return math.NaN()
}

// HalfWidthBound is about the widest half-width the 95 % interval of a
// mean of n values within [lo, hi] has, to expect before any value is
// had: the studentized interval's at the largest spread such values
// allow (half of them at each end: s.d. (hi−lo)/2·√(n/(n−1))),
// t₀.₉₇₅(n−1)·(hi−lo)/(2√(n−1)). Values all at the ends — 0/1
// accuracies — get Agresti–Coull's, narrower: z·(hi−lo)/(2√(n+z²)) at
// most. For large n both are 0.98·(hi−lo)/√n. Skewed values on few inputs
// can widen an interval past it (their intervals are flagged: Interval.Few).
// NaN for n < 2 or hi < lo.
func HalfWidthBound(n int, lo, hi float64) float64 {
	if n < 2 || !(hi >= lo) {
		return math.NaN()
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	return t * (hi - lo) / (2 * math.Sqrt(float64(n-1)))
}
