package stats

import (
	"math"
	"slices"
	"testing"
)

// near reports |got − want| ≤ tol, NaN matching NaN.
func near(got, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= tol
}

// Exact p-values worked by hand: under the null each of the 2ⁿ subsets of
// the ranks 1…n is equally likely to be the positive ones, so
// P(W+ ≥ w) = #{subsets summing to ≥ w}/2ⁿ, and by symmetry
// #{sum ≥ n(n+1)/2 − k} = #{sum ≤ k}.
func TestWilcoxonExactHandWorked(t *testing.T) {
	checkWilcoxon(t, 1e-15, []signedRankCase{
		{
			// Hollander & Wolfe (1973, p. 29), Hamilton depression scores
			// before (x) and after (y) a tranquilliser; R's wilcox.test
			// example. Differences x−y, by |d|: 0.01 0.08− 0.147− 0.43 0.49
			// 0.59 0.62 0.952 1.022, ranks 1…9 with 2 and 3 negative:
			// W+ = 45 − 5 = 40. Subsets of 1…9 summing to ≤ 5: {} {1} {2}
			// {3} {12} {4} {13} {5} {14} {23} = 10, so P(W+ ≥ 40) =
			// 10/512 and p = 20/512 = 0.0390625 (R: V = 40, p = 0.03906).
			"Hollander-Wolfe depression",
			[]float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30},
			[]float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29},
			40, 9, 20.0 / 512,
		},
		{
			// d = 1 2 −3 4 5: W+ = 12 of 15; subsets summing to ≤ 3: {} {1}
			// {2} {3} {12} = 5, p = 2·5/32.
			"one negative of five", []float64{1, 2, -3, 4, 5}, []float64{0, 0, 0, 0, 0},
			12, 5, 10.0 / 32,
		},
		{
			// All six positive: W+ = 21, only {} sums to 0: p = 2/64, the
			// smallest p six pairs can give.
			"six of six positive", []float64{6, 5, 4, 3, 2, 1}, []float64{0, 0, 0, 0, 0, 0},
			21, 6, 2.0 / 64,
		},
		{
			// One pair: W+ = 1; P(W+ ≤ 1) = 1, P(W+ ≥ 1) = 1/2: p = 1.
			"one pair", []float64{2}, []float64{1}, 1, 1, 1,
		},
		{
			// Zeros are dropped before ranking (Wilcoxon's original), NaN
			// pairs and the longer sample's tail too: left d = −1 −2 3,
			// W+ = 3, subsets of 1…3 summing to ≥ 3: {3} {12} {13} {23}
			// {123} = 5 of 8, ≤ 3: {} {1} {2} {3} {12} = 5: p = min(1, 10/8).
			"zeros and NaN dropped", []float64{5, 1, 2, math.NaN(), 7, 9, 4}, []float64{5, 2, 4, 1, 4, 9},
			3, 3, 1,
		},
	})
}

type signedRankCase struct {
	name  string
	x, y  []float64
	wplus float64
	n     int
	p     float64
}

func checkWilcoxon(t *testing.T, tol float64, cases []signedRankCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, n, p := Wilcoxon(tc.x, tc.y)
			if w != tc.wplus || n != tc.n || !near(p, tc.p, tol) {
				t.Errorf("Wilcoxon = W+ %v, n %d, p %v; want %v, %d, %v", w, n, p, tc.wplus, tc.n, tc.p)
			}
		})
	}
}

// With ties, or more than 25 pairs, the normal approximation with tie and
// continuity corrections; references from SciPy 1.10.1 (Debian 12's
// python3-scipy): scipy.stats.wilcoxon(x, y, zero_method="wilcox",
// correction=True, method="approx").pvalue.
func TestWilcoxonNormalApproximationMatchesSciPy(t *testing.T) {
	ints := func(v ...float64) []float64 { return v }
	x30, y30 := make([]float64, 30), make([]float64, 30)
	for i := range x30 {
		x30[i] = 0.1*float64(i) + 0.37*float64((i*7)%11)
		y30[i] = 0.05*float64(i) + 0.41*float64((i*5)%13)
	}
	checkWilcoxon(t, 1e-12, []signedRankCase{
		{
			// Wikipedia's example: d = 15 −7 5 20 0 −9 17 −12 5 −10; the
			// zero dropped, the two 5s share rank 1.5: W+ = 1.5+1.5+7+8+9
			// = 27, n = 9; mean 22.5, variance 9·10·19/24 − (2³−2)/48 =
			// 71.125, z = (4.5 − 0.5)/√71.125 = 0.4743, p = 0.63529.
			"Wikipedia, a zero and a tie",
			ints(125, 115, 130, 140, 140, 115, 140, 125, 140, 135),
			ints(110, 122, 125, 120, 140, 124, 123, 137, 135, 145),
			27, 9, 0.6352893188352069,
		},
		{
			"small integers, many ties and zeros",
			ints(3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7),
			ints(2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9, 0, 4, 5, 2, 3, 5, 3, 6, 0, 2, 8, 7, 4, 7, 1, 3, 5),
			208, 26, 0.41391204184262975,
		},
		// The first pair is (0, 0): 29 untied nonzero differences.
		{"29 untied pairs", x30, y30, 254, 29, 0.4363124693588327},
	})
}

