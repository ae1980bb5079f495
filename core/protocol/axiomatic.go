package protocol

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"faithlab/core/engine"
)

// The axiomatic metrics (Quantus's axiomatic family) ask whether a map
// keeps a property every faithful map has: Completeness (its sum is the
// output's change from a baseline), Non-Sensitivity (it is zero exactly
// where the model does not respond), Input Invariance (it does not move
// when the input is shifted and the model absorbs the shift). Each scores
// every input on its own (Units).

// Baselines of the axiomatic metrics.
const (
	baselineBlack = "black" // the input's smallest value (Quantus's "black")
	baselineZero  = "zero"
)

// inputMinimum fills removed pixels with the smallest value of the whole
// input, over every channel: Quantus's "black" baseline.
type inputMinimum struct{}

// Name implements perturb.Reference.
func (inputMinimum) Name() string { return baselineBlack }

// Fill implements perturb.Reference.
func (inputMinimum) Fill(img []float32, shape []int, keep []float32, _ *rand.Rand) error {
	hw := shape[1] * shape[2]
	if len(img) != shape[0]*hw || len(keep) != hw {
		return fmt.Errorf("black baseline: %d values and %d mask values for an image of %v", len(img), len(keep), shape)
	}
	lo := slices.Min(img)
	for ch := range shape[0] {
		for q, k := range keep {
			v := &img[ch*hw+q]
			*v = k**v + (1-k)*lo
		}
	}
	return nil
}

// baselineOf is input x (C×H×W) with every value at the baseline.
func baselineOf(x []float32, baseline string) []float32 {
	out := make([]float32, len(x))
	if baseline == baselineBlack {
		lo := slices.Min(x)
		for i := range out {
			out[i] = lo
		}
	}
	return out
}

