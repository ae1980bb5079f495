package train

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/enginetest"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

func gmm(t *testing.T) (*data.Dataset, *data.Dataset) {
	t.Helper()
	tr, te, err := data.Open("gmm", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr, te
}

func mlp(t *testing.T, ds *data.Dataset, seed uint64) *native.Net {
	t.Helper()
	k, _ := gemm.Best()
	m, err := native.New("mlp", ds.Shape, len(ds.Classes), k)
	if err != nil {
		t.Fatal(err)
	}
	m.Init(seed)
	return m
}

func weights(m *native.Net) []float32 {
	var w []float32
	for _, p := range m.Params() {
		w = append(w, p.Data...)
	}
	return w
}

func TestSameSeedSameWeightsBitForBit(t *testing.T) {
	tr, _ := gmm(t)
	run := func(seed uint64) []float32 {
		m := mlp(t, tr, seed)
		if _, err := Train(context.Background(), m, tr, Config{Epochs: 3, Seed: seed, BatchSize: 64}, nil); err != nil {
			t.Fatal(err)
		}
		return weights(m)
	}
	a, b, c := run(1), run(1), run(2)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("weight %d differs between two runs with seed 1: %g vs %g", i, a[i], b[i])
		}
	}
	same := true
	for i := range a {
		same = same && a[i] == c[i]
	}
	if same {
		t.Error("seeds 1 and 2 gave the same weights")
	}
}

