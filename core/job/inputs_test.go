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
	"faithlab/core/store"
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

// Two campaigns of one model file on different training subsets share a
// cache but not their retrained models (they once did, and ROAR reported
// the first campaign's accuracies for the second).
func TestRetrainedModelsDependOnTheTrainingSubset(t *testing.T) {
	dir := t.TempDir()
	tr, te, err := data.Open("gmm", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "m.flm")
	if _, err := (model.Fit{Arch: "mlp", Config: train.Config{Epochs: 1}, Train: tr, Test: te, Kernel: gemm.Gonum{},
		Source: &model.Source{Ref: "gmm"}, Out: path}).Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "shared-cache")
	models := func() int {
		files, _ := filepath.Glob(filepath.Join(cache, "*", "*.flm"))
		return len(files)
	}
	counts := []int{}
	for i, n := range []int{300, 600} {
		src := fmt.Sprintf("output: run%d\ncache: %s\ndatasets: [{id: gmm, train_samples: %d, test_samples: 100}]\nmodel: {file: %q}\nmethods: [gradient]\nprotocols: [{name: roar, params: {rates: [0.5]}}]\nretrain: {epochs: 1}\n", i, cache, n, path)
		sub := filepath.Join(dir, fmt.Sprint(i))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		r := newRunner(t, sub, src)
		r.Cache = &store.Cache{Dir: cache}
		if _, err := r.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, models())
	}
	if counts[1] <= counts[0] {
		t.Errorf("the second campaign retrained nothing (%d model files in the cache after each): it reused the first's", counts[0])
	}
}

// A GOAR task's key follows its prior file's content: a retrained prior
// under the same name is not taken for the one a finished task used.
func TestPriorContentEntersTheTaskKey(t *testing.T) {
	dir := t.TempDir()
	prior := filepath.Join(dir, "p.flm")
	write := func(content string) {
		if err := os.WriteFile(prior, []byte("FLABMODL"+content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("first weights")
	src := fmt.Sprintf("output: run\ndatasets: [{id: gmm, train_samples: 100, test_samples: 50}]\nmodel: {arch: mlp, epochs: 1}\nmethods: [gradient]\nprotocols: [{name: goar, params: {prior: %q}}, deletion]\n", prior)
	r := newRunner(t, dir, src)
	before := Plan(r.Spec)
	write("second weights")
	after := Plan(r.Spec)
	if before[0].Key == after[0].Key {
		t.Error("the GOAR task's key did not change with its prior's content")
	}
	if before[1].Key != after[1].Key {
		t.Error("the deletion task's key changed with a prior it does not use")
	}
}
