package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// GaussianMixture is GOAR's synthetic toy problem (§5.1): two classes in
// dimension Dim with means −1 and +1 on every coordinate and isotropic
// variance Variance (default 0.3).
type GaussianMixture struct {
	Dim      int
	Samples  int
	Variance float64
	Seed     uint64
}

// Generate draws the samples, classes balanced and interleaved.
func (g GaussianMixture) Generate() (*Dataset, error) {
	if g.Variance == 0 {
		g.Variance = 0.3
	}
	if g.Dim <= 0 || g.Samples < 2 || !(g.Variance > 0) {
		return nil, fmt.Errorf("gmm: dimension %d, %d samples, variance %g: want positive dimension and variance and at least 2 samples", g.Dim, g.Samples, g.Variance)
	}
	rng := rand.New(rand.NewPCG(g.Seed, 0x6a11))
	sd := math.Sqrt(g.Variance)
	d := &Dataset{Name: "gmm", Shape: []int{g.Dim, 1, 1}, Classes: []string{"minus", "plus"},
		X: make([]float32, g.Samples*g.Dim), Y: make([]int, g.Samples)}
	dir := g.Direction()
	minus := make([]float32, len(dir))
	for i, v := range dir {
		minus[i] = -v
	}
	d.Truth = [][]float32{minus, dir}
	for i := 0; i < g.Samples; i++ {
		y := i % 2
		mu := float64(2*y - 1)
		d.Y[i] = y
		for j := 0; j < g.Dim; j++ {
			d.X[i*g.Dim+j] = float32(mu + sd*rng.NormFloat64())
		}
	}
	return d, nil
}

// Direction is the ground-truth discriminative direction (μ₊ − μ₋)/‖μ₊ − μ₋‖:
// every feature matters equally, 1/√Dim each.
func (g GaussianMixture) Direction() []float32 {
	v := make([]float32, g.Dim)
	for i := range v {
		v[i] = float32(1 / math.Sqrt(float64(g.Dim)))
	}
	return v
}
