package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
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
