package onnx

import (
	"context"
	"math/rand/v2"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

// The ONNX import of goar-cnn against the built-in goar-cnn, on a random
// batch of 256: logits (Infer) and input gradients (Gradient), the two
// passes attribution and evaluation make. The import is native layers, so
// the two should run at the same speed; these measure that they do.
func benchNets(b testing.TB) map[string]engine.Network {
	k, err := gemm.Best()
	if err != nil {
		b.Log(err)
	}
	g, err := Parse(fixture(b, "goar-cnn.onnx"))
	if err != nil {
		b.Fatal(err)
	}
	imported, err := g.Build("onnx", k)
	if err != nil {
		b.Fatal(err)
	}
	builtin, err := native.New("goar-cnn", []int{1, 28, 28}, 10, k)
	if err != nil {
		b.Fatal(err)
	}
	builtin.Init(1)
	return map[string]engine.Network{"onnx": imported, "native": builtin}
}

func batch() []float32 {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 256*784)
	for i := range x {
		x[i] = rng.Float32()
	}
	return x
}

func BenchmarkForward(b *testing.B) {
	x := batch()
	for _, name := range []string{"onnx", "native"} {
		net := benchNets(b)[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := engine.Logits(context.Background(), net, x, 256); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(256*float64(b.N)/b.Elapsed().Seconds(), "img/s")
		})
	}
}

func BenchmarkInputGradient(b *testing.B) {
	x := batch()
	for _, name := range []string{"onnx", "native"} {
		net := benchNets(b)[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				_, err := engine.Differentiate(context.Background(), net, x, 256, engine.InputGrad, func(first int, _, d []float32) {
					clear(d)
					for r := range len(d) / 10 {
						d[r*10+(first+r)%10] = 1
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(256*float64(b.N)/b.Elapsed().Seconds(), "img/s")
		})
	}
}
