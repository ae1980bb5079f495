package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Exact sign-flip p-values by hand: with k nonzero differences the 2^k
// sign patterns are equally likely under the null, and P counts those
// whose mean difference is at least as far from 0 as the data's.
func TestSignFlipExactHandWorked(t *testing.T) {
	zeros := func(n int) []float64 { return make([]float64, n) }
	sparse := zeros(1200)
	for i := range 4 {
		sparse[100*i+7] = 1
	}
	for _, tc := range []struct {
		name string
		a, b []float64
		p    float64
	}{
		// 4 of 1 200 inputs differ, all one way: only the all-positive and
		// all-negative patterns of the four reach |4|: 2/16, whatever the
		// 1 196 ties (a bootstrap said 0.035).
		{"4 of 1200 differ, one way", sparse, zeros(1200), 2.0 / 16},
		// d = 1 2 3 −4: |Σ| = 2. Sums of ±1±2±3±4 reaching |2| or more:
		// all but those summing to 0 (1+4 = 2+3: 2 patterns each way) —
		// 16 − 2 = 14 of 16.
		{"1 2 3 −4", []float64{1, 2, 3, -4}, zeros(4), 14.0 / 16},
		// d = 5 5 5 −1: |Σ| = 14; reaching it: ±(5+5+5±1) → 16 and 14, 4
		// of 16.
		{"ties count by their multiplicity", []float64{5, 5, 5, -1}, zeros(4), 4.0 / 16},
		// Ten equal positive differences: 2/1024.
		{"ten of ten one way", []float64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, []float64{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, 2.0 / 1024},
		{"no difference", []float64{1, 2, 3}, []float64{1, 2, 3}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := SignFlip([][]float64{tc.a}, [][]float64{tc.b}, 1, []float64{0.05})
			if !p.Exact || !p.Settled || p.Draws != 0 || !near(p.P, tc.p, 1e-12) {
				t.Errorf("SignFlip = %+v; want exactly %v", p, tc.p)
			}
		})
	}
	// The paired test is never below the sign-flip test's p.
	if p := (Bootstrap{Seed: 1}).Paired([][]float64{sparse}, [][]float64{zeros(1200)}, []float64{0.05}); p.P < 0.125 {
		t.Errorf("Paired on 4 of 1200 = %+v; want ≥ 0.125", p)
	}
}

// Up to 40 distinct differing inputs are enumerated exactly (meeting in
// the middle), here 24 against a brute force over the 2²⁴ patterns; more
// are drawn.
func TestSignFlipExactAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	d := make([]float64, 24)
	for i := range d {
		d[i] = 0.3 + r.NormFloat64()
	}
	p := SignFlip([][]float64{d}, [][]float64{make([]float64, 24)}, 1, nil)
	var obs float64
	for _, v := range d {
		obs += v
	}
	hits := 0
	for mask := range 1 << 24 {
		var s float64
		for i, v := range d {
			if mask>>i&1 == 1 {
				s += math.Abs(v)
			} else {
				s -= math.Abs(v)
			}
		}
		if math.Abs(s) >= math.Abs(obs)-1e-9 {
			hits++
		}
	}
	if want := float64(hits) / (1 << 24); !p.Exact || !near(p.P, want, 1e-12) {
		t.Errorf("SignFlip = %+v; brute force %v", p, want)
	}
	more := make([]float64, 50)
	for i := range more {
		more[i] = r.NormFloat64()
	}
	if p := SignFlip([][]float64{more}, [][]float64{make([]float64, 50)}, 1, nil); p.Exact || p.Draws == 0 {
		t.Errorf("50 distinct differences: %+v; want drawn", p)
	}
}

// A Monte-Carlo p near a threshold draws more until its side of it is
// beyond settleZ standard errors: here a shift whose p is near 0.05 needs
// more than the first 2 000 draws; one far from it does not. The same
// seed gives the same p.
func TestMonteCarloPSettlesAtTheThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	var near05 []float64
	var p PValue
	for try := range 200 {
		d := make([]float64, 60)
		for i := range d {
			d[i] = 0.25 + r.NormFloat64()
		}
		p = SignFlip([][]float64{d}, [][]float64{make([]float64, 60)}, uint64(try), []float64{0.05})
		if p.Draws > settleStart {
			near05 = d
			break
		}
	}
	if near05 == nil {
		t.Fatal("no draw near 0.05 in 200 tries")
	}
	if !p.Settled || math.Abs(p.P-0.05) <= settleZ*p.Error || p.Error != math.Sqrt(p.P*(1-p.P)/float64(p.Draws)) {
		t.Errorf("near 0.05: %+v; want settled beyond %v standard errors", p, settleZ)
	}
	if q := SignFlip([][]float64{near05}, [][]float64{make([]float64, 60)}, 7, []float64{0.05}); (q.P < 0.05) != (p.P < 0.05) {
		t.Errorf("another seed decides otherwise: %+v against %+v", q, p)
	}
	far := make([]float64, 60)
	for i := range far {
		far[i] = 2 + r.NormFloat64()
	}
	if q := SignFlip([][]float64{far}, [][]float64{make([]float64, 60)}, 1, []float64{0.05}); q.Draws != settleStart || !q.Settled {
		t.Errorf("far from 0.05: %+v; want the first %d draws", q, settleStart)
	}
}

