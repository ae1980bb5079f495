package job

import (
	"context"
	"fmt"
	"testing"

	"faithlab/core/attr"
	"faithlab/core/attr/methods"
	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/resources"
)

// BenchmarkMetrics runs each metric of the field (issue 23) with its
// defaults on the shipped goar-cnn and the first 100 Fashion-MNIST test
// images, Gradient's maps computed once beforehand (the maps the
// randomisation and robustness metrics recompute are counted: Gradient's).
// img/s is what to scale to a campaign's size.
//
//	go test ./core/job -run '^$' -bench Metrics -benchtime 1x
func BenchmarkMetrics(b *testing.B) {
	const n = 100
	_, test, err := data.Open("fashion-mnist", data.Options{})
	if err != nil {
		b.Skip("Fashion-MNIST:", err)
	}
	test = test.Head(n)
	kern, err := gemm.Best()
	if err != nil {
		kern = gemm.Gonum{}
	}
	m, err := model.Decode(resources.Model(), kern)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	net, err := model.NativeEngine(kern).Network(ctx, m)
	if err != nil {
		b.Fatal(err)
	}
	meth, err := methods.New("gradient", nil, attr.Setup{Seed: 1, Chunk: 256})
	if err != nil {
		b.Fatal(err)
	}
	target, err := engine.Predicted(ctx, net, test.X, test.Len(), 1024)
	if err != nil {
		b.Fatal(err)
	}
	maps, err := explain(ctx, meth, nil, "sum", net, attr.Input{X: test.X, N: test.Len(), Shape: test.Shape, Split: "test", Target: target})
	if err != nil {
		b.Fatal(err)
	}
	env := &protocol.Env{Net: net, Test: test, Method: "gradient", Seed: 1,
		Maps: func(context.Context, string) ([]float32, error) { return maps, nil },
		Explain: func(ctx context.Context, net engine.Network, x []float32, k int, target []int) ([]float32, error) {
			return explain(ctx, meth, nil, "sum", net, attr.Input{X: x, N: k, Shape: test.Shape, Target: target})
		}}
	for _, name := range []string{"PixelFlipping", "RegionPerturbation", "Selectivity", "FaithfulnessCorrelation", "FaithfulnessEstimate",
		"Monotonicity", "MonotonicityCorrelation", "Sufficiency", "IROF", "MPRT", "SmoothMPRT", "EfficientMPRT", "RandomLogit", "Complexity", "MaxSensitivity"} {
		p, err := protocol.New(name, map[string]any{"samples": n})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				if _, err := p.Run(ctx, env); err != nil {
					b.Fatal(fmt.Errorf("%s: %w", name, err))
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "img/s")
		})
	}
}
