package protocol

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"faithlab/core/engine"
	"faithlab/core/perturb"
)

// Deletion is the insertion/deletion protocol on a fixed model (Petsiuk et
// al. 2018; TRACE §3): features are removed in the order of the map, most
// relevant first (MoRF) or least relevant first (LeRF), and the target's
// score is recorded after each step. Insertion curves need no separate run:
// inserting the k most relevant features into the reference leaves the same
// image as deleting the t−k least relevant ones, so the insertion curve is
// the LeRF deletion curve read backwards (TRACE, Theorem 3.1), and
// LeRF − MoRF is both insertion − deletion and the TRACE objective.
//
// Three metrics of the literature are settings of it, listed under their
// own names (PixelFlipping, RegionPerturbation, Selectivity): each runs
// as Deletion does and leads with its paper's score.
type Deletion struct {
	Samples   int    `json:"samples" doc:"test images evaluated: the first n of the test set" range:"[1,]"`
	Grid      int    `json:"grid" doc:"patch grid side t: features are the t×t patches (the image side or more: single pixels; tabular data: always single features)" range:"[1,]"`
	Steps     int    `json:"steps" doc:"removal steps per curve, evenly spaced in features; 0: one per feature" range:"[0,]"`
	Reference string `json:"reference" doc:"value of removed pixels: zero, mean, dataset-mean, blur[:σ], road[:noise]"`
	Output    string `json:"output" doc:"score: probability or logit of the target class" choices:"probability|logit"`
	Target    string `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`
	Chunk     int    `json:"chunk" doc:"inputs per forward pass, at most: fewer where they would take more than 2 MiB (ImageNet-sized images: 4)" range:"[1,]"`
	Rank      string `json:"rank" doc:"how maps rank features: magnitude (|value|: what the removal literature does with signed maps) or signed (largest value first)" choices:"magnitude|signed"`

	as named // the name the setting goes by, if the literature has one
}

// named is a setting of a protocol that the literature knows under its
// own name: the protocol runs as itself, its results carry the name, and
// its headline is the score that paper reports.
type named struct{ name, doc, headline string }

// or is the setting's name, or the protocol's own.
func (n named) or(name string) string {
	if n.name == "" {
		return name
	}
	return n.name
}

// PixelFlipping (Bach et al., "On pixel-wise explanations for non-linear
// classifier decisions by layer-wise relevance propagation", PLoS ONE
// 2015): single pixels flipped to the reference in the order of the map,
// most relevant first; the faster the explained class's score falls, the
// better (the area under the MoRF curve, lower is better). Bach et al.
// flip one pixel at a time; the default takes 100 evenly spaced steps.
func PixelFlipping() Deletion {
	return Deletion{Grid: pixelGrid, Steps: 100, as: named{"PixelFlipping",
		"Pixel-Flipping (Bach et al. 2015): the explained class's score as single pixels are removed, most relevant first; Deletion pixel by pixel", "auc_morf"}}.defaults()
}

// RegionPerturbation (Samek et al., "Evaluating the visualization of what
// a deep neural network has learned", IEEE TNNLS 2017): square regions
// replaced by uniform random values, most relevant first, scored by the
// area over the perturbation curve, AOPC = ⟨1/(L+1) Σₖ f(x⁰) − f(xᵏ)⟩
// (higher is better). Samek et al. use 9×9 regions of 224×224 images; the
// default cuts an image into a 7×7 grid of regions (4×4 pixels at 28×28).
func RegionPerturbation() Deletion {
	return Deletion{Grid: 7, Reference: "uniform", as: named{"RegionPerturbation",
		"Region Perturbation with AOPC (Samek et al. 2017): regions replaced by uniform noise, most relevant first; Deletion by regions, scored by the area over the curve", "aopc_morf"}}.defaults()
}

// Selectivity (Montavon et al., "Methods for interpreting and
// understanding deep neural networks", Digital Signal Processing 2018):
// patches removed, most relevant first, the explained class's score
// falling as fast as possible: the area under the MoRF curve, lower is
// better (patches of 4×4 pixels at 28×28).
func Selectivity() Deletion {
	return Deletion{Grid: 7, as: named{"Selectivity",
		"Selectivity (Montavon et al. 2018): the explained class's score as patches are removed, most relevant first; Deletion by patches, scored by the area under the curve", "auc_morf"}}.defaults()
}

