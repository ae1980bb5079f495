package attr

import (
	"context"
	"math/rand/v2"
	"testing"

	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

// benchExplain times a method on 16 images of goar-cnn with all inner
// samples in one engine call, as core/bench's cnn_* figures.
func benchExplain(b *testing.B, m Method) {
	k, err := gemm.Best()
	if err != nil {
		b.Log(err)
	}
	net, err := native.New("goar-cnn", []int{1, 28, 28}, 10, k)
	if err != nil {
		b.Fatal(err)
	}
	net.Init(0)
	const n = 16
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n*784)
	for i := range x {
		x[i] = rng.Float32()
	}
	target := make([]int, n)
	for b.Loop() {
		if _, err := m.Attribute(context.Background(), net, Input{X: x, N: n, Shape: []int{1, 28, 28}, Target: target}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "img/s")
}

func BenchmarkSmoothGrad15(b *testing.B) { benchExplain(b, SmoothGrad{Samples: 15, Chunk: 240}) }
func BenchmarkIG25(b *testing.B)         { benchExplain(b, IntegratedGradients{Steps: 25, Chunk: 400}) }
