package protocol

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine"
)

// GOAR is Geometric Remove-and-Retrain (Park et al., ICML 2024, §5): for
// each strength s the training and test inputs are shifted against their
// feature, x̃ = x − s·v/‖v‖₂ (v the attribution map, the same for every
// channel of an image; §5.1), projected back onto the data manifold with a
// diffusion prior (§5.2, Appendix D; Projection), a model is retrained from
// scratch on the projected training set with the ROAR recipe, and every
// test input it misclassifies is counted. A test input counts from the
// first strength that fools a retrained model on, even if a larger shift
// makes it separable again (§5.3, Fig. 4): the cumulative fraction
// misclassified, a curve over s whose normalised area is the headline
// score. A larger area means the maps found directions that hold the
// class information: a better map.
//
// NoProjection is the ablation of §6.3 (Fig. 8): the retrained model sees
// the shifted inputs themselves, off the manifold, and can learn the
// shift's own pattern (class information leakage). Strength 0 projects the
// unshifted data, the same for every method: its retrained model is shared
// through the cache.
//
// Cost: one projection of the training and test sets (the prior's network
// on every input at every DDIM step from the start step down) and one
// retraining per strength; projected sets and models are cached by their
// content, so a method or strength whose shifted inputs are unchanged
// reuses them. The dataset's train_samples in a spec is the training
// subset a CPU user wants.
type GOAR struct {
	Strengths    []float64 `json:"strengths" doc:"perturbation strengths s: the L2 norm of the shift x − s·v/‖v‖₂, in the model's input units" range:"[0,]"`
	NoProjection bool      `json:"no_projection" doc:"the ablation of §6.3: retrain on the shifted inputs without projecting them onto the data manifold"`
	Prior        string    `json:"prior" doc:"diffusion prior: auto (the fitted mixture for tables, the dataset's shipped prior for images), mixture (class-conditional Gaussian mixture of the training split, exact score), empirical (the training split's empirical denoiser), or a prior file"`
	Steps        int       `json:"steps" doc:"DDIM steps over the prior's T (Appendix A: 25): fewer are faster and coarser" range:"[2,1000]"`
	Advance      float64   `json:"advance" doc:"noise added on top of the shift, as the advance of the diffusion step it makes, a fraction of T (Appendix A: 0.16)" range:"(0,1]"`
}

func (g GOAR) defaults() GOAR {
	if len(g.Strengths) == 0 {
		g.Strengths = []float64{0, 2, 4, 6, 8}
	}
	if g.Prior == "" {
		g.Prior = PriorAuto
	}
	if g.Steps == 0 {
		g.Steps = 25
	}
	if g.Advance == 0 {
		g.Advance = 0.16
	}
	return g
}

// Info implements Protocol.
func (g GOAR) Info() Info {
	doc := "Geometric Remove-and-Retrain: shift inputs against their feature direction, project onto the data manifold with a diffusion prior, retrain, count the test inputs misclassified at any strength up to s"
	if g.NoProjection {
		doc = "Geometric Remove-and-Retrain without projection (the ablation of §6.3): shift inputs against their feature direction, retrain on them as they are"
	}
	return Info{Name: "GOAR", Category: "retrain", Family: FamilyFaithfulness, Data: []string{"image", "tabular"}, Doc: doc,
		Params: Params(g.defaults())}.with(g.metrics())
}

// Retrainings implements Retrainer: one model per strength.
func (g GOAR) Retrainings() int { return len(g.defaults().Strengths) }

