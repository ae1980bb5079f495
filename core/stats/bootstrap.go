package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Interval is an estimate with its confidence interval.
type Interval struct {
	Estimate float64 // the mean of the data (over the units that are not NaN; for several groups, the mean of the group means)
	Lo, Hi   float64 // the interval's ends (NaN when it cannot be had: fewer than 2 units, say)
	Units    int     // units with a value (not NaN), summed over groups
	Groups   int     // groups (seeds) with at least one unit
}

// Bootstrap is a seeded percentile bootstrap. Zero fields take the
// defaults.
type Bootstrap struct {
	Resamples int     // default 2000
	Level     float64 // default 0.95
	Seed      uint64  // the same seed gives the same intervals, bit for bit
}

// Defaults of Bootstrap's zero fields.
const (
	DefaultResamples = 2000
	DefaultLevel     = 0.95
)

// Validate reports settings that cannot give an interval: a negative
// number of resamples, a level outside (0, 1). The methods give NaN ends
// (and a NaN p) for such settings; Validate says why, for the caller to
// report where the settings came from.
func (b Bootstrap) Validate() error {
	var errs []error
	if b.Resamples < 0 {
		errs = append(errs, fmt.Errorf("bootstrap: %d resamples: want a positive number (0 for the default %d)", b.Resamples, DefaultResamples))
	}
	if b.Level != 0 && !(b.Level > 0 && b.Level < 1) {
		errs = append(errs, fmt.Errorf("bootstrap: level %v: want a confidence level in (0, 1), such as 0.95 (0 for the default)", b.Level))
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
// One group: resample units with replacement (percentile interval of the
// mean). Several groups: two-level bootstrap — resample groups with
// replacement, then units within each chosen group — so that the variation
// between groups (retraining noise) counts; the estimate is the mean of
// group means. A constant series has a zero-width interval.
func (b Bootstrap) Mean(data [][]float64) Interval {
	iv, _ := b.interval(data)
	return iv
}

// Diff is the paired difference a − b: a[g][i] and b[g][i] are the same
// unit (input i of seed g) under two methods; units where either is NaN
// (or missing from the shorter of the two) are dropped. Same resampling
// scheme as Mean, the same resampled indices for a and b.
//
// p is the two-sided bootstrap p-value of "no difference":
// min(1, 2·min(share of resampled differences ≤ 0, share ≥ 0)), with the
// convention that a difference identically 0 gives p = 1. Its resolution
// is 1/Resamples: p = 0 reads "below 1/Resamples". p is 1 where the
// interval cannot be had (fewer than 2 units) and NaN for invalid settings.
func (b Bootstrap) Diff(a, b2 [][]float64) (d Interval, p float64) {
	diff := make([][]float64, max(len(a), len(b2)))
	for g := range diff {
		ag, bg := row(a, g), row(b2, g)
		diff[g] = make([]float64, max(len(ag), len(bg)))
		for i := range diff[g] {
			diff[g][i] = at(ag, i) - at(bg, i) // NaN when either is
		}
	}
	return b.interval(diff)
}

// interval is Mean's interval of data, with Diff's p-value of "the mean
// is 0".
func (b Bootstrap) interval(data [][]float64) (Interval, float64) {
	s := newSample([][][]float64{data})
	iv := Interval{Estimate: s.estimate(0), Lo: math.NaN(), Hi: math.NaN(), Units: s.units, Groups: len(s.groups)}
	resamples, level, ok := b.settings()
	switch {
	case !ok:
		return iv, math.NaN()
	case s.units < 2:
		return iv, 1
	case s.constant():
		// Every resample gives the same mean: say so exactly, not to
		// within the rounding of unequal group sizes.
		iv.Estimate, iv.Lo, iv.Hi = s.groups[0][0], s.groups[0][0], s.groups[0][0]
		if iv.Estimate == 0 {
			return iv, 1
		}
		return iv, 0
	}
	means := make([]float64, resamples)
	s.replicate(resamples, b.Seed, means)
	slices.Sort(means)
	iv.Lo, iv.Hi = percentiles(means, level)
	var le, ge int
	for _, m := range means {
		if m <= 0 {
			le++
		}
		if m >= 0 {
			ge++
		}
	}
	p := min(1, 2*float64(min(le, ge))/float64(resamples))
	return iv, p
}

// Replicates returns, for several series measured on the same units
// (series[m][g][i]), the mean of each series in each bootstrap resample,
// all series under the SAME resampled indices: out[r][m]. The resampling
// is Mean's (two-level for several groups) over the units where no series
// is NaN (a unit missing from a shorter series counts as NaN). With the
// same seed and the same units, a series' column holds exactly the
// resample means behind Mean's interval, and the difference of two
// columns is Diff's resampled difference up to rounding. Nil when no unit
// has every value or the settings are invalid. (Used for rank probabilities: the share of
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
	rng := newRNG(seed)
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

// percentiles are the ends of the central level interval of sorted x.
func percentiles(x []float64, level float64) (lo, hi float64) {
	alpha := (1 - level) / 2
	return quantile(x, alpha), quantile(x, 1-alpha)
}

// quantile is the p-quantile of sorted x by linear interpolation between
// order statistics (Hyndman and Fan's type 7, R's and NumPy's default),
// which stays within the range of x.
func quantile(x []float64, p float64) float64 {
	h := p * float64(len(x)-1)
	i := int(math.Floor(h))
	if i >= len(x)-1 {
		return x[len(x)-1]
	}
	return x[i] + (h-float64(i))*(x[i+1]-x[i])
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

// HalfWidthBound is the largest half-width a 95 % interval of a mean of n
// values within [lo, hi] can have by the normal approximation with the
// largest variance such values allow ((hi−lo)²/4: half the mass at each
// end): 1.96·(hi−lo)/(2√n). For accuracies (0/1) it is the worst-case
// binomial bound 0.98/√n. NaN for n < 1 or hi < lo.
func HalfWidthBound(n int, lo, hi float64) float64 {
	if n < 1 || !(hi >= lo) {
		return math.NaN()
	}
	return 1.96 * (hi - lo) / (2 * math.Sqrt(float64(n)))
}
