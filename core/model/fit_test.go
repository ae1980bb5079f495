package model

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/train"
)

// tabularCSV writes a two-class CSV whose three features have very
// different scales, so that standardising matters, and no test split.
func tabularCSV(t *testing.T) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	b.WriteString("small,large,offset,label\n")
	for i := range 300 {
		y := i % 2
		s := float64(y) + rng.NormFloat64()
		fmt.Fprintf(&b, "%g,%g,%g,%d\n", 0.01*s, 1000*(rng.NormFloat64()-s), 500+rng.NormFloat64(), y)
	}
	p := filepath.Join(t.TempDir(), "scales.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A model trained on a dataset without a test split, reopened through
// Data with other options, sees exactly the test split and scaling it was
// trained and tested with: evaluating it again gives its own held-out
// accuracy (issue: eval used another split and no standardisation).
func TestDataReopensTheTrainingSplitAndScaling(t *testing.T) {
	csv := tabularCSV(t)
	opt := data.Options{Seed: 3}
	trainSet, testSet, err := data.Open(csv, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.flm")
	_, err = Fit{Arch: "mlp", Config: train.Config{Epochs: 3, Seed: 3}, Train: trainSet, Test: testSet, Kernel: gemm.Gonum{},
		Source: &Source{Ref: csv, Options: opt}, Out: out}.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(out, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	// Another seed and no dataset named: the model's own are used.
	tr2, te2, err := loaded.Data("", data.Options{Seed: 99})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(te2.X, testSet.X) || !slices.Equal(te2.Y, testSet.Y) || !slices.Equal(tr2.X, trainSet.X) {
		t.Fatal("Data gave other samples or other scaling than training had")
	}
	ev, err := train.Evaluate(context.Background(), loaded.Net, te2, 64)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Test == nil || ev.Accuracy != loaded.Test.Accuracy {
		t.Errorf("accuracy on reopened test split %g, recorded at training %v", ev.Accuracy, loaded.Test)
	}
	// The raw file with the other seed's split is what eval used to see.
	raw, _, err := data.Open(csv, data.Options{Seed: 99, Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(raw.X[:3], tr2.X[:3]) {
		t.Error("the check above would not tell the scaled split from a raw one")
	}
}

// Models written before sources were recorded split with their training
// seed, as faithlab-cli train always did.
func TestDataOfAnOldModelSplitsWithItsTrainingSeed(t *testing.T) {
	csv := tabularCSV(t)
	trainSet, testSet, err := data.Open(csv, data.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Fit{Arch: "logreg", Config: train.Config{Epochs: 1, Seed: 5}, Train: trainSet, Kernel: gemm.Gonum{}}.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, te, err := m.Data(csv, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(te.X, testSet.X) {
		t.Error("an old model's dataset was split with another seed than its training seed")
	}
	if _, _, err := m.Data("", data.Options{}); err == nil || !strings.Contains(err.Error(), "name one") {
		t.Errorf("no dataset recorded and none named: %v", err)
	}
}

func TestFitChecksItsOutputBeforeTraining(t *testing.T) {
	ds, err := data.GaussianMixture{Dim: 4, Samples: 64}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, out := range []string{dir, filepath.Join(dir, "no", "such", "folder", "m.flm")} {
		t0 := time.Now()
		calls := 0
		_, err := Fit{Arch: "mlp", Config: train.Config{Epochs: 50}, Train: ds, Kernel: gemm.Gonum{}, Out: out}.Run(context.Background(),
			func(train.Progress) { calls++ })
		if err == nil || calls > 0 {
			t.Errorf("out %s: error %v after %d progress calls (%v)", out, err, calls, time.Since(t0))
		}
	}
}

// rgbFolder writes an image folder of two classes, three 40×30 RGB PNGs
// each, and returns its path.
func rgbFolder(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for ci, class := range []string{"dark", "light"} {
		if err := os.MkdirAll(filepath.Join(root, class), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			img := image.NewNRGBA(image.Rect(0, 0, 40, 30))
			for p := 0; p < len(img.Pix); p += 4 {
				img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = uint8(40+150*ci), uint8(10*i), 200, 255
			}
			f, err := os.Create(filepath.Join(root, class, fmt.Sprintf("%d.png", i)))
			if err != nil {
				t.Fatal(err)
			}
			if err := png.Encode(f, img); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	return root
}

// A model that records no dataset (an ONNX or TorchScript file) opens an
// image folder at its own input size and channels, not at the folder
// default of 28×28 grey; a size or channel count asked for that the model
// does not take is an error naming both (issue 40).
func TestDataDecodesAnImageFolderAsTheModelTakesIt(t *testing.T) {
	folder := rgbFolder(t)
	m := &Model{Header: Header{Arch: ONNXArch, InputShape: []int{3, 16, 16}, Classes: []string{"0", "1"}}}
	tr, te, err := m.Data(folder, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tr.Shape, []int{3, 16, 16}) || tr.Len()+te.Len() != 6 {
		t.Fatalf("opened %d+%d samples of shape %v, want 6 of [3 16 16]", tr.Len(), te.Len(), tr.Shape)
	}
	if r, b := tr.X[0], tr.X[2*16*16]; r == b {
		t.Errorf("red and blue planes both %g: not decoded as RGB", r)
	}
	if _, _, err := m.Data(folder, data.Options{ImageSize: 16, Channels: 3}); err != nil {
		t.Errorf("asking for what the model takes: %v", err)
	}
	for _, tc := range []struct {
		opt  data.Options
		want []string
	}{
		{data.Options{ImageSize: 28}, []string{"28×28", "3×16×16"}},
		{data.Options{Channels: 1}, []string{"1-channel", "3×16×16"}},
	} {
		_, _, err := m.Data(folder, tc.opt)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %v, want one naming %q", tc.opt, err, w)
			}
		}
	}
	// A model that records its data's options: a size it was not trained
	// at is refused too, before the record's options replace opt's.
	m.Source = &Source{Ref: folder, Options: data.Options{ImageSize: 16, Channels: 3}}
	if _, _, err := m.Data("", data.Options{ImageSize: 32}); err == nil || !strings.Contains(err.Error(), "32×32") {
		t.Errorf("a recorded model asked for 32×32: %v", err)
	}
}

// A model trained by `train --dataset digits` records the command's
// default image size (28), which never applied to digits' 8×8 samples:
// reading the model's own data again ignores it, where it once refused
// ("28×28 pixels asked for, but the model takes 1×8×8"); a size the user
// asks for is still checked.
func TestARecordedImageSizeThatNeverAppliedIsIgnored(t *testing.T) {
	h := Header{InputShape: []int{1, 8, 8}, Source: &Source{Ref: "digits", Options: data.Options{ImageSize: 28, Channels: 1, TestFrac: 0.2}}}
	opt, err := h.DataOptions(data.Options{})
	if err != nil || opt.ImageSize != 8 || opt.Channels != 1 || opt.TestFrac != 0.2 {
		t.Fatalf("DataOptions = %+v, %v; want size 8, one channel, the recorded split", opt, err)
	}
	if _, err := h.DataOptions(data.Options{ImageSize: 28}); err == nil {
		t.Error("a size the model does not take, asked for, was accepted")
	}
}