// Run implements Protocol.
func (g GOAR) Run(ctx context.Context, env *Env) (Result, error) {
	g = g.defaults()
	res := Result{Protocol: "GOAR", Method: env.Method, Config: config(g)}
	if !slices.IsSorted(g.Strengths) {
		return res, fmt.Errorf("GOAR: strengths %v: want them in increasing order (the count is cumulative)", g.Strengths)
	}
	if env.Test == nil || env.Test.Len() == 0 || env.Train == nil || env.Train.Len() == 0 {
		return res, fmt.Errorf("GOAR: needs a training and a test set")
	}
	shape := FeatureShape(env.Test.Shape)
	sets := []*data.Dataset{env.Train, env.Test}
	dirs := make([][]float32, 2)
	for s, split := range []string{"train", "test"} {
		m, err := mapsFor(ctx, env, split, sets[s].Len(), shape)
		if err != nil {
			return res, fmt.Errorf("GOAR: %w", err)
		}
		dirs[s] = Directions(m, sets[s])
		if s == 1 {
			res.Samples = inputs(env.Test, m, env.Test.Len(), shape)
		}
	}
	var proj *Projection
	var priorKey string
	if !g.NoProjection {
		p, key, err := openPrior(ctx, env, g.Prior)
		if err != nil {
			return res, fmt.Errorf("GOAR: %w", err)
		}
		proj, priorKey = &Projection{Prior: p, Steps: g.Steps, Advance: g.Advance}, key
	}
	cleanEnergy, err := energies(ctx, env.Net, env.Test.X, env.Test.Len())
	if err != nil {
		return res, fmt.Errorf("GOAR: %w", err)
	}
	n := env.Test.Len()
	wrong := make([]bool, n)
	var cum, acc, l2 []float64
	perCum, perAcc := make([][]float64, n), make([]float64, n) // per input: misclassified by each strength; correct, averaged
	var correct [][]bool                                       // per strength, per input
	for i := range perCum {
		perCum[i] = make([]float64, 0, len(g.Strengths))
	}
	var shifts []Shift
	for j, s := range g.Strengths {
		stage := fmt.Sprintf("GOAR s=%g", s)
		env.report(Progress{Stage: stage, Done: j, Total: len(g.Strengths)})
		mod := make([]*data.Dataset, 2)
		for k, ds := range sets {
			shifted := shift(ds, dirs[k], s)
			res.Samples = appendPreview(res.Samples, k, fmt.Sprintf("GOAR s=%g shifted test", s), shifted)
			if proj != nil {
				p := *proj
				p.Seed = env.Seed + uint64(k) // the test set's noise apart from the training set's
				p.Progress = func(q diffusion.Progress) {
					env.report(Progress{Stage: fmt.Sprintf("%s: project the %s set", stage, []string{"training", "test"}[k]), Done: q.Done, Total: q.Total})
				}
				in := shifted
				if shifted, err = staged(ctx, stagePrior, func(ctx context.Context) (*data.Dataset, error) { return p.cached(ctx, env, priorKey, in, s) }); err != nil {
					return res, fmt.Errorf("GOAR s=%g: %w", s, err)
				}
				res.Samples = appendPreview(res.Samples, k, fmt.Sprintf("GOAR s=%g projected test", s), shifted)
			}
			mod[k] = shifted
		}
		key := fmt.Sprintf("GOAR/%s/%s", digestSet(mod[0]), recipeKey(env.Recipe))
		net, err := trainModel(ctx, env, key, fmt.Sprintf("retrain GOAR s=%g", s), env.Recipe, mod[0])
		if err != nil {
			return res, fmt.Errorf("GOAR s=%g: %w", s, err)
		}
		pred, err := staged(ctx, stageEval, func(ctx context.Context) ([]int, error) { return engine.Predicted(ctx, net, mod[1].X, n, 1024) })
		if err != nil {
			return res, fmt.Errorf("GOAR s=%g: %w", s, err)
		}
		var hit, count int
		correct = append(correct, make([]bool, n))
		for i, c := range pred {
			correct[j][i] = c == env.Test.Y[i]
			if c == env.Test.Y[i] {
				hit++
				perAcc[i] += 1 / float64(len(g.Strengths))
			} else {
				wrong[i] = true
			}
			w := 0.0
			if wrong[i] {
				count++
				w = 1
			}
			perCum[i] = append(perCum[i], w)
		}
		cum, acc = append(cum, float64(count)/float64(n)), append(acc, float64(hit)/float64(n))
		sh, err := measureShift(ctx, env.Net, cleanEnergy, env.Test.X, mod[1].X, n, env.Test.Shape)
		if err != nil {
			return res, fmt.Errorf("GOAR s=%g: %w", s, err)
		}
		shifts, l2 = append(shifts, sh), append(l2, meanL2(mod[1].X, env.Test.X, n))
	}
	env.report(Progress{Stage: "GOAR", Done: len(g.Strengths), Total: len(g.Strengths)})
	x := g.Strengths
	cumSD, _ := spread(perCum)
	accSD, _ := spreadOfCorrect(correct)
	res.Curves = []Curve{
		{Name: "cumulative_misclassification", XLabel: "perturbation strength", YLabel: "fraction of test inputs misclassified at any strength up to s", X: x, Y: cum, SD: cumSD, N: n},
		{Name: "accuracy", XLabel: "perturbation strength", YLabel: "test accuracy after retraining", X: x, Y: acc, SD: accSD, N: n},
		{Name: "l2", XLabel: "perturbation strength", YLabel: "mean L2 distance of the retrained-on test inputs to the originals", X: x, Y: l2},
	}
	area := make([]float64, n)
	for i, c := range perCum {
		area[i] = normalisedArea(x, c) // the area is linear in the curve: their mean is the area of the mean
	}
	res.keep("area", area)
	res.keepGrid("mean_accuracy", perAcc, len(g.Strengths))
	res.Scalars = []Scalar{{"area", normalisedArea(x, cum), Higher}, {"mean_accuracy", mean(acc), Lower}, {"l2", mean(l2), ""}}
	cs, ss := shiftCurvesOver(shifts, x, "perturbation strength", "")
	res.Curves, res.Scalars = append(res.Curves, cs...), append(res.Scalars, ss...)
	return res, nil
}

