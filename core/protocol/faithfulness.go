package protocol

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"faithlab/core/engine"
	"faithlab/core/perturb"
)

// The faithfulness metrics of the literature that perturb features one at
// a time (Faithfulness Estimate, Monotonicity, Monotonicity Correlation)
// and Sufficiency, which perturbs nothing. Each scores every evaluated
// test input on its own (Units) and averages; the perturbed copies of as
// many inputs as fit in a chunk go through the network as one batch.

// probe is what the perturbing metrics share: the first n test inputs,
// their feature shape, maps and explained classes, the features the maps
// are summed over and the reference that fills what is removed.
type probe struct {
	x      []float32
	n      int
	shape  []int
	maps   []float32
	target []int
	feats  perturb.Features
	ref    perturb.Reference
	prob   bool
	base   []float64 // the explained class's score on each input untouched
	clean  untouched // the pass over the inputs untouched
}

// newProbe reads env's first samples test inputs and their maps; grid
// cuts images into grid×grid patches (finer than the image: single
// pixels; tabular rows: always single features).
func newProbe(ctx context.Context, env *Env, samples, grid int, reference, output, target string) (probe, error) {
	var p probe
	var err error
	if p.x, p.n, p.shape, err = testImages(env, samples); err != nil {
		return p, err
	}
	if p.maps, err = mapsFor(ctx, env, "test", p.n, p.shape); err != nil {
		return p, err
	}
	p.prob = output == "probability"
	if p.clean, err = passUntouched(ctx, env.Net, p.x, env.Test.Y[:p.n], p.n, target, p.prob); err != nil {
		return p, err
	}
	p.target, p.base = p.clean.target, p.clean.score
	if p.shape[1] == 1 || grid > p.shape[1] || grid > p.shape[2] {
		grid = 0
	}
	if p.feats, err = perturb.NewFeatures(p.shape[1], p.shape[2], grid); err != nil {
		return p, err
	}
	if p.ref, err = perturb.ParseReference(reference, env.datasetMean); err != nil {
		return p, err
	}
	return p, nil
}

// featureScores returns input i's feature scores: its map summed over each
// feature.
func (p probe) featureScores(i int) []float32 {
	hw := p.shape[1] * p.shape[2]
	s, _ := p.feats.Scores(p.maps[i*hw : (i+1)*hw]) // mapsFor checked the values
	return s
}

// perturbed returns, for each input i, the explained class's score on k
// perturbed copies of it: mask(i, j, keep) writes the H×W keep-mask of
// copy j (1 kept, 0 filled from the reference). Copy j of input i draws
// its randomness from the stream (seed, i·k + j) whatever the batching.
// A copy equal to the one before it gets that one's score, one that
// removes nothing the input's own (copies.scores).
func (p probe) perturbed(ctx context.Context, env *Env, stage string, k, chunk int, mask func(i, j int, keep []float32)) ([][]float64, error) {
	c := copies{net: env.Net, x: p.x, n: p.n, k: k, shape: p.shape, chunk: chunk, ref: p.ref, seed: env.Seed,
		target: p.target, prob: p.prob, mask: mask, clean: p.clean.logits,
		done: func(done int) { env.report(Progress{Stage: stage, Done: done, Total: p.n}) }}
	return c.scores(ctx)
}

// only writes the keep-mask that removes feature f alone.
func (p probe) only(f int, keep []float32) {
	for q := range keep {
		keep[q] = 1
		if p.feats.Of(q) == f {
			keep[q] = 0
		}
	}
}

