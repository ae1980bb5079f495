package stats

import (
	"math"
	"testing"
)

// Every function takes odd shapes and values — nothing, empty and ragged
// groups, all NaN, infinities — without panicking, and gives NaN (or p =
// 1) where it cannot answer.
func TestOddInputsNeverPanic(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	odd := [][][]float64{
		nil,
		{},
		{nil},
		{{}, {}},
		{{nan, nan}},
		{{1}, {}, {2, 3, 4}},
		{{inf, 1, 2}},
		{{inf, -inf, 0}},
		{{0, 1}, {nan}, {1, 1, 0, 0, 1}},
	}
	for _, a := range odd {
		for _, b := range odd {
			boot := Bootstrap{Resamples: 50, Seed: 1}
			boot.Mean(a)
			boot.Diff(a, b)
			boot.Replicates([][][]float64{a, b})
			for _, x := range a {
				for _, y := range b {
					Wilcoxon(x, y)
					KendallTau(x, y)
					Spearman(x, y)
				}
			}
			KendallW(a, 20, 1)
			SplitHalf(b, 5, 1)
			Holm(row(a, 0))
		}
	}
	if iv := (Bootstrap{}).Mean(nil); !math.IsNaN(iv.Estimate) || !math.IsNaN(iv.Lo) || iv.Units != 0 || iv.Groups != 0 {
		t.Errorf("Mean(nil) = %+v; want NaN, no units, no groups", iv)
	}
	if d, p := (Bootstrap{}).Diff(nil, [][]float64{{1, 2}}); !math.IsNaN(d.Estimate) || p != 1 {
		t.Errorf("Diff(nil, data) = %+v, p %v; want NaN, p 1", d, p)
	}
	if out := (Bootstrap{}).Replicates(nil); out != nil {
		t.Errorf("Replicates(nil) = %v; want nil", out)
	}
}
