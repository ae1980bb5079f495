package stats

import (
	"math/rand/v2"
	"testing"
)

// Two similar methods differ on few inputs (the package doc): 95 % of
// 100 paired differences exactly 0, the rest drawn from a distribution
// of their own. The difference's 95 % interval covers the mean difference
// at least 93 % of the time (2 000 data sets: a standard error of 0.5
// points) — the hull alone covered 0.85–0.90 here, from the few that
// differ — and is flagged where fewer than 10 inputs differ.
func TestTiedDifferencesCover(t *testing.T) {
	for k, nz := range []struct {
		name string
		mean float64
		draw func(r *rand.Rand) float64
	}{
		{"normal, mean 0.5", 0.5, func(r *rand.Rand) float64 { return 0.5 + r.NormFloat64() }},
		{"normal, mean 0", 0, func(r *rand.Rand) float64 { return r.NormFloat64() }},
		{"exponential", 1, func(r *rand.Rand) float64 { return r.ExpFloat64() }},
		// Accuracies over five rates: differences on a grid of fifths.
		{"grid", 0.15, func(r *rand.Rand) float64 { return []float64{-0.2, 0.2, 0.2, 0.4}[r.IntN(4)] }},
		// 0/1 scores in their range [0, 1], which bounds what a few
		// differing inputs can move the mean by: one method right where
		// the other is wrong, mostly.
		{"0/1 in their range", 0.6, func(r *rand.Rand) float64 { return []float64{-1, 1, 1, 1, 1}[r.IntN(5)] }},
	} {
		t.Run(nz.name, func(t *testing.T) {
			t.Parallel()
			const sets, n = 2000, 100
			r := rand.New(rand.NewPCG(51, uint64(k)))
			a, b := make([]float64, n), make([]float64, n)
			covered, few := 0, 0
			for s := range sets {
				bt := Bootstrap{Resamples: 1000, Seed: uint64(s)}
				binary := nz.name == "0/1 in their range"
				if binary {
					bt.Range = []float64{0, 1}
				}
				for i := range a {
					a[i] = r.Float64()
					if binary {
						a[i] = float64(r.IntN(2))
					}
					b[i] = a[i]
					if r.Float64() < 0.05 {
						d := nz.draw(r)
						b[i] = a[i] - d
						if binary { // right where the other is wrong
							a[i], b[i] = max(d, 0), max(-d, 0)
						}
					}
				}
				iv := bt.Diff([][]float64{a}, [][]float64{b})
				if iv.Lo <= 0.05*nz.mean && 0.05*nz.mean <= iv.Hi {
					covered++
				}
				if iv.Few {
					few++
				}
			}
			cov := float64(covered) / sets
			t.Logf("| %s | %.3f | %.2f |", nz.name, cov, float64(few)/sets)
			if cov < 0.93 {
				t.Errorf("95 %% intervals covered the mean difference in %.1f %% of %d data sets; want ≥ 93 %%", 100*cov, sets)
			}
		})
	}
}

// Where no input differs, Diff says so (MethodNoneDiffer), for one group
// and several, with or without a range: its ends [0, 0] are what the
// inputs say, not an interval.
func TestDiffWhereNoUnitDiffers(t *testing.T) {
	a := [][]float64{{0.2, 0.4, 0.9, 1}}
	several := [][]float64{{0.2, 0.4}, {0.9, 1}, {0.5, 0.5}}
	for k, b := range []Bootstrap{{Seed: 1}, {Seed: 1, Range: []float64{0, 1}}} {
		for _, data := range [][][]float64{a, several} {
			iv := b.Diff(data, data)
			if iv.Method != MethodNoneDiffer || iv.Estimate != 0 || iv.Lo != 0 || iv.Hi != 0 {
				t.Errorf("case %d, %d groups: Diff = %+v; want %q", k, len(data), iv, MethodNoneDiffer)
			}
		}
	}
	if iv := (Bootstrap{Seed: 1}).Diff(a, [][]float64{{0.1, 0.3, 0.8, 0.9}}); iv.Method == MethodNoneDiffer {
		t.Errorf("a constant nonzero difference: %+v", iv)
	}
}
