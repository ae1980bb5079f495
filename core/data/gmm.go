package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
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

// gmmDefaults are the settings of the id "gmm": 20 dimensions, 6000
// samples, variance 0.3.
var gmmDefaults = GaussianMixture{Dim: 20, Samples: 6000, Variance: 0.3}

// ParseGMM reads a Gaussian-mixture dataset id: "gmm" (20 dimensions, 6000
// samples, variance 0.3) or "gmm:" followed by comma-separated settings
// dim=D, samples=N and variance=V, the others keeping their defaults —
// "gmm:dim=64" is GOAR's 64-dimensional toy problem (§6.1). ok is false
// for a ref that is no gmm id; err says what is wrong with one that is.
func ParseGMM(ref string) (g GaussianMixture, ok bool, err error) {
	rest, found := strings.CutPrefix(ref, "gmm:")
	if ref != "gmm" && !found {
		return g, false, nil
	}
	g = gmmDefaults
	if ref == "gmm" {
		return g, true, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(rest, ",") {
		k, v, eq := strings.Cut(kv, "=")
		if !eq || seen[k] {
			return g, true, fmt.Errorf("dataset %q: %q: want dim=D, samples=N or variance=V, each at most once", ref, kv)
		}
		seen[k] = true
		switch k {
		case "dim", "samples":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1<<20 {
				return g, true, fmt.Errorf("dataset %q: %s=%s: want an integer from 1 to %d", ref, k, v, 1<<20)
			}
			if k == "dim" {
				g.Dim = n
			} else {
				g.Samples = n
			}
		case "variance":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) {
				return g, true, fmt.Errorf("dataset %q: variance=%s: want a positive number", ref, v)
			}
			g.Variance = f
		default:
			return g, true, fmt.Errorf("dataset %q: unknown setting %q (dim, samples, variance)", ref, k)
		}
	}
	if g.Dim*g.Samples > 1<<28 {
		return g, true, fmt.Errorf("dataset %q: %d × %d values: more than the %d a generated set may hold", ref, g.Samples, g.Dim, 1<<28)
	}
	return g, true, nil
}
