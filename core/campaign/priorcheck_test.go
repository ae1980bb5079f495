package campaign

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/train"
)

// A prior's samples that are the classifier's own test images cannot be
// told from them (AUROC ½ exactly: the same energies) and fall into the
// classes the model predicts for those images.
func TestCheckPriorOfTheTestImagesThemselves(t *testing.T) {
	const ref = "gmm:dim=16,samples=600"
	trainSet, test, err := data.Open(ref, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Fit{Arch: "mlp", Config: train.Config{Epochs: 3, Seed: 1}, Train: trainSet, Source: &model.Source{Ref: ref},
		Kernel: gemm.Gonum{}}.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 50
	samples := slices.Clone(test.X[:n*test.Dim()])
	c, err := CheckPrior(context.Background(), m, samples, n, 1)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := engine.Predicted(context.Background(), m.Net, samples, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int, len(m.Classes))
	for _, k := range pred {
		want[k]++
	}
	if !slices.Equal(c.Counts, want) || c.Samples != n || c.Reference != n {
		t.Errorf("counts %v of %d against %d, want %v", c.Counts, c.Samples, c.Reference, want)
	}
	if c.AUROC != 0.5 {
		t.Errorf("AUROC of the test images against themselves %g, want 0.5", c.AUROC)
	}
	if !(c.ZeroAUROC >= 0 && c.ZeroAUROC <= 1) {
		t.Errorf("AUROC of zero-masked test images %g outside [0, 1]", c.ZeroAUROC)
	}
	gap := 0.0
	for _, k := range want {
		gap = max(gap, math.Abs(float64(k)/float64(n)-0.5))
	}
	if math.Abs(c.MaxShareGap()-gap) > 1e-12 {
		t.Errorf("largest share gap %g, want %g", c.MaxShareGap(), gap)
	}
	if _, err := CheckPrior(context.Background(), m, samples[:10], n, 1); err == nil {
		t.Error("samples of the wrong size were judged")
	}
}

// v_λ explains the Gaussian mixture's samples through Attribute (as
// `attribute` and the workbench do), which hands it the data's truth: at
// λ = 1 with direction truth each map is the explained class's unit
// direction; on data without a truth it says what it needs.
func TestAttributeHandsVLambdaTheTruth(t *testing.T) {
	// open gives a dataset's splits and an untrained mlp for them.
	open := func(ref string) (*model.Model, *data.Dataset, *data.Dataset) {
		trainSet, test, err := data.Open(ref, data.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.New("mlp", trainSet, gemm.Gonum{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		return m, trainSet, test
	}
	m, trainSet, test := open("gmm:dim=16,samples=400")
	ex, err := Attribute(context.Background(), m, trainSet, test, Request{Method: "vlambda", Params: map[string]any{"lambda": 1.0, "direction": "truth"}, Split: "test", Count: 3, Target: "label"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		dir := trainSet.Truth[test.Y[i]]
		var norm float64
		for _, v := range dir {
			norm += float64(v) * float64(v)
		}
		for j, v := range ex.Maps.Map(i) {
			if want := float64(dir[j]) / math.Sqrt(norm); math.Abs(float64(v)-want) > 1e-6 {
				t.Fatalf("sample %d feature %d: %g, want the unit truth %g", i, j, v, want)
			}
		}
	}
	mi, iris, irisTest := open("iris")
	if _, err := Attribute(context.Background(), mi, iris, irisTest, Request{Method: "vlambda", Count: 2}); err == nil || !strings.Contains(err.Error(), "ground truth") {
		t.Errorf("v_λ on iris: %v", err)
	}
}
