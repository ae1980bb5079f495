package protocol

import (
	"context"
	"fmt"
	"math"
	"slices"

	"faithlab/core/diffusion"
	"faithlab/core/engine"
	"faithlab/core/perturb"
)

// FUD is Faithfulness Under the Distribution (the FUD paper, §3.3 and
// Appendix E): for each retained ratio ρ, the features of each test input
// that its map ranks least relevant are removed until the fraction ρ is
// left (the paper's direction, LeRF: "we progressively remove features
// deemed unimportant", §3.3.2), the removed values are in-painted by the
// diffusion prior, and the model's confidence in the explained class is
// read on the result. A map that finds the features the model relies on
// keeps the confidence high as less is retained: the area under the
// confidence curve (over ρ, divided by its span) is the headline, higher
// better, and Kendall's τ of each input's curve against ρ says how
// monotonically it falls (§4.3.3, Table 4: higher is smoother).
//
// In-painting is Algorithm 1 with DDIM (η = 0) over Steps steps of the
// prior's T: x^T = M⊙x + (1−M)⊙ε (Eq. 1), after every step the kept values
// overwritten with the original's (Eq. 14, the hard mask of Appendix C),
// and on the steps t < GuideFraction·T the "no new class evidence"
// correction ε̂ = ε_θ + GuideScale·√(1−ᾱ_t)·∇log P(y | x_t) (Eq. 4–6),
// the gradient of the evaluated model's log-softmax of the explained class
// y through its engine. Appendix D turns the correction on for the last
// 5 % of the steps, t < 50 of T = 1000; Algorithm 1 as printed tests
// "if t < O then ε̂ ← S_θ else ε̂ ← S_θ + √(1−ᾱ_t)∇log P", which with t
// counting down from T applies the correction on the first steps instead,
// where §3.3.2 and Appendix D say the classifier's gradient is
// meaningless; the inverted condition is read as a misprint and the text
// followed. The fraction is of the diffusion steps T, not of the sampler's:
// with 50 DDIM steps over 1000, t ∈ {40, 20, 0} are corrected.
//
// Order morf removes the most relevant features first instead (confidence
// should fall fast: lower area better). The paper defines only the LeRF
// direction and argues against the other (§3.3.2: with −∇log P(y|x) in
// the update, keeping only unimportant features invites adversarial
// effects); it is here to compare with deletion's MoRF, not as FUD.
//
// Diagnostics: how far the in-painted inputs lie from the clean ones (the
// energy detector's AUROC, FPR@95 %TPR, AUPR-In and -Out; PSNR, SSIM,
// MS-SSIM, GMSD; §4.3.1–4.3.2), the mean L2 distance of the result to the
// original at each ratio and along the trajectory at the ratio nearest
// 90 % kept (Appendix J: mask ratio 10 %). Samples keep the in-painted
// inputs per ratio and the trajectories (x_t and x̂₀ before every step) of
// the first Trajectories inputs.
type FUD struct {
	Ratios       []float64 `json:"ratios" doc:"retained ratios ρ: the fraction of each input's features kept" range:"(0,1)"`
	Samples      int       `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Steps        int       `json:"steps" doc:"DDIM steps over the prior's T (the paper: 100)" range:"[2,1000]"`
	GuideFrac    float64   `json:"guide_fraction" doc:"the classifier correction acts on the diffusion steps t < fraction·T (Appendix D: 0.05, t < 50 of 1000)" range:"(0,1]"`
	GuideScale   float64   `json:"guide_scale" doc:"weight of the correction √(1−ᾱ_t)·∇log P(y | x_t) added to the predicted noise (Algorithm 1: 1)" range:"(0,]"`
	NoGuide      bool      `json:"no_guidance" doc:"in-paint with the prior and the hard mask alone (Eq. 8), without the classifier correction"`
	Order        string    `json:"order" doc:"lerf: remove the least relevant features first, keeping the most relevant (FUD's direction); morf: the reverse" choices:"lerf|morf"`
	Rank         string    `json:"rank" doc:"how maps rank features: magnitude (|value|) or signed (largest value first)" choices:"magnitude|signed"`
	Target       string    `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`
	Prior        string    `json:"prior" doc:"diffusion prior: auto (the fitted mixture for tables, the dataset's shipped prior for images), mixture, empirical, or a prior file"`
	Trajectories int       `json:"trajectories" doc:"test inputs whose in-painting trajectories (x_t and x̂₀ before every step) are kept at every ratio (default 2; -1: none)" range:"[-1,8]"`
}

func (f FUD) defaults() FUD {
	if len(f.Ratios) == 0 {
		f.Ratios = []float64{0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1}
	}
	if f.Samples == 0 {
		f.Samples = 100
	}
	if f.Steps == 0 {
		f.Steps = 50
	}
	if f.GuideFrac == 0 {
		f.GuideFrac = 0.05
	}
	if f.GuideScale == 0 {
		f.GuideScale = 1
	}
	if f.Order == "" {
		f.Order = "lerf"
	}
	if f.Rank == "" {
		f.Rank = Magnitude
	}
	if f.Target == "" {
		f.Target = "predicted"
	}
	if f.Prior == "" {
		f.Prior = PriorAuto
	}
	if f.Trajectories == 0 {
		f.Trajectories = 2
	}
	return f
}

// Info implements Protocol.
func (f FUD) Info() Info {
	f = f.defaults()
	return Info{Name: "FUD", Category: "model", Family: FamilyFaithfulness, Data: []string{"image", "tabular"},
		Doc:    "Faithfulness Under the Distribution: the model's confidence as the least relevant features are removed and in-painted by a diffusion prior steered away from the explained class",
		Params: Params(f)}.with(f.metrics())
}

// Run implements Protocol.
func (f FUD) Run(ctx context.Context, env *Env) (Result, error) {
	f = f.defaults()
	res := Result{Protocol: "FUD", Method: env.Method, Config: config(f)}
	for _, r := range f.Ratios {
		if !(r > 0 && r < 1) {
			return res, fmt.Errorf("FUD: retained ratio %g outside (0, 1)", r)
		}
	}
	x, n, shape, err := testImages(env, f.Samples)
	if err != nil {
		return res, fmt.Errorf("FUD: %w", err)
	}
	maps, err := mapsFor(ctx, env, "test", n, shape)
	if err != nil {
		return res, fmt.Errorf("FUD: %w", err)
	}
	u, err := passUntouched(ctx, env.Net, x, env.Test.Y[:n], n, f.Target, true)
	if err != nil {
		return res, fmt.Errorf("FUD: %w", err)
	}
	target, cleanEnergy := u.target, u.energy
	prior, _, err := openPrior(ctx, env, f.Prior)
	if err != nil {
		return res, fmt.Errorf("FUD: %w", err)
	}
	feats, err := perturb.NewFeatures(shape[1], shape[2], 0)
	if err != nil {
		return res, fmt.Errorf("FUD: %w", err)
	}
	orders, err := Orders(ranked(maps, f.Rank), n, feats, f.Order == "morf")
	if err != nil {
		return res, fmt.Errorf("FUD: %w", err)
	}
	res.Samples = inputs(env.Test, maps, n, shape)
	ratios := slices.Sorted(slices.Values(f.Ratios))
	l2At := nearestIndex(ratios, 0.9)
	in := Inpainting{Prior: prior, Steps: f.Steps, GuideFrac: f.GuideFrac, GuideScale: f.GuideScale, Seed: env.Seed}
	if !f.NoGuide {
		in.Net = env.Net
	}
	conf := make([][]float64, n) // per input, per ratio (ascending)
	for i := range conf {
		conf[i] = make([]float64, len(ratios))
	}
	var l2 []float64
	var shifts []Shift
	var l2Steps []float64
	for j, rho := range ratios {
		stage := fmt.Sprintf("FUD %.0f%% kept", 100*rho)
		env.report(Progress{Stage: stage, Done: j, Total: len(ratios)})
		keep, err := KeepMasks(feats, orders, rho, env.Test.Shape)
		if err != nil {
			return res, fmt.Errorf("FUD: %w", err)
		}
		in.Record = max(f.Trajectories, 0)
		if j == l2At {
			in.Record = n
		}
		in.Progress = func(p diffusion.Progress) {
			env.report(Progress{Stage: fmt.Sprintf("%s (step %d/%d)", stage, p.Step, p.Steps), Done: j, Total: len(ratios)})
		}
		out, err := staged(ctx, stagePrior, func(ctx context.Context) (*diffusion.Result, error) { return in.Inpaint(ctx, x, n, keep, target) })
		if err != nil {
			return res, fmt.Errorf("%s: %w", stage, err)
		}
		p, err := probabilities(ctx, env.Net, out.X, n, target)
		if err != nil {
			return res, fmt.Errorf("%s: %w", stage, err)
		}
		for i := range n {
			conf[i][j] = p[i]
		}
		sh, err := measureShift(ctx, env.Net, cleanEnergy, x, out.X, n, env.Test.Shape)
		if err != nil {
			return res, fmt.Errorf("%s: %w", stage, err)
		}
		shifts, l2 = append(shifts, sh), append(l2, meanL2(out.X, x, n))
		if j == l2At {
			l2Steps = trajectoryL2(out, x, n)
		}
		k := min(PreviewCount, n)
		dim := env.Test.Dim()
		res.Samples = append(res.Samples, Sample{Name: fmt.Sprintf("FUD %.0f%% kept test", 100*rho),
			Shape: append([]int{k}, env.Test.Shape...), Values: slices.Clone(out.X[:k*dim])})
		if tr := out.Trajectory; tr != nil && f.Trajectories > 0 {
			res.Samples = append(res.Samples, trajectorySample(fmt.Sprintf("FUD %.0f%% kept trajectory", 100*rho), tr, min(f.Trajectories, n), env.Test.Shape))
		}
	}
	env.report(Progress{Stage: "FUD", Done: len(ratios), Total: len(ratios)})
	curve := make([]float64, len(ratios))
	aucs, taus := make([]float64, n), make([]float64, n)
	for i, c := range conf {
		for j, v := range c {
			curve[j] += v / float64(n)
		}
		aucs[i], taus[i] = normalisedArea(ratios, c), KendallTau(ratios, c)
	}
	better := Higher
	if f.Order == "morf" {
		better = Lower
	}
	confSD, confN := spread(conf)
	steps := make([]float64, len(l2Steps))
	for i := range steps {
		steps[i] = float64(i)
	}
	res.Curves = []Curve{
		{Name: "confidence", XLabel: "fraction of features kept", YLabel: "probability of the explained class", X: ratios, Y: curve, SD: confSD, N: confN},
		{Name: "l2", XLabel: "fraction of features kept", YLabel: "mean L2 distance of the in-painted inputs to the originals", X: ratios, Y: l2},
		{Name: "l2_trajectory", XLabel: "DDIM steps taken", YLabel: fmt.Sprintf("mean L2 distance of x_t to the original, %.0f%% kept", 100*ratios[l2At]), X: steps, Y: l2Steps},
	}
	res.keep("auc", aucs)
	res.keep("tau", taus)
	res.Scalars = []Scalar{{"auc", mean(aucs), better}, {"tau", mean(taus), Higher}, {"l2", mean(l2), ""}}
	cs, ss := shiftCurvesOver(shifts, ratios, "fraction of features kept", "")
	res.Curves, res.Scalars = append(res.Curves, cs...), append(res.Scalars, ss...)
	return res, nil
}

// nearestIndex is the index of the value of v nearest x (the first of
// equally near ones).
func nearestIndex(v []float64, x float64) int {
	best := 0
	for i, y := range v {
		if math.Abs(y-x) < math.Abs(v[best]-x) {
			best = i
		}
	}
	return best
}

// KeepMasks are the in-painting masks that keep the fraction rho of each
// input's features (the last of its removal order), one value per value
// of an input (an image's pixels kept or filled in all channels).
func KeepMasks(feats perturb.Features, orders [][]int, rho float64, shape []int) ([]float32, error) {
	k, err := perturb.Count(1-rho, feats.N())
	if err != nil {
		return nil, err
	}
	hw := feats.H * feats.W
	dim := engine.Size(shape)
	c := dim / hw
	m := make([]float32, hw)
	out := make([]float32, len(orders)*dim)
	for i, o := range orders {
		feats.Keep(m, o, k)
		for ch := range c {
			copy(out[i*dim+ch*hw:], m)
		}
	}
	return out, nil
}

// probabilities is each input's softmax probability of its target class.
func probabilities(ctx context.Context, net engine.Network, x []float32, n int, target []int) ([]float64, error) {
	out := make([]float64, n)
	p := make([]float32, net.Classes())
	err := engine.EachLogits(ctx, net, x, n, 0, func(i int, row []float32) {
		engine.Softmax(p, row, len(row))
		out[i] = float64(p[target[i]])
	})
	return out, err
}

// trajectoryL2 is the mean L2 distance to the originals x of a recorded
// trajectory's samples before each step, then of the result: one value per
// step taken, from the start (FUD Appendix J, Fig. 5).
func trajectoryL2(r *diffusion.Result, x []float32, n int) []float64 {
	tr := r.Trajectory
	if tr == nil {
		return nil
	}
	k := len(tr.X[0]) / (len(x) / n)
	var out []float64
	for _, xt := range tr.X {
		out = append(out, meanL2(xt, x[:len(xt)], k))
	}
	return append(out, meanL2(r.X[:len(tr.X[0])], x[:len(tr.X[0])], k))
}

// Trajectory is the Kind of a Sample that holds in-painting (or
// projection) trajectories, Shape [steps, 2, n, C, H, W]: before each step
// the samples x_t (index 0 of the second axis) and the prior's prediction
// of their clean versions x̂₀ (index 1), in the data's range.
const Trajectory = "trajectory"

// trajectorySample keeps the first k recorded inputs of a trajectory.
func trajectorySample(name string, tr *diffusion.Trajectory, k int, shape []int) Sample {
	dim := engine.Size(shape)
	var v []float32
	for i := range tr.T {
		v = append(v, tr.X[i][:k*dim]...)
		v = append(v, tr.X0[i][:k*dim]...)
	}
	return Sample{Name: name, Kind: Trajectory, Shape: append([]int{len(tr.T), 2, k}, shape...), Values: v}
}

// Inpainting is FUD's in-painting of the removed features of inputs with a
// diffusion prior, steered away from the explained class by the evaluated
// model (Algorithm 1; see FUD).
type Inpainting struct {
	Prior      diffusion.Prior
	Net        engine.Network // the correction's classifier; nil: no correction
	Steps      int            // DDIM steps over T (0: 50)
	GuideFrac  float64        // corrected steps t < GuideFrac·T (0: 0.05)
	GuideScale float64        // 0: 1
	Seed       uint64         // input i's noise ε comes from stream (Seed, i)
	Record     int            // keep the trajectories of the first Record inputs
	Progress   func(diffusion.Progress)
}

// Inpaint fills the values of the n inputs x (data range, n×C×H×W) where
// keep (n×C×H×W, or one input's worth shared by all) is 0 and keeps the
// others exactly; target is each input's explained class.
func (in Inpainting) Inpaint(ctx context.Context, x []float32, n int, keep []float32, target []int) (*diffusion.Result, error) {
	if in.Prior == nil {
		return nil, fmt.Errorf("in-painting without a prior")
	}
	if in.Steps == 0 {
		in.Steps = 50
	}
	if in.GuideFrac == 0 {
		in.GuideFrac = 0.05
	}
	if in.GuideScale == 0 {
		in.GuideScale = 1
	}
	if len(target) != n {
		return nil, fmt.Errorf("in-painting: %d targets for %d inputs", len(target), n)
	}
	ip := diffusion.Inpainting{Mask: keep}
	if in.Net != nil {
		ip.Guide, ip.GuideFrac, ip.GuideScale = classifierGrad(in.Net, target), in.GuideFrac, in.GuideScale
	}
	return diffusion.Inpaint(ctx, in.Prior, x, n, ip, diffusion.Options{Method: "ddim", Steps: in.Steps, Eta: 0,
		Clip: in.Prior.Scaling() == diffusion.Scaling{Lo: 0, Hi: 1}, Seed: in.Seed, Record: in.Record, Progress: in.Progress})
}

// classifierGrad is ∇ₓ log P(y | x) of the network's softmax for each
// input's target y: the logits' gradient onehot(y) − softmax, backpropagated
// to the input through the engine.
func classifierGrad(net engine.Network, target []int) diffusion.ClassifierGrad {
	return func(ctx context.Context, first int, x []float32, n int, grad []float32) error {
		k := net.Classes()
		g, err := engine.Differentiate(ctx, net, x, n, engine.InputGrad, func(f int, logits, d []float32) {
			engine.Softmax(d, logits, k)
			for r := range len(logits) / k {
				row := d[r*k : (r+1)*k]
				for c := range row {
					row[c] = -row[c]
				}
				row[target[first+f+r]]++
			}
		})
		if err != nil {
			return err
		}
		copy(grad, g)
		return nil
	}
}
