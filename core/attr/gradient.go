package attr

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"faithlab/core/engine"
	"faithlab/core/perturb"
)

// Gradient is the vanilla gradient ("saliency") of the target logit with
// respect to the input (Simonyan et al. 2014).
type Gradient struct {
	Chunk int `json:"-"` // inputs per engine call, at most (default 256; engine.Batch bounds it by their bytes)
}

// Name implements Method.
func (Gradient) Name() string { return "Gradient" }

// Settings implements Method.
func (g Gradient) Settings() map[string]any { return map[string]any{} }

// Attribute implements Method.
func (g Gradient) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	out := Maps{Data: make([]float32, len(in.X)), Shape: append([]int{in.N}, in.Shape...)}
	dim := in.Dim()
	err := gradients(ctx, net, in.N, g.Chunk,
		func(i int, dst []float32) { copy(dst, in.Sample(i)) },
		func(i int) int { return in.Target[i] },
		func(i int, grad []float32) { copy(out.Data[i*dim:(i+1)*dim], grad) })
	return out, err
}

// GradientXInput multiplies the gradient by the input elementwise
// (Shrikumar et al. 2016).
type GradientXInput struct {
	Chunk int `json:"-"`
}

// Name implements Method.
func (GradientXInput) Name() string { return "GradientXInput" }

// Settings implements Method.
func (GradientXInput) Settings() map[string]any { return map[string]any{} }

// Attribute implements Method.
func (g GradientXInput) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	out, err := Gradient{Chunk: g.Chunk}.Attribute(ctx, net, in)
	for i := range out.Data {
		out.Data[i] *= in.X[i]
	}
	return out, err
}

// parseBaseline reads the name of a path method's baseline x′: a removal
// reference (perturb.ParseReference) with every pixel removed, so that a
// baseline and a reference of one name are the same values — zero, mean
// (the sample's channel means), blur[:σ] (the sample blurred, σ 5 pixels by
// default) or dataset-mean (the channel means of train, the training
// inputs). ROAD, which imputes from kept pixels, makes no baseline.
func parseBaseline(name string, train []float32, shape []int) (perturb.Reference, error) {
	ref, err := perturb.ParseReference(name, func() []float32 {
		if len(train) == 0 {
			return nil
		}
		return perturb.ChannelMeans(train, shape)
	})
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	if _, ok := ref.(perturb.ROAD); ok {
		return nil, fmt.Errorf("baseline %s: ROAD fills removed pixels from the kept ones, and a baseline keeps none", name)
	}
	return ref, nil
}

// checkBaseline is the path methods' param.Checker.
func checkBaseline(name string, train []float32) error {
	if name == "dataset-mean" && len(train) == 0 {
		return fmt.Errorf("baseline dataset-mean needs the training data, and none was given")
	}
	if name == "dataset-mean" {
		return nil
	}
	_, err := parseBaseline(name, nil, nil)
	return err
}

// baselines returns the baseline x′ of every sample of in.
func baselines(name string, train []float32, in Input) ([]float32, error) {
	ref, err := parseBaseline(name, train, in.Shape)
	if err != nil {
		return nil, err
	}
	dim := in.Dim()
	base := make([]float32, len(in.X))
	for i := range in.N {
		if err := perturb.Baseline(ref, in.Sample(i), in.Shape, base[i*dim:(i+1)*dim]); err != nil {
			return nil, err
		}
	}
	return base, nil
}

// IntegratedGradients integrates the gradient along the straight path from a
// baseline x' to the input x and multiplies by x − x' (Sundararajan et al.
// 2017, Eq. 3). Defaults: 25 steps (as in the ROAR papers), the right
// Riemann sum, a zero baseline. By completeness the attributions of a sample
// add up to f(x) − f(x') as the step count grows.
type IntegratedGradients struct {
	Steps    int       `json:"steps" doc:"points on the path from the baseline to the input" range:"[1,]"`
	Rule     string    `json:"rule" doc:"quadrature of the path integral" choices:"riemann-right|trapezoid"`
	Baseline string    `json:"baseline" doc:"reference input x′, named as removal references are: zero, mean (the sample's channel means), blur[:σ] (the sample blurred; σ 5 pixels by default) or dataset-mean (the training set's channel means)"`
	Train    []float32 `json:"-"` // training inputs (n×C×H×W), for the dataset-mean baseline
	Chunk    int       `json:"-"`
}

