package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestKendallTauAndSpearmanKnownAnswers(t *testing.T) {
	nan := math.NaN()
	up := []float64{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		name     string
		x, y     []float64
		tau, rho float64
	}{
		{"identical", up, up, 1, 1},
		{"reversed", up, []float64{5, 4, 3, 2, 1}, -1, -1},
		// Two neighbouring swaps: 2 of 10 pairs discordant, τ = (8−2)/10;
		// d = 1 1 1 1 0, ρ = 1 − 6·4/(5·24) = 0.8.
		{"two swaps", up, []float64{2, 1, 4, 3, 5}, 0.6, 0.8},
		// Ties in both; SciPy 1.10.1: scipy.stats.kendalltau (τ-b) and
		// spearmanr of the same vectors.
		{"ties (SciPy)", []float64{1, 2, 2, 3, 4, 5, 5, 6}, []float64{2, 1, 3, 3, 5, 4, 6, 6},
			0.7692307692307694, 0.8902439024390245},
		{"constant", up, []float64{3, 3, 3, 3, 3}, nan, nan},
		{"one pair", []float64{1}, []float64{2}, nan, nan},
		// NaN pairs dropped: what is left is the identical 1 2 3.
		{"NaN dropped", []float64{1, nan, 2, 3}, []float64{1, 5, 2, 3}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := KendallTau(tc.x, tc.y); !near(got, tc.tau, 1e-15) {
				t.Errorf("KendallTau = %v; want %v", got, tc.tau)
			}
			if got := Spearman(tc.x, tc.y); !near(got, tc.rho, 1e-15) {
				t.Errorf("Spearman = %v; want %v", got, tc.rho)
			}
		})
	}
}

func TestKendallWKnownAnswers(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		scores [][]float64
		w, p   float64 // p < 0: not checked
	}{
		// Exact p: of the 4!² rankings of raters 2 and 3 against rater 1,
		// only rater 1's own twice reaches W = 1.
		{"identical rankings", [][]float64{{1, 2, 3, 4}, {10, 20, 30, 40}, {0.1, 0.2, 0.3, 0.4}}, 1, 1.0 / 576},
		{"two reversed rankings", [][]float64{{1, 2, 3, 4}, {4, 3, 2, 1}}, 0, 1},
		// 3 raters × 4 items, rank sums 4 6 8 12 about their mean
		// 3·5/2 = 7.5: S = 3.5² + 1.5² + 0.5² + 4.5² = 35,
		// W = 12·35/(3²·(4³−4)) = 420/540 = 7/9.
		{"3×4 by hand", [][]float64{{1, 2, 3, 4}, {2, 1, 3, 4}, {1, 3, 2, 4}}, 7.0 / 9, -1},
		// The third rater ties items 2 and 3 (mid-rank 2.5): rank sums 4
		// 5.5 8.5 12, S = 3.5² + 2² + 1² + 4.5² = 37.5, its tie term
		// 2³−2 = 6: W = 12·37.5/(540 − 3·6) = 25/29. SciPy's Friedman χ²
		// (with its tie correction) over m(n−1) agrees: 0.8620689655172414.
		{"3×4 with a tie by hand", [][]float64{{1, 2, 3, 4}, {2, 1, 3, 4}, {1, 7, 7, 9}}, 25.0 / 29, -1},
		// Item 2 has a NaN and is dropped: left is two identical rankings
		// of 3 items, which 1 of the 3! orders of the second reaches.
		{"NaN item dropped", [][]float64{{1, 2, nan, 3}, {5, 6, 1, 7}}, 1, 1.0 / 6},
		{"one rater", [][]float64{{1, 2, 3}}, nan, 1},
		{"one item", [][]float64{{1}, {2}}, nan, 1},
		{"every rater constant", [][]float64{{1, 1, 1}, {2, 2, 2}}, nan, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, p := KendallW(tc.scores, 1, []float64{0.05})
			if !near(w, tc.w, 1e-15) || tc.p >= 0 && (!near(p.P, tc.p, 1e-15) || !p.Exact) {
				t.Errorf("KendallW = %v, p %+v; want %v, p %v exact", w, p, tc.w, tc.p)
			}
		})
	}
}

