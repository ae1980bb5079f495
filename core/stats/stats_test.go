package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func one(v ...float64) [][]float64 { return [][]float64{v} }

func TestAConstantSeriesHasAZeroWidthInterval(t *testing.T) {
	for _, data := range [][][]float64{one(0.7, 0.7, 0.7, 0.7), {{1, 1, 1}, {1, 1}}} {
		iv := Bootstrap{Seed: 3}.Mean(data)
		if iv.Lo != iv.Estimate || iv.Hi != iv.Estimate {
			t.Errorf("%v: %+v", data, iv)
		}
	}
}

func TestSameSeedSameIntervalOtherSeedAnother(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]float64, 300)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	a, b := Bootstrap{Seed: 7}.Mean(one(v...)), Bootstrap{Seed: 7}.Mean(one(v...))
	c := Bootstrap{Seed: 8}.Mean(one(v...))
	if a != b {
		t.Errorf("same seed: %+v and %+v", a, b)
	}
	if a.Lo == c.Lo && a.Hi == c.Hi {
		t.Errorf("another seed gave the same interval %+v", c)
	}
	if a.Units != 300 || a.Groups != 1 || !(a.Lo < a.Estimate && a.Estimate < a.Hi) {
		t.Errorf("%+v", a)
	}
}

// NaN values are left out, as the scores' means leave them out; a single
// value has no interval.
func TestNaNLeftOutAndOneValueHasNoInterval(t *testing.T) {
	iv := Bootstrap{}.Mean(one(1, math.NaN(), 3))
	if iv.Estimate != 2 || iv.Units != 2 {
		t.Errorf("%+v", iv)
	}
	iv = Bootstrap{}.Mean(one(5, math.NaN()))
	if iv.Estimate != 5 || !math.IsNaN(iv.Lo) || iv.Units != 1 {
		t.Errorf("%+v", iv)
	}
	if iv := (Bootstrap{}).Mean(one()); !math.IsNaN(iv.Estimate) || iv.Units != 0 {
		t.Errorf("empty: %+v", iv)
	}
}

// Coverage: on 1 000 synthetic data sets with a known mean, the 95 %
// interval covers it 93–97 % of the time — normal values, a skewed
// accuracy (Bernoulli 0.85) and a two-level design (5 seeds × 200 inputs
// with a seed effect as large as a tenth of the inputs' spread). 1 000
// resamples each, to keep the test to seconds.
func TestIntervalsCover95Percent(t *testing.T) {
	if testing.Short() {
		t.Skip("3 000 bootstraps")
	}
	for _, tc := range []struct {
		name string
		mean float64
		draw func(rng *rand.Rand) [][]float64
	}{
		{"normal n=200", 0.3, func(rng *rand.Rand) [][]float64 {
			v := make([]float64, 200)
			for i := range v {
				v[i] = 0.3 + rng.NormFloat64()
			}
			return [][]float64{v}
		}},
		{"Bernoulli(0.85) n=300", 0.85, func(rng *rand.Rand) [][]float64 {
			v := make([]float64, 300)
			for i := range v {
				if rng.Float64() < 0.85 {
					v[i] = 1
				}
			}
			return [][]float64{v}
		}},
		{"5 seeds × 200 inputs", 0, func(rng *rand.Rand) [][]float64 {
			out := make([][]float64, 5)
			for g := range out {
				b := 0.1 * rng.NormFloat64()
				out[g] = make([]float64, 200)
				for i := range out[g] {
					out[g][i] = b + rng.NormFloat64()
				}
			}
			return out
		}},
	} {
		rng := rand.New(rand.NewPCG(11, 13))
		covered := 0
		const draws = 1000
		for k := range draws {
			iv := Bootstrap{Resamples: 1000, Seed: uint64(k)}.Mean(tc.draw(rng))
			if iv.Lo <= tc.mean && tc.mean <= iv.Hi {
				covered++
			}
		}
		if c := float64(covered) / draws; c < 0.93 || c > 0.97 {
			t.Errorf("%s: the 95%% interval covered the mean in %.1f%% of %d draws", tc.name, 100*c, draws)
		} else {
			t.Logf("%s: coverage %.1f%%", tc.name, 100*c)
		}
	}
}

func TestDiffOfIdenticalIsZeroAndOfAShiftIsReal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a, b := make([]float64, 200), make([]float64, 200)
	for i := range a {
		a[i] = rng.NormFloat64()
		b[i] = a[i] - 0.3 + 0.5*rng.NormFloat64()
	}
	d, p := Bootstrap{}.Diff(one(a...), one(a...))
	if p != 1 || d.Lo != 0 || d.Hi != 0 || d.Estimate != 0 {
		t.Errorf("identical: %+v p %g", d, p)
	}
	d, p = Bootstrap{Seed: 2}.Diff(one(a...), one(b...))
	if p >= 0.01 || !(d.Lo > 0) || math.Abs(d.Estimate-0.3) > 0.1 {
		t.Errorf("shifted by 0.3: %+v p %g", d, p)
	}
	// Paired: a shift far below the inputs' spread is still found.
	for i := range b {
		b[i] = a[i] - 0.05
	}
	if _, p := (Bootstrap{}).Diff(one(a...), one(b...)); p > 0.001 {
		t.Errorf("a constant paired shift: p %g", p)
	}
}