// FaithfulnessEstimate (Alvarez-Melis & Jaakkola, "Towards robust
// interpretability with self-explaining neural networks", NeurIPS 2018):
// each feature is set to the baseline on its own; per input, the Pearson
// correlation between the features' attributions and the drops in the
// explained class's score they cause, averaged over inputs. As in the
// paper and Quantus the features are single pixels and the baseline zero;
// a map whose values are each feature's own effect scores 1.
type FaithfulnessEstimate struct {
	Samples   int    `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Grid      int    `json:"grid" doc:"patch grid side t: features are the t×t patches (the image side or more: single pixels; tabular data: always single features)" range:"[1,]"`
	Reference string `json:"reference" doc:"value a removed feature takes: zero, mean, dataset-mean, blur[:σ], road[:noise], uniform"`
	Output    string `json:"output" doc:"score: logit or probability of the target class" choices:"logit|probability"`
	Target    string `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`
	Chunk     int    `json:"chunk" doc:"inputs per forward pass, at most: fewer where they would take more than 2 MiB (ImageNet-sized images: 4)" range:"[1,]"`
}

// Check implements param.Checker.
func (f FaithfulnessEstimate) Check() error { return checkReference(f.Reference) }

func (f FaithfulnessEstimate) defaults() FaithfulnessEstimate {
	f.Samples = cmp.Or(f.Samples, 100)
	f.Grid = cmp.Or(f.Grid, pixelGrid)
	f.Reference = cmp.Or(f.Reference, "zero")
	f.Output = cmp.Or(f.Output, "probability")
	f.Target = cmp.Or(f.Target, "predicted")
	f.Chunk = cmp.Or(f.Chunk, 1024)
	return f
}

// Info implements Protocol.
func (f FaithfulnessEstimate) Info() Info {
	return Info{Name: "FaithfulnessEstimate", Category: "model", Family: FamilyFaithfulness, Data: []string{"image", "tabular"},
		Doc:    "Faithfulness Estimate (Alvarez-Melis & Jaakkola 2018): correlation of each feature's attribution with the drop its removal alone causes",
		Params: Params(f.defaults()),
		Metrics: []Metric{{Name: "faithfulness_estimate", Better: Higher, Headline: true,
			Value: signedAxis("Pearson correlation of attributions and drops, mean over inputs", "no correlation"),
			Doc:   "per input, the Pearson correlation between the features' attributions and the score drops of removing each alone; mean over inputs (undefined inputs, with a constant map, left out)"}}}
}

// Run implements Protocol.
func (f FaithfulnessEstimate) Run(ctx context.Context, env *Env) (Result, error) {
	f = f.defaults()
	res := Result{Protocol: "FaithfulnessEstimate", Method: env.Method, Config: config(f)}
	p, err := newProbe(ctx, env, f.Samples, f.Grid, f.Reference, f.Output, f.Target)
	if err != nil {
		return res, fmt.Errorf("faithfulness estimate: %w", err)
	}
	k := p.feats.N()
	if k < 2 {
		return res, fmt.Errorf("faithfulness estimate: %d feature: a correlation needs two", k)
	}
	out, err := p.perturbed(ctx, env, "faithfulness estimate", k, f.Chunk, func(_, j int, keep []float32) { p.only(j, keep) })
	if err != nil {
		return res, fmt.Errorf("faithfulness estimate: %w", err)
	}
	per := make([]float64, p.n)
	for i := range per {
		drop := make([]float64, k)
		for j, v := range out[i] {
			drop[j] = p.base[i] - v
		}
		per[i] = Pearson(float64s(p.featureScores(i)), drop)
	}
	res.keep("faithfulness_estimate", per)
	res.Scalars = []Scalar{{"faithfulness_estimate", mean(per), Higher}}
	return res, nil
}

// Work implements Worker: every feature of every input removed on its own.
func (f FaithfulnessEstimate) Work(_, testN int, shape []int) Work {
	f = f.defaults()
	n := min(f.Samples, testN) * features(f.Grid, shape)
	return Work{Forward: float64(min(f.Samples, testN) + n)}.Add(filling(f.Reference, n), 1)
}

// features is how many features a grid cuts inputs of shape into.
func features(grid int, shape []int) int {
	fs := FeatureShape(shape)
	if fs[1] == 1 || grid > fs[1] || grid > fs[2] {
		return fs[1] * fs[2]
	}
	return grid * grid
}

// Monotonicity (Arya et al., "One explanation does not fit all: a toolkit
// and taxonomy of AI explainability techniques", 2019, AIX360): from the
// baseline, the input's features are put back one at a time in ascending
// order of attribution; the explanation is monotonic when the explained
// class's probability never falls on the way. Per input 1 or 0, averaged
// over inputs: the share of monotonic explanations. As in AIX360 the
// order is by the signed attribution (rank signed, the default), the
// features single pixels, the baseline zero; the share of steps that do
// not fall is reported beside it. Quantus 0.6's Monotonicity differs: it
// takes the map's magnitude by default (abs=True) and so orders by
// |attribution| — rank magnitude gives its order.
type Monotonicity struct {
	Samples   int    `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Grid      int    `json:"grid" doc:"patch grid side t: features are the t×t patches (the image side or more: single pixels; tabular data: always single features)" range:"[1,]"`
	Reference string `json:"reference" doc:"the baseline features start from: zero, mean, dataset-mean, blur[:σ], road[:noise], uniform"`
	Output    string `json:"output" doc:"score: probability or logit of the target class" choices:"probability|logit"`
	Target    string `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`
	Rank      string `json:"rank" doc:"how maps order features: signed (Arya et al.: the most negative first) or magnitude" choices:"signed|magnitude"`
	Chunk     int    `json:"chunk" doc:"inputs per forward pass, at most: fewer where they would take more than 2 MiB (ImageNet-sized images: 4)" range:"[1,]"`
}