// Check implements param.Checker.
func (ig IntegratedGradients) Check() error { return checkBaseline(ig.Baseline, ig.Train) }

func (ig IntegratedGradients) defaults() IntegratedGradients {
	if ig.Steps == 0 {
		ig.Steps = 25
	}
	if ig.Rule == "" {
		ig.Rule = "riemann-right"
	}
	if ig.Baseline == "" {
		ig.Baseline = "zero"
	}
	return ig
}

// Name implements Method.
func (IntegratedGradients) Name() string { return "IntegratedGradients" }

// Settings implements Method.
func (ig IntegratedGradients) Settings() map[string]any {
	ig = ig.defaults()
	return map[string]any{"steps": ig.Steps, "rule": ig.Rule, "baseline": ig.Baseline}
}

// alphas returns the path positions and quadrature weights.
func (ig IntegratedGradients) alphas() ([]float64, []float64, error) {
	s := ig.Steps
	if s < 1 {
		return nil, nil, fmt.Errorf("steps %d: need at least 1", s)
	}
	var a, w []float64
	switch ig.Rule {
	case "riemann-right":
		for k := 1; k <= s; k++ {
			a, w = append(a, float64(k)/float64(s)), append(w, 1/float64(s))
		}
	case "trapezoid":
		for k := 0; k <= s; k++ {
			wk := 1 / float64(s)
			if k == 0 || k == s {
				wk /= 2
			}
			a, w = append(a, float64(k)/float64(s)), append(w, wk)
		}
	default:
		return nil, nil, fmt.Errorf("unknown rule %q (riemann-right, trapezoid)", ig.Rule)
	}
	return a, w, nil
}

// Attribute implements Method.
func (ig IntegratedGradients) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	ig = ig.defaults()
	alpha, weight, err := ig.alphas()
	if err != nil {
		return Maps{}, err
	}
	dim, S := in.Dim(), len(alpha)
	var acc []float64 // a block's sums, reused
	return inBlocks(ctx, in, ig.Chunk, func(ctx context.Context, in Input, _ int, out []float32) error {
		base, err := baselines(ig.Baseline, ig.Train, in)
		if err != nil {
			return err
		}
		sum := reuse(&acc, len(in.X))
		err = gradients(ctx, net, in.N*S, ig.Chunk,
			func(r int, dst []float32) {
				i, a := r/S, float32(alpha[r%S])
				x, b := in.Sample(i), base[i*dim:(i+1)*dim]
				for j := range dst {
					dst[j] = b[j] + a*(x[j]-b[j])
				}
			},
			func(r int) int { return in.Target[r/S] },
			func(r int, g []float32) {
				i, w := r/S, weight[r%S]
				acc := sum[i*dim : (i+1)*dim]
				for j, v := range g {
					acc[j] += w * float64(v)
				}
			})
		for j := range out {
			out[j] = float32(sum[j] * float64(in.X[j]-base[j]))
		}
		return err
	})
}

// SmoothGrad averages gradients over Gaussian-noised copies of the input
// (Smilkov et al. 2017). Aggregate selects the statistic of the noisy
// gradients: "mean" (SmoothGrad), "square" (SG-SQ, the mean of squared
// gradients, Hooker et al. 2019) or "variance" (VarGrad, Adebayo et al. 2018).
// Defaults: 15 samples, noise σ = 0.15 × (max − min of the input).
type SmoothGrad struct {
	Samples   int     `json:"samples" doc:"noisy copies averaged" range:"[1,]"`
	NoiseFrac float64 `json:"noise_frac" doc:"noise σ as a fraction of the input's range (max − min)" range:"[0,]"`
	Aggregate string  `json:"-"` // set by the method's name
	Seed      uint64  `json:"-"`
	Chunk     int     `json:"-"`
}

func (sg SmoothGrad) defaults() SmoothGrad {
	if sg.Samples == 0 {
		sg.Samples = 15
	}
	if sg.NoiseFrac == 0 {
		sg.NoiseFrac = 0.15
	}
	if sg.Aggregate == "" {
		sg.Aggregate = "mean"
	}
	return sg
}