func TestWilcoxonWithoutDifferencesGivesPOne(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
	}{
		{"empty", nil, nil},
		{"identical", []float64{1, 2, 3}, []float64{1, 2, 3}},
		{"only NaN pairs", []float64{math.NaN(), 1}, []float64{2, math.NaN()}},
	} {
		if w, n, p := Wilcoxon(tc.x, tc.y); w != 0 || n != 0 || p != 1 {
			t.Errorf("%s: Wilcoxon = %v, %d, %v; want 0, 0, 1", tc.name, w, n, p)
		}
	}
}

// Holm by hand: p = 0.01 0.04 0.03 0.005, m = 4. Sorted: 0.005·4 = 0.02,
// 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → raised to 0.06 to stay
// monotone.
func TestHolmHandWorked(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name    string
		p, want []float64
	}{
		{"four p-values", []float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}},
		{"capped at 1", []float64{0.5, 0.6}, []float64{1, 1}},
		{"one p-value is its own", []float64{0.2}, []float64{0.2}},
		{"equal p-values step together", []float64{0.01, 0.01, 0.01}, []float64{0.03, 0.03, 0.03}},
		{"NaN stays NaN and does not count", []float64{0.02, nan, 0.01}, []float64{0.02, nan, 0.02}},
		{"none", []float64{}, []float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.p)
			got := Holm(tc.p)
			if len(got) != len(tc.want) {
				t.Fatalf("Holm(%v) = %v; want %v", tc.p, got, tc.want)
			}
			for i := range got {
				if !near(got[i], tc.want[i], 1e-15) {
					t.Errorf("Holm(%v) = %v; want %v", tc.p, got, tc.want)
					break
				}
			}
			if !slices.EqualFunc(in, tc.p, func(a, b float64) bool { return a == b || a != a && b != b }) {
				t.Errorf("Holm changed its input to %v", tc.p)
			}
		})
	}
}

func TestLettersHandWorked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		k     int
		pairs [][2]int // the pairs that differ
		want  []string
	}{
		{"none differ", 3, nil, []string{"a", "a", "a"}},
		{"all differ", 3, [][2]int{{0, 1}, {0, 2}, {1, 2}}, []string{"a", "b", "c"}},
		// Only the ends differ: {0,1} and {1,2} cannot be separated.
		{"only first and last differ", 3, [][2]int{{0, 2}}, []string{"a", "ab", "b"}},
		// A chain: groups {0,1}, {1,2}, {2,3}.
		{"a chain", 4, [][2]int{{0, 2}, {0, 3}, {1, 3}}, []string{"a", "ab", "bc", "c"}},
		// The best apart, the rest together.
		{"a clear winner", 4, [][2]int{{0, 1}, {0, 2}, {0, 3}}, []string{"a", "b", "b", "b"}},
		// 0–1 and 2–3 differ: four groups of two, none redundant.
		{"two differing pairs", 4, [][2]int{{0, 1}, {2, 3}}, []string{"ab", "cd", "ac", "bd"}},
		// A triangle 0,1,2 whose sides each lie in another group: {0,1,3},
		// {0,2,5}, {1,2,4}. Insert-and-absorb also keeps {0,1,2}, a fourth
		// letter that joins no pair the others do not: the sweep drops it.
		{"sweep drops a redundant letter", 6, [][2]int{{3, 4}, {3, 5}, {4, 5}, {2, 3}, {0, 4}, {1, 5}},
			[]string{"ab", "ac", "bc", "a", "c", "b"}},
		{"one item", 1, nil, []string{"a"}},
		{"no items", 0, nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			differ := func(i, j int) bool {
				if i >= j {
					t.Fatalf("differ(%d, %d) asked with i ≥ j", i, j)
				}
				return slices.Contains(tc.pairs, [2]int{i, j})
			}
			got := Letters(tc.k, differ)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Letters = %q; want %q", got, tc.want)
			}
			checkLetters(t, tc.k, differ, got)
		})
	}
}

// On every graph of 5 items the display is valid: two items share a
// letter exactly when they do not differ.
func TestLettersAreValidOnEveryGraphOfFiveItems(t *testing.T) {
	const k = 5
	var pairs [][2]int
	for i := range k {
		for j := i + 1; j < k; j++ {
			pairs = append(pairs, [2]int{i, j})
		}
	}
	for mask := range 1 << len(pairs) {
		differ := func(i, j int) bool { return mask>>slices.Index(pairs, [2]int{i, j})&1 == 1 }
		checkLetters(t, k, differ, Letters(k, differ))
		if t.Failed() {
			t.Fatalf("graph %b", mask)
		}
	}
}

func checkLetters(t *testing.T, k int, differ func(i, j int) bool, got []string) {
	t.Helper()
	for i := range k {
		if got[i] == "" {
			t.Errorf("item %d has no letter: %q", i, got)
		}
		for j := i + 1; j < k; j++ {
			share := false
			for _, c := range got[i] {
				share = share || slices.Contains([]rune(got[j]), c)
			}
			if share == differ(i, j) {
				t.Errorf("items %d, %d: letters %q, %q, differ %v", i, j, got[i], got[j], differ(i, j))
			}
		}
	}
}
