package protocol

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"faithlab/core/engine"
	"faithlab/core/imageops"
	"faithlab/core/train"
)

// The sanity checks (Adebayo et al., "Sanity checks for saliency maps",
// NeurIPS 2018; Sixt et al., "When explanations lie: why many modified BP
// attributions fail", ICML 2020): a map that stays the same when the model
// is randomised, or when another class is explained, cannot be explaining
// the model's decision. Both recompute the method's maps (Env.Explain) and
// score how similar they stay: lower is better.

// MPRT is the model parameter randomisation test (Adebayo et al. 2018):
// the model's layers with parameters are drawn afresh from their initial
// distribution, from the top (the output) down, and the method's maps of
// the same inputs and classes are recomputed after each. Cascading
// randomises every layer so far (the network is ever more random);
// independent randomises one layer at a time. Each map is compared with
// the original by the paper's three similarities: Spearman's rank
// correlation of the absolute values, SSIM and the Pearson correlation of
// their HOGs, the last two on the absolute maps scaled to [0, 1] (as the
// paper scales them to show). One curve per similarity, over the layers
// randomised; per input, each similarity's mean over the layers.
//
// Hedström et al. ("Sanity checks revisited: an exploration to repair the
// model parameter randomisation test", 2024) repair it twice, and both are
// settings of it. Smooth MPRT (SmoothMPRT) averages every map, on the
// trained model and on each randomised one, over noisy copies of the input
// (the same copies for every model), so that the test does not mistake
// the noise of gradients for sensitivity to the weights; it randomises
// from the bottom up, as they (and Quantus) do. Efficient MPRT
// (EfficientMPRT) asks whether the maps grow more complex once the whole
// model is random: per input, the entropy of the histogram (100 bins) of
// the map's absolute values on the fully randomised model over that on
// the trained one (the emprt score of every cascading run; above 1: the
// method noticed).
type MPRT struct {
	Samples int     `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Mode    string  `json:"mode" doc:"cascading (every layer so far randomised) or independent (this layer alone)" choices:"cascading|independent"`
	Order   string  `json:"order" doc:"the order layers are randomised in: top-down (output first, Adebayo et al.) or bottom-up (input first)" choices:"top-down|bottom-up"`
	Draws   int     `json:"draws" doc:"noisy copies every map is averaged over (Smooth MPRT); 1: the maps themselves" range:"[1,]"`
	Noise   float64 `json:"noise" doc:"the copies' Gaussian noise, its standard deviation over the input's range of values" range:"[0,]"`
	Target  string  `json:"target" doc:"class explained, the same on every randomised model: predicted (by the trained model) or label" choices:"predicted|label"`

	as named
}

// SmoothMPRT is MPRT on maps averaged over 50 noisy copies of each input
// (σ a tenth of its range), layers randomised bottom-up (Hedström et al.
// 2024, and Quantus's defaults).
func SmoothMPRT() MPRT {
	return MPRT{Draws: 50, Order: "bottom-up", as: named{"SmoothMPRT",
		"Smooth MPRT (Hedström et al. 2024): MPRT on maps averaged over noisy copies of the input, layers randomised bottom-up", "mean_spearman"}}.defaults()
}

// EfficientMPRT is cascading MPRT led by the complexity ratio of the maps
// on the fully randomised model and on the trained one (Hedström et al.
// 2024).
func EfficientMPRT() MPRT {
	return MPRT{as: named{"EfficientMPRT",
		"Efficient MPRT (Hedström et al. 2024): how much more complex (histogram entropy) a method's maps are on the fully randomised model than on the trained one", "emprt"}}.defaults()
}

func (m MPRT) defaults() MPRT {
	m.Samples = cmp.Or(m.Samples, 100)
	m.Mode = cmp.Or(m.Mode, "cascading")
	m.Order = cmp.Or(m.Order, "top-down")
	m.Draws = cmp.Or(m.Draws, 1)
	m.Noise = cmp.Or(m.Noise, 0.1)
	m.Target = cmp.Or(m.Target, "predicted")
	return m
}

// Info implements Protocol.
func (m MPRT) Info() Info {
	m = m.defaults()
	return Info{Name: m.as.or("MPRT"), Category: "model", Family: FamilyRandomisation, Data: []string{"image", "tabular"},
		Doc:    cmp.Or(m.as.doc, "Model Parameter Randomisation Test (Adebayo et al. 2018): how similar a method's maps stay as the model's layers are randomised from the top; a method that explains the model changes"),
		Params: Params(m)}.with(m.metrics())
}

// hogCell is the side of a HOG cell, in pixels: 7×7 cells on a 28×28 map.
const hogCell = 4

// similarities are the measures MPRT and Random Logit compare maps by.
var similarities = []struct {
	name, title, doc string
	images           bool
	of               func(a, b []float32, h, w int) float64
}{
	{"spearman", "Spearman correlation of |map|", "Spearman's rank correlation of the maps' absolute values", false,
		func(a, b []float32, _, _ int) float64 { return Spearman(absolute(a), absolute(b)) }},
	{"ssim", "SSIM of the scaled |map|", "SSIM of the absolute maps scaled to [0, 1]", true,
		func(a, b []float32, h, w int) float64 { return ssim(scaled(a), scaled(b), h, w, 1) }},
	{"hog", "Pearson correlation of the HOGs", fmt.Sprintf("Pearson correlation of the HOG descriptors (%d-pixel cells) of the absolute maps scaled to [0, 1]", hogCell), true,
		func(a, b []float32, h, w int) float64 {
			x, y := imageops.HOG(scaled(a), h, w, hogCell), imageops.HOG(scaled(b), h, w, hogCell)
			if x == nil {
				return math.NaN()
			}
			return Pearson(x, y)
		}},
}

func (m MPRT) metrics() []Metric {
	from := map[string]string{"top-down": "the top", "bottom-up": "the bottom"}[m.Order]
	over := &Axis{Title: "layers randomised, counted from " + from}
	if m.Mode == "independent" {
		over.Title = "layer randomised, counted from " + from
	}
	var out []Metric
	for _, s := range similarities {
		v := Axis{Title: s.title + " to the original", Range: []float64{-1, 1}, Reference: &Reference{0, "unrelated"}}
		if s.name == "ssim" {
			v.Range, v.Reference = []float64{0, 1}, nil
		}
		mean := v
		mean.Title += ", mean over layers"
		out = append(out,
			Metric{Name: s.name, Better: Lower, Over: over, Value: v, Images: s.images,
				Doc: s.doc + " between each input's map on the randomised model and on the trained one, mean over inputs (1: unchanged)"},
			Metric{Name: "mean_" + s.name, Better: Lower, Headline: "mean_"+s.name == cmp.Or(m.as.headline, "mean_spearman"), Label: "mean", Of: s.name, Value: mean, Images: s.images,
				Doc: s.doc + " to the original map, mean over the randomised layers and inputs"})
	}
	if m.Mode == "cascading" {
		out = append(out, Metric{Name: "emprt", Better: Higher, Headline: m.as.headline == "emprt",
			Value: Axis{Title: "entropy of |map| on the random model / on the trained one, mean over inputs", Reference: &Reference{1, "as complex"}},
			Doc:   "Efficient MPRT (Hedström et al. 2024): per input, the entropy of the histogram (100 bins) of the map's absolute values on the fully randomised model over that on the trained one; mean over inputs"})
	}
	return out
}

// layerSeed is the seed layer k's parameters are drawn from.
func layerSeed(seed uint64, k int) uint64 { return seed*0x9e3779b97f4a7c15 + uint64(k) + 1 }

// Run implements Protocol.
func (m MPRT) Run(ctx context.Context, env *Env) (Result, error) {
	m = m.defaults()
	res := Result{Protocol: "MPRT", Method: env.Method, Config: config(m)}
	name := m.as.or("MPRT")
	res.Protocol = name
	if m.Mode != "cascading" && m.Mode != "independent" {
		return res, fmt.Errorf("%s: mode %q: want cascading or independent", name, m.Mode)
	}
	if env.Explain == nil {
		return res, fmt.Errorf("%s: needs the method itself to recompute maps, which this caller does not give", name)
	}
	x, n, shape, err := testImages(env, m.Samples)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	target, err := targets(ctx, env.Net, x, env.Test.Y[:n], n, m.Target)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	explainSmooth := func(net engine.Network) ([]float32, error) {
		return smoothed(ctx, env, net, x, n, target, shape, m.Draws, m.Noise)
	}
	orig, err := explainSmooth(env.Net)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	rnd, err := randomiser(env.Net)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	layers := slices.Clone(rnd.RandomLayers())
	if m.Order == "top-down" {
		slices.Reverse(layers)
	}
	if len(layers) == 0 {
		return res, fmt.Errorf("%s: the %s model has no layer its engine can re-initialise (a TorchScript module's initialisation is its own)", name, env.Net.Arch())
	}
	sims := similarities
	if shape[1] == 1 {
		sims = sims[:1] // tabular rows: no image to compare
	}
	// per[s][i][k]: similarity s of input i's map after layer k.
	per := make([][][]float64, len(sims))
	for s := range per {
		per[s] = make([][]float64, n)
	}
	hw := shape[1] * shape[2]
	// The first inputs' maps on each model, side by side: Adebayo et al.'s
	// picture of the cascade.
	res.Samples = inputs(env.Test, orig, n, shape)
	show := res.Samples[1].Shape[0]
	var net engine.Randomiser
	emprt := make([]float64, n)
	for k, layer := range layers {
		env.report(Progress{Stage: name + " " + layer, Done: k, Total: len(layers)})
		if m.Mode == "independent" || k == 0 {
			if net, err = randomiser(env.Net.Clone()); err != nil {
				return res, fmt.Errorf("%s: %w", name, err)
			}
		}
		if err := net.Randomise(layer, layerSeed(env.Seed, k)); err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		maps, err := explainSmooth(net)
		if err != nil {
			return res, fmt.Errorf("%s, %s randomised: %w", name, layer, err)
		}
		what := layer + " random" // which layers are random, for the row of the picture
		if m.Mode == "cascading" && k > 0 {
			what = layers[0] + "–" + what
		}
		res.Samples = append(res.Samples, Sample{Name: name + " " + what + " test", Kind: AttributionMap,
			Shape: []int{show, 1, shape[1], shape[2]}, Values: slices.Clone(maps[:show*hw])})
		if m.Mode == "cascading" && k == len(layers)-1 {
			for i := range n {
				emprt[i] = histEntropy(maps[i*hw:(i+1)*hw]) / histEntropy(orig[i*hw:(i+1)*hw])
			}
		}
		eachChunk(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				a, b := orig[i*hw:(i+1)*hw], maps[i*hw:(i+1)*hw]
				for s, sim := range sims {
					per[s][i] = append(per[s][i], sim.of(a, b, shape[1], shape[2]))
				}
			}
		})
	}
	env.report(Progress{Stage: name, Done: len(layers), Total: len(layers)})
	xs := make(Values, len(layers))
	for k := range xs {
		xs[k] = float64(k + 1)
	}
	for s, sim := range sims {
		y := make(Values, len(layers))
		for k := range y {
			col := make([]float64, n)
			for i := range col {
				col[i] = per[s][i][k]
			}
			y[k] = mean(col)
		}
		sd, nIn := spread(per[s])
		res.Curves = append(res.Curves, Curve{Name: sim.name, XLabel: "layers randomised, " + m.Order + " (" + layers[0] + " first)",
			YLabel: sim.title, X: xs, Y: y, SD: sd, N: nIn})
		byInput := make([]float64, n)
		for i := range byInput {
			byInput[i] = mean(per[s][i])
		}
		res.keep("mean_"+sim.name, byInput)
		res.Scalars = append(res.Scalars, Scalar{"mean_" + sim.name, mean(byInput), Lower})
	}
	if m.Mode == "cascading" {
		res.keep("emprt", emprt)
		res.Scalars = append(res.Scalars, Scalar{"emprt", mean(emprt), Higher})
	}
	return res, nil
}

// histEntropy is the entropy (nats) of the histogram of |m| in 100 equal
// bins over its range (Quantus's discrete entropy): 0 for a constant map,
// NaN for none.
func histEntropy(m []float32) float64 {
	a := absolute(m)
	lo, hi := slices.Min(a), slices.Max(a)
	if hi == lo {
		return 0
	}
	var count [100]float64
	for _, v := range a {
		count[min(int((v-lo)/(hi-lo)*100), 99)]++
	}
	var h float64
	for _, c := range count {
		if p := c / float64(len(a)); p > 0 {
			h -= p * math.Log(p)
		}
	}
	return h
}

// smoothed is the maps of n inputs on net, each averaged over draws noisy
// copies of its input (Gaussian noise of standard deviation noise times
// the input's range, drawn from the input's own stream, so every model
// sees the same copies); draws 1: the maps themselves. The copies are
// made and explained engine.Batch at a time, not all draws at once.
func smoothed(ctx context.Context, env *Env, net engine.Network, x []float32, n int, target, shape []int, draws int, noise float64) ([]float32, error) {
	if draws <= 1 {
		return explainOn(ctx, env, net, x, n, target, shape)
	}
	dim, hw := engine.Size(shape), shape[1]*shape[2]
	block := engine.Batch(shape, draws)
	out := make([]float32, n*hw)
	copies := make([]float32, block*dim)
	ts := make([]int, block)
	for i := range n {
		img := x[i*dim : (i+1)*dim]
		sigma := noise * float64(slices.Max(img)-slices.Min(img))
		rng := rand.New(rand.NewPCG(env.Seed, uint64(i)))
		for d0 := 0; d0 < draws; d0 += block {
			k := min(block, draws-d0)
			for d := range k {
				for j, v := range img {
					copies[d*dim+j] = v + float32(sigma*rng.NormFloat64())
				}
				ts[d] = target[i]
			}
			maps, err := explainOn(ctx, env, net, copies[:k*dim], k, ts[:k], shape)
			if err != nil {
				return nil, err
			}
			for d := range k {
				for q, v := range maps[d*hw : (d+1)*hw] {
					out[i*hw+q] += v / float32(draws)
				}
			}
		}
	}
	return out, nil
}

// Work implements Worker: the maps on the trained model and on each
// randomised one, of every noisy copy, counted as a forward pass a map (a
// method's maps take one to hundreds) for the six layers of goar-cnn
// (Work does not know the architecture).
func (m MPRT) Work(_, testN int, _ []int) Work {
	m = m.defaults()
	return Work{Forward: float64(7 * m.Draws * min(m.Samples, testN))}
}

// randomiser is net as an engine.Randomiser, or the reason it is not one.
func randomiser(net engine.Network) (engine.Randomiser, error) {
	r, ok := net.(engine.Randomiser)
	if !ok {
		return nil, fmt.Errorf("the %s model's engine cannot re-initialise its layers", net.Arch())
	}
	return r, nil
}

// explained returns env's first samples test inputs, their feature shape,
// the explained classes and the method's maps of them recomputed through
// Explain (not Maps: the maps on randomised models must be made as these).
func explained(ctx context.Context, env *Env, samples int, how string) (x []float32, n int, shape, target []int, maps []float32, err error) {
	if env.Explain == nil {
		return nil, 0, nil, nil, nil, fmt.Errorf("needs the method itself to recompute maps, which this caller does not give")
	}
	if x, n, shape, err = testImages(env, samples); err != nil {
		return
	}
	if target, err = targets(ctx, env.Net, x, env.Test.Y[:n], n, how); err != nil {
		return
	}
	maps, err = explainOn(ctx, env, env.Net, x, n, target, shape)
	return
}

// explainOn is env.Explain with its maps checked as mapsFor checks Maps'.
func explainOn(ctx context.Context, env *Env, net engine.Network, x []float32, n int, target, shape []int) ([]float32, error) {
	maps, err := env.Explain(ctx, net, x, n, target)
	if err != nil {
		return nil, err
	}
	hw := shape[1] * shape[2]
	if len(maps) != n*hw {
		return nil, fmt.Errorf("%d map values are not %d maps of %d×%d", len(maps), n, shape[1], shape[2])
	}
	for i, v := range maps {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("map %d: value %g at pixel %d", i/hw, v, i%hw)
		}
	}
	return maps, nil
}

// absolute is |v| widened.
func absolute(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Abs(float64(x))
	}
	return out
}

// scaled is |v| divided by its largest value: a map in [0, 1] (all zeros
// for a blank one).
func scaled(v []float32) []float32 {
	var top float32
	for _, x := range v {
		top = max(top, float32(math.Abs(float64(x))))
	}
	out := make([]float32, len(v))
	if top > 0 {
		for i, x := range v {
			out[i] = float32(math.Abs(float64(x))) / top
		}
	}
	return out
}

// RandomLogit is the random logit test (Sixt et al. 2020): each input's
// map of the explained class is compared with its map of a class drawn at
// random from the others, by SSIM of the absolute maps scaled to [0, 1]
// (the paper's and Quantus's similarity) and by Spearman's rank
// correlation of the absolute values. A method that explains the
// decision gives another class another map: lower is better.
type RandomLogit struct {
	Samples int    `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Target  string `json:"target" doc:"class explained first: predicted or label" choices:"predicted|label"`
}

