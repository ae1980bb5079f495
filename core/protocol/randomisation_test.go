package protocol

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/enginetest"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/train"
)

// gradientExplain is the gradient method as Env.Explain: the input
// gradient of each target's logit.
func gradientExplain(ctx context.Context, net engine.Network, x []float32, n int, target []int) ([]float32, error) {
	k := net.Classes()
	g, err := engine.Differentiate(ctx, net, x, n, engine.InputGrad, func(first int, logits, d []float32) {
		for r := 0; r*k < len(logits); r++ {
			d[r*k+target[first+r]] = 1
		}
	})
	return slices.Clone(g), err
}

// inputExplain is a "method" that ignores the model: the input itself.
func inputExplain(_ context.Context, _ engine.Network, x []float32, _ int, _ []int) ([]float32, error) {
	return slices.Clone(x), nil
}

// imageEnv is n random 1×side×side images, three classes, under net.
func imageEnv(net engine.Network, n, side int, explain func(context.Context, engine.Network, []float32, int, []int) ([]float32, error)) *Env {
	rng := rand.New(rand.NewPCG(5, 5))
	ds := &data.Dataset{Name: "img", Shape: []int{1, side, side}, Classes: []string{"a", "b", "c"}, X: make([]float32, n*side*side), Y: make([]int, n)}
	for i := range ds.X {
		ds.X[i] = rng.Float32()
	}
	return &Env{Net: net, Test: ds, Method: "m", Explain: explain, Seed: 3}
}

