package diffusion

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"faithlab/core/engine"
)

// Options configure a sampler. Zero fields take the defaults noted.
type Options struct {
	// Method is "ddim" (default): Song et al. (2021)'s sampler on a grid of
	// Steps timesteps with noise η; or "ddpm": Ho et al. (2020)'s ancestral
	// sampler (Algorithm 2, σ²_t = β̃_t) through every step.
	Method string
	Steps  int     // DDIM: timesteps on the grid (Schedule.Grid; default 50)
	Eta    float64 // DDIM's η (Eq. 16): 0 the deterministic ODE sampler GOAR uses, 1 DDPM's variance
	// Start is the highest step a sampler starts from (0: T−1); Project
	// takes its own.
	Start int
	// Clip clips the predicted x̂₀ to [−1, 1], the data's range, at every
	// step (images; not for unbounded data such as the Gaussian mixture).
	Clip bool
	// Seed seeds the noise. Sample i draws from its own stream, in the
	// same order whatever the batching, so results depend on neither Batch
	// nor the core count.
	Seed uint64
	// Batch is how many samples advance together (default 256): memory
	// grows with it, not with the number of samples.
	Batch int
	// Record keeps the trajectories of the first Record samples.
	Record int
	// Progress, when set, is called after every step of every batch.
	Progress func(Progress)
}

// Progress reports a sampler's advance.
type Progress struct {
	Done, Total int // samples finished before the current batch, and in all
	Step, Steps int // steps taken in the current batch, and its steps
}

// Trajectory is what a sampler did, step by step, to the samples it
// recorded, in the data's own range: before step i (at timestep T[i]) the
// samples were X[i] and the prior predicted their clean versions X0[i]
// (Record×C×H×W each). The samples after the last step are the result.
type Trajectory struct {
	T  []int       `json:"t"`
	X  [][]float32 `json:"-"`
	X0 [][]float32 `json:"-"`
}

// Result is a sampler's output, in the data's own range (n×C×H×W).
type Result struct {
	X          []float32
	Trajectory *Trajectory // nil unless Options.Record > 0
}

// ClassifierGrad writes into grad ∇ₓ log P(y | x) for samples first …
// first+n−1 of a batch (whose labels y it knows) at x; x and grad are in
// the data's own range, n×C×H×W, as the classifier sees them.
type ClassifierGrad func(ctx context.Context, first int, x []float32, n int, grad []float32) error

// Inpainting says which values an in-painting keeps and how it fills the rest.
type Inpainting struct {
	// Mask is 1 where the original is kept, 0 where it is filled: one value
	// per value of a sample (shared by all), or per value of every sample.
	Mask []float32
	// RePaint keeps the kept values noised to the current step (Lugmayr et
	// al. 2022) instead of the original values themselves (FUD Eq. 14:
	// x^t ← M⊙x̃ + (1−M)⊙x^t). Either way the result keeps them exactly.
	RePaint bool
	// Guide, when set, adds FUD's correction (Algorithm 1) on the steps t
	// < GuideFrac·T: ε̂ = ε + GuideScale·√(1−ᾱ_t)·∇log P(y | x_t), which
	// steers the filled values away from evidence for y.
	Guide      ClassifierGrad
	GuideFrac  float64 // FUD Appendix D: 0.05
	GuideScale float64 // default 1
}

func (o Options) withDefaults() Options {
	if o.Method == "" {
		o.Method = "ddim"
	}
	if o.Steps == 0 {
		o.Steps = 50
	}
	if o.Batch <= 0 {
		o.Batch = 256
	}
	return o
}

// timesteps returns the steps a sampler takes from start down, highest
// first.
func timesteps(s *Schedule, o Options, start int) ([]int, error) {
	if start < 0 || start >= s.T {
		return nil, fmt.Errorf("start step %d: want 0 to %d", start, s.T-1)
	}
	switch o.Method {
	case "ddpm":
		ts := make([]int, start+1)
		for i := range ts {
			ts[i] = start - i
		}
		return ts, nil
	case "ddim":
		if o.Eta < 0 || math.IsNaN(o.Eta) {
			return nil, fmt.Errorf("DDIM η %g: want ≥ 0", o.Eta)
		}
		g, err := s.Grid(o.Steps)
		if err != nil {
			return nil, err
		}
		i, _ := slices.BinarySearchFunc(g, start, func(a, b int) int { return b - a }) // g is descending
		if i == len(g) {
			return nil, fmt.Errorf("start step %d lies below the %d-step grid", start, o.Steps)
		}
		return g[i:], nil
	}
	return nil, fmt.Errorf("unknown sampler %q (ddim, ddpm)", o.Method)
}

