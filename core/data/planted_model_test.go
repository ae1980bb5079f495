package data_test

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/train"
)

// A model trained on fashion-mnist-planted uses the patch, and only the
// patch: the goar-cnn, trained for 5 epochs on 6000 samples, classifies held-out
// samples by their patch (accuracy ≥ 0.9), falls to chance when the patch
// is removed (its mask's pixels set to 0: the garment alone, which says
// nothing of the label; 1/10 within 4 binomial standard deviations), and
// keeps its accuracy when a block of the patch's size is removed from the
// middle of the garment instead.
func TestPlantedModelUsesThePatchAlone(t *testing.T) {
	if _, err := os.Stat(data.FashionMNISTDir); err != nil {
		t.Skip("Fashion-MNIST is not installed (dataset-fashion-mnist)")
	}
	const n = 1000
	tr, te, err := data.Open("fashion-mnist-planted", data.Options{Seed: 1, TrainHead: 6000, TestHead: n})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New("goar-cnn", tr, gemm.Gonum{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	cfg := train.Config{Epochs: 5, BatchSize: 32, LR: 2e-3, Seed: 1, ValFraction: -1, Patience: -1}
	if _, err := train.Train(ctx, m.Net, tr, cfg, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("trained on %d samples in %.1f s", tr.Len(), time.Since(start).Seconds())
	accuracy := func(name string, remove func(i int, x []float32)) float64 {
		s := te.Head(te.Len()) // a copy
		for i := range s.Len() {
			remove(i, s.Sample(i))
		}
		ev, err := train.Evaluate(ctx, m.Net, s, 256)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: accuracy %.3f on %d test samples", name, ev.Accuracy, ev.Samples)
		return ev.Accuracy
	}
	withPatch := accuracy("with the patch", func(int, []float32) {})
	withoutPatch := accuracy("patch removed", func(i int, x []float32) {
		for j, v := range te.Masks[i*784 : (i+1)*784] {
			x[j] *= 1 - v
		}
	})
	middleGone := accuracy("a 4×4 block of the garment removed", func(_ int, x []float32) {
		for r := 12; r < 16; r++ {
			clear(x[r*28+12 : r*28+16])
		}
	})
	if withPatch < 0.9 || middleGone < 0.9 {
		t.Errorf("accuracy %.3f with the patch, %.3f with the garment's middle removed: want ≥ 0.9", withPatch, middleGone)
	}
	if bound := 4 * math.Sqrt(0.1*0.9/n); math.Abs(withoutPatch-0.1) > bound {
		t.Errorf("accuracy %.3f with the patch removed: want chance, 0.1 ± %.3f", withoutPatch, bound)
	}
}