// pixelGrid is a patch grid finer than any image: single pixels.
const pixelGrid = 4096

// Check implements param.Checker.
func (d Deletion) Check() error { return checkReference(d.Reference) }

func (d Deletion) defaults() Deletion {
	if d.Samples == 0 {
		d.Samples = 500
	}
	if d.Grid == 0 {
		d.Grid = 7
	}
	if d.Reference == "" {
		d.Reference = "zero"
	}
	if d.Output == "" {
		d.Output = "probability"
	}
	if d.Target == "" {
		d.Target = "predicted"
	}
	if d.Chunk == 0 {
		d.Chunk = 1024
	}
	if d.Rank == "" {
		d.Rank = Magnitude
	}
	return d
}

// Info implements Protocol.
func (d Deletion) Info() Info {
	doc := "MoRF and LeRF deletion curves on the trained model; insertion is the LeRF curve reversed"
	if d.as.doc != "" {
		doc = d.as.doc
	}
	return Info{Name: d.as.or("Deletion"), Category: "model", Family: FamilyFaithfulness, Data: []string{"image", "tabular"},
		Doc: doc, Params: Params(d.defaults())}.with(d.defaults().metrics())
}

// Run implements Protocol.
func (d Deletion) Run(ctx context.Context, env *Env) (Result, error) {
	d = d.defaults()
	res := Result{Protocol: d.as.or("Deletion"), Method: env.Method, Config: config(d)}
	if d.Output != "probability" && d.Output != "logit" {
		return res, fmt.Errorf("deletion: output %q: want probability or logit", d.Output)
	}
	x, n, shape, err := testImages(env, d.Samples)
	if err != nil {
		return res, fmt.Errorf("deletion: %w", err)
	}
	maps, err := mapsFor(ctx, env, "test", n, shape)
	if err != nil {
		return res, fmt.Errorf("deletion: %w", err)
	}
	u, err := passUntouched(ctx, env.Net, x, env.Test.Y[:n], n, d.Target, d.Output == "probability")
	if err != nil {
		return res, fmt.Errorf("deletion: %w", err)
	}
	grid := d.Grid
	if shape[1] == 1 || grid > shape[1] || grid > shape[2] {
		grid = 0 // tabular, or a grid finer than the image: every feature on its own
	}
	feats, err := perturb.NewFeatures(shape[1], shape[2], grid)
	if err != nil {
		return res, fmt.Errorf("deletion: %w", err)
	}
	ref, err := perturb.ParseReference(d.Reference, env.datasetMean)
	if err != nil {
		return res, fmt.Errorf("deletion: %w", err)
	}
	counts := stepCounts(feats.N(), d.Steps)
	frac := make([]float64, len(counts))
	for j, k := range counts {
		frac[j] = float64(k) / float64(feats.N())
	}
	c := Curves{Net: env.Net, Shape: shape, Features: feats, Reference: ref, Counts: counts,
		Prob: d.Output == "probability", Seed: env.Seed, Chunk: d.Chunk, Clean: u.logits}
	names := []string{"morf", "lerf"}
	var auc, tau, aopc [2]float64
	var perAUC [2][]float64
	// What the model saw on the way, at the steps nearest a quarter, half
	// and three quarters of the features removed: how far from the data
	// (Shift) and the first few images, measured on the curves' own
	// copies as they pass, with the energies of the curves' own passes.
	at := make([]int, len(shiftFractions))
	for s, f := range shiftFractions {
		k := math.Round(f * float64(feats.N()))
		for j, cj := range counts {
			if math.Abs(float64(cj)-k) < math.Abs(float64(counts[at[s]])-k) {
				at[s] = j
			}
		}
	}
	var shifts []Scalar
	res.Samples = inputs(env.Test, maps, n, shape)
	for o, morf := range []bool{true, false} {
		orders, err := Orders(ranked(maps, d.Rank), n, feats, morf)
		if err != nil {
			return res, fmt.Errorf("deletion: %w", err)
		}
		env.report(Progress{Stage: "deletion " + names[o], Done: o, Total: 2})
		streams, seen := make([]*shiftStream, len(at)), make([][]float32, len(at))
		for s := range streams {
			streams[s] = newShiftStream(env.Net, u.energy, x, n, env.Test.Shape)
		}
		cp := c.copies(x, u.target, orders)
		cp.seen = func(i, j int, img, logits []float32) error {
			for s, js := range at {
				if j != js {
					continue
				}
				if i < PreviewCount {
					seen[s] = append(seen[s], img...)
				}
				if err := streams[s].addWith(ctx, img, energy(logits)); err != nil {
					return err
				}
			}
			return nil
		}
		curves, err := cp.scores(ctx)
		if err != nil {
			return res, fmt.Errorf("deletion %s: %w", names[o], err)
		}
		avg := make([]float64, len(counts))
		aucs, taus, aopcs := make([]float64, n), make([]float64, n), make([]float64, n)
		neg := make([]float64, len(counts))
		for i, cv := range curves {
			for j, v := range cv {
				avg[j] += v / float64(n)
				neg[j] = -v
			}
			aucs[i] = AUC(frac, cv)
			taus[i] = KendallTau(frac, neg)
			aopcs[i] = cv[0] - mean(cv)
		}
		auc[o], tau[o], aopc[o] = mean(aucs), mean(taus), mean(aopcs)
		perAUC[o] = aucs
		res.keep("auc_"+names[o], aucs)
		res.keep("tau_"+names[o], taus)
		res.keep("aopc_"+names[o], aopcs)
		sd, nIn := spread(curves)
		res.Curves = append(res.Curves, Curve{Name: names[o], XLabel: "fraction of features removed", YLabel: d.Output, X: frac, Y: avg, SD: sd, N: nIn})
		var rm removal
		for s, f := range shiftFractions {
			sh, err := streams[s].shift(ctx)
			if err != nil {
				return res, fmt.Errorf("deletion %s: %w", names[o], err)
			}
			rm.shift = append(rm.shift, sh)
			res.Samples = append(res.Samples, Sample{Name: fmt.Sprintf("Deletion %s %.0f%% test", names[o], 100*f),
				Shape: append([]int{len(seen[s]) / env.Test.Dim()}, env.Test.Shape...), Values: seen[s]})
		}
		cs, ss := rm.shiftCurves(shiftFractions, "_"+names[o])
		res.Curves, shifts = append(res.Curves, cs...), append(shifts, ss...)
	}
	diff := make([]float64, n)
	for i := range diff {
		diff[i] = perAUC[1][i] - perAUC[0][i]
	}
	res.keep("lerf_minus_morf", diff)
	res.Scalars = []Scalar{
		{"auc_morf", auc[0], Lower}, {"auc_lerf", auc[1], Higher}, {"lerf_minus_morf", auc[1] - auc[0], Higher},
		{"tau_morf", tau[0], Higher}, {"tau_lerf", tau[1], Lower},
		{"aopc_morf", aopc[0], Higher}, {"aopc_lerf", aopc[1], Lower},
	}
	res.Scalars = append(res.Scalars, shifts...)
	env.report(Progress{Stage: "deletion", Done: 2, Total: 2})
	return res, nil
}