// sampler runs batches of samples down a list of timesteps.
type sampler struct {
	p       Prior
	s       *Schedule
	sc      Scaling
	dim     int
	o       Options
	ts      []int
	in      *Inpainting
	orig    []float32 // in-painting: the originals, prior space, n×dim
	tr      *Trajectory
	n       int
	eps, x0 []float32
	xd, g   []float32 // data-space scratch for the guide
}

func newSampler(p Prior, o Options, start, n int) (*sampler, error) {
	o = o.withDefaults()
	if n <= 0 {
		return nil, fmt.Errorf("%d samples: want at least one", n)
	}
	s := p.Schedule()
	if start == 0 {
		start = s.T - 1
	}
	ts, err := timesteps(s, o, start)
	if err != nil {
		return nil, err
	}
	sm := &sampler{p: p, s: s, sc: p.Scaling(), dim: engine.Size(p.Shape()), o: o, ts: ts, n: n}
	if r := min(o.Record, n); r > 0 {
		sm.tr = &Trajectory{T: ts}
		for range ts {
			sm.tr.X = append(sm.tr.X, make([]float32, r*sm.dim))
			sm.tr.X0 = append(sm.tr.X0, make([]float32, r*sm.dim))
		}
	}
	return sm, nil
}

// each runs the samples in batches: init writes batch [first, first+m)'s
// starting points (prior space, at step ts[0]) into x, drawing noise from
// the samples' streams; the batch is then denoised and written, in the data
// range, to out.
func (sm *sampler) each(ctx context.Context, out []float32, init func(x []float32, first, m int, rng []*rand.Rand)) error {
	b := min(sm.o.Batch, sm.n)
	x := make([]float32, b*sm.dim)
	rngs := make([]*rand.Rand, b)
	for first := 0; first < sm.n; first += b {
		m := min(b, sm.n-first)
		for i := range m {
			rngs[i] = rand.New(rand.NewPCG(sm.o.Seed, uint64(first+i)))
		}
		init(x[:m*sm.dim], first, m, rngs[:m])
		if err := sm.denoise(ctx, x[:m*sm.dim], first, m, rngs[:m]); err != nil {
			return err
		}
		sm.sc.ToData(out[first*sm.dim:(first+m)*sm.dim], x[:m*sm.dim])
	}
	return nil
}

// denoise takes batch x (m samples from first, prior space, at ts[0]) down
// the timesteps to clean samples, in place.
func (sm *sampler) denoise(ctx context.Context, x []float32, first, m int, rngs []*rand.Rand) error {
	dim := sm.dim
	eps := grow(&sm.eps, m*dim)
	x0 := grow(&sm.x0, m*dim)
	for i, t := range sm.ts {
		if err := ctx.Err(); err != nil {
			return err
		}
		prev := -1
		if i+1 < len(sm.ts) {
			prev = sm.ts[i+1]
		}
		if err := sm.p.Eps(ctx, x, m, t, eps); err != nil {
			return fmt.Errorf("step %d: %w", t, err)
		}
		ab, abp := sm.s.AlphaBar(t), sm.s.AlphaBar(prev)
		if err := sm.guide(ctx, x, eps, first, m, t, ab); err != nil {
			return fmt.Errorf("step %d: classifier gradient: %w", t, err)
		}
		a, sd := math.Sqrt(ab), math.Sqrt(1-ab)
		for j, v := range eps {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("step %d: the prior predicted non-finite noise %g for sample %d", t, v, first+j/dim)
			}
			p := (float64(x[j]) - sd*float64(v)) / a
			if sm.o.Clip {
				p = max(-1, min(1, p))
			}
			x0[j] = float32(p)
		}
		sm.record(i, x, x0, first, m)
		sm.update(x, x0, eps, t, prev, ab, abp, rngs)
		sm.keep(x, first, m, prev, rngs)
		if sm.o.Progress != nil {
			sm.o.Progress(Progress{Done: first, Total: sm.n, Step: i + 1, Steps: len(sm.ts)})
		}
	}
	return nil
}

