package protocol

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"faithlab/core/data"
	"faithlab/core/perturb"

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

// Sharer is a Retrainer some of whose models depend on neither the method
// nor its maps (Eval-X's proxy, the data randomisation test's model of
// permuted labels, GOAR's at strength 0): the cache, which keys models by
// what they are trained on, trains them once a seed for every method, and
// they need no maps of the training set.
type Sharer interface {
	// SharedRetrainings is how many of Retrainings are the same for
	// every method.
	SharedRetrainings() int
}

// SharedRetrainings implements Sharer: the proxy is trained on masked
// inputs, whatever the method.
func (EvalX) SharedRetrainings() int { return 1 }

// SharedRetrainings implements Sharer.
func (DataRandomisation) SharedRetrainings() int { return 1 }

// SharedRetrainings implements Sharer: the shared strengths' models.
func (g GOAR) SharedRetrainings() int {
	var n int
	for _, s := range g.defaults().Strengths {
		if sharedStrength(s) {
			n++
		}
	}
	return n
}

// sharedStrength says whether GOAR's strength s is the same for every
// method: 0 shifts nothing, so its training and test sets, projected or
// not, and its model do not depend on the maps.
func sharedStrength(s float64) bool { return s == 0 }

// SharedRetrainingsOf is p's SharedRetrainings, 0 for a protocol that
// shares none.
func SharedRetrainingsOf(p Protocol) int {
	if s, ok := p.(Sharer); ok {
		return s.SharedRetrainings()
	}
	return 0
}

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
	// each, with the parameters' defaults filled in: each, those that
	// depend on the method's maps; shared, those that are the same for
	// every method (the cache makes them once a seed). Only the sets'
	// lengths and the training set's values matter (built-in priors are
	// fitted to it).
	PriorPasses(ctx context.Context, env *Env) (p diffusion.Prior, each, shared float64, err error)
}

// PriorPasses implements PriorRunner: every training and test input at
// every DDIM step from where each strength's projection starts, strength
// 0's (the unshifted sets) shared; none without projection.
func (g GOAR) PriorPasses(ctx context.Context, env *Env) (diffusion.Prior, float64, float64, error) {
	g = g.defaults()
	if g.NoProjection {
		return nil, 0, 0, nil
	}
	p, _, err := openPrior(ctx, env, g.Prior)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("GOAR: %w", err)
	}
	proj := Projection{Prior: p, Steps: g.Steps, Advance: g.Advance}
	grid, err := p.Schedule().Grid(g.Steps)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("GOAR: %w", err)
	}
	var each, shared int
	for _, s := range g.Strengths {
		m, err := proj.Match(s)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("GOAR: %w", err)
		}
		steps := &each
		if sharedStrength(s) {
			steps = &shared
		}
		for _, t := range grid {
			if t <= m.Start {
				*steps++
			}
		}
	}
	n := env.Train.Len() + env.Test.Len()
	return p, float64(each * n), float64(shared * n), nil
}

// PriorPasses implements PriorRunner: every evaluated input at every DDIM
// step of every ratio's in-painting.
func (f FUD) PriorPasses(ctx context.Context, env *Env) (diffusion.Prior, float64, float64, error) {
	f = f.defaults()
	p, _, err := openPrior(ctx, env, f.Prior)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("FUD: %w", err)
	}
	return p, float64(min(f.Samples, env.Test.Len()) * len(f.Ratios) * f.Steps), 0, nil
}

// Footprint is what one run of a protocol holds at its peak beside the
// data it is given, per input of each split it evaluates, in bytes: its
// maps, ranks and perturbed copies. dim is an input's values, hw a map's
// (its H×W); train is 0 for a protocol that does not touch the training
// set. Model says the protocol holds a model besides the one explained (a
// randomised copy). A campaign plans its memory from it (the network's
// own buffers are the engine's, counted apart).
type Footprint struct {
	Train, Test float64
	Model       bool
	// Held is what a run holds whatever the number of inputs, in bytes:
	// the previews a result keeps to show (the first PreviewCount inputs
	// at every rate, order or fraction) and the filling's per-core buffers
	// (ROAD's solvers). At 224×224 a ROAD run's previews alone hold 87 MB.
	Held float64
}

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
	return Footprint{Test: plainTest(dim, hw)}
}

// plainTest is a protocol's per test input that holds its map and a
// perturbed copy of the input.
func plainTest(dim, hw int) float64 { return float64(4*hw + 4*dim) }

// previewBytes is what a result keeps to show: the first PreviewCount
// inputs untouched, their maps, and a perturbed copy of them at each of
// the perturbed steps (rates, orders, fractions).
func previewBytes(perturbed, dim, hw int) float64 {
	return float64(PreviewCount * (4*dim + 4*hw + perturbed*4*dim))
}

