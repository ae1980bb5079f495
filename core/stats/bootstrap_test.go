package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestConstantSeriesHasZeroWidthInterval(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		data [][]float64
		c    float64
	}{
		{"one group", [][]float64{slices.Repeat([]float64{0.7}, 50)}, 0.7},
		// Unequal group sizes: 0.1·3/3 and 0.1·7/7 round differently, yet
		// the interval is exactly [0.1, 0.1].
		{"groups of unequal size", [][]float64{{0.1, 0.1, 0.1}, slices.Repeat([]float64{0.1}, 7)}, 0.1},
		{"with NaN and an empty group", [][]float64{{1, nan, 1}, {nan}, {1, 1}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iv := Bootstrap{Seed: 3}.Mean(tc.data)
			if iv.Estimate != tc.c || iv.Lo != tc.c || iv.Hi != tc.c {
				t.Errorf("Mean = %+v; want %v [%v, %v]", iv, tc.c, tc.c, tc.c)
			}
		})
	}
}

// One group's interval is a bootstrap's: the same seed gives the same
// interval, another seed another. Several groups' is Student's t over
// their means, which draws nothing: every seed gives the same.
func TestSameSeedGivesTheSameIntervalAnotherSeedAnother(t *testing.T) {
	for _, data := range [][][]float64{
		{normalSeries(1, 300, 0.5, 0.2)},
		{normalSeries(1, 100, 0.5, 0.2), normalSeries(2, 100, 0.6, 0.2), normalSeries(3, 100, 0.4, 0.2)},
	} {
		a := Bootstrap{Seed: 11}.Mean(data)
		b := Bootstrap{Seed: 11}.Mean(data)
		c := Bootstrap{Seed: 12}.Mean(data)
		if a != b {
			t.Errorf("%d groups, seed 11 twice: %+v, then %+v", len(data), a, b)
		}
		if drawn := len(data) == 1; drawn == (a.Lo == c.Lo && a.Hi == c.Hi) {
			t.Errorf("%d groups, seeds 11 and 12: %+v and %+v", len(data), a, c)
		}
	}
}

// The one-level intervals' coverage (the package doc's table): on 1 000
// data sets of n units drawn with a known mean, how often the 95 %
// interval holds it — at least 93 % (1 000 draws: a standard error of
// 0.7 points), or the interval flagged (Interval.Few) in at least 80 %
// of the draws, where no method is known to cover. 1 000 resamples per
// interval, not 2 000, keep the test in seconds; n = 1 000 takes longer
// and is left out under -short.
func TestIntervalsCover(t *testing.T) {
	for _, n := range []int{20, 100, 1000} {
		if n > 100 && testing.Short() {
			continue
		}
		for k, d := range coverageDists {
			t.Run(fmt.Sprintf("%s/n=%d", d.name, n), func(t *testing.T) {
				t.Parallel()
				cov, few := coverage(d, uint64(16*n+k), n, 1000)
				t.Logf("| %s | %d | %.3f | %.2f |", d.name, n, cov, few)
				if cov < 0.93 && few < 0.8 {
					t.Errorf("95 %% intervals covered the mean in %.1f %% of draws, flagged in %.0f %%; want ≥ 93 %% or flagged in ≥ 80 %%", 100*cov, 100*few)
				}
				if cov > 0.985 {
					t.Errorf("95 %% intervals covered the mean in %.1f %% of draws: far wider than they need be", 100*cov)
				}
			})
		}
	}
}

// coverageDist is a distribution of units with a known mean and natural
// range.
type coverageDist struct {
	name string
	mean float64
	rng  []float64
	draw func(r *rand.Rand) float64
}

var coverageDists = []coverageDist{
	{"normal", 0, nil, func(r *rand.Rand) float64 { return r.NormFloat64() }},
	{"lognormal", math.Exp(0.5), []float64{0, math.Inf(1)}, func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) }},
	{"Bernoulli(0.9)", 0.9, []float64{0, 1}, func(r *rand.Rand) float64 {
		if r.Float64() < 0.9 {
			return 1
		}
		return 0
	}},
	// Beta(1, b) by its inverse distribution function 1 − (1−u)^(1/b).
	{"beta(1,20)", 1.0 / 21, []float64{0, 1}, func(r *rand.Rand) float64 { return 1 - math.Pow(1-r.Float64(), 1.0/20) }},
}