// update moves x from step t to step prev given the noise eps and the
// clean prediction x0.
func (sm *sampler) update(x, x0, eps []float32, t, prev int, ab, abp float64, rngs []*rand.Rand) {
	var c0, ce, sigma float64
	switch sm.o.Method {
	case "ddpm":
		// The posterior q(x_{t−1} | x_t, x̂₀): mean (Ho et al. Eq. 7)
		// √ᾱ_{t−1}β_t/(1−ᾱ_t)·x̂₀ + √α_t(1−ᾱ_{t−1})/(1−ᾱ_t)·x_t, variance β̃_t.
		beta := sm.s.Beta(t)
		c0 = math.Sqrt(abp) * beta / (1 - ab)
		cx := math.Sqrt(1-beta) * (1 - abp) / (1 - ab)
		sigma = math.Sqrt(beta * (1 - abp) / (1 - ab))
		for j := range x {
			x[j] = float32(c0*float64(x0[j]) + cx*float64(x[j]))
		}
	default:
		// DDIM (Song et al. 2021, Eq. 12): √ᾱ_prev·x̂₀ + √(1−ᾱ_prev−σ²)·ε + σz,
		// σ = η√((1−ᾱ_prev)/(1−ᾱ_t))·√(1−ᾱ_t/ᾱ_prev) (Eq. 16).
		sigma = sm.o.Eta * math.Sqrt((1-abp)/(1-ab)*(1-ab/abp))
		c0, ce = math.Sqrt(abp), math.Sqrt(max(0, 1-abp-sigma*sigma))
		for j := range x {
			x[j] = float32(c0*float64(x0[j]) + ce*float64(eps[j]))
		}
	}
	if sigma > 0 {
		for i, r := range rngs {
			for j := i * sm.dim; j < (i+1)*sm.dim; j++ {
				x[j] += float32(sigma * r.NormFloat64())
			}
		}
	}
}

// guide adds FUD's classifier correction to eps where it applies.
func (sm *sampler) guide(ctx context.Context, x, eps []float32, first, m, t int, ab float64) error {
	in := sm.in
	if in == nil || in.Guide == nil || float64(t) >= in.GuideFrac*float64(sm.s.T) {
		return nil
	}
	xd := grow(&sm.xd, len(x))
	g := grow(&sm.g, len(x))
	sm.sc.ToData(xd, x)
	clear(g)
	if err := in.Guide(ctx, first, xd, m, g); err != nil {
		return err
	}
	scale := in.GuideScale
	if scale == 0 {
		scale = 1
	}
	// ∇ with respect to prior values = ∇ with respect to data values ×
	// d(data)/d(prior).
	c := scale * math.Sqrt(1-ab) * sm.sc.DataPerPrior()
	for j, v := range g {
		eps[j] += float32(c * float64(v))
	}
	return nil
}

// keep overwrites the kept values of an in-painting after a step to prev:
// with the originals (FUD Eq. 14), or with the originals noised to prev
// (RePaint); after the last step, with the originals.
func (sm *sampler) keep(x []float32, first, m, prev int, rngs []*rand.Rand) {
	if sm.in == nil {
		return
	}
	dim := sm.dim
	orig := sm.orig[first*dim : (first+m)*dim]
	repaint := sm.in.RePaint && prev >= 0
	a, sd := math.Sqrt(sm.s.AlphaBar(prev)), math.Sqrt(1-sm.s.AlphaBar(prev))
	for i := range m {
		r := rngs[i]
		for j := i * dim; j < (i+1)*dim; j++ {
			v := orig[j]
			if repaint {
				v = float32(a*float64(v) + sd*r.NormFloat64())
			}
			if sm.mask(first+i, j-i*dim) {
				x[j] = v
			}
		}
	}
}

