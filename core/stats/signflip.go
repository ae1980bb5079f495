package stats

import (
	"cmp"
	"math"
	"slices"
)

// PValue is a p-value with how it was had: enumerated exactly, or drawn
// by Monte Carlo with its standard error.
type PValue struct {
	P     float64 // NaN where it cannot be had
	Exact bool    // enumerated: Error is 0
	Error float64 // the Monte-Carlo standard error of P, √(P(1−P)/Draws)
	Draws int     // Monte-Carlo draws (0 when exact)
	// Settled: P lies more than settleZ standard errors from every
	// threshold it was asked to be read against, so that another seed
	// would decide alike (always true when exact). False only where the
	// draws hit their limit first.
	Settled bool
}

// Monte-Carlo p-values draw settleStart draws, then double them while P
// lies within settleZ standard errors of a threshold, up to settleWork
// values summed in all (at least settleStart draws).
const (
	settleStart = 2000
	settleZ     = 3
	settleWork  = 1 << 28
)

// exactLimit bounds the configurations a p-value is enumerated over (for
// the sign-flip test, each half's).
const exactLimit = 1 << 20

// settle draws a Monte-Carlo p-value: draw(k) draws k more resamples and
// returns the p-value over all drawn so far. Draws double until P is
// settled against every threshold, or until maxDraws.
func settle(thresholds []float64, maxDraws int, draw func(k int) float64) PValue {
	maxDraws = max(maxDraws, settleStart)
	n := settleStart
	p := draw(n)
	for {
		v := PValue{P: p, Error: math.Sqrt(p * (1 - p) / float64(n)), Draws: n, Settled: true}
		for _, t := range thresholds {
			if math.Abs(p-t) <= settleZ*v.Error {
				v.Settled = false
			}
		}
		if v.Settled || 2*n > maxDraws {
			return v
		}
		p, n = draw(n), 2*n
	}
}

// hitsP is a Monte-Carlo p-value of hits resamples at least as extreme
// as the data among n: (hits+1)/(n+1), valid at any n (the data count
// as one of the draws).
func hitsP(hits, n int) float64 { return float64(hits+1) / float64(n+1) }

// SignFlip is the paired sign-flip permutation test of "no difference"
// between a and b (Fisher 1935; a[g][i] and b[g][i] are unit i of group
// g under two methods; units where either is NaN, or missing from the
// shorter, are dropped): under the null the methods are exchangeable on
// each unit, so each difference's sign is a fair coin. The statistic is
// the estimate Mean gives the differences — the mean of the groups' mean
// differences — and P the share of the 2^units sign patterns whose
// statistic is at least as far from 0 as the data's (two-sided; a zero
// difference flips to itself and changes nothing).
//
// P is exact — enumerated over the sign patterns of the distinct nonzero
// differences, with their multiplicities — where those number at most
// 2⁴⁰ (every campaign of up to 40 differing inputs, and discrete scores
// with few distinct differences), else drawn by Monte Carlo, seeded,
// settled against the thresholds (the levels the p-value will be read
// against: Alpha, or Holm's Alpha/k) by drawing more (PValue.Settled).
// The level is exact at any number of units: 4 of 1 200 inputs that
// differ, all one way, give P = 2/2⁴ = 0.125.
//
// Several groups: the units' signs flip alone, so the test holds the
// groups' (seeds') models fixed and counts no retraining noise; Paired
// adds it.
//
// P is 1 with no nonzero difference.
func SignFlip(a, b [][]float64, seed uint64, thresholds []float64) PValue {
	s := newSample([][][]float64{diffs(a, b)})
	// Unit u's weight in the statistic: 1/(groups · its group's units).
	var v []float64
	var obs, scale float64
	for _, vals := range s.groups {
		w := 1 / float64(len(s.groups)*len(vals))
		for _, d := range vals {
			if d != 0 {
				v = append(v, math.Abs(w*d))
				obs += w * d
				scale += math.Abs(w * d)
			}
		}
	}
	if len(v) == 0 || math.IsNaN(obs) || math.IsInf(scale, 0) {
		return PValue{P: 1, Exact: true, Settled: true}
	}
	// |S| ≥ |obs| up to the rounding of summing in another order.
	bar := math.Abs(obs) - 1e-9*scale
	if p, ok := signFlipExact(v, bar); ok {
		return PValue{P: p, Exact: true, Settled: true}
	}
	rng := newRNG(seed)
	hits, n := 0, 0
	return settle(thresholds, settleWork/len(v), func(k int) float64 {
		n += k
		for range k {
			var sum float64
			for i := 0; i < len(v); i += 64 {
				bits := rng.Uint64()
				for _, x := range v[i:min(i+64, len(v))] {
					// x with a random sign: a bit of the draw into its sign bit.
					sum += math.Float64frombits(math.Float64bits(x) ^ bits<<63)
					bits >>= 1
				}
			}
			if math.Abs(sum) >= bar {
				hits++
			}
		}
		return hitsP(hits, n)
	})
}

