// Package enginetest holds networks with exactly known behaviour, for the
// tests of the packages that use engine.Network.
package enginetest

import (
	"fmt"
	"math/rand/v2"

	"faithlab/core/engine"
)

// Linear is f(x) = W·x + b with K classes over the D = C·H·W values of an
// input, whose gradient is W's row for every input: the model with exactly
// known attributions and removal effects.
type Linear struct {
	W, B  []float32 // K×D, K
	D, K  int
	Shape []int
	x     []float32
	n     int
}

// NewLinear draws W and b from N(0, 1).
func NewLinear(seed uint64, shape []int, k int) *Linear {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := engine.Size(shape)
	l := &Linear{D: d, K: k, Shape: shape, W: make([]float32, k*d), B: make([]float32, k)}
	for i := range l.W {
		l.W[i] = float32(rng.NormFloat64())
	}
	for i := range l.B {
		l.B[i] = float32(rng.NormFloat64())
	}
	return l
}

// Arch implements engine.Network.
func (l *Linear) Arch() string { return "linear" }

// InputShape implements engine.Network.
func (l *Linear) InputShape() []int { return l.Shape }

// Classes implements engine.Network.
func (l *Linear) Classes() int { return l.K }

// Forward implements engine.Network.
func (l *Linear) Forward(x []float32, n int) ([]float32, error) {
	if err := engine.CheckInput(x, n, l.Shape); err != nil {
		return nil, err
	}
	l.x, l.n = x, n
	y := make([]float32, n*l.K)
	for s := 0; s < n; s++ {
		for k := 0; k < l.K; k++ {
			v := l.B[k]
			for j := 0; j < l.D; j++ {
				v += l.W[k*l.D+j] * x[s*l.D+j]
			}
			y[s*l.K+k] = v
		}
	}
	return y, nil
}

// Backward implements engine.Network (input gradients only).
func (l *Linear) Backward(d []float32, _ engine.Want) ([]float32, error) {
	g := make([]float32, l.n*l.D)
	for s := 0; s < l.n; s++ {
		for k := 0; k < l.K; k++ {
			for j := 0; j < l.D; j++ {
				g[s*l.D+j] += d[s*l.K+k] * l.W[k*l.D+j]
			}
		}
	}
	return g, nil
}

// RandomLayers implements engine.Randomiser: W and b are one layer.
func (l *Linear) RandomLayers() []string { return []string{"linear"} }

// Randomise implements engine.Randomiser, drawing W and b from N(0, 1)
// anew (into fresh slices: a clone keeps the old ones).
func (l *Linear) Randomise(layer string, seed uint64) error {
	if layer != "linear" {
		return fmt.Errorf("linear model has no layer %q", layer)
	}
	r := NewLinear(seed, l.Shape, l.K)
	l.W, l.B = r.W, r.B
	return nil
}

// Params implements engine.Network: none are trainable.
func (l *Linear) Params() []engine.Param { return nil }

// SetTraining implements engine.Network.
func (l *Linear) SetTraining(bool) {}

// Layers implements engine.Network.
func (l *Linear) Layers() []string { return nil }

// Activation implements engine.Network.
func (l *Linear) Activation(string) (engine.Activation, error) {
	return engine.Activation{}, fmt.Errorf("linear model has no layers")
}

// SetRule implements engine.Network: every rule is the gradient here.
func (l *Linear) SetRule(engine.Rule, []float32, int) error { return nil }

// Clone implements engine.Network.
func (l *Linear) Clone() engine.Network { c := *l; return &c }