// mask says whether value j of sample i is kept.
func (sm *sampler) mask(i, j int) bool {
	mk := sm.in.Mask
	if len(mk) == sm.dim {
		return mk[j] == 1
	}
	return mk[i*sm.dim+j] == 1
}

// record copies the recorded samples of a batch at step i.
func (sm *sampler) record(i int, x, x0 []float32, first, m int) {
	if sm.tr == nil {
		return
	}
	r := len(sm.tr.X[i]) / sm.dim
	if first >= r {
		return
	}
	k := min(m, r-first) * sm.dim
	sm.sc.ToData(sm.tr.X[i][first*sm.dim:first*sm.dim+k], x[:k])
	sm.sc.ToData(sm.tr.X0[i][first*sm.dim:first*sm.dim+k], x0[:k])
}

func (sm *sampler) result(x []float32) *Result { return &Result{X: x, Trajectory: sm.tr} }

// Sample draws n samples, starting from pure noise at the first step.
func Sample(ctx context.Context, p Prior, n int, o Options) (*Result, error) {
	sm, err := newSampler(p, o, o.Start, n)
	if err != nil {
		return nil, fmt.Errorf("sample: %w", err)
	}
	out := make([]float32, n*sm.dim)
	err = sm.each(ctx, out, func(x []float32, _, _ int, rngs []*rand.Rand) { noise(x, rngs, sm.dim) })
	if err != nil {
		return nil, fmt.Errorf("sample: %w", err)
	}
	return sm.result(out), nil
}

// Decode runs the sampler from the given starting points xT (n samples in
// the prior's space at the first step, e.g. Encode's output).
func Decode(ctx context.Context, p Prior, xT []float32, n int, o Options) (*Result, error) {
	sm, err := newSampler(p, o, o.Start, n)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(xT) != n*sm.dim {
		return nil, fmt.Errorf("decode: %d values for %d samples of %d", len(xT), n, sm.dim)
	}
	out := make([]float32, n*sm.dim)
	err = sm.each(ctx, out, func(x []float32, first, m int, _ []*rand.Rand) { copy(x, xT[first*sm.dim:(first+m)*sm.dim]) })
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return sm.result(out), nil
}

