package stats

import (
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
		if a.Lo == c.Lo && a.Hi == c.Hi {
			t.Errorf("%d groups, seeds 11 and 12 give the same interval %+v", len(data), a)
		}
	}
}

// The intervals' coverage, the evidence for choosing percentile intervals
// (see the package doc): on 1 000 data sets drawn with a known mean, the
// 95 % interval covers it 93–97 % of the time (1 000 draws: a standard
// error of 0.7 points). 1 000 resamples per interval (500 for the
// two-level case), not 2 000, keep the test near two seconds; fewer
// resamples make the ends a little noisier, which costs coverage a few
// tenths of a point at most.
func TestIntervalsCoverTheTrueMean(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mean      float64
		resamples int
		draw      func(r *rand.Rand) [][]float64
	}{
		{"normal scores, 200 inputs", 0.3, 1000, func(r *rand.Rand) [][]float64 {
			x := make([]float64, 200)
			for i := range x {
				x[i] = 0.3 + 0.1*r.NormFloat64()
			}
			return [][]float64{x}
		}},
		{"Bernoulli(0.85) accuracies, 300 inputs", 0.85, 1000, func(r *rand.Rand) [][]float64 {
			x := make([]float64, 300)
			for i := range x {
				if r.Float64() < 0.85 {
					x[i] = 1
				}
			}
			return [][]float64{x}
		}},
		// 5 seeds × 200 inputs, each seed shifted by a random effect whose
		// variance equals that of a seed's mean over its inputs
		// (σ_seed² = σ²/200): retraining noise as large as input noise.
		{"5 seeds × 200 inputs, seed effect", 0, 500, func(r *rand.Rand) [][]float64 {
			data := make([][]float64, 5)
			for g := range data {
				shift := r.NormFloat64() / math.Sqrt(200)
				data[g] = make([]float64, 200)
				for i := range data[g] {
					data[g][i] = shift + r.NormFloat64()
				}
			}
			return data
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(21, 21))
			const draws = 1000
			covered := 0
			for d := range draws {
				iv := Bootstrap{Resamples: tc.resamples, Seed: uint64(d)}.Mean(tc.draw(r))
				if iv.Lo <= tc.mean && tc.mean <= iv.Hi {
					covered++
				}
			}
			if share := float64(covered) / draws; share < 0.93 || share > 0.97 {
				t.Errorf("95 %% intervals covered the mean in %.1f %% of %d draws; want 93–97 %%", 100*share, draws)
			} else {
				t.Logf("coverage %.1f %%", 100*share)
			}
		})
	}
}

// The two-level bootstrap's known limit (package doc): with 3 seeds and
// retraining noise 4 times the input noise, a resample of 3 seeds varies
// by only 2/3 of their spread, itself guessed from 3 values, and the 95 %
// interval covers the mean well under 95 % of the time (about 85 %).
// Without retraining noise it is conservative (about 98 %): each seed's
// input noise counts twice, once in the seed draw and once in the input
// draw.
func TestTwoLevelCoverageWithThreeSeeds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		effect float64 // σ_seed² / (σ²/inputs)
		lo, hi float64
	}{
		{"retraining noise dominates: too narrow", 4, 0.75, 0.91},
		{"no retraining noise: conservative", 0, 0.96, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const draws, inputs = 300, 50
			r := rand.New(rand.NewPCG(22, 22))
			covered := 0
			for d := range draws {
				data := make([][]float64, 3)
				for g := range data {
					shift := math.Sqrt(tc.effect/inputs) * r.NormFloat64()
					data[g] = make([]float64, inputs)
					for i := range data[g] {
						data[g][i] = shift + r.NormFloat64()
					}
				}
				iv := Bootstrap{Resamples: 300, Seed: uint64(d)}.Mean(data)
				if iv.Lo <= 0 && 0 <= iv.Hi {
					covered++
				}
			}
			if share := float64(covered) / draws; share < tc.lo || share > tc.hi {
				t.Errorf("coverage %.1f %%; want %.0f–%.0f %%", 100*share, 100*tc.lo, 100*tc.hi)
			} else {
				t.Logf("coverage %.1f %%", 100*share)
			}
		})
	}
}