// Check implements param.Checker.
func (m Monotonicity) Check() error { return checkReference(m.Reference) }

func (m Monotonicity) defaults() Monotonicity {
	m.Samples = cmp.Or(m.Samples, 100)
	m.Grid = cmp.Or(m.Grid, pixelGrid)
	m.Reference = cmp.Or(m.Reference, "zero")
	m.Output = cmp.Or(m.Output, "probability")
	m.Target = cmp.Or(m.Target, "predicted")
	m.Rank = cmp.Or(m.Rank, Signed)
	m.Chunk = cmp.Or(m.Chunk, 1024)
	return m
}

// Info implements Protocol.
func (m Monotonicity) Info() Info {
	return Info{Name: "Monotonicity", Category: "model", Family: FamilyFaithfulness, Data: []string{"image", "tabular"},
		Doc:    "Monotonicity (Arya et al. 2019): adding features from the baseline in ascending order of attribution never lowers the explained class's score",
		Params: Params(m.defaults()),
		Curves: []Metric{{Name: "score", Label: "from the baseline", Over: &Axis{Title: "fraction of features added back, least relevant first", Range: []float64{0, 1}},
			Value: Axis{Title: "explained-class " + m.defaults().Output},
			Doc:   "the explained class's score as the input's features are put back on the baseline in ascending order of attribution, mean over inputs (a monotonic explanation's never falls)"}},
		Metrics: []Metric{
			{Name: "monotonicity", Better: Higher, Headline: true, Value: unitAxis("share of inputs whose score never falls"),
				Doc: "per input 1 if the explained class's score never falls as features are added back in ascending order of attribution, else 0; mean over inputs"},
			{Name: "rising_steps", Better: Higher, Value: unitAxis("share of steps that do not lower the score, mean over inputs"),
				Doc: "per input, the share of the additions that do not lower the explained class's score; mean over inputs"},
		}}
}

// Run implements Protocol.
func (m Monotonicity) Run(ctx context.Context, env *Env) (Result, error) {
	m = m.defaults()
	res := Result{Protocol: "Monotonicity", Method: env.Method, Config: config(m)}
	p, err := newProbe(ctx, env, m.Samples, m.Grid, m.Reference, m.Output, m.Target)
	if err != nil {
		return res, fmt.Errorf("monotonicity: %w", err)
	}
	k := p.feats.N()
	orders := make([][]int, p.n)
	for i := range orders {
		s := p.featureScores(i)
		if m.Rank == Magnitude {
			for j, v := range s {
				s[j] = float32(math.Abs(float64(v)))
			}
		}
		orders[i] = perturb.Order(s, false)
	}
	// Copy j holds the first j features of the ascending order, the rest
	// at the baseline: copy 0 is the baseline alone, copy k the input.
	out, err := p.perturbed(ctx, env, "monotonicity", k+1, m.Chunk, func(i, j int, keep []float32) {
		p.feats.Keep(keep, orders[i], j)
		for q := range keep {
			keep[q] = 1 - keep[q]
		}
	})
	if err != nil {
		return res, fmt.Errorf("monotonicity: %w", err)
	}
	frac, avg := make(Values, k+1), make(Values, k+1)
	for j := range frac {
		frac[j] = float64(j) / float64(k)
	}
	mono, rising := make([]float64, p.n), make([]float64, p.n)
	for i, v := range out {
		for j, s := range v {
			avg[j] += s / float64(p.n)
		}
		up := 0
		for j := 1; j < len(v); j++ {
			if v[j] >= v[j-1] {
				up++
			}
		}
		rising[i] = float64(up) / float64(k)
		if up == k {
			mono[i] = 1
		}
	}
	sd, nIn := spread(out)
	res.Curves = []Curve{{Name: "score", XLabel: "fraction of features added back, least relevant first", YLabel: m.Output, X: frac, Y: avg, SD: sd, N: nIn}}
	res.keep("monotonicity", mono)
	res.keepGrid("rising_steps", rising, k)
	res.Scalars = []Scalar{{"monotonicity", mean(mono), Higher}, {"rising_steps", mean(rising), Higher}}
	return res, nil
}

// Work implements Worker: every step of every input's path from the
// baseline.
func (m Monotonicity) Work(_, testN int, shape []int) Work {
	m = m.defaults()
	n := min(m.Samples, testN) * (features(m.Grid, shape) + 1)
	return Work{Forward: float64(min(m.Samples, testN) + n)}.Add(filling(m.Reference, n), 1)
}