// signFlipExact is P(|Σ ±v| ≥ bar) over fair signs: exact, enumerated
// over how many of each distinct value are positive (binomial weights),
// meeting in the middle — the distinct values split in two halves, one
// half's sums sorted and each of the other's matched against them by
// binary search — so that 2⁴⁰ configurations cost 2·2²⁰; false where a
// half would have more than exactLimit.
func signFlipExact(v []float64, bar float64) (float64, bool) {
	if bar <= 0 {
		return 1, true
	}
	v = slices.Clone(v)
	slices.SortFunc(v, func(x, y float64) int { return cmp.Compare(y, x) })
	// Distinct values, each to the half with fewer configurations.
	var halves [2][]signGroup
	configs := [2]float64{1, 1}
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && v[j] == v[i] {
			j++
		}
		h := 0
		if configs[1] < configs[0] {
			h = 1
		}
		halves[h] = append(halves[h], signGroup{v[i], j - i})
		configs[h] *= float64(j - i + 1)
		if configs[h] > exactLimit {
			return 0, false
		}
		i = j
	}
	a, b := signSums(halves[0]), signSums(halves[1])
	slices.SortFunc(b, func(x, y weighted) int { return cmp.Compare(x.sum, y.sum) })
	cum := make([]float64, len(b)+1) // cum[k]: the probability of b[:k]
	for k, x := range b {
		cum[k+1] = cum[k] + x.prob
	}
	var p float64
	for _, x := range a {
		// b's sums ≥ bar − x.sum, and ≤ −bar − x.sum (below the first, as
		// bar > 0).
		hi, _ := slices.BinarySearchFunc(b, bar-x.sum, func(y weighted, t float64) int { return cmp.Compare(y.sum, t) })
		lo, _ := slices.BinarySearchFunc(b, -bar-x.sum, func(y weighted, t float64) int {
			if y.sum <= t {
				return -1
			}
			return 1
		})
		p += x.prob * (cum[len(b)] - cum[hi] + cum[lo])
	}
	return min(1, p), true
}

// signGroup is a distinct absolute difference and how many units have it.
type signGroup struct {
	v     float64
	count int
}

// weighted is a signed sum with its probability.
type weighted struct{ sum, prob float64 }

// signSums is every sum Σ v·(2k − count) the groups give, k of each
// group's count positive, with its probability Π C(count, k)/2^count.
func signSums(groups []signGroup) []weighted {
	out := []weighted{{0, 1}}
	for _, g := range groups {
		// C(t, k)/2^t by logarithms (2^-t underflows past t = 1074).
		t := g.count
		lt, _ := math.Lgamma(float64(t + 1))
		probs := make([]float64, t+1)
		for k := range probs {
			lk, _ := math.Lgamma(float64(k + 1))
			lr, _ := math.Lgamma(float64(t - k + 1))
			probs[k] = math.Exp(lt - lk - lr - float64(t)*math.Ln2)
		}
		next := make([]weighted, 0, len(out)*(t+1))
		for _, x := range out {
			for k, q := range probs {
				next = append(next, weighted{x.sum + g.v*float64(2*k-t), x.prob * q})
			}
		}
		out = next
	}
	return out
}

// diffs is a − b unit by unit, NaN where either is missing.
func diffs(a, b [][]float64) [][]float64 {
	d := make([][]float64, max(len(a), len(b)))
	for g := range d {
		ag, bg := row(a, g), row(b, g)
		d[g] = make([]float64, max(len(ag), len(bg)))
		for i := range d[g] {
			d[g][i] = at(ag, i) - at(bg, i) // NaN when either is
		}
	}
	return d
}