// fillBytes is what filling removed pixels with ref (a reference's name)
// holds beside the images: ROAD's solvers, one per core (perturb.FillAll).
func fillBytes(ref string, dim, hw int) float64 {
	if !strings.HasPrefix(ref, "road") {
		return 0
	}
	return float64(int64(runtime.GOMAXPROCS(0)) * perturb.ROADSolverBytes(dim/hw, hw))
}

// removalFootprint is removeAndScore's per input of a split: the maps and
// the ranks they give (the maps freed, not yet collected, when the split's
// perturbed copy is made), and that copy.
func removalFootprint(dim, hw int) float64 { return float64(4*hw + 2*hw + 4*dim) }

// Footprint implements Footprinter.
func (r ROAR) Footprint(dim, hw int) Footprint {
	r = r.defaults()
	f := removalFootprint(dim, hw)
	return Footprint{Train: f, Test: f, Held: previewBytes(len(r.Rates), dim, hw) + fillBytes(r.Reference, dim, hw)}
}

// Footprint implements Footprinter.
func (r ROAD) Footprint(dim, hw int) Footprint {
	r = r.defaults()
	f := removalFootprint(dim, hw)
	held := previewBytes(2*len(r.Rates), dim, hw) + fillBytes(r.Reference, dim, hw) // both orders
	if r.Retrain {
		return Footprint{Train: f, Test: f, Held: held}
	}
	return Footprint{Test: f, Held: held}
}

// Footprint implements Footprinter: the proxy's masked training batches are
// small; the test set as ROAR's.
func (e EvalX) Footprint(dim, hw int) Footprint {
	return Footprint{Test: removalFootprint(dim, hw), Held: previewBytes(len(e.defaults().Rates), dim, hw)}
}

// Footprint implements Footprinter: the test maps and a perturbed copy
// (FootprintOf's), the previews of both orders at the shift fractions
// and the filling's buffers.
func (d Deletion) Footprint(dim, hw int) Footprint {
	d = d.defaults()
	return Footprint{Test: plainTest(dim, hw), Held: previewBytes(2*len(shiftFractions), dim, hw) + fillBytes(d.Reference, dim, hw)}
}

// Footprint implements Footprinter: each split's maps, shift directions,
// shifted and projected copies (the projections pass through the cache as
// bytes too).
func (g GOAR) Footprint(dim, hw int) Footprint {
	f := float64(4*hw + 4*dim*4)
	return Footprint{Train: f, Test: f}
}

// Footprint implements Footprinter: the original maps and the current
// randomised model's, the method's maps of the inputs before they are
// reduced to H×W, and the randomised copy of the model.
func (MPRT) Footprint(dim, hw int) Footprint {
	return Footprint{Test: float64(8*hw + 4*dim), Model: true}
}

// Work is what one run of a protocol computes besides training models and
// running a prior (Retrainer, PriorRunner count those), counted before it
// runs: what a front end times with this machine's measured speeds.
type Work struct {
	Forward float64 // inputs through the classifier for their logits
	Filled  float64 // images whose removed pixels are filled (masks and references)
	Imputed float64 // images filled by ROAD's noisy linear imputation, much dearer (counted in Filled too)
	Quality float64 // image pairs compared by SSIM, MS-SSIM and GMSD
}

// Worker is a protocol that counts its Work on sets of trainN and testN
// inputs of the given shape (C, H, W).
type Worker interface {
	Work(trainN, testN int, shape []int) Work
}

// WorkOf is p's Work; a protocol that does not count passes each test
// input through the classifier once.
func WorkOf(p Protocol, trainN, testN int, shape []int) Work {
	if w, ok := p.(Worker); ok {
		return w.Work(trainN, testN, shape)
	}
	return Work{Forward: float64(testN)}
}

// shiftWork is one measureShift on n inputs: their energies and, for
// images, the quality of the first ssimImages.
func shiftWork(n int) Work {
	return Work{Forward: float64(n), Quality: float64(min(n, ssimImages))}
}

// Add returns w + v, v k times.
func (w Work) Add(v Work, k float64) Work {
	return Work{Forward: w.Forward + k*v.Forward, Filled: w.Filled + k*v.Filled, Imputed: w.Imputed + k*v.Imputed, Quality: w.Quality + k*v.Quality}
}

// filling is the Work of filling n images from the reference.
func filling(ref string, n int) Work {
	w := Work{Filled: float64(n)}
	if strings.HasPrefix(ref, "road") {
		w.Imputed = float64(n)
	}
	return w
}

// Work implements Worker: per order, every step of the curve of every
// evaluated input, and the shift at three fractions.
func (d Deletion) Work(_, testN int, shape []int) Work {
	d = d.defaults()
	n := min(d.Samples, testN)
	features := d.Grid * d.Grid
	if fs := FeatureShape(shape); fs[1] == 1 || d.Grid > fs[1] || d.Grid > fs[2] {
		features = fs[1] * fs[2] // tabular rows, or a grid finer than the image: every feature on its own
	}
	steps := len(stepCounts(features, d.Steps))
	w := Work{Forward: float64(n)} // the clean energies
	per := Work{Forward: float64(n * steps)}.Add(filling(d.Reference, n*steps), 1)
	per = per.Add(shiftWork(n).Add(filling(d.Reference, n), 1), float64(len(shiftFractions)))
	return w.Add(per, 2)
}