// The Gaussian mixture's classes are 2/√0.3·√20 ≈ 16 standard deviations
// apart along the mean difference: a trained MLP is all but perfect.
func TestLearnsGaussianMixture(t *testing.T) {
	tr, te := gmm(t)
	m := mlp(t, tr, 0)
	rec, err := Train(context.Background(), m, tr, Config{Epochs: 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Evaluate(context.Background(), m, te, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Accuracy < 0.99 {
		t.Errorf("test accuracy %.4f after %d epochs, want ≥ 0.99", ev.Accuracy, len(rec.History))
	}
	if rec.BestEpoch < 1 || rec.BestEpoch > len(rec.History) {
		t.Errorf("best epoch %d of %d", rec.BestEpoch, len(rec.History))
	}
	// What an estimate counts: every epoch over what validation leaves.
	if got, want := (Config{Epochs: 20}).Images(tr.Len()), 20*rec.Samples; got != want {
		t.Errorf("Images says %d for 20 epochs, the run trained on %d samples an epoch (%d)", got, rec.Samples, want)
	}
}

func TestImagesCountsTheValidationSplitOut(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		n    int
		want int
	}{
		{Config{Epochs: 5}, 3000, 5 * 3000},                 // no split: patience 5 cannot stop 5 epochs
		{Config{Epochs: 20}, 3000, 20 * 2750},               // 1/12 held out
		{Config{Epochs: 10}, 60000, 10 * 55000},             // Fashion-MNIST's 55k/5k
		{Config{Epochs: 4, ValFraction: 0.25}, 100, 4 * 75}, // explicit
		{Config{Epochs: 7, Patience: -1}, 1000, 7 * 1000},   // never stops early: no split
	} {
		if got := tc.cfg.Images(tc.n); got != tc.want {
			t.Errorf("%+v on %d samples: %d images, want %d", tc.cfg, tc.n, got, tc.want)
		}
	}
}

func TestEarlyStoppingAndCancel(t *testing.T) {
	tr, _ := gmm(t)
	m := mlp(t, tr, 0)
	rec, err := Train(context.Background(), m, tr, Config{Epochs: 1000, Patience: 2, LR: 1e-2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Stopped != "early-stopping" || len(rec.History) != rec.BestEpoch+2 {
		t.Errorf("stopped %q after %d epochs with best %d; want early stopping 2 epochs after the best", rec.Stopped, len(rec.History), rec.BestEpoch)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	rec, err = Train(ctx, m, tr, Config{Epochs: 1000, Patience: -1}, func(p Progress) {
		if calls++; calls == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || rec.Stopped != "cancelled" {
		t.Errorf("cancel: err %v, stopped %q", err, rec.Stopped)
	}
}

func TestBadConfigAndData(t *testing.T) {
	tr, _ := gmm(t)
	m := mlp(t, tr, 0)
	_, err := Train(context.Background(), m, tr, Config{Epochs: -1, LR: -1, Schedule: "zigzag", ValFraction: 2}, nil)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"epochs", "learning rate", "schedule", "validation"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	empty := &data.Dataset{Name: "empty", Shape: tr.Shape, Classes: tr.Classes}
	if _, err := Train(context.Background(), m, empty, Config{}, nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty dataset: %v", err)
	}
	other := &data.Dataset{Name: "img", Shape: []int{1, 28, 28}, X: make([]float32, 784*2), Y: []int{0, 1}, Classes: []string{"a", "b"}}
	if _, err := Train(context.Background(), m, other, Config{}, nil); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("shape mismatch: %v", err)
	}
}

func TestValidationSplitOnlyWhenItCanStopTraining(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want float64
	}{
		{Config{Epochs: 5}, -1},                    // patience 5 can never trigger in 5 epochs
		{Config{Epochs: 6}, 1.0 / 12},              // it can in 6
		{Config{}, 1.0 / 12},                       // 100 epochs by default
		{Config{Epochs: 50, Patience: -1}, -1},     // never stops early
		{Config{Epochs: 5, ValFraction: 0.2}, 0.2}, // explicit
	} {
		if got := tc.cfg.Defaults().ValFraction; got != tc.want {
			t.Errorf("%+v: validation fraction %g, want %g", tc.cfg, got, tc.want)
		}
	}
}

// A linear model with logits (x0, −x0) predicts class a for a positive
// first feature and b otherwise: its confusion matrix, counted by hand.
func TestEvaluateConfusionByHand(t *testing.T) {
	lin := enginetest.NewLinear(1, []int{2, 1, 1}, 2)
	copy(lin.W, []float32{1, 0, -1, 0})
	clear(lin.B)
	ds := &data.Dataset{Name: "hand", Shape: []int{2, 1, 1}, Classes: []string{"a", "b"},
		// predicted: a, a, b, b, b; labels: a, b, b, a, b
		X: []float32{1, 0, 2, 0, -1, 0, -3, 0, -0.5, 0}, Y: []int{0, 1, 1, 0, 1}}
	ev, err := Evaluate(context.Background(), lin, ds, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{1, 1}, {1, 2}}
	for c := range want {
		if !slices.Equal(ev.Confusion[c], want[c]) {
			t.Fatalf("confusion %v, want %v", ev.Confusion, want)
		}
	}
	if ev.Accuracy != 0.6 || !slices.Equal(ev.ClassAccuracy, []float64{0.5, 2.0 / 3}) {
		t.Errorf("accuracy %g, per class %v", ev.Accuracy, ev.ClassAccuracy)
	}
}

// cancelAfter is a context that is cancelled after its first n calls to
// Err: a cancel that arrives in the middle of a batch, at a point fixed
// by the code rather than by the clock.
type cancelAfter struct {
	context.Context
	left atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// A cancel reaches training within the batch under way, for every
// built-in architecture — resnet18's whole-batch passes (batch norm) last
// seconds: no optimiser step is taken, so the weights are those of before.
func TestCancelStopsWithinABatchForEveryArchitecture(t *testing.T) {
	ds := &data.Dataset{Name: "noise", Shape: []int{1, 28, 28}, Classes: []string{"0", "1", "2"}}
	for i := range 64 {
		ds.Y = append(ds.Y, i%3)
	}
	ds.X = make([]float32, 64*784)
	for i := range ds.X {
		ds.X[i] = float32(i%97) / 97
	}
	for _, arch := range native.Architectures() {
		m, err := native.New(arch, ds.Shape, 3, gemm.Gonum{})
		if err != nil {
			t.Fatal(err)
		}
		m.Init(1)
		// The trained weights (batch norm's running statistics, which a
		// forward pass in training updates, are not among them).
		weights := func() []float32 {
			var w []float32
			for _, p := range m.Params() {
				if p.Grad != nil {
					w = append(w, p.Data...)
				}
			}
			return w
		}
		before := weights()
		ctx := &cancelAfter{Context: context.Background()}
		ctx.left.Store(3) // the check before the batch, then two layers
		batches := 0
		_, err = Train(ctx, m, ds, Config{Epochs: 1, BatchSize: 64, ValFraction: -1}, func(p Progress) { batches++ })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want a cancel", arch, err)
			continue
		}
		if batches > 0 || !slices.Equal(weights(), before) {
			t.Errorf("%s: the cancel let %d batch(es) finish and the weights change", arch, batches)
		}
	}
}
