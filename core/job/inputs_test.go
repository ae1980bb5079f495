package job

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/train"
)

// A campaign on a model file sees the dataset as the model saw it in
// training — its split (made with its training seed, not the campaign's)
// and its standardisation — exactly as eval and attribute do (model.Data):
// the breast-cancer eval once used another split and no scaling.
func TestModelFileCampaignSeesTheModelsSplitAndScaling(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(9, 9))
	var b strings.Builder
	b.WriteString("a,b,label\n")
	for i := range 200 {
		fmt.Fprintf(&b, "%g,%g,%d\n", 1000*rng.NormFloat64()+float64(i%2)*500, 0.01*rng.NormFloat64(), i%2)
	}
	csv := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := data.Options{Seed: 3}
	tr, te, err := data.Open(csv, opt)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "m.flm")
	if _, err := (model.Fit{Arch: "logreg", Config: train.Config{Epochs: 2, Seed: 3}, Train: tr, Test: te, Kernel: gemm.Gonum{},
		Source: &model.Source{Ref: csv, Options: opt}, Out: path}).Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, dir, fmt.Sprintf("output: run\ndatasets: [%q]\nmodel: {file: %q}\nmethods: [gradient]\nprotocols: [deletion]\nseeds: [1]\n", csv, path))
	m, err := model.Load(path, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	r.builds, r.sets = map[string]*build{}, map[string]*sets{}
	gotTr, gotTe, err := r.data(0, 1, m)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotTe.X, te.X) || !slices.Equal(gotTe.Y, te.Y) || !slices.Equal(gotTr.X, tr.X) {
		t.Error("the campaign's splits differ from the model's training and test data")
	}
}