// appendPreview appends the first inputs of a test set (k == 1) to the
// samples; training sets are not kept.
func appendPreview(samples []Sample, k int, name string, ds *data.Dataset) []Sample {
	if k != 1 {
		return samples
	}
	return append(samples, preview(name, ds))
}

// normalisedArea is the trapezoidal area under y over x divided by x's
// span: the curve's mean height, in y's units (y itself for one point).
func normalisedArea(x, y []float64) float64 {
	if len(x) < 2 || x[len(x)-1] == x[0] {
		return mean(y)
	}
	return AUC(x, y) / (x[len(x)-1] - x[0])
}

// Directions returns each sample's unit shift direction v/‖v‖₂ laid out as
// the samples: the H×W map repeated over an image's channels, a tabular
// map as it is. A map of zeros has no direction and stays zero: its sample
// is not shifted.
func Directions(maps []float32, ds *data.Dataset) []float32 {
	dim, c := ds.Dim(), ds.Shape[0]
	hw := dim / c
	if tabular(ds.Shape) {
		c, hw = 1, dim
	}
	out := make([]float32, ds.Len()*dim)
	for i := range ds.Len() {
		m := maps[i*hw : (i+1)*hw]
		var ss float64
		for _, v := range m {
			ss += float64(v) * float64(v)
		}
		if ss == 0 {
			continue
		}
		inv := 1 / math.Sqrt(ss*float64(c))
		for ch := range c {
			for p, v := range m {
				out[i*dim+ch*hw+p] = float32(float64(v) * inv)
			}
		}
	}
	return out
}

// shift returns a copy of ds with every input moved by −s times its unit
// direction (GOAR §5.1).
func shift(ds *data.Dataset, dirs []float32, s float64) *data.Dataset {
	out := *ds
	out.X = make([]float32, len(ds.X))
	for i, v := range ds.X {
		out.X[i] = float32(float64(v) - s*float64(dirs[i]))
	}
	return &out
}

// meanL2 is the mean over n samples of the L2 distance between a and b.
func meanL2(a, b []float32, n int) float64 {
	dim := len(a) / n
	var sum float64
	for i := range n {
		var ss float64
		for j := i * dim; j < (i+1)*dim; j++ {
			d := float64(a[j]) - float64(b[j])
			ss += d * d
		}
		sum += math.Sqrt(ss)
	}
	return sum / float64(n)
}

