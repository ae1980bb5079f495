package campaign

import (
	"context"
	"fmt"
	"math"

	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine"
	"faithlab/core/model"
	"faithlab/core/perturb"
	"faithlab/core/protocol"
)

// Scored is an input and the model's prediction on it.
type Scored struct {
	Image      []float32 // C×H×W, the data's range
	Predicted  int       // the class the model predicts
	Confidence float64   // its softmax probability
	TargetProb float64   // the softmax probability of the class explained
}

// Step is one step of a sampler's trajectory: the input x_t before it and
// the prior's prediction x̂₀ of its clean version, each scored.
type Step struct {
	T     int // the diffusion step
	X, X0 Scored
}

// Projected is GOAR's view of one sample at one strength: the sample
// shifted against its map (x − s·v/‖v‖₂) and that shift projected onto the
// data manifold, as GOAR retrains on them, with where the projection
// started and its steps.
type Projected struct {
	Original, Shifted, Projected Scored
	Match                        protocol.Match
	Steps                        []Step
}

// GOARProject shifts sample i of ds against its map (saliency, H×W as the
// protocols lay maps out) by strength and projects it with the prior as
// GOAR does (protocol.Projection, DDIM with the given steps, 0: 25), and
// scores every version with the model; target is the class explained.
// With seed the campaign's seed + 1 and ds its test set, the projected
// image is the one the campaign scored (the same noise stream).
func GOARProject(ctx context.Context, m *model.Model, prior diffusion.Prior, ds *data.Dataset, i int, saliency []float32, strength float64, target, steps int, seed uint64) (Projected, error) {
	var out Projected
	net, x, err := inspected(m, ds, i, saliency, target)
	if err != nil {
		return out, err
	}
	one := ds.Subset([]int{i})
	dirs := protocol.Directions(saliency, one)
	shifted := make([]float32, len(x))
	for j, v := range x {
		shifted[j] = float32(float64(v) - strength*float64(dirs[j]))
	}
	p := protocol.Projection{Prior: prior, Steps: steps, Seed: seed, First: uint64(i), Record: 1}
	if out.Match, err = p.Match(strength); err != nil {
		return out, err
	}
	r, err := p.Project(ctx, shifted, 1, strength)
	if err != nil {
		return out, err
	}
	scored, err := score(ctx, net, [][]float32{x, shifted, r.X}, target)
	if err != nil {
		return out, err
	}
	out.Original, out.Shifted, out.Projected = scored[0], scored[1], scored[2]
	out.Steps, err = steps1(ctx, net, r.Trajectory, target)
	return out, err
}

// Inpainted is FUD's view of one sample at one retained ratio: the
// keep-mask (H×W, 1 kept, 0 in-painted), the in-painted sample and the
// in-painting's steps, each scored.
type Inpainted struct {
	Keep                []float32
	Original, Inpainted Scored
	Steps               []Step
}

// FUDInpaint keeps the fraction ratio of sample i's features that its map
// (H×W) ranks most relevant by magnitude, as FUD does by default, and
// in-paints the rest with the prior (DDIM with the given steps, 0: 50),
// with FUD's correction from the model on the last 5 % of the diffusion
// steps unless noGuide, and scores every step; target is the class
// explained and the correction's.
func FUDInpaint(ctx context.Context, m *model.Model, prior diffusion.Prior, ds *data.Dataset, i int, saliency []float32, ratio float64, target, steps int, noGuide bool, seed uint64) (Inpainted, error) {
	var out Inpainted
	net, x, err := inspected(m, ds, i, saliency, target)
	if err != nil {
		return out, err
	}
	fs := protocol.FeatureShape(ds.Shape)
	feats, err := perturb.NewFeatures(fs[1], fs[2], 0)
	if err != nil {
		return out, err
	}
	mag := make([]float32, len(saliency))
	for j, v := range saliency {
		mag[j] = float32(math.Abs(float64(v)))
	}
	orders, err := protocol.Orders(mag, 1, feats, false)
	if err != nil {
		return out, err
	}
	keep, err := protocol.KeepMasks(feats, orders, ratio, ds.Shape)
	if err != nil {
		return out, err
	}
	out.Keep = make([]float32, feats.N())
	copy(out.Keep, keep) // the first channel's mask: the pixels
	in := protocol.Inpainting{Prior: prior, Steps: steps, Seed: seed, Record: 1}
	if !noGuide {
		in.Net = net
	}
	r, err := in.Inpaint(ctx, x, 1, keep, []int{target})
	if err != nil {
		return out, err
	}
	scored, err := score(ctx, net, [][]float32{x, r.X}, target)
	if err != nil {
		return out, err
	}
	out.Original, out.Inpainted = scored[0], scored[1]
	out.Steps, err = steps1(ctx, net, r.Trajectory, target)
	return out, err
}

// inspected checks what an inspection gets and returns the model's network
// and sample i.
func inspected(m *model.Model, ds *data.Dataset, i int, saliency []float32, target int) (engine.Network, []float32, error) {
	if m == nil || m.Net == nil {
		return nil, nil, fmt.Errorf("no classifier to score the sample with")
	}
	if i < 0 || i >= ds.Len() {
		return nil, nil, fmt.Errorf("sample %d outside the %d of %s", i, ds.Len(), ds.Name)
	}
	if k := m.Net.Classes(); target < 0 || target >= k {
		return nil, nil, fmt.Errorf("class %d outside the model's %d", target, k)
	}
	fs := protocol.FeatureShape(ds.Shape)
	if len(saliency) != fs[1]*fs[2] {
		return nil, nil, fmt.Errorf("map of %d values for samples of %d features", len(saliency), fs[1]*fs[2])
	}
	return m.Net, append([]float32(nil), ds.Sample(i)...), nil
}

// score runs the images through the network and scores each.
func score(ctx context.Context, net engine.Network, imgs [][]float32, target int) ([]Scored, error) {
	var all []float32
	for _, img := range imgs {
		all = append(all, img...)
	}
	out := make([]Scored, len(imgs))
	prob := make([]float32, net.Classes())
	err := engine.EachLogits(ctx, net, all, len(imgs), len(imgs), func(j int, row []float32) {
		engine.Softmax(prob, row, len(prob))
		c := engine.Argmax(row)
		out[j] = Scored{Image: imgs[j], Predicted: c, Confidence: float64(prob[c]), TargetProb: float64(prob[target])}
	})
	return out, err
}

// steps1 scores the one recorded input of a trajectory at every step.
func steps1(ctx context.Context, net engine.Network, tr *diffusion.Trajectory, target int) ([]Step, error) {
	if tr == nil {
		return nil, nil
	}
	var imgs [][]float32
	for i := range tr.T {
		imgs = append(imgs, tr.X[i], tr.X0[i])
	}
	scored, err := score(ctx, net, imgs, target)
	if err != nil {
		return nil, err
	}
	out := make([]Step, len(tr.T))
	for i, t := range tr.T {
		out[i] = Step{T: t, X: scored[2*i], X0: scored[2*i+1]}
	}
	return out, nil
}