// A Monte-Carlo p's stated standard error is its error (the package
// doc): where the exact p lies at or near a threshold, the doubling stops
// only once the p it has drawn lies far from it, so that the p it stops
// at lies farther from the exact one than its error says — 3.4 % of runs
// beyond 2.5 standard errors where the exact p is the threshold, 2.5 %
// at 0.048 (this package before). The p drawn afresh at the number of
// draws the doubling chose lands there as often as the normal says,
// 1.2 %: here between 0.6 % and 2 % of 20 000 runs at each exact p (a
// standard error of 0.08 points), the draws' hits binomial.
func TestMonteCarloErrorIsHonest(t *testing.T) {
	src := rand.NewPCG(41, 41)
	for _, p := range []float64{0.01, 0.04, 0.045, 0.048, 0.05, 0.052, 0.055, 0.06, 0.2} {
		const runs = 20000
		far, doubled := 0, 0
		for range runs {
			hits, n := 0, 0
			v := settle([]float64{0.05, 0.025}, 1<<22, func(k int, fresh bool) float64 {
				if fresh {
					hits, n = 0, 0
				}
				hits += int(distuv.Binomial{N: float64(k), P: p, Src: src}.Rand())
				n += k
				return hitsP(hits, n)
			})
			if math.Abs(v.P-p) > 2.5*v.Error {
				far++
			}
			if v.Draws > settleStart {
				doubled++
			}
		}
		share := float64(far) / runs
		t.Logf("exact p %v: %.2f %% of runs beyond 2.5 standard errors, %.0f %% drew more than %d", p, 100*share, 100*float64(doubled)/runs, settleStart)
		if share > 0.02 || share < 0.006 {
			t.Errorf("exact p %v: %.2f %% of runs beyond 2.5 stated standard errors; want the normal's 1.2 %%", p, 100*share)
		}
	}
}

// The paired test's type-I error (the package doc's table): on 2 000 data
// sets of n differences with no true difference, how often p < 0.05 — at
// most 6 % (2 000 draws: a standard error of 0.5 points), or the
// differences flagged as too few for their skewness (Interval.Few of
// Diff) in at least 80 % of the draws. "Skewed scores" differ by two
// independent lognormal scores (the methods exchangeable: the sign-flip
// test is exact); "skewed differences" are centred exponential and
// lognormal ones (a zero mean, yet one method's scores skewed against the
// other's: no test is exact, the bootstrap's studentized test carries
// the level). Beyond 20 differences the test draws its p-values, which
// takes tens of seconds: left out under -short.
func TestPairedTypeIError(t *testing.T) {
	for _, n := range []int{20, 100, 1000} {
		if n > 20 && testing.Short() {
			continue
		}
		for k, g := range nullDiffs {
			t.Run(fmt.Sprintf("%s/n=%d", g.name, n), func(t *testing.T) {
				t.Parallel()
				rate, few := typeI(g.draw, uint64(16*n+k), 2000, n)
				t.Logf("| %s | %d | %.3f | %.2f |", g.name, n, rate, few)
				if rate > 0.06 && few < 0.8 {
					t.Errorf("p < 0.05 in %.1f %% of draws with no difference, flagged in %.0f %%; want ≤ 6 %% or flagged in ≥ 80 %%", 100*rate, 100*few)
				}
			})
		}
	}
}

var nullDiffs = []struct {
	name string
	draw func(r *rand.Rand) float64
}{
	{"normal", func(r *rand.Rand) float64 { return r.NormFloat64() }},
	{"skewed scores", func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) - math.Exp(r.NormFloat64()) }},
	{"skewed differences, exponential", func(r *rand.Rand) float64 { return r.ExpFloat64() - 1 }},
	{"skewed differences, lognormal", func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) - math.Exp(0.5) }},
}