// Completeness (Sundararajan et al., "Axiomatic attribution for deep
// networks", ICML 2017; Shrikumar et al. 2017's summation to delta;
// Montavon et al. 2018's conservation): a map is complete when its sum
// equals the change of the explained class's logit from the baseline to
// the input, Σφ = f(x) − f(x̄). Per input Quantus 0.6 returns whether the
// two are exactly equal, on a map it first normalises
// (normalise_by_negative) and against the baseline "black" (every value
// at the input's smallest). Differences: float32 sums are never exactly
// equal, so an input counts as complete when |Σφ − Δf| ≤ tolerance·|Δf|
// (default 10⁻³; Quantus's exact test has no setting), and the relative gap |Σφ − Δf| /
// |Δf| is reported beside it (undefined where Δf = 0); the map is not
// normalised by default, since a normalised map's sum is not in the
// logit's units and Quantus's default fails every method whose map is not
// already scaled to [−1, 1] (normalise negative restores it). The map's
// sum is over Faithlab's H×W map, whose pixels hold the channels' sum or
// mean as the campaign's reduce says: with more than one channel and
// reduce mean the sum is 1/C of the attributions'. Integrated Gradients
// and Gradient×Input of a bias-free linear model with a zero baseline are
// complete; a random map is not.
type Completeness struct {
	Samples   int     `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Baseline  string  `json:"baseline" doc:"the input the change is measured from: black (every value at the input's smallest, Quantus's) or zero" choices:"black|zero"`
	Tolerance float64 `json:"tolerance" doc:"an input is complete when |Σφ − Δf| ≤ tolerance·|Δf| (Quantus asks them to be exactly equal, which float32 sums never are)" range:"(0,]"`
	Normalise string  `json:"normalise" doc:"how each map is scaled before summing: none, or Quantus's default negative (positives ÷ max, negatives ÷ |min|), or max (÷ max|φ|)" choices:"none|negative|max"`
	Target    string  `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`
}

func (c Completeness) defaults() Completeness {
	c.Samples = cmp.Or(c.Samples, 100)
	c.Baseline = cmp.Or(c.Baseline, baselineBlack)
	c.Tolerance = cmp.Or(c.Tolerance, 1e-3)
	c.Normalise = cmp.Or(c.Normalise, normaliseNone)
	c.Target = cmp.Or(c.Target, "predicted")
	return c
}

// Info implements Protocol.
func (c Completeness) Info() Info {
	return Info{Name: "Completeness", Category: "model", Family: FamilyAxiomatic, Data: []string{"image", "tabular"},
		Doc:    "Completeness (Sundararajan et al. 2017): does the map sum to the explained logit's change from the baseline to the input?",
		Params: Params(c.defaults()),
		Metrics: []Metric{
			{Name: "completeness", Better: Higher, Headline: true, Value: unitAxis("share of inputs whose map sums to the logit's change"),
				Doc: "per input 1 if |Σφ − (f(x) − f(baseline))| ≤ tolerance·|f(x) − f(baseline)|, else 0; mean over inputs"},
			{Name: "completeness_gap", Better: Lower, Value: Axis{Title: "|Σφ − Δf| / |Δf|, mean over inputs", Reference: &Reference{0, "complete"}},
				Doc: "per input the map sum's distance from the explained logit's change, relative to the change (undefined where it is 0); mean over inputs"},
		}}
}

// Run implements Protocol.
func (c Completeness) Run(ctx context.Context, env *Env) (Result, error) {
	c = c.defaults()
	res := Result{Protocol: "Completeness", Method: env.Method, Config: config(c)}
	x, n, shape, err := testImages(env, c.Samples)
	if err != nil {
		return res, fmt.Errorf("completeness: %w", err)
	}
	maps, err := mapsFor(ctx, env, "test", n, shape)
	if err != nil {
		return res, fmt.Errorf("completeness: %w", err)
	}
	clean, err := passUntouched(ctx, env.Net, x, env.Test.Y[:n], n, c.Target, false)
	if err != nil {
		return res, fmt.Errorf("completeness: %w", err)
	}
	dim, hw := engine.Size(shape), shape[1]*shape[2]
	base := make([]float32, 0, n*dim)
	for i := range n {
		base = append(base, baselineOf(x[i*dim:(i+1)*dim], c.Baseline)...)
	}
	fb, err := scores(ctx, env.Net, base, n, clean.target, false)
	if err != nil {
		return res, fmt.Errorf("completeness: the baselines: %w", err)
	}
	complete, gap := make([]float64, n), make([]float64, n)
	for i := range n {
		var sum float64
		for _, v := range prepared(maps[i*hw:(i+1)*hw], c.Normalise, false) {
			sum += v
		}
		complete[i], gap[i] = CompletenessScore(sum, clean.score[i]-fb[i], c.Tolerance)
	}
	res.keepGrid("completeness", complete, 1)
	res.keep("completeness_gap", gap)
	res.Scalars = []Scalar{{"completeness", mean(complete), Higher}, {"completeness_gap", mean(gap), Lower}}
	return res, nil
}

// CompletenessScore says whether a map's sum is the output's change
// delta within tolerance·|delta| (1 or 0), and their relative gap (NaN
// where delta is 0).
func CompletenessScore(sum, delta, tolerance float64) (complete, gap float64) {
	d := math.Abs(sum - delta)
	if d <= tolerance*math.Abs(delta) {
		complete = 1
	}
	gap = d / math.Abs(delta)
	if delta == 0 {
		gap = math.NaN()
	}
	return complete, gap
}

// Work implements Worker: the inputs and their baselines.
func (c Completeness) Work(_, testN int, _ []int) Work {
	return Work{Forward: float64(2 * min(c.defaults().Samples, testN))}
}

// NonSensitivity (Nguyen & Martínez, "On quantitative aspects of model
// interpretability", 2020; Ancona et al. 2019; Montavon et al. 2018): a
// map should be zero exactly on the features the model does not respond
// to. Per input, a pixel is unattributed when its prepared attribution is
// below eps, and insensitive when setting it to the baseline moves the
// explained class's probability by less than eps; the score is the number
// of pixels that are one and not the other (lower is better, 0 at best).
// As the newest Quantus source read (commit 089c62b: the batched
// evaluate_batch that perturbs the unattributed and the attributed pixels
// in groups of features_in_step, in index order, and compares each
// group's probability with the input's): eps 10⁻⁵, one feature a step,
// baseline "black" (the input's smallest value), the map's magnitudes
// normalised by the largest, the softmax probability. Earlier Quantus
// releases (0.4–0.5) had a version that counted the indices of nonzero
// attributions and the variance of one prediction, and scored almost any
// map alike; Faithlab follows the corrected definition. Difference: a
// feature is a pixel, all its channels set to the baseline together
// (Quantus broadcasts the map over the channels and counts each channel's
// value as a feature; with one channel they agree).
type NonSensitivity struct {
	Samples        int     `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Eps            float64 `json:"eps" doc:"a pixel is unattributed below eps (of the prepared map) and insensitive when its removal moves the probability by less than eps" range:"(0,]"`
	FeaturesInStep int     `json:"features_in_step" doc:"pixels set to the baseline together, in index order among the unattributed and among the attributed" range:"[1,]"`
	Baseline       string  `json:"baseline" doc:"what a removed pixel is set to: black (the input's smallest value, Quantus's) or zero" choices:"black|zero"`
	Normalise      string  `json:"normalise" doc:"how each map is scaled before the threshold (Quantus's normalise_func): max (÷ max|φ|), negative (positives ÷ max, negatives ÷ |min|) or none" choices:"max|negative|none"`
	Values         string  `json:"values" doc:"the map's values as they are (signed) or their magnitudes (Quantus's abs), taken after normalising" choices:"magnitude|signed"`
	Output         string  `json:"output" doc:"score: probability (Quantus's softmax) or logit of the target class" choices:"probability|logit"`
	Target         string  `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`
	Chunk          int     `json:"chunk" doc:"inputs per forward pass, at most: fewer where they would take more than 2 MiB (ImageNet-sized images: 4)" range:"[1,]"`
}

