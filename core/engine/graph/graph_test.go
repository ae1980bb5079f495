package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

// TestEnginesAgree is the cross-check between the two independent engines:
// same weights, same batch, logits and gradients within 1e-4 relative error.
func TestEnginesAgree(t *testing.T) {
	kern, _ := gemm.Best()
	for _, tc := range []struct {
		arch  string
		shape []int
	}{
		{"goar-cnn", []int{1, 28, 28}},
		{"goar-cnn", []int{3, 32, 32}},
		{"mlp", []int{20, 1, 1}},
	} {
		nat, err := native.New(tc.arch, tc.shape, 10, kern)
		if err != nil {
			t.Fatal(err)
		}
		nat.Init(5)
		gr, err := New(tc.arch, tc.shape, 10)
		if err != nil {
			t.Fatal(err)
		}
		np, gp := nat.Params(), gr.Params()
		if len(np) != len(gp) {
			t.Fatalf("%s: %d vs %d parameters", tc.arch, len(np), len(gp))
		}
		for i := range np {
			if np[i].Name != gp[i].Name || engine.Size(np[i].Shape) != engine.Size(gp[i].Shape) {
				t.Fatalf("%s: parameter %d is %s %v natively, %s %v in gorgonia", tc.arch, i, np[i].Name, np[i].Shape, gp[i].Name, gp[i].Shape)
			}
			copy(gp[i].Data, np[i].Data)
		}
		const n = 4
		rng := rand.New(rand.NewPCG(1, 2))
		x := make([]float32, n*engine.Size(tc.shape))
		for i := range x {
			x[i] = rng.Float32()
		}
		dl := make([]float32, n*10)
		for i := range dl {
			dl[i] = float32(rng.NormFloat64())
		}
		yn, err := nat.Forward(x, n)
		if err != nil {
			t.Fatal(err)
		}
		yg, err := gr.Forward(x, n)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, tc.arch+" logits", yn, yg)
		gn, err := nat.Backward(dl, engine.InputGrad|engine.ParamGrad)
		if err != nil {
			t.Fatal(err)
		}
		gg, err := gr.Backward(dl, engine.InputGrad|engine.ParamGrad)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, tc.arch+" input gradient", gn, gg)
		for i := range np {
			agree(t, tc.arch+" "+np[i].Name+" gradient", np[i].Grad, gp[i].Grad)
		}
		if tc.arch == "goar-cnn" {
			// Every layer's output and its gradient, including the ReLUs
			// whose gradient the native engine fuses into the max-pool.
			// (gorgonia's in-place ReLU leaves no pre-activation values.)
			if _, err := gr.Activation("c1"); err == nil {
				t.Error("gorgonia engine returned c1 values that its ReLU overwrote")
			}
			for _, name := range []string{"relu1", "pool1", "relu2", "pool2", "relu3"} {
				an, err := nat.Activation(name)
				if err != nil {
					t.Fatal(err)
				}
				ag, err := gr.Activation(name)
				if err != nil {
					t.Fatal(err)
				}
				agree(t, name+" values", an.Values, ag.Values)
				agree(t, name+" gradient", an.Grad, ag.Grad)
			}
		}
	}
}

// agree checks relative error ‖a−b‖∞ / max(‖b‖∞, tiny) ≤ 1e-4.
func agree(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d vs %d values", what, len(a), len(b))
	}
	var diff, scale float64
	for i := range a {
		diff = math.Max(diff, math.Abs(float64(a[i]-b[i])))
		scale = math.Max(scale, math.Abs(float64(b[i])))
	}
	if diff > 1e-4*math.Max(scale, 1e-6) {
		t.Errorf("%s: max difference %g at scale %g (relative %g > 1e-4)", what, diff, scale, diff/scale)
	}
}