// A map that ignores the model is unchanged however much of the model is
// randomised: every similarity is 1 at every layer of goar-cnn's cascade,
// drawn from the top; the trained model itself is left alone.
func TestMPRTOfAMapThatIgnoresTheModelIsOne(t *testing.T) {
	net, err := native.New("goar-cnn", []int{1, 28, 28}, 3, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	net.Init(1)
	before := net.Clone().Params()
	env := imageEnv(net, 3, 28, inputExplain)
	for _, mode := range []string{"cascading", "independent"} {
		res, err := MPRT{Samples: 3, Mode: mode}.Run(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Curves) != 3 || len(res.Curves[0].X) != 6 || !strings.Contains(res.Curves[0].XLabel, "f3 first") {
			t.Fatalf("%s: curves %+v", mode, res.Curves)
		}
		for _, c := range res.Curves {
			for k, v := range c.Y {
				if math.Abs(v-1) > 1e-9 {
					t.Errorf("%s %s after %d layers: %g, want 1", mode, c.Name, k+1, v)
				}
			}
		}
		if v, ok := res.Scalar("emprt"); (mode == "cascading") != ok || ok && math.Abs(v-1) > 1e-12 {
			t.Errorf("%s: eMPRT %g (%v), want 1 for cascading runs only", mode, v, ok)
		}
		if len(res.Samples) != 2+6 {
			t.Errorf("%s: %d samples, want the inputs, their maps and one map per layer", mode, len(res.Samples))
		}
		checkDescribed(t, MPRT{Mode: mode}, res)
	}
	for k, p := range net.Params() {
		if !slices.Equal(p.Data, before[k].Data) {
			t.Fatalf("MPRT changed the trained model's %s", p.Name)
		}
	}
	// The gradient does change: the similarity of goar-cnn's gradients
	// falls below 1 once its output layer is random.
	env.Explain = gradientExplain
	res, err := MPRT{Samples: 3}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Curves[0].Y[0]; !(v < 0.99) {
		t.Errorf("gradient after randomising f3: Spearman %g, want below 1", v)
	}
}

// The gradient of a linear model is its weight row, so after the model is
// randomised the similarity is that of the old and new rows, exactly.
func TestMPRTLinearGradientExact(t *testing.T) {
	net := enginetest.NewLinear(1, []int{1, 16, 16}, 3)
	env := imageEnv(net, 4, 16, gradientExplain)
	res, err := MPRT{Samples: 4}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	fresh := enginetest.NewLinear(layerSeed(env.Seed, 0), []int{1, 16, 16}, 3)
	target, _ := engine.Predicted(context.Background(), net, env.Test.X, 4, 0)
	for i, c := range target {
		a, b := net.W[c*256:(c+1)*256], fresh.W[c*256:(c+1)*256]
		for _, s := range similarities {
			want := s.of(a, b, 16, 16)
			if got := float64(res.Units.Of("mean_" + s.name)[i]); math.Abs(got-want) > 1e-6 {
				t.Errorf("input %d %s: %g, want %g", i, s.name, got, want)
			}
		}
	}
	checkDescribed(t, MPRT{}, res)
}

// Random Logit compares the map of the explained class with that of a
// random other: a linear model's weight rows; a map of the input alone
// is the same for every class.
func TestRandomLogitLinearExact(t *testing.T) {
	net := enginetest.NewLinear(2, []int{1, 16, 16}, 3)
	env := imageEnv(net, 5, 16, gradientExplain)
	res, err := RandomLogit{Samples: 5}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	target, _ := engine.Predicted(context.Background(), net, env.Test.X, 5, 0)
	for i, c := range target {
		o := rand.New(rand.NewPCG(env.Seed, uint64(i))).IntN(2)
		if o >= c {
			o++
		}
		want := ssim(scaled(net.W[c*256:(c+1)*256]), scaled(net.W[o*256:(o+1)*256]), 16, 16, 1)
		if got := float64(res.Units.Of("ssim")[i]); o == c || math.Abs(got-want) > 1e-6 {
			t.Errorf("input %d (class %d against %d): SSIM %g, want %g", i, c, o, got, want)
		}
	}
	checkDescribed(t, RandomLogit{}, res)
	env.Explain = inputExplain
	res, _ = RandomLogit{Samples: 5}.Run(context.Background(), env)
	if v, _ := res.Scalar("ssim"); math.Abs(v-1) > 1e-9 {
		t.Errorf("a map that ignores the class: SSIM %g, want 1", v)
	}
}

// A model whose engine cannot randomise layers, and a caller that cannot
// recompute maps, are refused with the reason.
func TestRandomisationRefusals(t *testing.T) {
	net := enginetest.NewLinear(1, []int{1, 16, 16}, 3)
	env := imageEnv(struct{ engine.Network }{net}, 2, 16, gradientExplain)
	if _, err := (MPRT{}).Run(context.Background(), env); err == nil || !strings.Contains(err.Error(), "cannot re-initialise") {
		t.Errorf("engine without randomisation: %v", err)
	}
	env = imageEnv(net, 2, 16, nil)
	for _, p := range []Protocol{MPRT{}, RandomLogit{}} {
		if _, err := p.Run(context.Background(), env); err == nil || !strings.Contains(err.Error(), "recompute maps") {
			t.Errorf("%s without Explain: %v", p.Info().Name, err)
		}
	}
}

// Smoothing cannot change a linear model's gradient, so Smooth MPRT finds
// what MPRT finds; a map of the input alone, averaged over the same noisy
// copies on every model, stays the same.
func TestSmoothMPRTAveragesTheSameCopies(t *testing.T) {
	net := enginetest.NewLinear(1, []int{1, 16, 16}, 3)
	env := imageEnv(net, 4, 16, gradientExplain)
	plain, err := MPRT{Samples: 4}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	p := SmoothMPRT()
	p.Samples, p.Draws = 4, 5
	smooth, err := p.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if smooth.Protocol != "SmoothMPRT" {
		t.Errorf("recorded as %s", smooth.Protocol)
	}
	for _, s := range plain.Scalars {
		if v, _ := smooth.Scalar(s.Name); math.Abs(v-s.Value) > 1e-5 {
			t.Errorf("%s: smoothed %g, plain %g", s.Name, v, s.Value)
		}
	}
	checkDescribed(t, p, smooth)
	env.Explain = inputExplain
	smooth, _ = p.Run(context.Background(), env)
	if v, _ := smooth.Scalar("mean_spearman"); math.Abs(v-1) > 1e-12 {
		t.Errorf("smoothed input maps: Spearman %g, want 1", v)
	}
	e := EfficientMPRT()
	e.Samples = 4
	res, err := e.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := e.Info().Headline(); h.Name != "emprt" {
		t.Errorf("EfficientMPRT leads with %s", h.Name)
	}
	checkDescribed(t, e, res)
}

// The histogram entropy of a map half 0 and half ±1 is log 2; of a
// constant map 0.
func TestHistEntropyHandSolved(t *testing.T) {
	if h := histEntropy([]float32{0, 1, 0, -1}); math.Abs(h-math.Log(2)) > 1e-12 {
		t.Errorf("entropy %g, want log 2", h)
	}
	if h := histEntropy([]float32{3, 3, -3}); h != 0 {
		t.Errorf("constant |map|: entropy %g, want 0", h)
	}
}

// The model trained on permuted labels is, for a linear model without
// trainable parameters, the fresh one NewNet makes: the gradients compared
// are the two weight rows, exactly; it is trained once whatever the method.
func TestDataRandomisationLinearExact(t *testing.T) {
	net := enginetest.NewLinear(1, []int{1, 16, 16}, 3)
	env := imageEnv(net, 4, 16, gradientExplain)
	env.Train = env.Test
	env.Recipe = train.Config{Epochs: 1, ValFraction: -1}
	fresh := enginetest.NewLinear(9, []int{1, 16, 16}, 3)
	built := 0
	env.NewNet = func() (engine.Network, error) { built++; return fresh.Clone(), nil }
	res, err := DataRandomisation{Samples: 4}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	target, _ := engine.Predicted(context.Background(), net, env.Test.X, 4, 0)
	for i, c := range target {
		for _, s := range similarities {
			want := s.of(net.W[c*256:(c+1)*256], fresh.W[c*256:(c+1)*256], 16, 16)
			if got := float64(res.Units.Of(s.name)[i]); math.Abs(got-want) > 1e-6 {
				t.Errorf("input %d %s: %g, want %g", i, s.name, got, want)
			}
		}
	}
	if built != 1 || RetrainingsOf(DataRandomisation{}) != 1 {
		t.Errorf("%d models built", built)
	}
	checkDescribed(t, DataRandomisation{}, res)
}
