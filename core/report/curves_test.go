package report

import (
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