func (r RandomLogit) defaults() RandomLogit {
	r.Samples = cmp.Or(r.Samples, 100)
	r.Target = cmp.Or(r.Target, "predicted")
	return r
}

// Info implements Protocol.
func (r RandomLogit) Info() Info {
	return Info{Name: "RandomLogit", Category: "model", Family: FamilyRandomisation, Data: []string{"image"},
		Doc:    "Random Logit (Sixt et al. 2020): how similar a method's map of the explained class is to its map of a random other class",
		Params: Params(r.defaults()),
		Metrics: []Metric{
			{Name: "ssim", Better: Lower, Headline: true, Value: unitAxis("SSIM of the maps of the explained and a random class, mean over inputs"),
				Doc: "SSIM of the absolute maps, scaled to [0, 1], of the explained class and a class drawn at random from the others; mean over inputs"},
			{Name: "spearman", Better: Lower, Value: signedAxis("Spearman correlation of |map|, explained vs random class, mean over inputs", "unrelated"),
				Doc: "Spearman's rank correlation of the absolute maps of the explained class and the random one; mean over inputs"},
		}}
}

// Run implements Protocol.
func (r RandomLogit) Run(ctx context.Context, env *Env) (Result, error) {
	r = r.defaults()
	res := Result{Protocol: "RandomLogit", Method: env.Method, Config: config(r)}
	x, n, shape, target, orig, err := explained(ctx, env, r.Samples, r.Target)
	if err != nil {
		return res, fmt.Errorf("random logit: %w", err)
	}
	k := env.Net.Classes()
	if k < 2 {
		return res, fmt.Errorf("random logit: a model of %d class has no other class to explain", k)
	}
	other := make([]int, n)
	for i := range other {
		c := rand.New(rand.NewPCG(env.Seed, uint64(i))).IntN(k - 1)
		if c >= target[i] {
			c++
		}
		other[i] = c
	}
	maps, err := explainOn(ctx, env, env.Net, x, n, other, shape)
	if err != nil {
		return res, fmt.Errorf("random logit: %w", err)
	}
	hw := shape[1] * shape[2]
	ss, sp := make([]float64, n), make([]float64, n)
	for i := range n {
		a, b := orig[i*hw:(i+1)*hw], maps[i*hw:(i+1)*hw]
		ss[i] = similarities[1].of(a, b, shape[1], shape[2])
		sp[i] = similarities[0].of(a, b, shape[1], shape[2])
	}
	res.keep("ssim", ss)
	res.keep("spearman", sp)
	res.Scalars = []Scalar{{"ssim", mean(ss), Lower}, {"spearman", mean(sp), Lower}}
	return res, nil
}