// coverage draws 1 000 data sets of n units from a stream of its own and
// returns the share of the 95 % intervals holding the mean and the share
// flagged.
func coverage(d coverageDist, stream uint64, n, resamples int) (covered, few float64) {
	const draws = 1000
	r := rand.New(rand.NewPCG(21, stream))
	x := make([]float64, n)
	for k := range draws {
		for i := range x {
			x[i] = d.draw(r)
		}
		iv := Bootstrap{Resamples: resamples, Seed: uint64(k), Range: d.rng}.Mean([][]float64{x})
		if iv.Lo <= d.mean && d.mean <= iv.Hi {
			covered++
		}
		if iv.Few {
			few++
		}
	}
	return covered / draws, few / draws
}

// Units all 0 or 1 (all at the ends of the range, where one is given)
// are a proportion: the Agresti–Coull interval, by hand: add z²/2 = 1.92
// successes and failures, ñ = n + z², p̃ = (x + z²/2)/ñ, p̃ ± z·√(p̃(1−p̃)/ñ)
// clamped to [0, 1]. Never the zero width of [1, 1] for all correct; the
// interval stays inside [0, 1].
func TestProportionsGetAgrestiCoull(t *testing.T) {
	ones := func(x, n int) []float64 {
		v := make([]float64, n)
		for i := range x {
			v[i] = 1
		}
		return v
	}
	for _, tc := range []struct {
		name   string
		b      Bootstrap
		x      []float64
		lo, hi float64
		few    bool
	}{
		// p̃ = 30.92/33.84 = 0.9137, half-width 0.0946.
		{"29 of 30", Bootstrap{}, ones(29, 30), 0.8190820154673888, 1, false},
		// p̃ = 21.92/23.84 = 0.9194, half-width 0.1092.
		{"20 of 20", Bootstrap{}, ones(20, 20), 0.8101904394575112, 1, false},
		{"18 of 20", Bootstrap{}, ones(18, 20), 0.6867561125596077, 0.984343760998137, false},
		// Below 15 units no interval covers 95 % for every proportion.
		{"1 of 2", Bootstrap{}, ones(1, 2), 0.09453120573423074, 0.9054687942657693, true},
		// A range of [−1, 1] whose units are all −1 or 1: the share of 1s,
		// mapped back (2·p − 1).
		{"ends of [−1, 1]", Bootstrap{Range: []float64{-1, 1}}, []float64{-1, -1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
			2*0.6867561125596077 - 1, 2*0.984343760998137 - 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iv := tc.b.Mean([][]float64{tc.x})
			if !near(iv.Lo, tc.lo, 1e-12) || !near(iv.Hi, tc.hi, 1e-12) || iv.Method != MethodAgrestiCoull || iv.Few != tc.few {
				t.Errorf("Mean = %+v; want [%v, %v] by %s, few %v", iv, tc.lo, tc.hi, MethodAgrestiCoull, tc.few)
			}
		})
	}
	// 0/1 units under a range of [0, 2] are not at its ends: resampled.
	if iv := (Bootstrap{Seed: 1, Range: []float64{0, 2}}).Mean([][]float64{ones(18, 20)}); iv.Method != MethodBootstrap || iv.Lo < 0 || iv.Hi > 2 {
		t.Errorf("18 of 20 in [0, 2]: %+v; want the bootstrap, inside [0, 2]", iv)
	}
}

// The bootstrap's interval stays inside the range: 19 units at 0.99 and
// one at 0: the studentized interval alone would pass 1.
func TestIntervalStaysInsideTheRange(t *testing.T) {
	x := slices.Repeat([]float64{0.99}, 19)
	x = append(x, 0)
	iv := Bootstrap{Seed: 1, Range: []float64{0, 1}}.Mean([][]float64{x})
	free := Bootstrap{Seed: 1}.Mean([][]float64{x})
	if iv.Hi > 1 || iv.Lo < 0 || !(free.Hi > 1) {
		t.Errorf("inside [0, 1]: %+v; without the range: %+v (want it past 1)", iv, free)
	}
}

func TestMeanCountsUnitsAndGroupsAndSkipsNaN(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name          string
		data          [][]float64
		estimate      float64
		units, groups int
		ends          bool
	}{
		{"one group", [][]float64{{1, 2, nan, 3}}, 2, 3, 1, true},
		// The mean of group means (2 and 10), not of the 4 units.
		{"groups weigh alike", [][]float64{{1, 2, 3}, {10}}, 6, 4, 2, true},
		{"an empty group does not count", [][]float64{{nan, nan}, {1, 3}, {}}, 2, 2, 1, true},
		{"one unit: no interval", [][]float64{{nan, 4}}, 4, 1, 1, false},
		{"no units", [][]float64{{nan}}, nan, 0, 0, false},
		{"no data", nil, nan, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iv := Bootstrap{Seed: 1}.Mean(tc.data)
			if !near(iv.Estimate, tc.estimate, 1e-15) || iv.Units != tc.units || iv.Groups != tc.groups {
				t.Errorf("Mean = %+v; want estimate %v, %d units, %d groups", iv, tc.estimate, tc.units, tc.groups)
			}
			if ends := !math.IsNaN(iv.Lo) && !math.IsNaN(iv.Hi); ends != tc.ends {
				t.Errorf("Mean = %+v; want ends: %v", iv, tc.ends)
			} else if ends && !(iv.Lo <= iv.Estimate && iv.Estimate <= iv.Hi) {
				t.Errorf("Mean = %+v: the estimate lies outside its interval", iv)
			}
		})
	}
}

