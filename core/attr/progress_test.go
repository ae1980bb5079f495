package attr

import (
	"context"
	"math/rand/v2"
	"testing"
)

// The gradient methods report their progress over their blocks and
// batches: from above 0 to exactly 1, never back, one report per batch
// through the engine (10 samples in chunks of 4: 3 batches for Gradient,
// 10×5 IG steps in blocks of 4 samples, each 20 rows in batches of 4: 5
// per block of 4, 3 blocks).
func TestGradientMethodsReportProgressToTheEnd(t *testing.T) {
	net := newLinear(1)
	rng := rand.New(rand.NewPCG(3, 3))
	in := Input{N: 10, Shape: net.Shape, X: make([]float32, 60), Target: make([]int, 10)}
	for i := range in.X {
		in.X[i] = float32(rng.NormFloat64())
	}
	for i := range in.Target {
		in.Target[i] = i % 3
	}
	for _, tc := range []struct {
		m       Method
		reports int
	}{
		{Gradient{Chunk: 4}, 3},
		{IntegratedGradients{Steps: 5, Chunk: 4}, 5 + 5 + 3}, // the last block: 2 samples, 10 rows
		{SmoothGrad{Samples: 2, Chunk: 4}, 2 + 2 + 1},
		{DeepLift{Chunk: 4}, 3},
	} {
		var got []float64
		ctx := WithProgress(context.Background(), func(f float64) { got = append(got, f) })
		if _, err := Run(ctx, tc.m, net, in); err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.reports {
			t.Errorf("%s: %d reports %v, want %d", tc.m.Name(), len(got), got, tc.reports)
		}
		for i, f := range got {
			if f <= 0 || f > 1 || (i > 0 && f < got[i-1]) {
				t.Fatalf("%s: reports %v", tc.m.Name(), got)
			}
		}
		if len(got) > 0 && got[len(got)-1] != 1 {
			t.Errorf("%s: last report %g, want 1", tc.m.Name(), got[len(got)-1])
		}
	}
}
