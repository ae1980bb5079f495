package protocol

import (
	"context"
	"math"
	"slices"
	"testing"

	"faithlab/core/engine/enginetest"
)

// Hand-solved maps of 16 features: one feature (Gini 1 − 1/16, entropy 0),
// two equal ones (Gini Σ(2k − n − 1)·a₍ₖ₎ / (n·Σa) = (13 + 15)/32, entropy
// log 2), all alike (Gini 0, entropy log 16), signs ignored.
func TestComplexityHandSolved(t *testing.T) {
	env, _ := linearEnv(3)
	maps := make([]float32, 3*16)
	maps[5] = -2
	maps[16+3], maps[16+9] = 0.5, -0.5
	for p := range 16 {
		maps[32+p] = 0.25
	}
	env.Maps = func(context.Context, string) ([]float32, error) { return maps, nil }
	res, err := Complexity{Samples: 3}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{
		"sparseness":           {1 - 1.0/16, 28.0 / 32, 0},
		"entropy":              {0, math.Log(2), math.Log(16)},
		"effective_complexity": {1, 2, 16},
	}
	for name, w := range want {
		for i, v := range res.Units.Of(name) {
			if math.Abs(float64(v)-w[i]) > 1e-6 {
				t.Errorf("map %d: %s %g, want %g", i, name, v, w[i])
			}
		}
	}
	checkDescribed(t, Complexity{}, res)
	blank := slices.Repeat([]float32{0}, 3*16)
	env.Maps = func(context.Context, string) ([]float32, error) { return blank, nil }
	res, _ = Complexity{Samples: 3}.Run(context.Background(), env)
	if v, _ := res.Scalar("sparseness"); !math.IsNaN(v) {
		t.Errorf("blank maps: sparseness %g, want undefined", v)
	}
}

// A linear model's gradient does not move with its input: every
// robustness measure is 0. A map that is the input itself moves exactly
// as the input does: its Lipschitz estimate is 1.
func TestRobustnessLinearExact(t *testing.T) {
	net := enginetest.NewLinear(1, []int{1, 8, 8}, 3)
	env := imageEnv(net, 4, 8, gradientExplain)
	for _, p := range []Robustness{MaxSensitivity(), AvgSensitivity(), LocalLipschitzEstimate()} {
		p.Samples, p.Draws = 4, 5
		res, err := p.Run(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Scalars {
			if s.Value > 1e-6 {
				t.Errorf("%s: gradient of a linear model: %s %g, want 0", res.Protocol, s.Name, s.Value)
			}
		}
		checkDescribed(t, p, res)
	}
	env.Explain = inputExplain
	p := LocalLipschitzEstimate()
	p.Samples = 4
	res, err := p.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Scalar("local_lipschitz"); math.Abs(v-1) > 1e-5 {
		t.Errorf("the input as its own map: Lipschitz estimate %g, want 1", v)
	}
	if mx, av := must(res.Scalar("max_sensitivity")), must(res.Scalar("avg_sensitivity")); !(mx >= av && av > 0) {
		t.Errorf("max sensitivity %g below the average %g", mx, av)
	}
}