// MonotonicityCorrelation (Nguyen & Martínez, "On quantitative aspects of
// model interpretability", 2020): each feature is replaced by random
// values several times; per input, Spearman's rank correlation between
// the features' attribution magnitudes and the mean squared change of the
// explained class's score their replacement causes, averaged over inputs.
// As in Quantus the replacement is uniform noise (over the input's range);
// the default features are the patches of a 7×7 grid and ten draws each
// (Quantus draws 100 per pixel, 78 400 passes an image at 28×28).
type MonotonicityCorrelation struct {
	Samples   int    `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Grid      int    `json:"grid" doc:"patch grid side t: features are the t×t patches (the image side or more: single pixels; tabular data: always single features)" range:"[1,]"`
	Draws     int    `json:"draws" doc:"replacements of each feature" range:"[1,]"`
	Reference string `json:"reference" doc:"what replaces a feature: uniform (noise over the input's range), zero, mean, dataset-mean, blur[:σ], road[:noise]"`
	Output    string `json:"output" doc:"score: probability or logit of the target class" choices:"probability|logit"`
	Target    string `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`
	Chunk     int    `json:"chunk" doc:"inputs per forward pass, at most: fewer where they would take more than 2 MiB (ImageNet-sized images: 4)" range:"[1,]"`
}

// Check implements param.Checker.
func (m MonotonicityCorrelation) Check() error { return checkReference(m.Reference) }

func (m MonotonicityCorrelation) defaults() MonotonicityCorrelation {
	m.Samples = cmp.Or(m.Samples, 100)
	m.Grid = cmp.Or(m.Grid, 7)
	m.Draws = cmp.Or(m.Draws, 10)
	m.Reference = cmp.Or(m.Reference, "uniform")
	m.Output = cmp.Or(m.Output, "probability")
	m.Target = cmp.Or(m.Target, "predicted")
	m.Chunk = cmp.Or(m.Chunk, 1024)
	return m
}

// Info implements Protocol.
func (m MonotonicityCorrelation) Info() Info {
	return Info{Name: "MonotonicityCorrelation", Category: "model", Family: FamilyFaithfulness, Data: []string{"image", "tabular"},
		Doc:    "Monotonicity Correlation (Nguyen & Martínez 2020): rank correlation of attribution magnitudes with the squared score changes of replacing each feature",
		Params: Params(m.defaults()),
		Metrics: []Metric{{Name: "monotonicity_correlation", Better: Higher, Headline: true,
			Value: signedAxis("Spearman correlation of |attribution| and E[Δf²], mean over inputs", "no correlation"),
			Doc:   "per input, Spearman's ρ between the features' attribution magnitudes and the mean squared change of the explained class's score when each is replaced; mean over inputs"}}}
}

// Run implements Protocol.
func (m MonotonicityCorrelation) Run(ctx context.Context, env *Env) (Result, error) {
	m = m.defaults()
	res := Result{Protocol: "MonotonicityCorrelation", Method: env.Method, Config: config(m)}
	p, err := newProbe(ctx, env, m.Samples, m.Grid, m.Reference, m.Output, m.Target)
	if err != nil {
		return res, fmt.Errorf("monotonicity correlation: %w", err)
	}
	k := p.feats.N()
	if k < 2 {
		return res, fmt.Errorf("monotonicity correlation: %d feature: a correlation needs two", k)
	}
	out, err := p.perturbed(ctx, env, "monotonicity correlation", k*m.Draws, m.Chunk, func(_, j int, keep []float32) { p.only(j/m.Draws, keep) })
	if err != nil {
		return res, fmt.Errorf("monotonicity correlation: %w", err)
	}
	per := make([]float64, p.n)
	for i := range per {
		att, change := make([]float64, k), make([]float64, k)
		for j, v := range p.featureScores(i) {
			att[j] = math.Abs(float64(v))
		}
		for j, v := range out[i] {
			d := p.base[i] - v
			change[j/m.Draws] += d * d / float64(m.Draws)
		}
		per[i] = Spearman(att, change)
	}
	res.keep("monotonicity_correlation", per)
	res.Scalars = []Scalar{{"monotonicity_correlation", mean(per), Higher}}
	return res, nil
}

// Work implements Worker: every draw for every feature of every input.
func (m MonotonicityCorrelation) Work(_, testN int, shape []int) Work {
	m = m.defaults()
	n := min(m.Samples, testN) * features(m.Grid, shape) * m.Draws
	return Work{Forward: float64(min(m.Samples, testN) + n)}.Add(filling(m.Reference, n), 1)
}

// Sufficiency (Dasgupta, Frost & Moshkovitz, "Framework for evaluating
// faithfulness of local explanations", ICML 2022): an explanation is
// sufficient when the inputs explained alike are predicted alike — the
// probability that f(x′) = f(x) given that x′ is explained as x is. The
// paper's explanations are discrete, and leaves "alike" to a distance for
// continuous maps. Quantus 0.6 divides the matrix of the batch's map
// distances by its largest entry and counts the maps within 0.6 of that
// maximum: "alike" then depends on the batch (its one most distant pair
// sets the scale), so a score moves with the batch it was computed in —
// on Fashion-MNIST Gradient maps it gives about 0.27 — and no distance,
// fixed or relative, suits every method's maps.
// Here the maps alike are each map's Neighbours nearest among the
// evaluated inputs' (Euclidean distance of the maps scaled to unit L2
// norm, so that methods of different scales compare; ties to the earlier
// input): per input, the share of them the model predicts its class for,
// averaged over inputs. Random maps score about the chance that two
// inputs share a class.
type Sufficiency struct {
	Samples    int `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[2,]"`
	Neighbours int `json:"neighbours" doc:"the maps nearest to an input's own that count as explaining it alike" range:"[1,]"`
}

