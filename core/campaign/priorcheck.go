package campaign

import (
	"context"
	"fmt"
	"math/rand/v2"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/model"
	"faithlab/core/protocol"
)

// PriorCheck is how a classifier sees a diffusion prior's samples (the
// diffusion-priors issue's measure of a prior): the class it assigns to
// each — a prior of a balanced dataset should fill every class about
// equally — and how well its energy score tells the samples from as many
// real test images (AUROC, 0.5: not at all), beside the same AUROC for
// those test images with half their pixels set to zero at random (ROAR's
// removal: what an obviously off-manifold input scores).
type PriorCheck struct {
	Classes   []string
	Counts    []int   // samples assigned to each class
	Samples   int     // n
	AUROC     float64 // samples against test images
	ZeroAUROC float64 // zero-masked test images against the same test images
	Reference int     // test images compared with
}

// MaxShareGap is the largest distance of a class's share of the samples
// from the uniform 1/K, in fractions.
func (c PriorCheck) MaxShareGap() float64 {
	var gap float64
	for _, k := range c.Counts {
		gap = max(gap, abs(float64(k)/float64(c.Samples)-1/float64(len(c.Counts))))
	}
	return gap
}

func abs(v float64) float64 { return max(v, -v) }

// CheckPrior judges n samples (in the data's range, as the classifier m
// reads its inputs) with m against the first n images of m's own test
// split; seed draws the zero masks.
func CheckPrior(ctx context.Context, m *model.Model, samples []float32, n int, seed uint64) (PriorCheck, error) {
	c := PriorCheck{Classes: m.Classes, Samples: n}
	if n <= 0 {
		return c, fmt.Errorf("no samples to check")
	}
	_, test, err := m.Data("", data.Options{})
	if err != nil {
		return c, err
	}
	dim := engine.Size(m.Net.InputShape())
	if len(samples) != n*dim {
		return c, fmt.Errorf("%d values for %d samples of the model's %v", len(samples), n, m.Net.InputShape())
	}
	pred, err := engine.Predicted(ctx, m.Net, samples, n, 0)
	if err != nil {
		return c, err
	}
	c.Counts = make([]int, m.Net.Classes())
	for _, k := range pred {
		c.Counts[k]++
	}
	c.Reference = min(n, test.Len())
	real := test.X[:c.Reference*dim]
	if c.AUROC, err = protocol.EnergyAUROC(ctx, m.Net, real, c.Reference, samples, n); err != nil {
		return c, err
	}
	zeroed := append([]float32(nil), real...)
	rng := rand.New(rand.NewPCG(seed, 0))
	for i := range zeroed {
		if rng.IntN(2) == 0 {
			zeroed[i] = 0
		}
	}
	if c.ZeroAUROC, err = protocol.EnergyAUROC(ctx, m.Net, real, c.Reference, zeroed, c.Reference); err != nil {
		return c, err
	}
	return c, nil
}
