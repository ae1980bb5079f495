package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
)

// tabularNPZ writes a small two-class tabular set (x: n×4, y: n) whose
// class is the sign of the first feature.
func tabularNPZ(t *testing.T, path string) {
	t.Helper()
	const n, d = 120, 4
	x, y := make([]float32, n*d), make([]float32, n)
	for i := range n {
		for j := range d {
			x[i*d+j] = float32((i*7+j*13)%11) - 5
		}
		if x[i*d] > 0 {
			y[i] = 1
		}
	}
	if err := data.SaveNPZ(path, []data.NamedArray{{Name: "x", Shape: []int{n, d}, Data: x}, {Name: "y", Shape: []int{n}, Data: y}}); err != nil {
		t.Fatal(err)
	}
}

// evaluate without --dataset evaluates on the dataset the model records
// (as eval does), not on a default image set; a model that records none
// is an error asking for --dataset.
func TestEvaluateDefaultsToTheModelsOwnDataset(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	tabularNPZ(t, p("tab.npz"))
	if err := runTrain(ctx, []string{"--dataset", p("tab.npz"), "--model", "logreg", "--epochs", "1", "--out", p("m.flm")}); err != nil {
		t.Fatal(err)
	}
	if err := runEvaluate(ctx, []string{"--model", p("m.flm"), "--methods", "gradient,random", "--protocols", "deletion", "--set", "deletion.samples=10", "--out", p("run")}); err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile(p("run/campaign.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(spec), p("tab.npz")) || strings.Contains(string(spec), "fashion-mnist") {
		t.Errorf("campaign.yaml does not evaluate on the model's dataset %s:\n%s", p("tab.npz"), spec)
	}

	m, err := model.New("logreg", &data.Dataset{Shape: []int{4, 1, 1}, Classes: []string{"a", "b"}}, gemm.Gonum{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(p("bare.flm")); err != nil {
		t.Fatal(err)
	}
	err = runEvaluate(ctx, []string{"--model", p("bare.flm"), "--out", p("bare")})
	if err == nil || !strings.Contains(err.Error(), "does not record the dataset") || !strings.Contains(err.Error(), "--dataset") || !strings.Contains(err.Error(), "bare.flm") {
		t.Errorf("a model recording no dataset, without --dataset: %v", err)
	}
}