func (s Sufficiency) defaults() Sufficiency {
	s.Samples = cmp.Or(s.Samples, 500)
	s.Neighbours = cmp.Or(s.Neighbours, 10)
	return s
}

// Info implements Protocol.
func (s Sufficiency) Info() Info {
	return Info{Name: "Sufficiency", Category: "model", Family: FamilyFaithfulness, Data: []string{"image", "tabular"},
		Doc:    "Sufficiency (Dasgupta et al. 2022): the share of the inputs explained alike that the model predicts alike",
		Params: Params(s.defaults()),
		Metrics: []Metric{{Name: "sufficiency", Better: Higher, Headline: true, Value: unitAxis("share of the nearest maps' inputs predicted alike"),
			Doc: "per input, the share of the inputs with the maps nearest its own (unit-norm, Euclidean) that the model predicts its class for; mean over inputs"}}}
}

// Run implements Protocol.
func (s Sufficiency) Run(ctx context.Context, env *Env) (Result, error) {
	s = s.defaults()
	res := Result{Protocol: "Sufficiency", Method: env.Method, Config: config(s)}
	x, n, shape, err := testImages(env, s.Samples)
	if err != nil {
		return res, fmt.Errorf("sufficiency: %w", err)
	}
	if n <= s.Neighbours {
		return res, fmt.Errorf("sufficiency: %d inputs hold no %d neighbours of each", n, s.Neighbours)
	}
	maps, err := mapsFor(ctx, env, "test", n, shape)
	if err != nil {
		return res, fmt.Errorf("sufficiency: %w", err)
	}
	pred, err := engine.Predicted(ctx, env.Net, x, n, 1024)
	if err != nil {
		return res, fmt.Errorf("sufficiency: %w", err)
	}
	hw := shape[1] * shape[2]
	unit := make([]float64, n*hw)
	for i := range n {
		m, u := maps[i*hw:(i+1)*hw], unit[i*hw:(i+1)*hw]
		var ss float64
		for _, v := range m {
			ss += float64(v) * float64(v)
		}
		if ss > 0 {
			for q, v := range m {
				u[q] = float64(v) / math.Sqrt(ss)
			}
		}
	}
	per := make([]float64, n)
	eachChunk(n, func(lo, hi int) {
		d, idx := make([]float64, n), make([]int, 0, n)
		for i := lo; i < hi; i++ {
			a := unit[i*hw : (i+1)*hw]
			idx = idx[:0]
			for j := range n {
				b := unit[j*hw : (j+1)*hw]
				var e float64
				for q := range a {
					e += (a[q] - b[q]) * (a[q] - b[q])
				}
				d[j] = e
				if j != i {
					idx = append(idx, j)
				}
			}
			slices.SortStableFunc(idx, func(p, q int) int { return cmp.Compare(d[p], d[q]) })
			same := 0
			for _, j := range idx[:s.Neighbours] {
				if pred[j] == pred[i] {
					same++
				}
			}
			per[i] = float64(same) / float64(s.Neighbours)
		}
	})
	if err := ctx.Err(); err != nil {
		return res, err
	}
	res.keep("sufficiency", per)
	res.Scalars = []Scalar{{"sufficiency", mean(per), Higher}}
	return res, nil
}

// Work implements Worker: the predictions only (the distances are cheap).
func (s Sufficiency) Work(_, testN int, _ []int) Work {
	return Work{Forward: float64(min(s.defaults().Samples, testN))}
}

// float64s widens v.
func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
