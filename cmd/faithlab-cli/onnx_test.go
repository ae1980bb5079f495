package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/data"
)

// An ONNX CNN exported by testdata/onnx/make_onnx.py runs eval, attribute
// (Gradient, IG, SmoothGrad, Grad-CAM, DeepLIFT) and a Deletion + ROAD campaign with
// ROAD's retraining, all on the native engine.
func TestONNXModelRunsEvalAttributeAndACampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign")
	}
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist"); err != nil {
		t.Skip("Debian's dataset-fashion-mnist is not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	for _, f := range []string{"goar-cnn.onnx", "goar-cnn.onnx.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "onnx", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p(f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := runEval(ctx, []string{"--model", p("goar-cnn.onnx")}); err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"gradient", "ig", "smoothgrad", "gradcam", "deeplift"} {
		out := p(method + ".npy")
		if err := runAttribute(ctx, []string{"--model", p("goar-cnn.onnx"), "--method", method, "--n", "4", "--out", out}); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		a, err := data.LoadNPY(out)
		if err != nil || a.Shape[0] != 4 {
			t.Fatalf("%s: %v %v", method, a, err)
		}
	}
	spec := `output: run
datasets: [{id: fashion-mnist, train_samples: 300, test_samples: 40}]
model: {file: goar-cnn.onnx}
methods: [gradient, random]
protocols:
  - {name: deletion, params: {samples: 10}}
  - {name: road, params: {rates: [0.3, 0.7]}}
  - {name: road, params: {rates: [0.5], retrain: true}}
retrain: {epochs: 1}
`
	if err := os.WriteFile(p("c.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runCampaign(ctx, []string{p("c.yaml"), "--quiet"}); err != nil {
		t.Fatal(err)
	}
	csv := string(readCSV(t, p("run")))
	for _, want := range []string{",Deletion,", ",ROAD,", "goar-cnn.onnx"} {
		if !strings.Contains(csv, want) {
			t.Errorf("the results lack %q:\n%s", want, csv)
		}
	}
	if n := strings.Count(csv, ",random,"); n == 0 {
		t.Errorf("no results for random:\n%s", csv)
	}
}

// A damaged ONNX file is an error naming it and the problem, from every
// command that opens a model.
func TestDamagedONNXFileIsAnErrorNamingIt(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "onnx", "goar-cnn.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.onnx")
	if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, run := range map[string]func() error{
		"eval":      func() error { return runEval(ctx, []string{"--model", path}) },
		"attribute": func() error { return runAttribute(ctx, []string{"--model", path, "--out", path + ".npy"}) },
	} {
		if err := run(); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a readable ONNX model") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