// Name implements Method.
func (sg SmoothGrad) Name() string {
	switch sg.Aggregate {
	case "square":
		return "SmoothGradSquare"
	case "variance":
		return "VarGrad"
	}
	return "SmoothGrad"
}

// Settings implements Method.
func (sg SmoothGrad) Settings() map[string]any {
	sg = sg.defaults()
	return map[string]any{"samples": sg.Samples, "noise_frac": sg.NoiseFrac, "aggregate": sg.Aggregate, "seed": sg.Seed}
}

// Attribute implements Method.
func (sg SmoothGrad) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	sg = sg.defaults()
	if sg.Samples < 1 || sg.NoiseFrac < 0 {
		return Maps{}, fmt.Errorf("%d samples, noise %g: need ≥ 1 sample and non-negative noise", sg.Samples, sg.NoiseFrac)
	}
	switch sg.Aggregate {
	case "mean", "square", "variance":
	default:
		return Maps{}, fmt.Errorf("unknown aggregate %q (mean, square, variance)", sg.Aggregate)
	}
	dim, S := in.Dim(), sg.Samples
	sigma := make([]float32, in.N)
	for i := 0; i < in.N; i++ {
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range in.Sample(i) {
			lo, hi = min(lo, v), max(hi, v)
		}
		sigma[i] = float32(sg.NoiseFrac) * (hi - lo)
	}
	var a1, a2 []float64 // a block's sums, reused
	return inBlocks(ctx, in, sg.Chunk, func(ctx context.Context, b Input, first int, out []float32) error {
		s1, s2 := reuse(&a1, len(b.X)), reuse(&a2, len(b.X))
		err := gradients(ctx, net, b.N*S, sg.Chunk,
			func(r int, dst []float32) {
				// One stream per (sample, draw) of the whole input: maps
				// do not depend on chunking.
				rng := rand.New(rand.NewPCG(sg.Seed, uint64(first*S+r)))
				i := r / S
				for j, v := range b.Sample(i) {
					dst[j] = v + sigma[first+i]*float32(rng.NormFloat64())
				}
			},
			func(r int) int { return b.Target[r/S] },
			func(r int, g []float32) {
				i := r / S
				a, c := s1[i*dim:(i+1)*dim], s2[i*dim:(i+1)*dim]
				for j, v := range g {
					a[j] += float64(v)
					c[j] += float64(v) * float64(v)
				}
			})
		for j := range out {
			mean, sq := s1[j]/float64(S), s2[j]/float64(S)
			switch sg.Aggregate {
			case "mean":
				out[j] = float32(mean)
			case "square":
				out[j] = float32(sq)
			case "variance":
				out[j] = float32(math.Max(sq-mean*mean, 0))
			}
		}
		return err
	})
}

// DeepLift propagates multipliers with the rescale rule (Shrikumar et al.
// 2017, §3.5.1) through every ReLU and multiplies by x − x'. Max-pooling keeps
// the gradient rule. On networks that are linear between ReLUs the
// attributions of a sample add up to f(x) − f(x') exactly.
type DeepLift struct {
	Baseline string    `json:"baseline" doc:"reference input x′, named as removal references are: zero, mean (the sample's channel means), blur[:σ] (the sample blurred; σ 5 pixels by default) or dataset-mean (the training set's channel means)"`
	Train    []float32 `json:"-"` // training inputs (n×C×H×W), for the dataset-mean baseline
	Chunk    int       `json:"-"`
}

// Check implements param.Checker.
func (d DeepLift) Check() error { return checkBaseline(d.Baseline, d.Train) }

func (d DeepLift) defaults() DeepLift {
	if d.Baseline == "" {
		d.Baseline = "zero"
	}
	return d
}

// Name implements Method.
func (DeepLift) Name() string { return "DeepLift" }

// Settings implements Method.
func (d DeepLift) Settings() map[string]any {
	return map[string]any{"baseline": d.defaults().Baseline, "rule": "rescale"}
}

