package campaign

import (
	"context"
	"slices"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/perturb"
)

// Removing a quarter of a 4×4 image by a map that ranks pixels by index
// (magnitude: the sign does not matter) removes the last four pixels: the
// zero reference blanks exactly those, and each version's prediction is
// the model's on that image.
func TestRemoveFillsTheTopPixelsAndScoresEachVersion(t *testing.T) {
	ds := &data.Dataset{Name: "tiny", Shape: []int{1, 4, 4}, Classes: []string{"a", "b"}, Y: []int{0, 1}}
	for i := range 32 {
		ds.X = append(ds.X, 0.5+float32(i%7)/10)
	}
	m, err := model.New("logreg", ds, gemm.Gonum{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	saliency := make([]float32, 16)
	for p := range saliency {
		saliency[p] = -float32(p) // most relevant by magnitude: pixel 15
	}
	got, err := Remove(context.Background(), m, ds, ds, 1, saliency, 0.25, true, 1, []string{"zero", "mean"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantKeep := []float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}
	if !slices.Equal(got.Keep, wantKeep) {
		t.Fatalf("keep %v, want %v", got.Keep, wantKeep)
	}
	if len(got.Removals) != 3 || got.Removals[0].Reference != "" || !slices.Equal(got.Removals[0].Image, ds.Sample(1)) {
		t.Fatalf("the first version is not the original: %+v", got.Removals[0])
	}
	zero := got.Removals[1].Image
	for p, v := range zero {
		want := ds.Sample(1)[p]
		if p >= 12 {
			want = 0
		}
		if v != want {
			t.Fatalf("zero reference: pixel %d is %g, want %g", p, v, want)
		}
	}
	for _, r := range got.Removals {
		logits, err := m.Net.Forward(r.Image, 1)
		if err != nil {
			t.Fatal(err)
		}
		prob := engine.Softmax(nil, logits, 2)
		if c := engine.Argmax(logits); r.Predicted != c || r.Confidence != float64(prob[c]) || r.TargetProb != float64(prob[1]) {
			t.Errorf("%q: predicted %d (%g), target %g; the model says %d %v", r.Reference, r.Predicted, r.Confidence, r.TargetProb, c, prob)
		}
	}
	if _, err := Remove(context.Background(), m, ds, ds, 1, saliency, 0.25, true, 2, nil, 1); err == nil {
		t.Error("class 2 of a two-class model accepted")
	}
}

// The cascade of one sample: its map on the trained model and after each
// of goar-cnn's six layers is randomised from the top; a map that ignores
// the model (Random) stays the same all the way, the gradient does not.
func TestCascadeOfOneSample(t *testing.T) {
	ds := &data.Dataset{Name: "tiny", Shape: []int{1, 28, 28}, Classes: []string{"a", "b", "c"}, Y: []int{0, 1}}
	for i := range 2 * 784 {
		ds.X = append(ds.X, float32(i%13)/13)
	}
	m, err := model.New("goar-cnn", ds, gemm.Gonum{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method string
		same   bool
	}{{"random", true}, {"gradient", false}} {
		steps, err := Cascade(context.Background(), m, ds, ds, Request{Method: tc.method, Offset: 1, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != 7 || steps[0].Random != "" || steps[1].Random != "f3" || steps[6].Random != "f3–c1" {
			t.Fatalf("%s: steps %d, the first %q, %q", tc.method, len(steps), steps[0].Random, steps[1].Random)
		}
		for _, st := range steps[1:] {
			if same := st.Spearman == 1 && slices.Equal(st.Map, steps[0].Map); same != tc.same {
				t.Errorf("%s, %s random: Spearman %g, the map unchanged: %v", tc.method, st.Random, st.Spearman, same)
			}
		}
	}
}

// Inspect's dataset-mean reference is the training set's channel means,
// computed once per set (a step recomputed them over every training
// value): the same values as perturb.ChannelMeans, the same slice again.
func TestDatasetMeansComputedOncePerSet(t *testing.T) {
	ds := &data.Dataset{X: []float32{0, 1, 2, 3, 4, 5, 6, 7}, Shape: []int{2, 1, 2}}
	a := datasetMeans(ds, ds.Shape)
	if want := perturb.ChannelMeans(ds.X, ds.Shape); len(a) != 2 || a[0] != want[0] || a[1] != want[1] {
		t.Fatalf("means %v, want %v", a, want)
	}
	if b := datasetMeans(ds, ds.Shape); &b[0] != &a[0] {
		t.Error("computed again for the same set")
	}
	other := &data.Dataset{X: []float32{1, 1, 1, 1, 1, 1, 1, 1}, Shape: []int{2, 1, 2}}
	if c := datasetMeans(other, other.Shape); c[0] != 1 || c[1] != 1 {
		t.Errorf("another set's means %v", c)
	}
}
