package campaign

import (
	"context"
	"math"
	"slices"
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