// removalWork is removeAndScore's per rate.
func removalWork(ref string, trainN, testN int, retrain bool) Work {
	w := Work{Forward: float64(testN)}.Add(filling(ref, testN), 1).Add(shiftWork(testN), 1)
	if retrain {
		w = w.Add(filling(ref, trainN), 1)
	}
	return w
}

// Work implements Worker.
func (r ROAR) Work(trainN, testN int, _ []int) Work {
	r = r.defaults()
	return Work{Forward: float64(testN)}.Add(removalWork(r.Reference, trainN, testN, true), float64(len(r.Rates)))
}

// Work implements Worker.
func (r ROAD) Work(trainN, testN int, _ []int) Work {
	r = r.defaults()
	return Work{Forward: float64(testN)}.Add(removalWork(r.Reference, trainN, testN, r.Retrain), float64(2*len(r.Rates)))
}

// Work implements Worker.
func (e EvalX) Work(trainN, testN int, _ []int) Work {
	e = e.defaults()
	return Work{Forward: float64(testN)}.Add(removalWork("zero", trainN, testN, false), float64(len(e.Rates)))
}

// Work implements Worker: per strength, the test set through the retrained
// model and its shift.
func (g GOAR) Work(trainN, testN int, _ []int) Work {
	g = g.defaults()
	return Work{Forward: float64(testN)}.Add(Work{Forward: float64(testN)}.Add(shiftWork(testN), 1), float64(len(g.Strengths)))
}

// Work implements Worker: per ratio, the in-painted inputs through the
// classifier and their shift (the in-painting itself is the prior's).
func (f FUD) Work(_, testN int, _ []int) Work {
	f = f.defaults()
	n := min(f.Samples, testN)
	return Work{Forward: float64(2 * n)}.Add(Work{Forward: float64(n)}.Add(shiftWork(n), 1), float64(len(f.Ratios)))
}

// Work implements Worker: every subset of every size for every image.
func (s SensitivityN) Work(_, testN int, _ []int) Work {
	s = s.defaults()
	n := min(s.Samples, testN)
	k := len(s.Ns) * s.Subsets
	return Work{Forward: float64(n * (1 + k))}.Add(filling(s.Reference, n*k), 1)
}

// Work implements Worker: every draw for every image.
func (f Infidelity) Work(_, testN int, _ []int) Work {
	f = f.defaults()
	n := min(f.Samples, testN)
	return Work{Forward: float64(n * (1 + f.Draws))}
}

// Work implements Worker: the predicted classes only.
func (g GroundTruth) Work(_, testN int, _ []int) Work { return Work{Forward: float64(testN)} }

// MeasureWorkSpeeds times, for a few seconds at most, what Work counts
// besides the classifier's passes on ds's first test inputs: images filled
// from a plain reference, images filled by ROAD's imputation, and image
// pairs compared for quality, per second (0 where ds has no images).
func MeasureWorkSpeeds(ctx context.Context, ds *data.Dataset) (fill, impute, quality float64, err error) {
	n := min(ds.Len(), 64)
	if n == 0 {
		return 0, 0, 0, fmt.Errorf("no inputs to time")
	}
	shape := FeatureShape(ds.Shape)
	hw := shape[1] * shape[2]
	x := ds.X[:n*ds.Dim()]
	keeps := make([]float32, n*hw)
	for i := range keeps {
		keeps[i] = float32(i % 2) // every other pixel removed
	}
	timed := func(f func() error) (float64, error) {
		t0 := time.Now()
		k := 0
		for k == 0 || time.Since(t0).Seconds() < 0.3 {
			if err := f(); err != nil {
				return 0, err
			}
			k++
		}
		return float64(k*n) / time.Since(t0).Seconds(), nil
	}
	buf := make([]float32, len(x))
	if fill, err = timed(func() error {
		copy(buf, x)
		return perturb.FillAll(ctx, perturb.Zero{}, buf, shape, keeps, 1, 0)
	}); err != nil {
		return 0, 0, 0, err
	}
	if shape[1] >= 3 && shape[2] >= 3 {
		road, _ := perturb.ParseReference("road:0.01", nil)
		if impute, err = timed(func() error {
			copy(buf, x)
			return perturb.FillAll(ctx, road, buf, shape, keeps, 1, 0)
		}); err != nil {
			return 0, 0, 0, err
		}
		span := 1.0
		quality, err = timed(func() error {
			c, h, w := ds.Shape[0], ds.Shape[1], ds.Shape[2]
			for p := range n * c {
				a, b := x[p*h*w:(p+1)*h*w], buf[p*h*w:(p+1)*h*w]
				ssimAndMS(a, b, h, w, span)
				gmsd(a, b, h, w, span)
			}
			return nil
		})
	}
	return fill, impute, quality, err
}
