package attr

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/enginetest"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

type linearNet = enginetest.Linear

func newLinear(seed uint64) *linearNet { return enginetest.NewLinear(seed, []int{6, 1, 1}, 3) }

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestLinearModelExactAnswers(t *testing.T) {
	net := newLinear(1)
	rng := rand.New(rand.NewPCG(2, 2))
	in := Input{N: 4, Shape: net.Shape, X: make([]float32, 24), Target: []int{0, 1, 2, 1}}
	for i := range in.X {
		in.X[i] = float32(rng.NormFloat64())
	}
	w := func(i, j int) float64 { return float64(net.W[in.Target[i]*net.D+j]) }
	x := func(i, j int) float64 { return float64(in.X[i*net.D+j]) }
	for _, tc := range []struct {
		m    Method
		want func(i, j int) float64
	}{
		{Gradient{}, w},
		{GradientXInput{}, func(i, j int) float64 { return w(i, j) * x(i, j) }},
		{IntegratedGradients{}, func(i, j int) float64 { return w(i, j) * x(i, j) }},
		{IntegratedGradients{Rule: "trapezoid", Steps: 3}, func(i, j int) float64 { return w(i, j) * x(i, j) }},
		{DeepLift{}, func(i, j int) float64 { return w(i, j) * x(i, j) }},
		{SmoothGrad{}, w},
		{SmoothGrad{Aggregate: "square"}, func(i, j int) float64 { return w(i, j) * w(i, j) }},
		{SmoothGrad{Aggregate: "variance"}, func(i, j int) float64 { return 0 }},
		{GradientSHAP{}, func(i, j int) float64 { return w(i, j) * x(i, j) }},
	} {
		got, err := Run(context.Background(), tc.m, net, in)
		if err != nil {
			t.Fatalf("%s: %v", tc.m.Name(), err)
		}
		for i := 0; i < in.N; i++ {
			for j := 0; j < net.D; j++ {
				if g := float64(got.Data[i*net.D+j]); !near(g, tc.want(i, j), 1e-5) {
					t.Errorf("%s %v: sample %d feature %d = %g, want %g", tc.m.Name(), tc.m.Settings(), i, j, g, tc.want(i, j))
				}
			}
		}
	}
}

// SHAP efficiency: with one reference b, GradientSHAP's attributions of a
// linear model add up to f(x) − f(b) exactly, whatever α is drawn.
func TestGradientSHAPEfficiency(t *testing.T) {
	net := newLinear(3)
	ref := []float32{0.5, -1, 2, 0, 1, -0.5}
	x := []float32{1, 2, 3, -1, 0, 0.25}
	in := Input{N: 1, Shape: net.Shape, X: x, Target: []int{2}}
	got, err := Run(context.Background(), GradientSHAP{References: ref, Samples: 7, Seed: 9}, net, in)
	if err != nil {
		t.Fatal(err)
	}
	fx, _ := net.Forward(x, 1)
	fxv := fx[2]
	fb, _ := net.Forward(ref, 1)
	var sum float64
	for _, v := range got.Data {
		sum += float64(v)
	}
	if want := float64(fxv - fb[2]); !near(sum, want, 1e-5) {
		t.Errorf("Σ attributions %g, f(x) − f(b) %g", sum, want)
	}
}