// shiftFractions are the fractions removed at which Deletion measures
// its perturbed images' Shift and keeps samples.
var shiftFractions = []float64{0.25, 0.5, 0.75}

// stepCounts is 0, then steps evenly spaced feature counts up to all n
// (every count when steps is 0 or at least n).
func stepCounts(n, steps int) []int {
	if steps <= 0 || steps >= n {
		steps = n
	}
	c := make([]int, 0, steps+1)
	for j := 0; j <= steps; j++ {
		k := int(math.Round(float64(j) * float64(n) / float64(steps)))
		if len(c) == 0 || k != c[len(c)-1] {
			c = append(c, k)
		}
	}
	return c
}

// rankAll is Orders of the maps as the rank choice reads them (ranked),
// kept as ranks (perturb.Ranks), the images sorted on every core and the
// magnitudes taken an image at a time (a training set's copy of them is
// hundreds of MB).
func rankAll(maps []float32, n int, feats perturb.Features, morf bool, rank string) (perturb.Ranks, error) {
	hw := feats.H * feats.W
	r := perturb.NewRanks(n, feats.N())
	errs := make([]error, n)
	eachChunk(n, func(lo, hi int) {
		mag, scores, order := make([]float32, hw), make([]float32, feats.N()), make([]int, feats.N())
		for i := lo; i < hi; i++ {
			m := maps[i*hw : (i+1)*hw]
			if rank == Magnitude {
				for j, v := range m {
					mag[j] = float32(math.Abs(float64(v)))
				}
				m = mag
			}
			s, err := feats.ScoresInto(scores, m)
			if err != nil {
				errs[i] = fmt.Errorf("map %d: %w", i, err)
				return
			}
			r.Set(i, perturb.OrderInto(order, s, morf))
		}
	})
	return r, errors.Join(errs...)
}

