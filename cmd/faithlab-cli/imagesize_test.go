package main

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/train"
)

// writeRGBFolder writes an image folder of two classes of n 40×30 RGB
// PNGs each.
func writeRGBFolder(t *testing.T, root string, n int) {
	t.Helper()
	for ci, class := range []string{"dark", "light"} {
		if err := os.MkdirAll(filepath.Join(root, class), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			img := image.NewNRGBA(image.Rect(0, 0, 40, 30))
			for p := 0; p < len(img.Pix); p += 4 {
				img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = uint8(40+150*ci), uint8(7*i+p%31), uint8(200-p%53), 255
			}
			f, err := os.Create(filepath.Join(root, class, fmt.Sprintf("%02d.png", i)))
			if err != nil {
				t.Fatal(err)
			}
			if err := png.Encode(f, img); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
}

// A model that takes 3×16×16 and records no dataset (as an ONNX or
// TorchScript file) reads an image folder at 16×16 RGB in eval, attribute,
// evaluate and a campaign spec, without --image-size or --channels; asking
// for another size is an error naming both, in a spec before any work.
func TestImageFolderIsReadAsTheModelTakesIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	writeRGBFolder(t, p("imgs"), 10)
	tr, te, err := data.Open(p("imgs"), data.Options{ImageSize: 16, Channels: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Trained without a Source: the model does not say how to read the folder.
	if _, err := (model.Fit{Arch: "mlp", Config: train.Config{Epochs: 1, Seed: 1}, Train: tr, Test: te, Kernel: gemm.Gonum{}, Out: p("m.flm")}).Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := runEval(ctx, []string{"--model", p("m.flm"), "--dataset", p("imgs")}); err != nil {
		t.Fatalf("eval: %v", err)
	}
	if err := runAttribute(ctx, []string{"--model", p("m.flm"), "--dataset", p("imgs"), "--method", "gradient", "--n", "2", "--out", p("g.npy")}); err != nil {
		t.Fatalf("attribute: %v", err)
	}
	if a, err := data.LoadNPY(p("g.npy")); err != nil || a.Shape[len(a.Shape)-1] != 16 {
		t.Fatalf("attribute's maps: %v %v", a, err)
	}
	err = runEval(ctx, []string{"--model", p("m.flm"), "--dataset", p("imgs"), "--image-size", "28"})
	if err == nil || !strings.Contains(err.Error(), "28×28") || !strings.Contains(err.Error(), "3×16×16") {
		t.Errorf("eval --image-size 28 of a 16×16 model: %v", err)
	}
	if testing.Short() {
		return
	}
	if err := runEvaluate(ctx, []string{"--model", p("m.flm"), "--dataset", p("imgs"), "--methods", "random", "--protocols", "deletion",
		"--set", "deletion.samples=2", "--out", p("ev")}); err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	spec := "output: run\ndatasets: [{id: imgs, image_size: 28}]\nmodel: {file: m.flm}\nmethods: [random]\nprotocols: [{name: deletion, params: {samples: 2}}]\n"
	if err := os.WriteFile(p("c.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runCampaign(ctx, []string{p("c.yaml"), "--quiet"})
	if err == nil || !strings.Contains(err.Error(), "28×28") || !strings.Contains(err.Error(), "3×16×16") {
		t.Errorf("a spec asking for 28×28 of a 16×16 model: %v", err)
	}
	if _, err := os.Stat(p("run")); err == nil {
		t.Error("the refused spec made its run folder")
	}
}