// Attribute implements Method.
func (d DeepLift) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	d = d.defaults()
	base, err := baselines(d.Baseline, d.Train, in)
	if err != nil {
		return Maps{}, err
	}
	dim := in.Dim()
	chunk := engine.Batch(in.Shape, cmp.Or(max(d.Chunk, 0), 256))
	defer net.SetRule(engine.Gradient, nil, 0)
	out := Maps{Data: make([]float32, len(in.X)), Shape: append([]int{in.N}, in.Shape...)}
	for lo := 0; lo < in.N; lo += chunk {
		hi := min(lo+chunk, in.N)
		if err := net.SetRule(engine.Rescale, base[lo*dim:hi*dim], hi-lo); err != nil {
			return Maps{}, err
		}
		err := gradients(within(ctx, float64(lo)/float64(in.N), float64(hi)/float64(in.N)), net, hi-lo, hi-lo,
			func(i int, dst []float32) { copy(dst, in.Sample(lo+i)) },
			func(i int) int { return in.Target[lo+i] },
			func(i int, g []float32) {
				o := (lo + i) * dim
				for j, v := range g {
					out.Data[o+j] = v * (in.X[o+j] - base[o+j])
				}
			})
		if err != nil {
			return Maps{}, err
		}
	}
	return out, nil
}

// GradientSHAP approximates SHAP values by expected gradients (Lundberg and
// Lee 2017; Erion et al. 2021): for random baselines b from a reference set
// and α ~ U(0,1), the mean of (x − b) ⊙ ∇f(b + α(x − b)), optionally with
// Gaussian noise of standard deviation Stdev on the input. Defaults: 25
// samples; the reference set is a zero image when none is given.
type GradientSHAP struct {
	Samples    int       `json:"samples" doc:"(reference, α) draws per input" range:"[1,]"`
	Stdev      float64   `json:"stdev" doc:"σ of Gaussian noise added to the input (0: none)" range:"[0,]"`
	References []float32 `json:"-"` // k reference inputs, k×C×H×W (e.g. training samples)
	Seed       uint64    `json:"-"`
	Chunk      int       `json:"-"`
}

func (g GradientSHAP) defaults() GradientSHAP {
	if g.Samples == 0 {
		g.Samples = 25
	}
	return g
}

// Name implements Method.
func (GradientSHAP) Name() string { return "GradientSHAP" }

// Settings implements Method.
func (g GradientSHAP) Settings() map[string]any {
	s := g.Samples
	if s == 0 {
		s = 25
	}
	return map[string]any{"samples": s, "stdev": g.Stdev, "references": len(g.References), "seed": g.Seed}
}

// Attribute implements Method.
func (g GradientSHAP) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	g = g.defaults()
	dim, S := in.Dim(), g.Samples
	refs := g.References
	if len(refs) == 0 {
		refs = make([]float32, dim)
	}
	if len(refs)%dim != 0 {
		return Maps{}, fmt.Errorf("%d reference values are not whole inputs of %v", len(refs), in.Shape)
	}
	k := len(refs) / dim
	// Draw every (reference, α) first, so that the result is independent of chunking.
	type draw struct {
		ref   int
		alpha float32
	}
	draws := make([]draw, in.N*S)
	rng := rand.New(rand.NewPCG(g.Seed, 0x5ab))
	for r := range draws {
		draws[r] = draw{rng.IntN(k), rng.Float32()}
	}
	var sums []float64 // a block's sums, reused
	return inBlocks(ctx, in, g.Chunk, func(ctx context.Context, b Input, first int, out []float32) error {
		acc := reuse(&sums, len(b.X))
		err := gradients(ctx, net, b.N*S, g.Chunk,
			func(r int, dst []float32) {
				i, d := r/S, draws[first*S+r]
				x, ref := b.Sample(i), refs[d.ref*dim:(d.ref+1)*dim]
				noise := rand.New(rand.NewPCG(g.Seed, uint64(first*S+r)+1))
				for j := range dst {
					xn := x[j]
					if g.Stdev > 0 {
						xn += float32(g.Stdev * noise.NormFloat64())
					}
					dst[j] = ref[j] + d.alpha*(xn-ref[j])
				}
			},
			func(r int) int { return b.Target[r/S] },
			func(r int, grad []float32) {
				i, d := r/S, draws[first*S+r]
				x, ref := b.Sample(i), refs[d.ref*dim:(d.ref+1)*dim]
				a := acc[i*dim : (i+1)*dim]
				for j, v := range grad {
					a[j] += float64(v) * float64(x[j]-ref[j])
				}
			})
		for j := range out {
			out[j] = float32(acc[j] / float64(S))
		}
		return err
	})
}