// Orders ranks each of n H×W maps' features (MoRF or LeRF).
func Orders(maps []float32, n int, feats perturb.Features, morf bool) ([][]int, error) {
	hw := feats.H * feats.W
	orders := make([][]int, n)
	for i := range orders {
		s, err := feats.Scores(maps[i*hw : (i+1)*hw])
		if err != nil {
			return nil, fmt.Errorf("map %d: %w", i, err)
		}
		orders[i] = perturb.Order(s, morf)
	}
	return orders, nil
}

// Curves scores images with growing sets of features removed: the
// engine of the deletion protocol and of the cnn_deletion49 benchmark.
type Curves struct {
	Net       engine.Network
	Shape     []int // C, H, W
	Features  perturb.Features
	Reference perturb.Reference
	Counts    []int // features removed at each step
	Prob      bool  // score the softmax probability, not the logit
	Seed      uint64
	Chunk     int // inputs per forward pass, at most (engine.Batch bounds it by their bytes)
	// Clean, if set, holds the images' logits untouched (n × classes):
	// the step that removes nothing takes them without a pass.
	Clean []float32
}

// Run returns, per image, the target's score after removing the first
// Counts[j] features of the image's order (copies.scores: all steps of
// as many images as a batch holds go through the network at once).
func (c Curves) Run(ctx context.Context, x []float32, target []int, orders [][]int) ([][]float64, error) {
	return c.copies(x, target, orders).scores(ctx)
}

// copies are the curves' perturbed copies of x.
func (c Curves) copies(x []float32, target []int, orders [][]int) copies {
	return copies{net: c.Net, x: x, n: len(orders), k: len(c.Counts), shape: c.Shape, chunk: c.Chunk, ref: c.Reference,
		seed: c.Seed, target: target, prob: c.Prob, clean: c.Clean,
		mask: func(i, j int, keep []float32) { c.Features.Keep(keep, orders[i], c.Counts[j]) }}
}

// copies are k perturbed copies of each of n inputs in x, scored by the
// target's score (copies.scores): copy j of input i (row i·k + j) is the
// input with the pixels mask(i, j, keep) marks 0 filled from ref, drawing
// its randomness from the stream (seed, i·k + j) whatever the batching.
type copies struct {
	net    engine.Network
	x      []float32
	n, k   int
	shape  []int
	chunk  int // rows a pass, at most (engine.Batch bounds it by their bytes)
	ref    perturb.Reference
	seed   uint64
	target []int
	prob   bool // score the softmax probability, not the logit
	mask   func(i, j int, keep []float32)
	// clean, if set, holds the untouched inputs' logits (n × classes): a
	// copy whose mask keeps every pixel is its input, and takes them
	// without a pass.
	clean []float32
	// done, if set, hears how many inputs are finished before each batch.
	done func(int)
	// seen, if set, is handed every copy, in order, with its logits; both
	// are valid only during the call.
	seen func(i, j int, copy, logits []float32) error
}