// reluNet builds, in the native mlp, the IG paper's example f(x) = 1 −
// ReLU(1 − x) for one input (class 1; class 0 is constant 0), whose
// gradient vanishes at x = 2 although f(2) − f(0) = 1.
func reluNet(t *testing.T) engine.Network {
	m, err := native.New("mlp", []int{1, 1, 1}, 2, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	ps := m.Params() // f1.weight (128×1), f1.bias, f2.weight (128×128), f2.bias, f3…, f4.weight (2×128), f4.bias
	for _, p := range ps {
		clear(p.Data)
	}
	ps[0].Data[0], ps[1].Data[0] = -1, 1 // h1 = ReLU(1 − x)
	ps[2].Data[0] = 1                    // h2 = ReLU(h1)
	ps[4].Data[0] = 1                    // h3 = ReLU(h2)
	ps[6].Data[128], ps[7].Data[1] = -1, 1
	return m
}

func TestIGPaperReLUExample(t *testing.T) {
	net := reluNet(t)
	in := Input{N: 1, Shape: []int{1, 1, 1}, X: []float32{2}, Target: []int{1}}
	for _, tc := range []struct {
		m    Method
		want float64
	}{
		{Gradient{}, 0},                             // saturated: the gradient misses the feature
		{IntegratedGradients{}, 0.96},               // right Riemann sum, 25 steps: 12 of 25 points see slope 1
		{IntegratedGradients{Rule: "trapezoid"}, 1}, // exact here
		{IntegratedGradients{Steps: 1000}, 0.998},   // 499 of 1000 points before the kink
		{DeepLift{}, 1},                             // rescale multiplier (0 − 1)/(−1 − 1) = ½, times Δx = 2
	} {
		got, err := Run(context.Background(), tc.m, net, in)
		if err != nil {
			t.Fatal(err)
		}
		if !near(float64(got.Data[0]), tc.want, 1e-3) {
			t.Errorf("%s %v: %g, want %g", tc.m.Name(), tc.m.Settings(), got.Data[0], tc.want)
		}
	}
}

// IG completeness on goar-cnn: Σ attributions ≈ f(x) − f(0) within 1% at 256 steps.
func TestIGCompletenessOnCNN(t *testing.T) {
	k, _ := gemm.Best()
	net, err := native.New("goar-cnn", []int{1, 28, 28}, 10, k)
	if err != nil {
		t.Fatal(err)
	}
	net.Init(7)
	rng := rand.New(rand.NewPCG(4, 4))
	in := Input{N: 3, Shape: []int{1, 28, 28}, X: make([]float32, 3*784), Target: []int{0, 4, 9}}
	for i := range in.X {
		in.X[i] = rng.Float32()
	}
	got, err := Run(context.Background(), IntegratedGradients{Steps: 256, Rule: "trapezoid"}, net, in)
	if err != nil {
		t.Fatal(err)
	}
	fx, _ := net.Forward(in.X, 3)
	fx = append([]float32(nil), fx...)
	f0, _ := net.Forward(make([]float32, 784), 1)
	for i := 0; i < 3; i++ {
		var sum float64
		for _, v := range got.Map(i) {
			sum += float64(v)
		}
		want := float64(fx[i*10+in.Target[i]] - f0[in.Target[i]])
		if math.Abs(sum-want) > 0.01*math.Abs(want) {
			t.Errorf("sample %d: Σ IG %g, f(x) − f(0) %g", i, sum, want)
		}
	}
}

func TestDeterministicUnderSeed(t *testing.T) {
	k, _ := gemm.Best()
	net, _ := native.New("goar-cnn", []int{1, 28, 28}, 10, k)
	net.Init(1)
	rng := rand.New(rand.NewPCG(5, 5))
	in := Input{N: 5, Shape: []int{1, 28, 28}, X: make([]float32, 5*784), Target: []int{1, 2, 3, 4, 5}}
	for i := range in.X {
		in.X[i] = rng.Float32()
	}
	for _, m := range []Method{
		SmoothGrad{Seed: 3}, SmoothGrad{Seed: 3, Chunk: 7}, GradientSHAP{Seed: 3, References: in.X[:784]},
		Random{Seed: 3}, PixelRandom{Seed: 3}, BlockRandom{Seed: 3, DropRate: 0.3}, GradCAM{}, Sobel{},
	} {
		a, err := Run(context.Background(), m, net, in)
		if err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		b, err := Run(context.Background(), m, net, in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.Data {
			if a.Data[i] != b.Data[i] {
				t.Fatalf("%s: two runs differ at %d", m.Name(), i)
			}
		}
	}
	// Chunking does not change SmoothGrad's draws.
	a, _ := Run(context.Background(), SmoothGrad{Seed: 3}, net, in)
	b, _ := Run(context.Background(), SmoothGrad{Seed: 3, Chunk: 7}, net, in)
	for i := range a.Data {
		if !near(float64(a.Data[i]), float64(b.Data[i]), 1e-5) {
			t.Fatalf("SmoothGrad with chunk 7 differs at %d: %g vs %g", i, b.Data[i], a.Data[i])
		}
	}
}

func TestBadInputs(t *testing.T) {
	net := newLinear(1)
	ok := Input{N: 1, Shape: net.Shape, X: make([]float32, 6), Target: []int{0}}
	nan := ok
	nan.X = []float32{0, float32(math.NaN()), 0, 0, 0, 0}
	for _, tc := range []struct {
		name string
		m    Method
		in   Input
	}{
		{"nan input", Gradient{}, nan},
		{"target out of range", Gradient{}, Input{N: 1, Shape: net.Shape, X: make([]float32, 6), Target: []int{3}}},
		{"wrong shape", Gradient{}, Input{N: 1, Shape: []int{1, 2, 3}, X: make([]float32, 6), Target: []int{0}}},
		{"bad rule", IntegratedGradients{Rule: "simpson"}, ok},
		{"bad baseline", IntegratedGradients{Baseline: "noise"}, ok},
		{"bad aggregate", SmoothGrad{Aggregate: "median"}, ok},
		{"block rate", BlockRandom{DropRate: 1.5}, Input{N: 1, Shape: []int{1, 4, 4}, X: make([]float32, 16), Target: []int{0}}},
	} {
		if _, err := Run(context.Background(), tc.m, net, tc.in); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
