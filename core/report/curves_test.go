package report

import (
	"math"
	"slices"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// A removal curve's x axis counts what the data has: pixels of images,
// features of tables, known from the result or, in runs from before
// results said, from the shape of the inputs it shows.
func TestRemovalAxisFollowsTheData(t *testing.T) {
	roar := func(dataset, kind string, samples ...protocol.Sample) store.Record {
		x := protocol.Values{0.1, 0.5, 0.9}
		return store.Record{Dataset: dataset, Method: "gradient", Protocol: "ROAR", Seed: 1,
			Result: &protocol.Result{Protocol: "ROAR", Method: "gradient", Data: kind, Samples: samples,
				Curves: []protocol.Curve{{Name: "accuracy", X: x, Y: protocol.Values{0.9, 0.6, 0.3}}}}}
	}
	recs := []store.Record{
		roar("fashion-mnist", "image"),
		roar("gmm", "tabular"),
		roar("old-gmm", "", protocol.Sample{Kind: protocol.Original, Shape: []int{8, 64, 1, 1}}),
		roar("old-mnist", "", protocol.Sample{Kind: protocol.Original, Shape: []int{8, 1, 28, 28}}),
		roar("unknown", ""),
	}
	figs, err := Figures(recs, Confidence{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"fashion-mnist_roar_accuracy": "fraction of pixels removed",
		"gmm_roar_accuracy":           "fraction of features removed",
		"old-gmm_roar_accuracy":       "fraction of features removed",
		"old-mnist_roar_accuracy":     "fraction of pixels removed",
		"unknown_roar_accuracy":       "fraction of pixels removed",
	}
	for _, f := range figs {
		if w, ok := want[f.Name]; ok {
			if got := f.Plot.X.Label.Text; got != w {
				t.Errorf("%s: x axis %q, want %q", f.Name, got, w)
			}
			delete(want, f.Name)
		}
	}
	for name := range want {
		t.Errorf("no figure %s", name)
	}
}

// A curve's key writes each method's whole label, then its summary, and
// writes every summary in the figure alike: "1.000" beside "0.082", never
// "1.00" (ROAD MoRF's key had both).
func TestCurveKeyKeepsLabelsWholeAndNumbersAlike(t *testing.T) {
	roar := func(method string, mean float64) store.Record {
		x := protocol.Values{0.1, 0.5, 0.9}
		return store.Record{Dataset: "gmm", Method: method, Protocol: "ROAR", Seed: 1,
			Result: &protocol.Result{Protocol: "ROAR", Method: method,
				Curves:  []protocol.Curve{{Name: "accuracy", X: x, Y: protocol.Values{mean, mean, mean}}},
				Scalars: []protocol.Scalar{{Name: "mean_accuracy", Value: mean, Better: protocol.Lower}}}}
	}
	recs := []store.Record{roar("vlambda{lambda=0}", 1), roar("vlambda{lambda=0.25}", 0.082), roar("gradient", 0.5)}
	figs, err := Figures(recs, Confidence{})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, f := range figs {
		if f.Name == "gmm_roar_accuracy" {
			for _, e := range f.Key {
				labels = append(labels, e.Label)
			}
		}
	}
	want := []string{"vlambda\nlambda=0 (mean 1.000)", "vlambda\nlambda=0.25 (mean 0.082)", "gradient (mean 0.500)"}
	if !slices.Equal(labels, want) {
		t.Errorf("key %q, want %q", labels, want)
	}
}

// Numbers shown together take the decimals the one needing most needs.
func TestNumbersShownTogetherAreWrittenAlike(t *testing.T) {
	for _, tc := range []struct {
		vs   []float64
		want []string
	}{
		{[]float64{1, 0.9996}, []string{"1.000", "1.000"}},
		{[]float64{1.004, 2.5}, []string{"1.00", "2.50"}},
		{[]float64{250, 17.23}, []string{"250.0", "17.2"}},
		{[]float64{math.NaN(), 2}, []string{"NaN", "2.00"}},
		{[]float64{-0.0001, 0.5}, []string{"0.000", "0.500"}},
	} {
		if got := numbers(tc.vs...); !slices.Equal(got, tc.want) {
			t.Errorf("numbers(%v) = %q, want %q", tc.vs, got, tc.want)
		}
	}
}

// A curve's x axis spans its parameter as far as the data go (GOAR's
// strengths 0…32, not rounded out to 40), or the parameter's natural range
// where it has one (a fraction removed: 0…1).
func TestCurveAxisEndsWithTheData(t *testing.T) {
	curve := func(proto, name string, x protocol.Values) store.Record {
		y := make(protocol.Values, len(x))
		for i := range y {
			y[i] = 0.5
		}
		return store.Record{Dataset: "gmm", Method: "gradient", Protocol: proto, Seed: 1,
			Result: &protocol.Result{Protocol: proto, Method: "gradient", Curves: []protocol.Curve{{Name: name, X: x, Y: y}}}}
	}
	recs := []store.Record{
		curve("GOAR", "accuracy", protocol.Values{0, 4, 8, 12, 16, 20, 24, 28, 32}),
		curve("ROAR", "accuracy", protocol.Values{0.1, 0.5, 0.9}),
	}
	figs, err := Figures(recs, Confidence{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"gmm_goar_accuracy": {0, 32}, "gmm_roar_accuracy": {0, 1}}
	for _, f := range figs {
		if w, ok := want[f.Name]; ok {
			if got := [2]float64{f.Plot.X.Min, f.Plot.X.Max}; got != w {
				t.Errorf("%s: x axis %v, want %v", f.Name, got, w)
			}
			delete(want, f.Name)
		}
	}
	for name := range want {
		t.Errorf("no figure %s", name)
	}
}