// scores returns each input's k scores. Rows go through the network in
// batches of at most engine.Batch(shape, chunk) inputs: the copies of as
// many whole inputs as fit, or, where one input's copies alone are more (a
// hundred steps of an ImageNet-sized image), an input's copies over several
// batches. A copy equal to the one before it, value for value, gets that
// one's logits: the same input scored at another row of a batch can differ
// in its last bits (the kernels' summation order), which would make a step
// that changes nothing — restoring a pixel whose value is the baseline's —
// count as a fall (Monotonicity) or a drop (IROF).
func (c copies) scores(ctx context.Context) ([][]float64, error) {
	dim, hw, classes := engine.Size(c.shape), c.shape[1]*c.shape[2], c.net.Classes()
	per := engine.Batch(c.shape, c.chunk)
	if per >= c.k {
		per -= per % c.k // whole inputs
	}
	per = min(per, c.n*c.k)
	batch := make([]float32, per*dim)
	keeps := make([]float32, per*hw)
	ts := make([]int, per)
	out := make([][]float64, c.n)
	for i := range out {
		out[i] = make([]float64, c.k)
	}
	prev := make([]float32, 0, dim) // the copy before, perturbed
	passed := make([]int, per)      // each row's place among those passed; -1: untouched
	prevLogits := make([]float32, classes)
	soft := make([]float32, classes)
	for lo := 0; lo < c.n*c.k; lo += per {
		if c.done != nil {
			c.done(lo / c.k)
		}
		hi := min(lo+per, c.n*c.k)
		m := hi - lo
		for r := lo; r < hi; r++ {
			i, j := r/c.k, r%c.k
			copy(batch[(r-lo)*dim:(r-lo+1)*dim], c.x[i*dim:(i+1)*dim])
			c.mask(i, j, keeps[(r-lo)*hw:(r-lo+1)*hw])
			ts[r-lo] = c.target[i]
		}
		err := Stage(ctx, stageMasks, func(ctx context.Context) error {
			return perturb.FillAll(ctx, c.ref, batch[:m*dim], c.shape, keeps[:m*hw], c.seed, uint64(lo))
		})
		if err != nil {
			return nil, err
		}
		// The untouched copies take their input's logits; the others
		// go through the network together, at the batch's front.
		np := 0
		for q := range m {
			passed[q] = -1
			if c.clean == nil || slices.ContainsFunc(keeps[q*hw:(q+1)*hw], func(v float32) bool { return v != 1 }) {
				passed[q] = np
				if np != q {
					copy(batch[np*dim:(np+1)*dim], batch[q*dim:(q+1)*dim])
				}
				np++
			}
		}
		var logits []float32
		if np > 0 {
			logits, err = staged(ctx, stageEval, func(ctx context.Context) ([]float32, error) {
				return engine.Logits(ctx, c.net, batch[:np*dim], np)
			})
			if err != nil {
				return nil, err
			}
			logits = slices.Clone(logits) // the engine's buffer: the next pass reuses it
		}
		for r := lo; r < hi; r++ {
			i, j, q := r/c.k, r%c.k, passed[r-lo]
			var row, lg []float32
			if q < 0 {
				row, lg = c.x[i*dim:(i+1)*dim], c.clean[i*classes:(i+1)*classes]
			} else {
				row, lg = batch[q*dim:(q+1)*dim], logits[q*classes:(q+1)*classes]
			}
			if j != 0 && slices.Equal(row, prev) {
				lg = prevLogits
			}
			out[i][j] = targetScore(soft, lg, ts[r-lo], c.prob)
			if c.seen != nil {
				if err := c.seen(i, j, row, lg); err != nil {
					return nil, err
				}
			}
			prev = append(prev[:0], row...)
			copy(prevLogits, lg)
		}
	}
	if c.done != nil {
		c.done(c.n)
	}
	return out, nil
}

// untouched is what one pass of the network over the inputs untouched
// tells the protocols that perturb them.
type untouched struct {
	logits []float32 // n × classes
	target []int     // the class explained
	score  []float64 // the target's probability or logit
	energy []float64 // the energy score (Shift)
}

