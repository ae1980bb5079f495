package native

import (
	"context"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// benchNet is goar-cnn on a random batch of 256, as the peer's figures.
func benchNet(b *testing.B) (*Net, []float32, []float32) {
	k, err := gemm.Best()
	if err != nil {
		b.Log(err)
	}
	m, err := New("goar-cnn", []int{1, 28, 28}, 10, k)
	if err != nil {
		b.Fatal(err)
	}
	m.Init(0)
	x := randBatch(1, 256*784)
	dl := make([]float32, 256*10)
	for i := 0; i < 256; i++ {
		dl[i*10+i%10] = 1
	}
	b.Logf("kernel %s", k.Name())
	return m, x, dl
}

// BenchmarkForwardBackwardParams is the core of a training step (no optimiser).
func BenchmarkForwardBackwardParams(b *testing.B) {
	m, x, dl := benchNet(b)
	for b.Loop() {
		m.Forward(x, 256)
		m.Backward(dl, engine.ParamGrad)
	}
	b.ReportMetric(256*float64(b.N)/b.Elapsed().Seconds(), "img/s")
}

// BenchmarkGradientParams is a training step's gradient through Gradient:
// pieces of the batch on one replica per core.
func BenchmarkGradientParams(b *testing.B) { benchGradient(b, engine.ParamGrad) }

// BenchmarkGradientInput is a saliency pass through Gradient.
func BenchmarkGradientInput(b *testing.B) { benchGradient(b, engine.InputGrad) }

func benchGradient(b *testing.B, want engine.Want) {
	m, x, dl := benchNet(b)
	g := func(first int, _, d []float32) { copy(d, dl[first*10:]) }
	for b.Loop() {
		m.Gradient(context.Background(), x, 256, want, g)
	}
	b.ReportMetric(256*float64(b.N)/b.Elapsed().Seconds(), "img/s")
}

// BenchmarkInputGradient is a saliency pass: forward and input gradient.
func BenchmarkInputGradient(b *testing.B) {
	m, x, dl := benchNet(b)
	for b.Loop() {
		m.Forward(x, 256)
		m.Backward(dl, engine.InputGrad)
	}
	b.ReportMetric(256*float64(b.N)/b.Elapsed().Seconds(), "img/s")
}

// benchUNet is unet-s on a random batch of 64 at spread timesteps, as the
// peer's unet figures.
func benchUNet(b *testing.B) (*UNet, []float32, []int) {
	k, err := gemm.Best()
	if err != nil {
		b.Log(err)
	}
	u, err := NewUNet([]int{1, 28, 28}, k)
	if err != nil {
		b.Fatal(err)
	}
	u.Init(0)
	ts := make([]int, 64)
	for i := range ts {
		ts[i] = i * 15
	}
	return u, randBatch(1, 64*784), ts
}

// BenchmarkUNetGradientParams is a training step's gradient (no optimiser).
func BenchmarkUNetGradientParams(b *testing.B) {
	u, x, ts := benchUNet(b)
	g := func(first int, pred, d []float32) { copy(d, pred) }
	for b.Loop() {
		u.Gradient(x, ts, 64, engine.ParamGrad, g)
	}
	b.ReportMetric(64*float64(b.N)/b.Elapsed().Seconds(), "img/s")
}

// BenchmarkUNetForward is a DDIM step's network evaluation.
func BenchmarkUNetForward(b *testing.B) {
	u, x, ts := benchUNet(b)
	for b.Loop() {
		u.Forward(x, ts, 64)
	}
	b.ReportMetric(64*float64(b.N)/b.Elapsed().Seconds(), "img-steps/s")
}