// Work implements Worker: two maps of each input.
func (r RandomLogit) Work(_, testN int, _ []int) Work {
	return Work{Forward: float64(2 * min(r.defaults().Samples, testN))}
}

// DataRandomisation is the data randomisation test (Adebayo et al. 2018):
// a model of the same architecture is trained with the same recipe on the
// training set with its labels permuted (once a campaign: the model
// depends on the seed, not on the method), and each input's map on it is
// compared with its map on the trained model, for the same class, by
// MPRT's three similarities. A model that has learnt nothing true of the
// data should be explained differently: lower is better. The permuted
// model's accuracy on its own permuted labels is reported beside them
// (Adebayo et al. train until it memorises them; a short recipe may not).
type DataRandomisation struct {
	Samples int    `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Target  string `json:"target" doc:"class explained on both models: predicted (by the trained model) or label" choices:"predicted|label"`
}

func (d DataRandomisation) defaults() DataRandomisation {
	d.Samples = cmp.Or(d.Samples, 100)
	d.Target = cmp.Or(d.Target, "predicted")
	return d
}

// Retrainings implements Retrainer: the model of permuted labels.
func (DataRandomisation) Retrainings() int { return 1 }

// Info implements Protocol.
func (d DataRandomisation) Info() Info {
	var m []Metric
	for _, s := range similarities {
		m = append(m, Metric{Name: s.name, Better: Lower, Headline: s.name == "spearman", Images: s.images,
			Value: Axis{Title: s.title + ", permuted-label model vs trained, mean over inputs", Range: []float64{-1, 1}, Reference: &Reference{0, "unrelated"}},
			Doc:   s.doc + " between each input's map on the model trained on permuted labels and on the trained model; mean over inputs"})
	}
	m = append(m, Metric{Name: "permuted_train_accuracy", Value: unitAxis("accuracy of the permuted-label model on its training labels"),
		Doc: "how well the model trained on permuted labels fits them (1: memorised, as in Adebayo et al.)"})
	return Info{Name: "DataRandomisation", Category: "retrain", Family: FamilyRandomisation, Data: []string{"image", "tabular"},
		Doc:    "Data Randomisation Test (Adebayo et al. 2018): how similar a method's maps are on a model trained on permuted labels",
		Params: Params(d.defaults()), Metrics: m}
}

// Run implements Protocol.
func (d DataRandomisation) Run(ctx context.Context, env *Env) (Result, error) {
	d = d.defaults()
	res := Result{Protocol: "DataRandomisation", Method: env.Method, Config: config(d)}
	if env.Train == nil || env.Train.Len() == 0 {
		return res, fmt.Errorf("data randomisation: no training set to permute")
	}
	x, n, shape, target, orig, err := explained(ctx, env, d.Samples, d.Target)
	if err != nil {
		return res, fmt.Errorf("data randomisation: %w", err)
	}
	permuted := *env.Train
	permuted.Y = slices.Clone(env.Train.Y)
	rand.New(rand.NewPCG(env.Seed, 0x5eed)).Shuffle(len(permuted.Y), func(i, j int) { permuted.Y[i], permuted.Y[j] = permuted.Y[j], permuted.Y[i] })
	key := fmt.Sprintf("data-randomisation/%d/%s", env.Seed, recipeKey(env.Recipe))
	net, err := trainModel(ctx, env, key, "train on permuted labels", env.Recipe, &permuted)
	if err != nil {
		return res, fmt.Errorf("data randomisation: %w", err)
	}
	fit, err := staged(ctx, stageEval, func(ctx context.Context) (train.Evaluation, error) { return train.Evaluate(ctx, net, &permuted, 1024) })
	if err != nil {
		return res, fmt.Errorf("data randomisation: %w", err)
	}
	maps, err := explainOn(ctx, env, net, x, n, target, shape)
	if err != nil {
		return res, fmt.Errorf("data randomisation: %w", err)
	}
	hw := shape[1] * shape[2]
	res.Samples = inputs(env.Test, orig, n, shape)
	show := res.Samples[1].Shape[0]
	res.Samples = append(res.Samples, Sample{Name: "DataRandomisation permuted labels test", Kind: AttributionMap,
		Shape: []int{show, 1, shape[1], shape[2]}, Values: slices.Clone(maps[:show*hw])})
	sims := similarities
	if shape[1] == 1 {
		sims = sims[:1]
	}
	for _, s := range sims {
		per := make([]float64, n)
		for i := range per {
			per[i] = s.of(orig[i*hw:(i+1)*hw], maps[i*hw:(i+1)*hw], shape[1], shape[2])
		}
		res.keep(s.name, per)
		res.Scalars = append(res.Scalars, Scalar{s.name, mean(per), Lower})
	}
	res.Scalars = append(res.Scalars, Scalar{Name: "permuted_train_accuracy", Value: fit.Accuracy})
	return res, nil
}

// Work implements Worker: the two models' maps (counted as a forward pass
// a map) and the permuted model's pass over its training set.
func (d DataRandomisation) Work(trainN, testN int, _ []int) Work {
	return Work{Forward: float64(2*min(d.defaults().Samples, testN) + trainN)}
}