// passUntouched runs the n inputs of x forward once: how says which
// class each one explains (predicted: its largest logit; label: labels),
// prob whether its score is the probability or the logit.
func passUntouched(ctx context.Context, net engine.Network, x []float32, labels []int, n int, how string, prob bool) (untouched, error) {
	if how != "predicted" && how != "label" {
		return untouched{}, fmt.Errorf("target %q: want predicted or label", how)
	}
	k := net.Classes()
	u := untouched{logits: make([]float32, n*k), target: make([]int, n), score: make([]float64, n), energy: make([]float64, n)}
	soft := make([]float32, k)
	err := Stage(ctx, stageEval, func(ctx context.Context) error {
		return engine.EachLogits(ctx, net, x, n, 0, func(i int, row []float32) {
			copy(u.logits[i*k:], row)
			u.target[i] = labels[i]
			if how == "predicted" {
				u.target[i] = engine.Argmax(row)
			}
			u.score[i], u.energy[i] = targetScore(soft, row, u.target[i], prob), energy(row)
		})
	})
	if err != nil {
		return untouched{}, fmt.Errorf("the inputs untouched: %w", err)
	}
	return u, nil
}

// testImages returns the first n images of the test set (all when n ≤ 0).
func testImages(env *Env, n int) ([]float32, int, []int, error) {
	if env.Test == nil || env.Test.Len() == 0 {
		return nil, 0, nil, fmt.Errorf("no test images")
	}
	if n <= 0 || n > env.Test.Len() {
		n = env.Test.Len()
	}
	return env.Test.X[:n*env.Test.Dim()], n, FeatureShape(env.Test.Shape), nil
}

// FeatureShape is the layout (C, H, W) in which maps and removal masks see
// a sample of the given shape: an image as it is, one map value per pixel
// shared by its channels, and a tabular sample (D×1×1) as one channel of D
// features, so that every feature has its own attribution and is removed
// on its own. Both layouts hold the values in the same order.
func FeatureShape(shape []int) []int {
	if tabular(shape) {
		return []int{1, 1, shape[0]}
	}
	return shape
}

// mapsFor fetches the split's maps and checks there is one H×W map for
// each of the first n samples, with finite values; shape is the samples'
// FeatureShape.
func mapsFor(ctx context.Context, env *Env, split string, n int, shape []int) ([]float32, error) {
	if env.Maps == nil {
		return nil, fmt.Errorf("no attribution maps to evaluate")
	}
	m, err := env.Maps(ctx, split)
	if err != nil {
		return nil, fmt.Errorf("%s maps: %w", split, err)
	}
	hw := shape[1] * shape[2]
	if len(m) < n*hw || len(m)%hw != 0 {
		return nil, fmt.Errorf("%s maps: %d values are not %d maps of %d×%d", split, len(m), n, shape[1], shape[2])
	}
	for i, v := range m[:n*hw] {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("%s map %d: value %g at pixel %d", split, i/hw, v, i%hw)
		}
	}
	return m[:n*hw], nil
}

// targets is the class explained for each of n samples.
func targets(ctx context.Context, net engine.Network, x []float32, labels []int, n int, how string) ([]int, error) {
	switch how {
	case "label":
		return labels[:n], nil
	case "predicted":
		return engine.Predicted(ctx, net, x, n, 1024)
	}
	return nil, fmt.Errorf("target %q: want predicted or label", how)
}

// datasetMean is the per-channel mean of the training set (nil without one).
func (e *Env) datasetMean() []float32 {
	if e.Train == nil || e.Train.Len() == 0 {
		return nil
	}
	return perturb.ChannelMeans(e.Train.X, FeatureShape(e.Train.Shape))
}

// Ranking choices of the removal protocols.
const (
	Magnitude = "magnitude" // rank by |value|
	Signed    = "signed"    // rank by value
)

// ranked returns the maps as the rank choice orders them: their absolute
// values for Magnitude, the maps themselves for Signed.
func ranked(maps []float32, rank string) []float32 {
	if rank != Magnitude {
		return maps
	}
	out := make([]float32, len(maps))
	for i, v := range maps {
		out[i] = float32(math.Abs(float64(v)))
	}
	return out
}

// checkReference checks a reference name without the data it may need.
func checkReference(ref string) error {
	if ref == "" {
		return nil
	}
	_, err := perturb.ParseReference(ref, func() []float32 { return []float32{0} })
	return err
}