// Two units 0 and 1: a resample's mean is 0, ½ or 1 with probabilities
// ¼, ½, ¼, so the 2.5 % and 97.5 % points are 0 and 1 — the interval
// reaches the data's range and no further.
func TestPercentileIntervalStaysInsideTheDataRange(t *testing.T) {
	iv := Bootstrap{Seed: 1}.Mean([][]float64{{0, 1}})
	if iv.Estimate != 0.5 || iv.Lo != 0 || iv.Hi != 1 {
		t.Errorf("Mean of {0, 1} = %+v; want 0.5 [0, 1]", iv)
	}
	// 29 of 30 correct: a normal interval would pass 1.
	x := slices.Repeat([]float64{1}, 30)
	x[0] = 0
	if iv := (Bootstrap{Seed: 1}).Mean([][]float64{x}); iv.Hi != 1 || iv.Lo < 0.85 {
		t.Errorf("29 of 30 = %+v; want Hi = 1, Lo near 0.9", iv)
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
	} {
		err := tc.b.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Validate() = %v; want an error naming %q", tc.b, err, tc.want)
		}
		iv := tc.b.Mean(data)
		d, p := tc.b.Diff(data, data)
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
		d, p := Bootstrap{Seed: 1}.Diff(a, a)
		if d.Estimate != 0 || d.Lo != 0 || d.Hi != 0 || p != 1 {
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
	d, p := Bootstrap{Seed: 1}.Diff([][]float64{a}, [][]float64{b})
	if p >= 0.01 || !(d.Lo > 0.03 && d.Hi < 0.07 && d.Lo < 0.05 && 0.05 < d.Hi) {
		t.Errorf("Diff = %+v, p %v; want an interval about 0.05 and p < 0.01", d, p)
	}
	// Reversed: the interval mirrors, p is the same.
	r, pr := Bootstrap{Seed: 1}.Diff([][]float64{b}, [][]float64{a})
	if pr != p || !near(r.Lo, -d.Hi, 1e-15) || !near(r.Hi, -d.Lo, 1e-15) || r.Estimate != -d.Estimate {
		t.Errorf("Diff(b, a) = %+v, p %v; want the mirror of %+v, p %v", r, pr, d, p)
	}
}

// A unit counts only where both methods have a value; a unit missing
// from the shorter series counts as missing.
func TestDiffDropsUnitsWhereEitherIsNaN(t *testing.T) {
	nan := math.NaN()
	a := [][]float64{{1, nan, 3, 4, 9}, {2, 2}}
	b := [][]float64{{0, 0, nan, 2}, {1, 0, 5}, {7}}
	d, _ := Bootstrap{Seed: 1}.Diff(a, b)
	// Group 0 keeps units 0 and 3 (differences 1 and 2), group 1 units 0
	// and 1 (1 and 2); group 2 has none: (1.5 + 1.5)/2.
	if d.Estimate != 1.5 || d.Units != 4 || d.Groups != 2 {
		t.Errorf("Diff = %+v; want estimate 1.5 of 4 units in 2 groups", d)
	}
}

// The replicates of several series use the same indices: b = a + 1 on
// every unit gives b's mean = a's mean + 1 in every resample. And a
// series' column is exactly the resample means behind Mean's interval.
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
		col := make([]float64, len(out))
		for r, means := range out {
			if len(means) != 2 || !near(means[1], means[0]+1, 1e-12) {
				t.Fatalf("resample %d: means %v; want b = a + 1", r, means)
			}
			col[r] = means[0]
		}
		slices.Sort(col)
		iv := boot.Mean(a)
		if lo, hi := percentiles(col, DefaultLevel); lo != iv.Lo || hi != iv.Hi {
			t.Errorf("%d groups: replicates' 95 %% points [%v, %v]; Mean [%v, %v]", len(a), lo, hi, iv.Lo, iv.Hi)
		}
	}
	if out := (Bootstrap{}).Replicates([][][]float64{{{math.NaN()}}}); out != nil {
		t.Errorf("no complete unit: %v; want nil", out)
	}
}

// 2 000 resamples of 2 000 inputs (as a campaign's headline): the
// interval of a 0/1 accuracy is about as wide as the worst-case bound
// allows when the accuracy is ½, and narrower otherwise.
func TestHalfWidthBound(t *testing.T) {
	for _, tc := range []struct {
		n      int
		lo, hi float64
		want   float64
	}{
		{100, 0, 1, 0.098},
		{400, 0, 1, 0.049},
		{2401, 0, 1, 0.02},
		{25, -1, 1, 0.392},
		{0, 0, 1, math.NaN()},
		{10, 1, 0, math.NaN()},
	} {
		if got := HalfWidthBound(tc.n, tc.lo, tc.hi); !near(got, tc.want, 1e-15) {
			t.Errorf("HalfWidthBound(%d, %v, %v) = %v; want %v", tc.n, tc.lo, tc.hi, got, tc.want)
		}
	}
	half := make([]float64, 2000)
	for i := range 1000 {
		half[i] = 1
	}
	iv := Bootstrap{Seed: 1}.Mean([][]float64{half})
	bound := HalfWidthBound(2000, 0, 1)
	if w := (iv.Hi - iv.Lo) / 2; w > 1.05*bound || w < 0.9*bound {
		t.Errorf("accuracy ½ of 2000: half-width %v; want about the bound %v", w, bound)
	}
}