// Replicates resample every series on the same units: two series that
// differ by a constant differ by it in every replicate.
func TestReplicatesShareTheirResamples(t *testing.T) {
	a := []float64{0.1, 0.9, 0.4, 0.7, 0.2, 0.3}
	b := make([]float64, len(a))
	for i := range a {
		b[i] = a[i] + 1
	}
	reps := Bootstrap{Resamples: 50, Seed: 4}.Replicates([][][]float64{one(a...), one(b...)})
	if len(reps) != 50 {
		t.Fatalf("%d replicates", len(reps))
	}
	for _, r := range reps {
		if math.Abs(r[1]-r[0]-1) > 1e-12 {
			t.Fatalf("replicate %v", r)
		}
	}
}

// Wilcoxon against worked cases: Hollander and Wolfe's example 3.1 (nine
// pairs, no ties: W+ = 40, exact two-sided p = 20/512 = 0.0390625, as
// scipy.stats.wilcoxon(mode="exact") gives), and a case with ties and
// zeros in the normal approximation with tie and continuity corrections
// (scipy 1.10.1: wilcoxon(a, b, zero_method="wilcox", correction=True,
// mode="approx") gives min(W+, W−) = 122.5, p = 0.2698014686863095).
func TestWilcoxonWorkedCases(t *testing.T) {
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	w, n, p := Wilcoxon(x, y)
	if w != 40 || n != 9 || math.Abs(p-0.0390625) > 1e-12 {
		t.Errorf("Hollander–Wolfe: W+ %g, n %d, p %g", w, n, p)
	}
	a := make([]float64, 30)
	for i := range a {
		a[i] = float64(i + 1)
	}
	b := []float64{1, 1, 4, 2, 5, 5, 8, 6, 8, 12, 9, 12, 14, 12, 16, 15, 16, 19, 18, 19, 23, 20, 22, 24, 26, 25, 27, 30, 27, 31}
	w, n, p = Wilcoxon(a, b)
	total := float64(n*(n+1)) / 2
	if n != 25 || min(w, total-w) != 122.5 || math.Abs(p-0.2698014686863095) > 1e-9 {
		t.Errorf("ties and zeros: W+ %g, n %d, p %.16g", w, n, p)
	}
	if _, n, p := Wilcoxon([]float64{1, 2}, []float64{1, 2}); n != 0 || p != 1 {
		t.Errorf("no differences: n %d p %g", n, p)
	}
}

// Holm on a worked case: p = (0.01, 0.04, 0.03, 0.005) for m = 4 are
// multiplied by 4, 3, 2, 1 in ascending order (0.005·4, 0.01·3, 0.03·2,
// 0.04·1) and made monotone: 0.02, 0.03, 0.06, 0.06.
func TestHolmWorkedCase(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("Holm %v, want %v", got, want)
		}
	}
	if got := Holm([]float64{0.6, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("capped at 1: %v", got)
	}
}

// Letters on small worked graphs.
func TestLettersWorkedCases(t *testing.T) {
	for _, tc := range []struct {
		k      int
		differ [][2]int
		want   []string
	}{
		{3, nil, []string{"a", "a", "a"}},
		{3, [][2]int{{0, 2}}, []string{"a", "ab", "b"}},
		{3, [][2]int{{0, 1}, {0, 2}, {1, 2}}, []string{"a", "b", "c"}},
		{4, [][2]int{{0, 2}, {0, 3}, {1, 3}}, []string{"a", "ab", "bc", "c"}},
		{4, [][2]int{{0, 1}, {0, 2}, {0, 3}}, []string{"a", "b", "b", "b"}},
	} {
		differ := func(i, j int) bool {
			return slices.Contains(tc.differ, [2]int{i, j}) || slices.Contains(tc.differ, [2]int{j, i})
		}
		got := Letters(tc.k, differ)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%d items differing at %v: %v, want %v", tc.k, tc.differ, got, tc.want)
		}
		// The display's promise: two items share a letter exactly when
		// they do not differ.
		for i := range tc.k {
			for j := i + 1; j < tc.k; j++ {
				share := false
				for _, r := range got[i] {
					share = share || slices.Contains([]rune(got[j]), r)
				}
				if share == differ(i, j) {
					t.Errorf("%v: items %d and %d share a letter: %v, differ: %v", got, i, j, share, differ(i, j))
				}
			}
		}
	}
}

