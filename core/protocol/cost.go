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