func (s NonSensitivity) defaults() NonSensitivity {
	s.Samples = cmp.Or(s.Samples, 100)
	s.Eps = cmp.Or(s.Eps, 1e-5)
	s.FeaturesInStep = cmp.Or(s.FeaturesInStep, 1)
	s.Baseline = cmp.Or(s.Baseline, baselineBlack)
	s.Normalise = cmp.Or(s.Normalise, normaliseMax)
	s.Values = cmp.Or(s.Values, Magnitude)
	s.Output = cmp.Or(s.Output, "probability")
	s.Target = cmp.Or(s.Target, "predicted")
	s.Chunk = cmp.Or(s.Chunk, 1024)
	return s
}

// Info implements Protocol.
func (s NonSensitivity) Info() Info {
	return Info{Name: "NonSensitivity", Category: "model", Family: FamilyAxiomatic, Data: []string{"image", "tabular"},
		Doc:    "Non-Sensitivity (Nguyen & Martínez 2020): the pixels the map leaves at zero are exactly those the model does not respond to",
		Params: Params(s.defaults()),
		Metrics: []Metric{{Name: "non_sensitivity", Better: Lower, Headline: true,
			Value: Axis{Title: "pixels unattributed xor insensitive, mean over inputs", Reference: &Reference{0, "none"}},
			Doc:   "per input the number of pixels whose attribution is below eps but whose removal moves the probability by eps or more, or the reverse; mean over inputs"}}}
}

// Run implements Protocol.
func (s NonSensitivity) Run(ctx context.Context, env *Env) (Result, error) {
	s = s.defaults()
	res := Result{Protocol: "NonSensitivity", Method: env.Method, Config: config(s)}
	p, err := newProbe(ctx, env, s.Samples, pixelGrid, "zero", s.Output, s.Target)
	if err != nil {
		return res, fmt.Errorf("non-sensitivity: %w", err)
	}
	if s.Baseline == baselineBlack {
		p.ref = inputMinimum{}
	}
	hw := p.shape[1] * p.shape[2]
	unattributed := make([][]bool, p.n)
	groups := make([][][]int, p.n)
	k := 0
	for i := range p.n {
		a := prepared(p.maps[i*hw:(i+1)*hw], s.Normalise, s.Values == Magnitude)
		unattributed[i] = make([]bool, hw)
		var off, on []int
		for q, v := range a {
			unattributed[i][q] = v < s.Eps
			if v < s.Eps {
				off = append(off, q)
			} else {
				on = append(on, q)
			}
		}
		for _, idx := range [][]int{off, on} {
			for lo := 0; lo < len(idx); lo += s.FeaturesInStep {
				groups[i] = append(groups[i], idx[lo:min(lo+s.FeaturesInStep, len(idx))])
			}
		}
		k = max(k, len(groups[i]))
	}
	// Copy j of input i removes its group j; inputs with fewer groups
	// pad with copies that remove nothing (they take the input's logits
	// without a pass).
	out, err := p.perturbed(ctx, env, "non-sensitivity", k, s.Chunk, func(i, j int, keep []float32) {
		for q := range keep {
			keep[q] = 1
		}
		if j < len(groups[i]) {
			for _, q := range groups[i][j] {
				keep[q] = 0
			}
		}
	})
	if err != nil {
		return res, fmt.Errorf("non-sensitivity: %w", err)
	}
	per := make([]float64, p.n)
	for i := range per {
		insensitive := make([]bool, hw)
		for j, g := range groups[i] {
			for _, q := range g {
				insensitive[q] = math.Abs(p.base[i]-out[i][j]) < s.Eps
			}
		}
		per[i] = float64(NonSensitivityScore(unattributed[i], insensitive))
	}
	res.keep("non_sensitivity", per)
	res.Scalars = []Scalar{{"non_sensitivity", mean(per), Lower}}
	return res, nil
}