// Three protocols ranking five methods — the report card's agreement —
// get the exact p: enumerated over the 5!² = 14 400 rankings of two of
// them, here against a brute force over all 5!³ of the three.
func TestKendallWExactAgainstBruteForce(t *testing.T) {
	scores := [][]float64{{1, 2, 3, 4, 5}, {2, 1, 3, 5, 4}, {1, 3, 2, 4, 5}}
	w, p := KendallW(scores, 1, []float64{0.05})
	if !p.Exact || p.Draws != 0 || p.Error != 0 {
		t.Fatalf("p = %+v; want exact", p)
	}
	var perms [][]float64
	var build func(cur []float64, left []float64)
	build = func(cur, left []float64) {
		if len(left) == 0 {
			perms = append(perms, slices.Clone(cur))
			return
		}
		for i := range left {
			rest := append(slices.Clone(left[:i]), left[i+1:]...)
			build(append(cur, left[i]), rest)
		}
	}
	build(nil, []float64{1, 2, 3, 4, 5})
	// Untied ranks: W = 12·S/(m²(n³−n)), m = 3, n = 5.
	hits := 0
	for _, a := range perms {
		for _, b := range perms {
			for _, c := range perms {
				var s float64
				for j := range a {
					d := a[j] + b[j] + c[j] - 9
					s += d * d
				}
				if 12*s/(9*120) >= w-1e-12 {
					hits++
				}
			}
		}
	}
	if want := float64(hits) / float64(len(perms)*len(perms)*len(perms)); !near(p.P, want, 1e-12) {
		t.Errorf("W = %v: p %v; brute force %v", w, p.P, want)
	}
}

// Five raters who agree up to small noise on 8 items: W near 1, past
// exact enumeration (8!⁴ rankings), and no draw of 2 000 reaches it: p =
// 1/2001, settled far from 0.05. Raters who rank at random: W small and p
// not small. Same seed, same p.
func TestKendallWMonteCarloP(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	agree, random := make([][]float64, 5), make([][]float64, 5)
	for i := range agree {
		agree[i], random[i] = make([]float64, 8), make([]float64, 8)
		for j := range agree[i] {
			agree[i][j] = float64(j) + 0.8*r.NormFloat64()
			random[i][j] = r.Float64()
		}
	}
	alpha := []float64{0.05}
	w, p := KendallW(agree, 7, alpha)
	if w < 0.8 || p.P != 1.0/2001 || p.Exact || p.Draws != 2000 || !p.Settled {
		t.Errorf("agreeing raters: W = %v, p = %+v; want W > 0.8, p = 1/2001 of 2 000 draws, settled", w, p)
	}
	if w2, p2 := KendallW(agree, 7, alpha); w2 != w || p2 != p {
		t.Errorf("same seed: W, p = %v, %+v then %v, %+v", w, p, w2, p2)
	}
	if w, p := KendallW(random, 7, alpha); w > 0.5 || p.P < 0.05 {
		t.Errorf("random raters: W = %v, p = %+v; want W < 0.5, p ≥ 0.05", w, p)
	}
}

// Method m scores m + noise on every unit: each half ranks the methods
// alike, so the reliability is near 1; exactly 1 when the ranking holds on
// every unit.
func TestSplitHalfOfSeparatedMethodsIsNearOne(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	noisy, exact := make([][]float64, 5), make([][]float64, 5)
	for m := range noisy {
		noisy[m], exact[m] = make([]float64, 200), make([]float64, 200)
		for i := range noisy[m] {
			noisy[m][i] = 0.1*float64(m) + 0.3*r.NormFloat64()
			exact[m][i] = float64(m) + r.Float64()
		}
	}
	if got := SplitHalf(noisy, 100, 1); got < 0.95 {
		t.Errorf("separated methods: SplitHalf = %v; want > 0.95", got)
	}
	if got := SplitHalf(exact, 100, 1); got != 1 {
		t.Errorf("a ranking that holds on every unit: SplitHalf = %v; want 1", got)
	}
}

// Methods that do not differ give no ranking to rely on. Identical values:
// every half ties all methods, ρ is undefined, SplitHalf is NaN. Methods
// with the same distribution: the halves' rankings are unrelated, and over
// 20 data sets the reliability averages near 0.
func TestSplitHalfOfIndistinguishableMethods(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	same := make([]float64, 100)
	for i := range same {
		same[i] = r.Float64()
	}
	if got := SplitHalf([][]float64{same, same, same}, 50, 1); !math.IsNaN(got) {
		t.Errorf("identical methods: SplitHalf = %v; want NaN", got)
	}
	var sum float64
	for d := range 20 {
		values := make([][]float64, 5)
		for m := range values {
			values[m] = make([]float64, 100)
			for i := range values[m] {
				values[m][i] = r.NormFloat64()
			}
		}
		sum += SplitHalf(values, 50, uint64(d))
	}
	if mean := sum / 20; math.Abs(mean) > 0.25 {
		t.Errorf("indistinguishable methods: mean SplitHalf over 20 data sets = %v; want near 0", mean)
	}
}

func TestSplitHalfNeedsTwoMethodsAndTwoUnits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values [][]float64
		splits int
	}{
		{"one method", [][]float64{{1, 2, 3}}, 10},
		{"one unit", [][]float64{{1}, {2}}, 10},
		{"no splits", [][]float64{{1, 2}, {3, 4}}, 0},
	} {
		if got := SplitHalf(tc.values, tc.splits, 1); !math.IsNaN(got) {
			t.Errorf("%s: SplitHalf = %v; want NaN", tc.name, got)
		}
	}
}