// Project is SDEdit (Meng et al. 2022) with the sampler of o, as GOAR
// projects onto the data manifold (§5.2, Appendix D): the n samples x (data
// range) are noised to the highest step of the sampler's timesteps at or
// below t, x_τ = √ᾱ_τ x + √(1−ᾱ_τ) z, and denoised to step 0. With DDIM and
// η = 0 only the noise z is random.
func Project(ctx context.Context, p Prior, x []float32, n, t int, o Options) (*Result, error) {
	sm, err := newSampler(p, o, t, n)
	if err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	if err := sm.checkData(x); err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	ab := sm.s.AlphaBar(sm.ts[0])
	a, sd := math.Sqrt(ab), math.Sqrt(1-ab)
	out := make([]float32, n*sm.dim)
	err = sm.each(ctx, out, func(x0 []float32, first, m int, rngs []*rand.Rand) {
		sm.sc.ToPrior(x0, x[first*sm.dim:(first+m)*sm.dim])
		for i, r := range rngs {
			for j := i * sm.dim; j < (i+1)*sm.dim; j++ {
				x0[j] = float32(a*float64(x0[j]) + sd*r.NormFloat64())
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	return sm.result(out), nil
}

// Inpaint fills the values of the n samples x (data range) that in.Mask
// marks 0 and keeps the others exactly: FUD's in-painting (Eq. 1, 14 and
// Algorithm 1). The filled values start as pure noise at the first step
// (FUD Eq. 1), or, when o.Start lies below the top, as the originals noised
// to it (SDEdit's start).
func Inpaint(ctx context.Context, p Prior, x []float32, n int, in Inpainting, o Options) (*Result, error) {
	sm, err := newSampler(p, o, o.Start, n)
	if err != nil {
		return nil, fmt.Errorf("inpaint: %w", err)
	}
	if err := sm.checkData(x); err != nil {
		return nil, fmt.Errorf("inpaint: %w", err)
	}
	if len(in.Mask) != sm.dim && len(in.Mask) != n*sm.dim {
		return nil, fmt.Errorf("inpaint: mask of %d values: want %d (one sample) or %d", len(in.Mask), sm.dim, n*sm.dim)
	}
	for i, v := range in.Mask {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("inpaint: mask value %g at %d: want 0 (fill) or 1 (keep)", v, i)
		}
	}
	if in.Guide != nil && !(in.GuideFrac > 0 && in.GuideFrac <= 1) {
		return nil, fmt.Errorf("inpaint: classifier guidance on a fraction %g of the steps: want (0, 1]", in.GuideFrac)
	}
	sm.in = &in
	sm.orig = make([]float32, len(x))
	sm.sc.ToPrior(sm.orig, x)
	top := o.Start == 0 || o.Start >= sm.s.T-1
	ab := sm.s.AlphaBar(sm.ts[0])
	a, sd := math.Sqrt(ab), math.Sqrt(1-ab)
	out := make([]float32, n*sm.dim)
	err = sm.each(ctx, out, func(xs []float32, first, m int, rngs []*rand.Rand) {
		orig := sm.orig[first*sm.dim : (first+m)*sm.dim]
		noise(xs, rngs, sm.dim)
		for i := range m {
			for j := i * sm.dim; j < (i+1)*sm.dim; j++ {
				switch {
				case sm.mask(first+i, j-i*sm.dim):
					xs[j] = orig[j]
				case !top:
					xs[j] = float32(a*float64(orig[j]) + sd*float64(xs[j]))
				}
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("inpaint: %w", err)
	}
	// The kept values exactly as given, not as they return from the
	// prior's space.
	for i := range n {
		for j := range sm.dim {
			if sm.mask(i, j) {
				out[i*sm.dim+j] = x[i*sm.dim+j]
			}
		}
	}
	return sm.result(out), nil
}

// Encode runs DDIM's deterministic sampler backwards (Song et al. 2021,
// §4.3): the n samples x (data range) go from clean data up the timesteps a
// Decode with the same options takes, and come out as its starting points
// (prior space). Each step from s up to t reuses the noise predicted at t
// for the point at s, so Decode(Encode(x)) returns x up to the
// discretisation error, which vanishes as steps grow.
func Encode(ctx context.Context, p Prior, x []float32, n int, o Options) ([]float32, error) {
	sm, err := newSampler(p, o, o.Start, n)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if sm.o.Method != "ddim" || sm.o.Eta != 0 {
		return nil, errors.New("encode: only DDIM with η = 0 is invertible")
	}
	if err := sm.checkData(x); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	out := make([]float32, len(x))
	sm.sc.ToPrior(out, x)
	up := slices.Clone(sm.ts)
	slices.Reverse(up)
	b := min(sm.o.Batch, n)
	eps := make([]float32, b*sm.dim)
	for first := 0; first < n; first += b {
		m := min(b, n-first)
		xs := out[first*sm.dim : (first+m)*sm.dim]
		cur := -1
		for _, t := range up {
			if err := p.Eps(ctx, xs, m, t, eps[:m*sm.dim]); err != nil {
				return nil, fmt.Errorf("encode: step %d: %w", t, err)
			}
			abc, abt := sm.s.AlphaBar(cur), sm.s.AlphaBar(t)
			for j, e := range eps[:m*sm.dim] {
				x0 := (float64(xs[j]) - math.Sqrt(1-abc)*float64(e)) / math.Sqrt(abc)
				xs[j] = float32(math.Sqrt(abt)*x0 + math.Sqrt(1-abt)*float64(e))
			}
			cur = t
		}
	}
	return out, nil
}

func (sm *sampler) checkData(x []float32) error {
	if len(x) != sm.n*sm.dim {
		return fmt.Errorf("%d values for %d samples of %v", len(x), sm.n, sm.p.Shape())
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("sample %d has a non-finite value", i/sm.dim)
		}
	}
	return nil
}

// noise fills x (samples of dim values) with standard normal draws, each
// sample from its own stream.
func noise(x []float32, rngs []*rand.Rand, dim int) {
	for i, r := range rngs {
		for j := i * dim; j < (i+1)*dim; j++ {
			x[j] = float32(r.NormFloat64())
		}
	}
}

// grow returns buf resliced to n values, reallocating when too small.
func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:n]
	return *buf
}