// Projection is GOAR's projection of shifted inputs onto the data manifold
// (§5.2, Appendix D), SDEdit with DDIM (η = 0) that treats the shift itself
// as noise. For a shift of L2 norm s, in the prior's space (where the data
// lie in [−1, 1]: s/Scaling.DataPerPrior) and per value of a D-value
// sample, the shift's noise-to-signal ratio is r = s/(DataPerPrior·√D);
// t_v is the step whose ratio √(1−ᾱ_t)/√ᾱ_t is nearest r, snapped to the
// nearest step of the Steps-step DDIM grid (Listing 1, lines 10–12 and
// 15–16). The start step is the grid step nearest t_v + Advance·T, at most
// the grid's top (Appendix A and D: "increases the diffusion timestep by
// 0.16T … the additional DDIM inference step of 4", t_{x−v+w} = t_{x−v} +
// 0.16T). Gaussian noise w of standard deviation √(ρ_start² − r²) (ρ the
// noise-to-signal ratio) brings the shifted input, taken as x + noise of
// ratio r, to the start step's ratio; it is scaled by √ᾱ_start (line 42)
// and DDIM runs to step 0 with η = 0.
//
// The listing departs from the text twice, and the text is followed here.
// Line 36 adds 4 to an index into scheduler.timesteps, which diffusers
// orders highest first, so it lowers the step by 0.16T instead of raising
// it. Line 41 adds noise of standard deviation ρ_start − ρ_v, the
// difference of the ratios; independent noises add in variance, so that
// amount leaves the input below the start step's noise level, and √(ρ_start²
// − r²) is what "the timestep becomes t + 0.16T" needs. (Line 12 also
// divides the matched index by T and line 41 then indexes with it; line
// 34 names an undefined remove_size: the listing does not run as printed.)
//
// Sample i's noise comes from stream (Seed, First+i) whatever its
// strength, so a sample meets the same noise at every strength and for
// every method (GOAR draws a test set's from Seed = the campaign's seed +
// 1, a training set's from the seed itself).
type Projection struct {
	Prior   diffusion.Prior
	Steps   int     // DDIM steps over T (0: 25)
	Advance float64 // Advance·T steps above the matched one (0: 0.16)
	Seed    uint64
	First   uint64 // the first input's noise stream
	// Record keeps the trajectories of the first Record inputs.
	Record   int
	Progress func(diffusion.Progress)
}

// Match is where a projection of a shift starts.
type Match struct {
	Ratio   float64 // r: the shift's noise-to-signal ratio, per value, prior space
	Matched int     // t_v: the grid step whose ratio is nearest r
	Start   int     // the step the sampler starts from
	Noise   float64 // standard deviation of the noise added, prior space, before ×√ᾱ_start
}

func (p Projection) withDefaults() Projection {
	if p.Steps == 0 {
		p.Steps = 25
	}
	if p.Advance == 0 {
		p.Advance = 0.16
	}
	return p
}

// noiseToSignal is √(1−ᾱ_t)/√ᾱ_t.
func noiseToSignal(s *diffusion.Schedule, t int) float64 {
	ab := s.AlphaBar(t)
	return math.Sqrt((1 - ab) / ab)
}

// Match returns where the projection of a shift of L2 norm s (data units)
// starts.
func (p Projection) Match(s float64) (Match, error) {
	p = p.withDefaults()
	if p.Prior == nil {
		return Match{}, fmt.Errorf("projection without a prior")
	}
	if !(s >= 0) || math.IsInf(s, 0) {
		return Match{}, fmt.Errorf("strength %g: want a finite value ≥ 0", s)
	}
	if !(p.Advance > 0 && p.Advance <= 1) {
		return Match{}, fmt.Errorf("advance %g: want a fraction of T in (0, 1]", p.Advance)
	}
	sc := p.Prior.Schedule()
	grid, err := sc.Grid(p.Steps)
	if err != nil {
		return Match{}, err
	}
	if len(grid) < 2 {
		return Match{}, fmt.Errorf("a projection needs at least 2 DDIM steps")
	}
	dim := engine.Size(p.Prior.Shape())
	m := Match{Ratio: s / (p.Prior.Scaling().DataPerPrior() * math.Sqrt(float64(dim)))}
	tv := 0
	for t := range sc.T {
		if math.Abs(noiseToSignal(sc, t)-m.Ratio) < math.Abs(noiseToSignal(sc, tv)-m.Ratio) {
			tv = t
		}
	}
	m.Matched = nearest(grid, float64(tv))
	m.Start = nearest(grid, float64(m.Matched)+p.Advance*float64(sc.T))
	m.Start = max(m.Start, grid[len(grid)-2]) // never the clean end
	rho := noiseToSignal(sc, m.Start)
	m.Noise = math.Sqrt(max(rho*rho-m.Ratio*m.Ratio, 0))
	return m, nil
}