func TestInvalidSettingsGiveNaNAndValidateSaysWhy(t *testing.T) {
	data := [][]float64{{1, 2, 3}}
	for _, tc := range []struct {
		b    Bootstrap
		want string
	}{
		{Bootstrap{Resamples: -1}, "-1 resamples"},
		{Bootstrap{Level: 1}, "level 1"},
		{Bootstrap{Level: -0.5}, "level -0.5"},
		{Bootstrap{Level: math.NaN()}, "level NaN"},
		{Bootstrap{Range: []float64{1, 0}}, "range [1 0]"},
		{Bootstrap{Range: []float64{0}}, "range [0]"},
	} {
		err := tc.b.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Validate() = %v; want an error naming %q", tc.b, err, tc.want)
		}
		iv := tc.b.Mean(data)
		d, p := tc.b.Diff(data, data), tc.b.Paired(data, data, nil).P
		if !math.IsNaN(iv.Lo) || !math.IsNaN(iv.Hi) || !math.IsNaN(d.Lo) || !math.IsNaN(p) || tc.b.Replicates([][][]float64{data}) != nil {
			t.Errorf("%+v: Mean %+v, Diff %+v p %v: want NaN ends and p, nil replicates", tc.b, iv, d, p)
		}
		if iv.Estimate != 2 || iv.Units != 3 {
			t.Errorf("%+v: Mean %+v: want the estimate 2 of 3 units all the same", tc.b, iv)
		}
	}
	if err := (Bootstrap{}).Validate(); err != nil {
		t.Errorf("the zero Bootstrap: %v", err)
	}
}

func TestDiffOfIdenticalSeriesIsZeroWithPOne(t *testing.T) {
	for _, a := range [][][]float64{
		{normalSeries(1, 100, 0.5, 0.2)},
		{normalSeries(1, 50, 0.5, 0.2), normalSeries(2, 80, 0.5, 0.2)},
	} {
		d, p := Bootstrap{Seed: 1}.Diff(a, a), Bootstrap{Seed: 1}.Paired(a, a, nil)
		if d.Estimate != 0 || d.Lo != 0 || d.Hi != 0 || p.P != 1 || !p.Exact {
			t.Errorf("%d groups: Diff(a, a) = %+v, p %v; want 0 [0, 0], p 1", len(a), d, p)
		}
	}
}

// b is a shifted by 0.05 plus noise of sd 0.1 on each of 300 inputs: the
// difference's standard error is 0.1/√300 = 0.006, so 0.05 is 8 of them.
func TestDiffFindsAClearShift(t *testing.T) {
	a := normalSeries(1, 300, 0.5, 0.2)
	noise := normalSeries(2, 300, 0, 0.1)
	b := make([]float64, len(a))
	for i := range a {
		b[i] = a[i] - 0.05 + noise[i]
	}
	boot := Bootstrap{Seed: 1}
	d, p := boot.Diff([][]float64{a}, [][]float64{b}), boot.Paired([][]float64{a}, [][]float64{b}, []float64{0.05})
	if p.P >= 0.01 || !(d.Lo > 0.03 && d.Hi < 0.07 && d.Lo < 0.05 && 0.05 < d.Hi) {
		t.Errorf("Diff = %+v, p %+v; want an interval about 0.05 and p < 0.01", d, p)
	}
	// Reversed: the interval mirrors, p is the same.
	r, pr := boot.Diff([][]float64{b}, [][]float64{a}), boot.Paired([][]float64{b}, [][]float64{a}, []float64{0.05})
	if pr != p || !near(r.Lo, -d.Hi, 1e-12) || !near(r.Hi, -d.Lo, 1e-12) || r.Estimate != -d.Estimate {
		t.Errorf("Diff(b, a) = %+v, p %v; want the mirror of %+v, p %v", r, pr, d, p)
	}
}