// Kendall's W: identical rankings 1, two reversed ones 0, and a worked
// 3 × 4 case: rank sums 4, 8, 7, 11 (mean 7.5): S = 12.25 + 0.25 + 0.25 +
// 12.25 = 25, W = 12·25/(9·60) = 0.5556.
func TestKendallWWorkedCases(t *testing.T) {
	if w, _ := KendallW([][]float64{{1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}}, 0, 1); math.Abs(w-1) > 1e-12 {
		t.Errorf("identical: W %g", w)
	}
	if w, _ := KendallW([][]float64{{1, 2, 3, 4}, {4, 3, 2, 1}}, 0, 1); math.Abs(w) > 1e-12 {
		t.Errorf("reversed: W %g", w)
	}
	w, _ := KendallW([][]float64{{1, 2, 3, 4}, {2, 1, 3, 4}, {1, 4, 2, 3}}, 0, 1)
	if math.Abs(w-25.0*12/(9*60)) > 1e-12 {
		t.Errorf("worked case: W %g, want %g", w, 25.0*12/(9*60))
	}
	// Strong agreement of 5 raters over 6 items: a small permutation p.
	var s [][]float64
	for r := range 5 {
		s = append(s, []float64{1, 2, 3, 4, 5, 6 + float64(r)/10})
	}
	if w, p := KendallW(s, 2000, 3); w < 0.99 || p > 0.01 {
		t.Errorf("strong agreement: W %g, p %g", w, p)
	}
	if w, p := KendallW([][]float64{{1, 2}}, 100, 1); !math.IsNaN(w) || p != 1 {
		t.Errorf("one rater: W %g, p %g", w, p)
	}
}

func TestKendallTauAndSpearman(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	if v := KendallTau(x, []float64{5, 4, 3, 2, 1}); v != -1 {
		t.Errorf("reversed τ %g", v)
	}
	if v := Spearman(x, []float64{1, 4, 9, 16, 25}); math.Abs(v-1) > 1e-12 {
		t.Errorf("monotone ρ %g", v)
	}
	// τ-b with one tie: concordant 9, discordant 0, ties in y 1: 9/√(10·9).
	if v := KendallTau(x, []float64{1, 2, 3, 4, 4}); math.Abs(v-9/math.Sqrt(90)) > 1e-12 {
		t.Errorf("tied τ %g", v)
	}
	if !math.IsNaN(Spearman(x, []float64{2, 2, 2, 2, 2})) {
		t.Error("a constant has a correlation")
	}
}

// SplitHalf: methods far apart rank alike on every half (near 1); methods
// that are the same on every input rank by the noise of each half (near 0).
func TestSplitHalfReliability(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	apart, same := make([][]float64, 4), make([][]float64, 4)
	for m := range apart {
		apart[m], same[m] = make([]float64, 400), make([]float64, 400)
		for i := range apart[m] {
			apart[m][i] = float64(m) + rng.NormFloat64()
			same[m][i] = rng.NormFloat64()
		}
	}
	if r := SplitHalf(apart, 100, 1); r < 0.95 {
		t.Errorf("methods far apart: %g", r)
	}
	if r := SplitHalf(same, 200, 1); math.Abs(r) > 0.3 {
		t.Errorf("methods alike: %g", r)
	}
	if r := SplitHalf(apart[:1], 10, 1); !math.IsNaN(r) {
		t.Errorf("one method: %g", r)
	}
}

func TestHalfWidthBound(t *testing.T) {
	if got := HalfWidthBound(1000, 0, 1); math.Abs(got-1.959963984540054/(2*math.Sqrt(1000))) > 1e-15 {
		t.Errorf("%g", got)
	}
	// No data set of 0/1 values reaches past it.
	v := make([]float64, 100)
	for i := range 50 {
		v[i] = 1
	}
	iv := Bootstrap{}.Mean(one(v...))
	if (iv.Hi-iv.Lo)/2 > HalfWidthBound(100, 0, 1)*1.05 {
		t.Errorf("interval %+v wider than the bound %g", iv, HalfWidthBound(100, 0, 1))
	}
}

func BenchmarkMean1000(b *testing.B) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(i%7) / 7
	}
	for b.Loop() {
		Bootstrap{}.Mean(one(v...))
	}
}

func BenchmarkReplicates5x1000(b *testing.B) {
	var series [][][]float64
	for m := range 5 {
		v := make([]float64, 1000)
		for i := range v {
			v[i] = float64((i+m)%7) / 7
		}
		series = append(series, one(v...))
	}
	for b.Loop() {
		Bootstrap{}.Replicates(series)
	}
}

func ExampleBootstrap_Mean() {
	acc := []float64{1, 1, 0, 1, 1, 1, 0, 1, 1, 1} // one input each: classified correctly or not
	iv := Bootstrap{Seed: 1}.Mean([][]float64{acc})
	fmt.Printf("%.2f [%.2f, %.2f] over %d inputs\n", iv.Estimate, iv.Lo, iv.Hi, iv.Units)
	// Output: 0.80 [0.50, 1.00] over 10 inputs
}