// nearest is the grid step nearest v, the higher of two equally near.
func nearest(grid []int, v float64) int {
	best := grid[0]
	for _, t := range grid {
		if math.Abs(float64(t)-v) < math.Abs(float64(best)-v) {
			best = t
		}
	}
	return best
}

// Project projects the n shifted inputs (data range, n×C×H×W), made with
// a shift of strength s, and returns them in the data range.
func (p Projection) Project(ctx context.Context, shifted []float32, n int, s float64) (*diffusion.Result, error) {
	p = p.withDefaults()
	m, err := p.Match(s)
	if err != nil {
		return nil, err
	}
	dim := engine.Size(p.Prior.Shape())
	if len(shifted) != n*dim {
		return nil, fmt.Errorf("project: %d values for %d samples of %v", len(shifted), n, p.Prior.Shape())
	}
	sc := p.Prior.Scaling()
	a := math.Sqrt(p.Prior.Schedule().AlphaBar(m.Start))
	xT := make([]float32, len(shifted))
	sc.ToPrior(xT, shifted)
	for i := range n {
		rng := rand.New(rand.NewPCG(p.Seed, p.First+uint64(i)))
		for j := i * dim; j < (i+1)*dim; j++ {
			xT[j] = float32(a * (float64(xT[j]) + m.Noise*rng.NormFloat64()))
		}
	}
	return diffusion.Decode(ctx, p.Prior, xT, n, diffusion.Options{Method: "ddim", Steps: p.Steps, Eta: 0, Start: m.Start,
		Clip: sc == diffusion.Scaling{Lo: 0, Hi: 1}, Seed: p.Seed, Record: p.Record, Progress: p.Progress})
}

// cached projects a shifted set through the environment's artefact cache,
// keyed by the shifted values, the strength, the prior and the settings.
func (p Projection) cached(ctx context.Context, env *Env, priorKey string, shifted *data.Dataset, s float64) (*data.Dataset, error) {
	build := func() ([]float32, error) {
		r, err := p.Project(ctx, shifted.X, shifted.Len(), s)
		if err != nil {
			return nil, err
		}
		return r.X, nil
	}
	out := *shifted
	if env.Artefacts == nil {
		x, err := build()
		out.X = x
		return &out, err
	}
	p = p.withDefaults()
	key := "goar-projected/" + digestValues(shifted.X, priorKey, p.Steps, p.Advance, p.Seed, s, shifted.Shape)
	b, err := env.Artefacts.Artefact(ctx, key, ".npy", func() ([]byte, error) {
		x, err := build()
		if err != nil {
			return nil, err
		}
		return encodeNPY(append([]int{shifted.Len()}, shifted.Shape...), x)
	})
	if err != nil {
		return nil, err
	}
	a, err := data.ParseNPY(b)
	if err != nil || len(a.Data) != len(shifted.X) {
		return nil, fmt.Errorf("cached projected set %s: %v", key, err)
	}
	out.X = a.Data
	return &out, nil
}

// encodeNPY is the values as a .npy file of the shape.
func encodeNPY(shape []int, x []float32) ([]byte, error) {
	var buf bytes.Buffer
	err := data.EncodeNPY(&buf, shape, x)
	return buf.Bytes(), err
}
