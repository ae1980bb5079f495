package protocol

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
)

// The complexity metrics read the maps alone: how concentrated a map is,
// which explains some of the other scores (the DPI paper's blur effect is
// a complexity effect: a blurred map spreads its mass). Each scores every
// map on its own from its absolute values.

// Sparseness (Chalasani et al., "Concise explanations of neural networks
// using adversarial training", ICML 2020) is the Gini index of a map's
// absolute values: 0 for a map spread evenly, 1 − 1/n for one with all
// its mass on one of n features; higher is sparser.
//
// Complexity (Bhatt et al., "Evaluating and aggregating feature-based
// model explanations", IJCAI 2020) is the entropy of the fractional
// contributions |φᵢ|/Σ|φ|: 0 for one feature, log n for all alike; lower
// is simpler.
//
// Effective Complexity (Nguyen & Martínez, "On quantitative aspects of
// model interpretability", 2020) is the number of features whose
// attribution exceeds ε in magnitude; as in Quantus, the map is first
// scaled by its largest magnitude, so ε is relative (default 10⁻⁵).
//
// A blank map has none of the three (NaN).
type Complexity struct {
	Samples int     `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Epsilon float64 `json:"epsilon" doc:"effective complexity: a feature counts when its magnitude exceeds epsilon times the map's largest" range:"[0,1)"`
}

func (c Complexity) defaults() Complexity {
	c.Samples = cmp.Or(c.Samples, 1000)
	c.Epsilon = cmp.Or(c.Epsilon, 1e-5)
	return c
}

// Info implements Protocol.
func (c Complexity) Info() Info {
	return Info{Name: "Complexity", Category: "model", Family: FamilyComplexity, Data: []string{"image", "tabular"},
		Doc:    "Complexity of the maps themselves: Sparseness (Gini index, Chalasani et al. 2020), Complexity (entropy, Bhatt et al. 2020) and Effective Complexity (Nguyen & Martínez 2020)",
		Params: Params(c.defaults()),
		Metrics: []Metric{
			{Name: "sparseness", Better: Higher, Headline: true, Value: unitAxis("Gini index of |map|, mean over inputs"),
				Doc: "Sparseness (Chalasani et al. 2020): the Gini index of each map's absolute values (1 − 1/n for one feature, 0 for all alike); mean over inputs"},
			{Name: "entropy", Better: Lower, Value: Axis{Title: "entropy of |map|/Σ|map| (nats), mean over inputs"},
				Doc: "Complexity (Bhatt et al. 2020): the entropy of each map's fractional contributions |φᵢ|/Σ|φ| (0 for one feature, log n for all alike); mean over inputs"},
			{Name: "effective_complexity", Better: Lower, Value: Axis{Title: "features above ε·max|map|, mean over inputs"},
				Doc: "Effective Complexity (Nguyen & Martínez 2020): the number of features whose magnitude exceeds epsilon times the map's largest; mean over inputs"},
		}}
}

// Run implements Protocol.
func (c Complexity) Run(ctx context.Context, env *Env) (Result, error) {
	c = c.defaults()
	res := Result{Protocol: "Complexity", Method: env.Method, Config: config(c)}
	_, n, shape, err := testImages(env, c.Samples)
	if err != nil {
		return res, fmt.Errorf("complexity: %w", err)
	}
	maps, err := mapsFor(ctx, env, "test", n, shape)
	if err != nil {
		return res, fmt.Errorf("complexity: %w", err)
	}
	hw := shape[1] * shape[2]
	gini, ent, eff := make([]float64, n), make([]float64, n), make([]float64, n)
	eachChunk(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			gini[i], ent[i], eff[i] = complexities(maps[i*hw:(i+1)*hw], c.Epsilon)
		}
	})
	res.keep("sparseness", gini)
	res.keep("entropy", ent)
	res.keep("effective_complexity", eff)
	res.Scalars = []Scalar{{"sparseness", mean(gini), Higher}, {"entropy", mean(ent), Lower}, {"effective_complexity", mean(eff), Lower}}
	return res, nil
}

// Work implements Worker: nothing through the network.
func (Complexity) Work(int, int, []int) Work { return Work{} }

// complexities are a map's Gini index, entropy and effective complexity,
// NaN for a blank map.
func complexities(m []float32, eps float64) (gini, entropy, effective float64) {
	a := absolute(m)
	slices.Sort(a)
	n := float64(len(a))
	var sum, weighted float64
	for k, v := range a {
		sum += v
		weighted += (2*float64(k+1) - n - 1) * v
	}
	top := a[len(a)-1]
	if sum == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	for _, v := range a {
		if p := v / sum; p > 0 {
			entropy -= p * math.Log(p)
		}
		if v > eps*top {
			effective++
		}
	}
	return weighted / (n * sum), entropy, effective
}