// NonSensitivityScore is the number of features that are unattributed
// and not insensitive, or insensitive and not unattributed.
func NonSensitivityScore(unattributed, insensitive []bool) int {
	n := 0
	for q := range unattributed {
		if unattributed[q] != insensitive[q] {
			n++
		}
	}
	return n
}

// Work implements Worker: every pixel of every input removed on its own
// (in groups of features_in_step).
func (s NonSensitivity) Work(_, testN int, shape []int) Work {
	s = s.defaults()
	fs := FeatureShape(shape)
	n := min(s.Samples, testN) * (fs[1]*fs[2] + s.FeaturesInStep - 1) / s.FeaturesInStep
	return Work{Forward: float64(min(s.Samples, testN) + n), Filled: float64(n)}
}

// InputInvariance (Kindermans et al., "The (un)reliability of saliency
// methods", 2017/2019): a constant shift of the input that the model
// absorbs — a second model whose first layer's bias is moved by
// −shift·Σ of its weights, so that it gives on x + shift exactly the
// logits the first gives on x — should not move the map. Per input 1 when
// the second model's map of x + shift equals the first's of x, else 0;
// beside it the largest difference relative to the map's largest
// magnitude. Gradient and Integrated Gradients with a baseline shifted
// alike are invariant; Gradient×Input is not.
//
// Quantus 0.6 adds the shift (−1, its default) to the input and explains
// it with the model unchanged, so the model does not absorb the shift and
// even an invariant method fails unless the model ignores a constant; and
// it asks the two maps to be exactly equal. Faithlab builds the second
// model Kindermans et al. define, and counts two maps equal when they
// differ by at most tolerance (default 10⁻⁴) × the first's largest
// magnitude (the two models' float32 sums differ in their last bits, so
// Quantus's exact test has no setting). The second model is the first with the first
// parameterised layer (a linear layer or a convolution with a bias)
// changed; a run is refused when that model's logits on x + shift are not
// the first's on x within 10⁻⁴ of their scale — a first convolution with
// zero padding sees the shift only partly at the border, a model whose
// engine does not take changed parameters (a PyTorch worker) not at all.
type InputInvariance struct {
	Samples   int     `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Shift     float64 `json:"shift" doc:"the constant added to every input value (Quantus's input_shift)"`
	Tolerance float64 `json:"tolerance" doc:"two maps are equal when they differ by at most tolerance × the first's largest magnitude (Quantus asks them to be exactly equal)" range:"(0,]"`
	Target    string  `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`
}

func (v InputInvariance) defaults() InputInvariance {
	v.Samples = cmp.Or(v.Samples, 100)
	v.Shift = cmp.Or(v.Shift, -1)
	v.Tolerance = cmp.Or(v.Tolerance, 1e-4)
	v.Target = cmp.Or(v.Target, "predicted")
	return v
}

// Info implements Protocol.
func (v InputInvariance) Info() Info {
	return Info{Name: "InputInvariance", Category: "model", Family: FamilyAxiomatic, Data: []string{"image", "tabular"},
		Doc:    "Input Invariance (Kindermans et al. 2017): the map of a shifted input under a model that absorbs the shift equals the map of the input",
		Params: Params(v.defaults()),
		Metrics: []Metric{
			{Name: "input_invariance", Better: Higher, Headline: true, Value: unitAxis("share of inputs whose map the shift leaves unchanged"),
				Doc: "per input 1 if the shift-absorbing model's map of x + shift equals the model's map of x (within tolerance × its largest magnitude), else 0; mean over inputs"},
			{Name: "invariance_error", Better: Lower, Value: Axis{Title: "max |Φ′(x + shift) − Φ(x)| / max |Φ(x)|, mean over inputs", Reference: &Reference{0, "invariant"}},
				Doc: "per input the largest change of the map relative to its largest magnitude (undefined for a blank map); mean over inputs"},
		}}
}

// Run implements Protocol.
func (v InputInvariance) Run(ctx context.Context, env *Env) (Result, error) {
	v = v.defaults()
	res := Result{Protocol: "InputInvariance", Method: env.Method, Config: config(v)}
	if v.Shift == 0 {
		return res, fmt.Errorf("InputInvariance: a shift of 0 tests nothing")
	}
	x, n, shape, target, orig, err := explained(ctx, env, v.Samples, v.Target)
	if err != nil {
		return res, fmt.Errorf("InputInvariance: %w", err)
	}
	shifted := make([]float32, len(x))
	for i, val := range x {
		shifted[i] = val + float32(v.Shift)
	}
	net, err := AbsorbShift(ctx, env.Net, x, shifted, n, v.Shift)
	if err != nil {
		return res, fmt.Errorf("InputInvariance: %w", err)
	}
	defer engine.Release(net)
	maps, err := explainOn(ctx, env, net, shifted, n, target, shape)
	if err != nil {
		return res, fmt.Errorf("InputInvariance: %w", err)
	}
	hw := shape[1] * shape[2]
	same, diff := make([]float64, n), make([]float64, n)
	for i := range n {
		same[i], diff[i] = InvarianceScore(orig[i*hw:(i+1)*hw], maps[i*hw:(i+1)*hw], v.Tolerance)
	}
	res.keepGrid("input_invariance", same, 1)
	res.keep("invariance_error", diff)
	res.Scalars = []Scalar{{"input_invariance", mean(same), Higher}, {"invariance_error", mean(diff), Lower}}
	return res, nil
}

// InvarianceScore says whether map b equals map a within tolerance × a's
// largest magnitude (1 or 0), and their largest difference relative to
// it (NaN for a blank a, which b equals only if blank too).
func InvarianceScore(a, b []float32, tolerance float64) (same, rel float64) {
	var top, d float64
	for i := range a {
		top = math.Max(top, math.Abs(float64(a[i])))
		d = math.Max(d, math.Abs(float64(b[i])-float64(a[i])))
	}
	if d <= tolerance*top {
		same = 1
	}
	rel = d / top
	if top == 0 {
		rel = math.NaN()
	}
	return same, rel
}

// AbsorbShift returns a copy of net whose first parameterised layer's
// bias is moved by −shift·Σ of each output's weights, so that its logits
// on x + shift (shifted) are net's on x, and checks that they are on the
// n inputs given.
func AbsorbShift(ctx context.Context, net engine.Network, x, shifted []float32, n int, shift float64) (engine.Network, error) {
	c := net.Clone()
	ps := c.Params()
	wi := slices.IndexFunc(ps, func(p engine.Param) bool { return len(p.Shape) >= 2 })
	if wi < 0 || wi+1 >= len(ps) {
		return nil, fmt.Errorf("the %s model has no first layer with weights and a bias to absorb the shift", net.Arch())
	}
	w, b := ps[wi], ps[wi+1]
	layer := strings.TrimSuffix(w.Name, ".weight")
	if b.Name != layer+".bias" || len(b.Shape) != 1 || b.Shape[0] != w.Shape[0] {
		return nil, fmt.Errorf("the %s model's first layer %s has no bias to absorb the shift", net.Arch(), layer)
	}
	per := len(w.Data) / w.Shape[0]
	for o := range w.Shape[0] {
		var sum float64
		for _, wv := range w.Data[o*per : (o+1)*per] {
			sum += float64(wv)
		}
		b.Data[o] -= float32(shift * sum)
	}
	want, err := engine.Logits(ctx, net, x, n)
	if err != nil {
		return nil, err
	}
	want = slices.Clone(want)
	got, err := engine.Logits(ctx, c, shifted, n)
	if err != nil {
		return nil, err
	}
	var scale, d float64
	for i := range want {
		scale = math.Max(scale, math.Abs(float64(want[i])))
		d = math.Max(d, math.Abs(float64(got[i])-float64(want[i])))
	}
	if d > 1e-4*math.Max(scale, 1) {
		return nil, fmt.Errorf("the %s model with its first layer %s's bias moved does not absorb the shift (logits differ by %.3g, at most %.3g allowed): a first convolution with zero padding sees the shift only partly at the border, and an engine that does not take changed parameters not at all", net.Arch(), layer, d, 1e-4*math.Max(scale, 1))
	}
	return c, nil
}

// Work implements Worker: two maps of each input.
func (v InputInvariance) Work(_, testN int, _ []int) Work {
	return Work{Forward: float64(2 * min(v.defaults().Samples, testN))}
}
