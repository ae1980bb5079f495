package stats

import (
	"cmp"
	"math"
	"slices"
)

// PValue is a p-value with how it was had: enumerated exactly (or, for
// Student's t over seeds, from its distribution), or drawn by Monte Carlo
// with its standard error.
type PValue struct {
	P     float64 // NaN where it cannot be had
	Exact bool    // not drawn: Error is 0
	// Error is the Monte-Carlo standard error of P, √(P(1−P)/Draws): P
	// is drawn afresh once the number of draws is chosen (settle), so
	// that this is its error however that number was chosen.
	Error float64
	Draws int // the Monte-Carlo draws P is had from (0 when exact), a pilot's besides having chosen their number
	// Settled: P lies more than settleZ standard errors from every
	// threshold it was asked to be read against, so that another seed
	// would decide alike (always true when exact). False where the draws
	// hit their limit first, or where a p within a few standard errors of
	// a threshold drew its fresh batch nearer it than settleZ.
	Settled bool
	Test    string // the test whose p it is: TestSignFlip, TestStudentized, TestSeeds, TestPermutation
}

// Tests (PValue.Test).
const (
	TestSignFlip    = "sign-flip"               // SignFlip: the units' signs flipped
	TestStudentized = "studentized bootstrap"   // one group's studentized bootstrap test
	TestSeeds       = "t over seeds"            // several groups: Student's t on the seeds' mean differences
	TestPermutation = "permutation of rankings" // KendallW
)

// Monte-Carlo p-values: a pilot of settlePilot draws, doubled while its
// p lies within settleZ standard errors of a threshold, up to settleWork
// values summed in all; then the p reported, drawn afresh from twice the
// pilot's last number of draws, and at least settleStart.
const (
	settlePilot = 500
	settleStart = 2000
	settleZ     = 3
	settleWork  = 1 << 28
)

// exactLimit bounds the configurations a p-value is enumerated over (for
// the sign-flip test, each half's).
const exactLimit = 1 << 20

// settle draws a Monte-Carlo p-value: draw(k, fresh) draws k more
// resamples and returns the p-value over those drawn since the last
// fresh start (fresh: forget the earlier ones first). A pilot's draws
// double until its p is settled against every threshold, or until
// maxDraws; the number it stopped at, doubled (at least settleStart, at
// most maxDraws), is then drawn afresh, and the fresh P is the one
// returned, with its binomial standard error. The pilot stops where its
// p happens to lie far from a threshold, so that the p it stops at lies
// farther from the exact p than its standard error says (3.4 % of runs
// beyond 2.5 standard errors where the exact p is a threshold, against
// the normal's 1.2 %, when this package reported it); a fresh batch of a
// number fixed before it is drawn has the error it states
// (TestMonteCarloErrorIsHonest), and, twice the pilot's, lies beyond
// settleZ of its own standard errors from the thresholds the pilot
// settled against in most runs. Far from every threshold it costs 2 500
// draws where the pilot's own p cost 2 000.
func settle(thresholds []float64, maxDraws int, draw func(k int, fresh bool) float64) PValue {
	maxDraws = max(maxDraws, settleStart)
	n := settlePilot
	p := draw(n, true)
	for 2*n <= maxDraws && !settled(p, n, thresholds) {
		p, n = draw(n, false), 2*n
	}
	n = min(max(2*n, settleStart), maxDraws)
	p = draw(n, true)
	return PValue{P: p, Error: mcError(p, n), Draws: n, Settled: settled(p, n, thresholds)}
}

// mcError is the binomial standard error of a p drawn from n draws.
func mcError(p float64, n int) float64 { return math.Sqrt(p * (1 - p) / float64(n)) }

// settled reports whether p, drawn from n draws, lies more than settleZ
// standard errors from every threshold.
func settled(p float64, n int, thresholds []float64) bool {
	for _, t := range thresholds {
		if math.Abs(p-t) <= settleZ*mcError(p, n) {
			return false
		}
	}
	return true
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
		return PValue{P: 1, Exact: true, Settled: true, Test: TestSignFlip}
	}
	// |S| ≥ |obs| up to the rounding of summing in another order.
	bar := math.Abs(obs) - 1e-9*scale
	if p, ok := signFlipExact(v, bar); ok {
		return PValue{P: p, Exact: true, Settled: true, Test: TestSignFlip}
	}
	rng := newRNG(seed)
	hits, n := 0, 0
	p := settle(thresholds, settleWork/len(v), func(k int, fresh bool) float64 {
		if fresh {
			hits, n = 0, 0
		}
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
	p.Test = TestSignFlip
	return p
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

// SettleDraws is how many resamples settle draws for a Monte-Carlo
// p-value whose pilot lands on p: the pilot's doublings while p lies
// within settleZ standard errors of a threshold (at most maxUnits/units
// draws, as the tests allow a p-value of units inputs), then the fresh
// batch. What an estimate counts before any p is drawn.
func SettleDraws(p float64, thresholds []float64, units int) int {
	maxDraws := max(settleWork/max(units, 1), settleStart)
	n := settlePilot
	for 2*n <= maxDraws && !settled(p, n, thresholds) {
		n *= 2
	}
	return n + min(max(2*n, settleStart), maxDraws)
}

// ExpectedSettleDraws is SettleDraws averaged over pairs whose difference
// lies anywhere between none and six standard errors (a z-score uniform
// on [0, 6], its two-sided normal p): the draws a report's paired tests
// take on average when nothing is known of the pairs yet. Pairs whose p
// lands near a threshold draw up to settleWork/units resamples each.
func ExpectedSettleDraws(thresholds []float64, units int) float64 {
	const steps = 600
	var sum float64
	for k := range steps {
		z := 6 * (float64(k) + 0.5) / steps
		sum += float64(SettleDraws(math.Erfc(z/math.Sqrt2), thresholds, units))
	}
	return sum / steps
}
