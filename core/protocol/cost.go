package protocol

import (
	"context"
	"fmt"

	"faithlab/core/diffusion"
)

// Retrainer is a protocol that trains models of its own: what a front end
// counts when it tells a user the size of a campaign before launch.
type Retrainer interface {
	// Retrainings is how many models one run of the protocol trains (with
	// its parameters' defaults filled in).
	Retrainings() int
}

// Retrainings implements Retrainer: one model per rate.
func (r ROAR) Retrainings() int { return len(r.defaults().Rates) }

// Retrainings implements Retrainer: with Retrain, one model per rate and
// order; none otherwise.
func (r ROAD) Retrainings() int {
	if !r.Retrain {
		return 0
	}
	return 2 * len(r.defaults().Rates)
}

// Retrainings implements Retrainer: the proxy model.
func (EvalX) Retrainings() int { return 1 }

// RetrainingsOf is p's Retrainings, 0 for a protocol that trains nothing.
func RetrainingsOf(p Protocol) int {
	if r, ok := p.(Retrainer); ok {
		return r.Retrainings()
	}
	return 0
}

// PriorRunner is a protocol that runs a diffusion prior's network: what a
// front end counts, with Retrainings, when it sizes a campaign.
type PriorRunner interface {
	// PriorPasses opens the prior one run on env's training and test sets
	// would use (env.Prior opens prior files, as in a run) and counts how
	// many samples go through its network, one sample at one sampler step
	// each, with the parameters' defaults filled in. Only the sets'
	// lengths and the training set's values matter (built-in priors are
	// fitted to it).
	PriorPasses(ctx context.Context, env *Env) (diffusion.Prior, float64, error)
}

// PriorPasses implements PriorRunner: every training and test input at
// every DDIM step from where each strength's projection starts; none
// without projection.
func (g GOAR) PriorPasses(ctx context.Context, env *Env) (diffusion.Prior, float64, error) {
	g = g.defaults()
	if g.NoProjection {
		return nil, 0, nil
	}
	p, _, err := openPrior(ctx, env, g.Prior)
	if err != nil {
		return nil, 0, fmt.Errorf("GOAR: %w", err)
	}
	proj := Projection{Prior: p, Steps: g.Steps, Advance: g.Advance}
	grid, err := p.Schedule().Grid(g.Steps)
	if err != nil {
		return nil, 0, fmt.Errorf("GOAR: %w", err)
	}
	var steps int
	for _, s := range g.Strengths {
		m, err := proj.Match(s)
		if err != nil {
			return nil, 0, fmt.Errorf("GOAR: %w", err)
		}
		for _, t := range grid {
			if t <= m.Start {
				steps++
			}
		}
	}
	return p, float64(steps * (env.Train.Len() + env.Test.Len())), nil
}

// PriorPasses implements PriorRunner: every evaluated input at every DDIM
// step of every ratio's in-painting.
func (f FUD) PriorPasses(ctx context.Context, env *Env) (diffusion.Prior, float64, error) {
	f = f.defaults()
	p, _, err := openPrior(ctx, env, f.Prior)
	if err != nil {
		return nil, 0, fmt.Errorf("FUD: %w", err)
	}
	return p, float64(min(f.Samples, env.Test.Len()) * len(f.Ratios) * f.Steps), nil
}

// Footprint is what one run of a protocol holds at its peak beside the
// data it is given, per input of each split it evaluates, in bytes: its
// maps, ranks and perturbed copies. dim is an input's values, hw a map's
// (its H×W); train is 0 for a protocol that does not touch the training
// set. A campaign plans its memory from it (the network's own buffers are
// the engine's, counted apart).
type Footprint struct{ Train, Test float64 }

// Footprinter is a protocol that says its Footprint.
type Footprinter interface {
	Footprint(dim, hw int) Footprint
}

// FootprintOf is p's Footprint; a protocol that does not say holds its
// test maps and a perturbed copy of what it evaluates.
func FootprintOf(p Protocol, dim, hw int) Footprint {
	if f, ok := p.(Footprinter); ok {
		return f.Footprint(dim, hw)
	}
	return Footprint{Test: float64(4*hw + 4*dim)}
}

// removalFootprint is removeAndScore's per input of a split: the maps and
// the ranks they give (the maps freed, not yet collected, when the split's
// perturbed copy is made), and that copy.
func removalFootprint(dim, hw int) float64 { return float64(4*hw + 2*hw + 4*dim) }

// Footprint implements Footprinter.
func (r ROAR) Footprint(dim, hw int) Footprint {
	f := removalFootprint(dim, hw)
	return Footprint{Train: f, Test: f}
}

// Footprint implements Footprinter.
func (r ROAD) Footprint(dim, hw int) Footprint {
	f := removalFootprint(dim, hw)
	if r.Retrain {
		return Footprint{Train: f, Test: f}
	}
	return Footprint{Test: f}
}

// Footprint implements Footprinter: the proxy's masked training batches are
// small; the test set as ROAR's.
func (EvalX) Footprint(dim, hw int) Footprint { return Footprint{Test: removalFootprint(dim, hw)} }

// Footprint implements Footprinter: each split's maps, shift directions,
// shifted and projected copies (the projections pass through the cache as
// bytes too).
func (g GOAR) Footprint(dim, hw int) Footprint {
	f := float64(4*hw + 4*dim*4)
	return Footprint{Train: f, Test: f}
}
