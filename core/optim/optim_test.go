package optim

import (
	"math"
	"testing"

	"faithlab/core/engine"
)

// Both optimisers minimise f(w) = ½‖w − c‖², whose gradient is w − c.
func TestOptimisersConvergeOnQuadratic(t *testing.T) {
	c := []float32{1, -2, 3}
	for _, tc := range []struct {
		name string
		opt  Optimizer
		lr   float64
	}{
		{"adam", NewAdam(0), 0.05},
		{"sgd", &SGD{}, 0.1},
		{"sgd-momentum", &SGD{Momentum: 0.9}, 0.02},
	} {
		p := engine.Param{Name: "w", Shape: []int{3}, Data: make([]float32, 3), Grad: make([]float32, 3)}
		for range 2000 {
			for i := range p.Data {
				p.Grad[i] = p.Data[i] - c[i]
			}
			tc.opt.Step([]engine.Param{p}, tc.lr)
		}
		for i := range c {
			if math.Abs(float64(p.Data[i]-c[i])) > 1e-3 {
				t.Errorf("%s: w = %v, want %v", tc.name, p.Data, c)
				break
			}
		}
	}
}

// The first Adam step moves every weight by lr·sign(g) (bias correction).
func TestAdamFirstStepIsLR(t *testing.T) {
	p := engine.Param{Data: []float32{0, 0}, Grad: []float32{3, -0.5}}
	NewAdam(0).Step([]engine.Param{p}, 0.01)
	if math.Abs(float64(p.Data[0]+0.01)) > 1e-6 || math.Abs(float64(p.Data[1]-0.01)) > 1e-6 {
		t.Errorf("after one step %v, want [-0.01 0.01]", p.Data)
	}
}

func TestCosine(t *testing.T) {
	s := Cosine(1, 10)
	for _, tc := range []struct {
		e    int
		want float64
	}{{0, 1}, {5, 0.5}, {10, 0}, {12, 0}} {
		if got := s(tc.e); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("epoch %d: %g want %g", tc.e, got, tc.want)
		}
	}
}
