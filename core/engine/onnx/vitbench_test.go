package onnx

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

// vitB16 reads the vit_b_16 that make_vit.py --full wrote into
// FAITHLAB_VIT_B_16, or skips.
func vitB16(b *testing.B) *native.Net {
	dir := os.Getenv("FAITHLAB_VIT_B_16")
	if dir == "" {
		b.Skip("set FAITHLAB_VIT_B_16 to a folder made by /usr/bin/python3 testdata/onnx/make_vit.py --full DIR")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "vit_b_16.op14.onnx"))
	if err != nil {
		b.Fatal(err)
	}
	g, err := Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	k, _ := gemm.Best()
	net, err := g.Build("vit_b_16", k)
	if err != nil {
		b.Fatal(err)
	}
	return net
}

// vit_b_16 at 224×224 on batches of 16 random images, the figures `make
// bench-vit` sets beside PyTorch's: logits, and logits with the input
// gradient of each image's top logit.
func BenchmarkViTB16(b *testing.B) {
	net := vitB16(b)
	const n = 16
	rng := rand.New(rand.NewPCG(0, 0))
	x := make([]float32, n*3*224*224)
	for i := range x {
		x[i] = rng.Float32()
	}
	ctx := context.Background()
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			if _, err := engine.Logits(ctx, net, x, n); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "img/s")
	})
	b.Run("input_grad", func(b *testing.B) {
		for b.Loop() {
			_, err := engine.Differentiate(ctx, net, x, n, engine.InputGrad, func(_ int, logits, d []float32) {
				clear(d)
				k := net.Classes()
				for r := range len(d) / k {
					d[r*k+engine.Argmax(logits[r*k:(r+1)*k])] = 1
				}
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "img/s")
	})
}