// typeI draws data sets of n differences from a stream of its own and
// returns the share the paired test rejects at 0.05, and the share Diff
// flags.
func typeI(draw func(r *rand.Rand) float64, stream uint64, sets, n int) (rate, few float64) {
	r := rand.New(rand.NewPCG(9, stream))
	d, zero := make([]float64, n), make([]float64, n)
	for k := range sets {
		for i := range d {
			d[i] = draw(r)
		}
		b := Bootstrap{Seed: uint64(k), Resamples: 200}
		if b.Paired([][]float64{d}, [][]float64{zero}, []float64{0.05}).P < 0.05 {
			rate++
		}
		if b.Diff([][]float64{d}, [][]float64{zero}).Few {
			few++
		}
	}
	return rate / float64(sets), few / float64(sets)
}

// What the paired test's level costs in power (the package doc): on 1 000
// data sets of n differences shifted by a share of their standard
// deviation, how often it rejects at 0.05, beside Student's t test (exact
// on the normal ones). Logged for the doc; held only to reject a true
// shift of half a standard deviation at 20 inputs at least 40 % of the
// time, and to be no more powerful than the t test where that is exact.
func TestPairedPower(t *testing.T) {
	dists := []struct {
		name string
		draw func(r *rand.Rand) float64 // mean 0, s.d. 1
	}{
		{"normal", func(r *rand.Rand) float64 { return r.NormFloat64() }},
		{"Student's t, 3 df", func(r *rand.Rand) float64 {
			chi := 0.0
			for range 3 {
				z := r.NormFloat64()
				chi += z * z
			}
			return r.NormFloat64() / math.Sqrt(chi/3) / math.Sqrt(3)
		}},
		{"Laplace", func(r *rand.Rand) float64 { return r.ExpFloat64() * float64(1-2*r.IntN(2)) / math.Sqrt2 }},
	}
	for k, d := range dists {
		for _, c := range []struct {
			n     int
			shift float64
		}{{20, 0.5}, {100, 0.25}} {
			t.Run(fmt.Sprintf("%s/n=%d", d.name, c.n), func(t *testing.T) {
				t.Parallel()
				r := rand.New(rand.NewPCG(61, uint64(16*c.n+k)))
				x, zero := make([]float64, c.n), make([]float64, c.n)
				const sets = 1000
				paired, student := 0, 0
				for s := range sets {
					for i := range x {
						x[i] = c.shift + d.draw(r)
					}
					if (Bootstrap{Resamples: 200, Seed: uint64(s)}).Paired([][]float64{x}, [][]float64{zero}, nil).P < 0.05 {
						paired++
					}
					k := newCentred(x)
					if (seedLevel{est: k.mean, se: k.sd / math.Sqrt(float64(c.n)), df: c.n - 1}).p().P < 0.05 {
						student++
					}
				}
				pp, pt := float64(paired)/sets, float64(student)/sets
				t.Logf("| %s | %d | %.2f | %.2f | %.2f |", d.name, c.n, c.shift, pp, pt)
				if c.n == 20 && pp < 0.4 || d.name == "normal" && pp > pt+0.04 {
					t.Errorf("the paired test rejects %.0f %%, the t test %.0f %%", 100*pp, 100*pt)
				}
			})
		}
	}
}

// SettleDraws counts what settle draws for a pilot landing on p: the same
// number, far from every threshold, near one, at a threshold (up to the
// cap the inputs allow) and beyond the cap's doublings.
func TestSettleDrawsCountsWhatSettleDraws(t *testing.T) {
	levels := []float64{0.05, 0.025, 0.05 / 3, 0.0125, 0.01, 0.05 / 6}
	for _, tc := range []struct {
		p     float64
		units int
	}{{0.0004, 100}, {0.3, 100}, {0.0104, 100}, {0.0104, 1000}, {0.05, 20}, {0.02, 1 << 20}, {0.9, 1}} {
		drawn := 0
		settle(levels, settleWork/tc.units, func(k int, fresh bool) float64 {
			drawn += k
			return tc.p
		})
		if got := SettleDraws(tc.p, levels, tc.units); got != drawn {
			t.Errorf("p %g on %d inputs: SettleDraws %d, settle drew %d", tc.p, tc.units, got, drawn)
		}
	}
	// Far from every level: the pilot and the fresh batch.
	if got := SettleDraws(0.0004, levels, 100); got != settlePilot+settleStart {
		t.Errorf("far from every level: %d draws, want %d", got, settlePilot+settleStart)
	}
	// The average over pairs not yet seen lies between the cheapest and
	// the capped.
	if e := ExpectedSettleDraws(levels, 100); !(e > settlePilot+settleStart && e < float64(3*settleWork/100)) {
		t.Errorf("expected draws %g", e)
	}
}