// A unit counts only where both methods have a value; a unit missing
// from the shorter series counts as missing.
func TestDiffDropsUnitsWhereEitherIsNaN(t *testing.T) {
	nan := math.NaN()
	a := [][]float64{{1, nan, 3, 4, 9}, {2, 2}}
	b := [][]float64{{0, 0, nan, 2}, {1, 0, 5}, {7}}
	d := Bootstrap{Seed: 1}.Diff(a, b)
	// Group 0 keeps units 0 and 3 (differences 1 and 2), group 1 units 0
	// and 1 (1 and 2); group 2 has none: (1.5 + 1.5)/2.
	if d.Estimate != 1.5 || d.Units != 4 || d.Groups != 2 {
		t.Errorf("Diff = %+v; want estimate 1.5 of 4 units in 2 groups", d)
	}
}

// The replicates of several series use the same indices: b = a + 1 on
// every unit gives b's mean = a's mean + 1 in every resample.
func TestReplicatesShareTheResampledUnits(t *testing.T) {
	for _, a := range [][][]float64{
		{normalSeries(1, 200, 0, 1)},
		{normalSeries(1, 60, 0, 1), normalSeries(2, 90, 0, 1), normalSeries(3, 70, 0, 1)},
	} {
		b := make([][]float64, len(a))
		for g := range a {
			b[g] = make([]float64, len(a[g]))
			for i, v := range a[g] {
				b[g][i] = v + 1
			}
		}
		boot := Bootstrap{Resamples: 500, Seed: 8}
		out := boot.Replicates([][][]float64{a, b})
		if len(out) != 500 {
			t.Fatalf("%d replicates; want 500", len(out))
		}
		for r, means := range out {
			if len(means) != 2 || !near(means[1], means[0]+1, 1e-12) {
				t.Fatalf("resample %d: means %v; want b = a + 1", r, means)
			}
		}
	}
	if out := (Bootstrap{}).Replicates([][][]float64{{{math.NaN()}}}); out != nil {
		t.Errorf("no complete unit: %v; want nil", out)
	}
}

// The bound by hand (t quantiles from SciPy 1.10's t.ppf): at 2 000
// inputs split half and half — the widest spread — the Agresti–Coull
// interval an accuracy gets is about as wide as the bound, and a
// continuous score's interval at nearly that spread too.
func TestHalfWidthBound(t *testing.T) {
	for _, tc := range []struct {
		n      int
		lo, hi float64
		want   float64
	}{
		{100, 0, 1, 0.09971065349722902},
		{400, 0, 1, 0.04920973305757775},
		{2401, 0, 1, 0.02001389194285803},
		{25, -1, 1, 0.42129152973773265},
		{20, 0, 1, 0.24008632472540511},
		{1, 0, 1, math.NaN()},
		{10, 1, 0, math.NaN()},
	} {
		if got := HalfWidthBound(tc.n, tc.lo, tc.hi); !near(got, tc.want, 1e-9) {
			t.Errorf("HalfWidthBound(%d, %v, %v) = %v; want %v", tc.n, tc.lo, tc.hi, got, tc.want)
		}
	}
	half := make([]float64, 2000)
	for i := range 1000 {
		half[i] = 1
	}
	bound := HalfWidthBound(2000, 0, 1)
	iv := Bootstrap{Seed: 1}.Mean([][]float64{half})
	if w := (iv.Hi - iv.Lo) / 2; iv.Method != MethodAgrestiCoull || w > bound || w < 0.95*bound {
		t.Errorf("accuracy ½ of 2000: %+v, half-width %v; want about the bound %v, not above", iv, w, bound)
	}
	near01 := slices.Clone(half)
	near01[0], near01[1999] = 0.01, 0.99 // not all at the ends: resampled
	iv = Bootstrap{Seed: 1}.Mean([][]float64{near01})
	if w := (iv.Hi - iv.Lo) / 2; iv.Method != MethodBootstrap || w > 1.02*bound || w < 0.95*bound {
		t.Errorf("nearly half and half: %+v, half-width %v; want about the bound %v", iv, w, bound)
	}
}

// Below 10 units Student's t interval stands in for the studentized
// bootstrap's, and the interval is flagged: 1 2 3 4 5 have mean 3 and
// standard error √(2.5/5), t₀.₉₇₅(4) = 2.776 (SciPy): [1.037, 4.963],
// which holds BCa's (inside the data's range).
func TestFewUnitsTakeStudentsT(t *testing.T) {
	iv := Bootstrap{Seed: 1}.Mean([][]float64{{1, 2, 3, 4, 5}})
	if !near(iv.Lo, 1.0367568385224723, 1e-9) || !near(iv.Hi, 4.963243161477528, 1e-9) || !iv.Few || iv.Method != MethodBootstrap {
		t.Errorf("Mean of 1…5 = %+v; want Student's [1.037, 4.963], flagged", iv)
	}
}
