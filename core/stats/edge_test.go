package stats

import (
	"encoding/json"
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
			boot.Paired(a, b, []float64{0.05})
			SignFlip(a, b, 1, []float64{0.05})
			boot.Replicates([][][]float64{a, b})
			for _, x := range a {
				for _, y := range b {
					Wilcoxon(x, y)
					KendallTau(x, y)
					Spearman(x, y)
				}
			}
			KendallW(a, 1, []float64{0.05})
			SplitHalf(b, 5, 1)
			Holm(row(a, 0))
		}
	}
	if iv := (Bootstrap{}).Mean(nil); !math.IsNaN(iv.Estimate) || !math.IsNaN(iv.Lo) || iv.Units != 0 || iv.Groups != 0 {
		t.Errorf("Mean(nil) = %+v; want NaN, no units, no groups", iv)
	}
	if d, p := (Bootstrap{}).Diff(nil, [][]float64{{1, 2}}), (Bootstrap{}).Paired(nil, [][]float64{{1, 2}}, nil); !math.IsNaN(d.Estimate) || p.P != 1 {
		t.Errorf("Diff(nil, data) = %+v, p %v; want NaN, p 1", d, p)
	}
	if out := (Bootstrap{}).Replicates(nil); out != nil {
		t.Errorf("Replicates(nil) = %v; want nil", out)
	}
}

// An interval survives JSON: NaN as null, how it was had and its flag.
func TestIntervalJSONRoundTrip(t *testing.T) {
	for _, iv := range []Interval{
		{Estimate: 0.5, Lo: 0.4, Hi: 0.6, Units: 20, Groups: 1, Method: MethodBootstrap, Few: true},
		{Estimate: 1, Lo: math.NaN(), Hi: math.NaN(), Units: 1, Groups: 1},
	} {
		b, err := json.Marshal(iv)
		if err != nil {
			t.Fatal(err)
		}
		var back Interval
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		if !same(back.Estimate, iv.Estimate) || !same(back.Lo, iv.Lo) || !same(back.Hi, iv.Hi) || back.Units != iv.Units || back.Groups != iv.Groups || back.Method != iv.Method || back.Few != iv.Few {
			t.Errorf("%s: read back as %+v, want %+v", b, back, iv)
		}
	}
}
