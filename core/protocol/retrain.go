package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/imageops"
	"faithlab/core/perturb"
	"faithlab/core/train"
)

// DefaultRates are the drop rates 10 %, 20 %, …, 90 %.
var defaultRates = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}

// ROAR is RemOve-And-Retrain (Hooker et al. 2019): for each drop rate the
// top fraction of each training and test image's pixels (by its map) is
// replaced by the reference, a model is retrained from scratch on the
// modified training set with the environment's recipe, and its accuracy on
// the modified test set recorded. With Keep it is KAR (Keep-And-Retrain):
// the least relevant fraction is removed instead. Lower ROAR accuracy
// (higher KAR accuracy) means a better map.
type ROAR struct {
	Rates     []float64 `json:"rates" doc:"fractions of the pixels removed" range:"(0,1)"`
	Keep      bool      `json:"keep" doc:"KAR: remove the least relevant pixels, keeping the most relevant"`
	Reference string    `json:"reference" doc:"value of removed pixels: zero, mean, dataset-mean, blur[:σ], road[:noise]"`
	Rank      string    `json:"rank" doc:"how maps rank pixels: magnitude (|value|: what ROAR and KAR do with signed maps) or signed (largest value first)" choices:"magnitude|signed"`
}

// Check implements param.Checker.
func (r ROAR) Check() error { return checkReference(r.Reference) }

func (r ROAR) defaults() ROAR {
	if len(r.Rates) == 0 {
		r.Rates = slices.Clone(defaultRates)
	}
	if r.Reference == "" {
		r.Reference = "zero"
	}
	if r.Rank == "" {
		r.Rank = Magnitude
	}
	return r
}

func (r ROAR) name() string {
	if r.Keep {
		return "KAR"
	}
	return "ROAR"
}

// Info implements Protocol.
func (r ROAR) Info() Info {
	doc := "RemOve-And-Retrain: retrain on images with the most relevant pixels removed"
	if r.Keep {
		doc = "Keep-And-Retrain: retrain on images with the least relevant pixels removed"
	}
	return Info{Name: r.name(), Category: "retrain", Family: FamilyFaithfulness, Data: []string{"image", "tabular"}, Doc: doc, Params: Params(r.defaults())}.with(r.metrics())
}

// Run implements Protocol.
func (r ROAR) Run(ctx context.Context, env *Env) (Result, error) {
	r = r.defaults()
	res := Result{Protocol: r.name(), Method: env.Method, Config: config(r)}
	ref, err := perturb.ParseReference(r.Reference, env.datasetMean)
	if err != nil {
		return res, fmt.Errorf("%s: %w", r.name(), err)
	}
	rm, err := removeAndScore(ctx, env, r.name(), r.Rates, r.Rank, !r.Keep, ref, true)
	if err != nil {
		return res, err
	}
	acc, tv := rm.acc, rm.tv
	res.Samples = append(rm.inputs, rm.samples...)
	better := Lower
	if r.Keep {
		better = Higher
	}
	res.Curves = []Curve{
		rm.accuracy("accuracy", "test accuracy", r.Rates),
		{Name: "mask_tv", XLabel: "fraction removed", YLabel: "mean total variation of the training masks", X: r.Rates, Y: tv},
	}
	res.keepGrid("mean_accuracy", rm.meanCorrect(), len(rm.correct))
	res.Scalars = []Scalar{{"mean_accuracy", mean(acc), better}}
	cs, ss := rm.shiftCurves(r.Rates, "")
	res.Curves, res.Scalars = append(res.Curves, cs...), append(res.Scalars, ss...)
	return res, nil
}

// ROAD is Remove-And-Debias (Rong et al. 2022): MoRF and LeRF removal with
// noisy linear imputation, scored on the trained model (the authors'
// default) or, with Retrain, on models retrained on the imputed sets.
type ROAD struct {
	Rates     []float64 `json:"rates" doc:"fractions of the pixels removed" range:"(0,1)"`
	Retrain   bool      `json:"retrain" doc:"retrain a model per rate and order instead of scoring the trained model"`
	Reference string    `json:"reference" doc:"imputation; ROAD's own is road:0.01 (noise σ 0.01)"`
	Rank      string    `json:"rank" doc:"how maps rank pixels: magnitude (|value|: what ROAD does with signed maps) or signed (largest value first)" choices:"magnitude|signed"`
}

// Check implements param.Checker.
func (r ROAD) Check() error { return checkReference(r.Reference) }

func (r ROAD) defaults() ROAD {
	if len(r.Rates) == 0 {
		r.Rates = slices.Clone(defaultRates)
	}
	if r.Reference == "" {
		r.Reference = "road:0.01"
	}
	if r.Rank == "" {
		r.Rank = Magnitude
	}
	return r
}

// Info implements Protocol.
func (r ROAD) Info() Info {
	// A table's row is imputed as a 1×D image (the GOAR synthetic experiment's).
	return Info{Name: "ROAD", Category: "model", Family: FamilyFaithfulness, Data: []string{"image", "tabular"},
		Doc:    "Remove-And-Debias: MoRF and LeRF accuracy with noisy linear imputation",
		Params: Params(r.defaults())}.with(r.metrics())
}

// Run implements Protocol.
func (r ROAD) Run(ctx context.Context, env *Env) (Result, error) {
	r = r.defaults()
	res := Result{Protocol: "ROAD", Method: env.Method, Config: config(r)}
	ref, err := perturb.ParseReference(r.Reference, env.datasetMean)
	if err != nil {
		return res, fmt.Errorf("ROAD: %w", err)
	}
	var means [2]float64
	var shifts []Scalar
	var per [2][]float64
	for o, morf := range []bool{true, false} {
		name := map[bool]string{true: "morf", false: "lerf"}[morf]
		rm, err := removeAndScore(ctx, env, "ROAD "+name, r.Rates, r.Rank, morf, ref, r.Retrain)
		if err != nil {
			return res, err
		}
		if o == 0 {
			res.Samples = rm.inputs // the same for both orders
		}
		res.Samples = append(res.Samples, rm.samples...)
		means[o], per[o] = mean(rm.acc), rm.meanCorrect()
		res.keepGrid("mean_accuracy_"+name, per[o], len(r.Rates))
		res.Curves = append(res.Curves,
			rm.accuracy("accuracy_"+name, "test accuracy", r.Rates),
			Curve{Name: "mask_tv_" + name, XLabel: "fraction removed", YLabel: "mean total variation of the masks", X: r.Rates, Y: rm.tv})
		cs, ss := rm.shiftCurves(r.Rates, "_"+name)
		res.Curves, shifts = append(res.Curves, cs...), append(shifts, ss...)
	}
	diff := make([]float64, len(per[0]))
	for i := range diff {
		diff[i] = per[1][i] - per[0][i]
	}
	res.keepGrid("lerf_minus_morf", diff, len(r.Rates))
	res.Scalars = append([]Scalar{{"mean_accuracy_morf", means[0], Lower}, {"mean_accuracy_lerf", means[1], Higher},
		{"lerf_minus_morf", means[1] - means[0], Higher}}, shifts...)
	return res, nil
}

// EvalX scores maps with a proxy model trained once with random masking
// (each pixel removed with probability 0.5, redrawn per batch; Jethani et
// al. 2021), on the test set with the most relevant pixels removed, without
// retraining per rate.
type EvalX struct {
	Rates    []float64 `json:"rates" doc:"fractions of the pixels removed" range:"(0,1)"`
	MaskProb float64   `json:"mask_prob" doc:"probability that training masks a pixel" range:"(0,1)"`
	Rank     string    `json:"rank" doc:"how maps rank pixels: magnitude (|value|) or signed (largest value first)" choices:"magnitude|signed"`
}

func (e EvalX) defaults() EvalX {
	if len(e.Rates) == 0 {
		e.Rates = slices.Clone(defaultRates)
	}
	if e.MaskProb == 0 {
		e.MaskProb = 0.5
	}
	if e.Rank == "" {
		e.Rank = Magnitude
	}
	return e
}

// Info implements Protocol.
func (e EvalX) Info() Info {
	return Info{Name: "EvalX", Category: "model", Family: FamilyFaithfulness, Data: []string{"image", "tabular"},
		Doc:    "Eval-X: accuracy of a randomly-masked-trained proxy on MoRF-masked test sets",
		Params: Params(e.defaults())}.with(e.metrics())
}

// Run implements Protocol.
func (e EvalX) Run(ctx context.Context, env *Env) (Result, error) {
	e = e.defaults()
	res := Result{Protocol: "EvalX", Method: env.Method, Config: config(e)}
	recipe := env.Recipe
	recipe.MaskProb = e.MaskProb
	proxy, err := trainModel(ctx, env, "evalx-proxy", "train the Eval-X proxy", recipe, env.Train)
	if err != nil {
		return res, fmt.Errorf("Eval-X proxy: %w", err)
	}
	scored := *env
	scored.Net = proxy
	rm, err := removeAndScore(ctx, &scored, "Eval-X", e.Rates, e.Rank, true, perturb.Zero{}, false)
	if err != nil {
		return res, err
	}
	acc, tv := rm.acc, rm.tv
	res.Samples = append(rm.inputs, rm.samples...)
	res.Curves = []Curve{
		rm.accuracy("accuracy", "proxy test accuracy", e.Rates),
		{Name: "mask_tv", XLabel: "fraction removed", YLabel: "mean total variation of the masks", X: e.Rates, Y: tv},
	}
	res.keepGrid("mean_accuracy", rm.meanCorrect(), len(rm.correct))
	res.Scalars = []Scalar{{"mean_accuracy", mean(acc), Lower}}
	cs, ss := rm.shiftCurves(e.Rates, "")
	res.Curves, res.Scalars = append(res.Curves, cs...), append(res.Scalars, ss...)
	return res, nil
}

// removeAndScore removes, for each rate, the MoRF (or LeRF) fraction of
// pixels of every test image (and training image, when retraining) and
// returns the accuracy of the retrained (or the environment's) model on the
// modified test set, with the mean total variation of the masks (training
// masks when retraining, as in the DPI paper; test masks otherwise), how far
// the modified test images lie from the clean ones, and the first few of
// them, at each rate.
func removeAndScore(ctx context.Context, env *Env, stage string, rates []float64, rank string, morf bool, ref perturb.Reference, retrain bool) (removal, error) {
	var out removal
	for _, r := range rates {
		if !(r > 0 && r < 1) {
			return out, fmt.Errorf("%s: drop rate %g outside (0, 1)", stage, r)
		}
	}
	if env.Test == nil || env.Test.Len() == 0 {
		return out, fmt.Errorf("%s: empty test set", stage)
	}
	splits := []*data.Dataset{env.Test}
	names := []string{"test"}
	if retrain {
		if env.Train == nil || env.Train.Len() == 0 {
			return out, fmt.Errorf("%s: empty training set", stage)
		}
		splits, names = append(splits, env.Train), append(names, "train")
	}
	shape := FeatureShape(env.Test.Shape)
	feats, err := perturb.NewFeatures(shape[1], shape[2], 0)
	if err != nil {
		return out, fmt.Errorf("%s: %w", stage, err)
	}
	ranks := make([]perturb.Ranks, len(splits))
	for s, ds := range splits {
		err := Stage(ctx, stageMasks, func(ctx context.Context) error {
			m, err := mapsFor(ctx, env, names[s], ds.Len(), shape)
			if err != nil {
				return err
			}
			if ranks[s], err = rankAll(m, ds.Len(), feats, morf, rank); err != nil {
				return fmt.Errorf("%s maps: %w", names[s], err)
			}
			if s == 0 {
				out.inputs = inputs(ds, m, ds.Len(), shape)
			}
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("%s: %w", stage, err)
		}
	}
	// One copy of each split, filled anew at each rate: the retrained
	// model and the scores are done with it before the next.
	mod := make([]*data.Dataset, len(splits))
	for s, ds := range splits {
		c := *ds
		c.X = make([]float32, len(ds.X))
		mod[s] = &c
	}
	cleanEnergy, err := energies(ctx, env.Net, env.Test.X, env.Test.Len())
	if err != nil {
		return out, fmt.Errorf("%s: %w", stage, err)
	}
	for j, rate := range rates {
		env.report(Progress{Stage: fmt.Sprintf("%s %.0f%%", stage, 100*rate), Done: j, Total: len(rates)})
		k, err := perturb.Count(rate, feats.N())
		if err != nil {
			return out, err
		}
		for s, ds := range splits {
			var tvs float64
			err := Stage(ctx, stageMasks, func(ctx context.Context) error {
				var err error
				tvs, err = removeInto(ctx, mod[s].X, ds, feats, func(dst []float32, i int) { feats.KeepRanked(dst, ranks[s], i, k) }, ref, env.Seed+uint64(s))
				return err
			})
			if err != nil {
				return out, fmt.Errorf("%s %.0f%% %s set: %w", stage, 100*rate, names[s], err)
			}
			if s == len(splits)-1 {
				out.tv = append(out.tv, tvs)
			}
		}
		net := env.Net
		if retrain {
			key := fmt.Sprintf("%s/%s/%s/%g/%s", stage, env.Method, ref.Name(), rate, recipeKey(env.Recipe))
			if rank != Signed {
				key += "/" + rank
			}
			if net, err = trainModel(ctx, env, key, fmt.Sprintf("retrain %s %.0f %%", stage, 100*rate), env.Recipe, mod[1]); err != nil {
				return out, fmt.Errorf("%s %.0f%%: %w", stage, 100*rate, err)
			}
		}
		// Scored by the explained model itself (no retraining), the
		// perturbed inputs' energies come from the same pass.
		var pe []float64
		var each func(int, []float32)
		if net == env.Net {
			pe = make([]float64, mod[0].Len())
			each = func(i int, logits []float32) { pe[i] = energy(logits) }
		}
		ev, err := staged(ctx, stageEval, func(ctx context.Context) (train.Evaluation, error) {
			return train.EvaluateEach(ctx, net, mod[0], 1024, each)
		})
		if err != nil {
			return out, fmt.Errorf("%s %.0f%%: %w", stage, 100*rate, err)
		}
		sh, err := measureShiftOf(ctx, env.Net, pe, cleanEnergy, env.Test.X, mod[0].X, env.Test.Len(), env.Test.Shape)
		if err != nil {
			return out, fmt.Errorf("%s %.0f%%: %w", stage, 100*rate, err)
		}
		out.acc = append(out.acc, ev.Accuracy)
		out.correct = append(out.correct, ev.Correct)
		out.shift = append(out.shift, sh)
		out.samples = append(out.samples, preview(fmt.Sprintf("%s %.0f%% test", stage, 100*rate), mod[0]))
	}
	env.report(Progress{Stage: stage, Done: len(rates), Total: len(rates)})
	return out, nil
}

// removal is what removeAndScore found, a value per rate, and the test
// inputs and maps its samples started from.
type removal struct {
	acc, tv []float64
	correct [][]bool // per rate, per test input: classified correctly
	shift   []Shift
	samples []Sample
	inputs  []Sample
}

// accuracy is the accuracy curve over the rates, with its spread.
func (r removal) accuracy(name, ylabel string, rates []float64) Curve {
	sd, n := spreadOfCorrect(r.correct)
	return Curve{Name: name, XLabel: "fraction removed", YLabel: ylabel, X: rates, Y: r.acc, SD: sd, N: n}
}

// meanCorrect is each test input's correctness averaged over the rates:
// the per-input values whose mean is the mean accuracy over the rates.
func (r removal) meanCorrect() []float64 {
	if len(r.correct) == 0 {
		return nil
	}
	per := make([]float64, len(r.correct[0]))
	for _, c := range r.correct {
		for i, ok := range c {
			if ok {
				per[i] += 1 / float64(len(r.correct))
			}
		}
	}
	return per
}

// shiftCurves are the removal's Shift per rate as curves, their names
// suffixed (e.g. "_morf"), and their means as scalars without a better
// direction: they judge the protocol, not the method. The image-quality
// measures are left out for inputs that are not images (Shift.Image).
func (r removal) shiftCurves(rates []float64, suffix string) ([]Curve, []Scalar) {
	return shiftCurvesOver(r.shift, rates, "fraction removed", suffix)
}

// shiftMeasure is one measure of a Shift as a curve and a scalar: its
// name, the curve's y label, whether it is for images only, its value.
type shiftMeasure struct {
	name, label string
	image       bool
	get         func(Shift) float64
}

// shiftMeasures are the measures of a Shift, in the order results list them.
func shiftMeasures() []shiftMeasure {
	return []shiftMeasure{
		{"ood_auroc", "energy OOD AUROC, perturbed vs clean test images", false, func(s Shift) float64 { return s.AUROC }},
		{"ood_fpr95", "energy OOD FPR at 95% TPR, perturbed vs clean test images", false, func(s Shift) float64 { return s.FPR95 }},
		{"ood_aupr_in", "energy OOD AUPR-In, perturbed vs clean test images", false, func(s Shift) float64 { return s.AUPRIn }},
		{"ood_aupr_out", "energy OOD AUPR-Out, perturbed vs clean test images", false, func(s Shift) float64 { return s.AUPROut }},
		{"psnr", "PSNR against the clean test images (dB)", true, func(s Shift) float64 { return s.PSNR }},
		{"ssim", "SSIM against the clean test images", true, func(s Shift) float64 { return s.SSIM }},
		{"msssim", "MS-SSIM against the clean test images", true, func(s Shift) float64 { return s.MSSSIM }},
		{"gmsd", "GMSD against the clean test images", true, func(s Shift) float64 { return s.GMSD }},
	}
}

// shiftCurvesOver are the Shifts measured at the points x (rates,
// strengths, retained fractions) as curves with the x label, and their
// means as scalars, names suffixed. The image-quality measures are left
// out for inputs that are not images.
func shiftCurvesOver(shift []Shift, x []float64, xlabel, suffix string) ([]Curve, []Scalar) {
	var cs []Curve
	var ss []Scalar
	for _, m := range shiftMeasures() {
		if m.image && (len(shift) == 0 || !shift[0].Image) {
			continue
		}
		y := make([]float64, len(shift))
		for i, s := range shift {
			y[i] = m.get(s)
		}
		cs = append(cs, Curve{Name: m.name + suffix, XLabel: xlabel, YLabel: m.label, X: x, Y: y})
		ss = append(ss, Scalar{Name: m.name + suffix, Value: mean(y)})
	}
	return cs, ss
}

// removeChunk is how many images' masks removeInto holds at once, at
// most (engine.Batch bounds it by the images' bytes).
const removeChunk = 1024

// removeInto writes ds's images into dst with the features each one's
// keep-mask (keep(mask, i)) removes filled from ref, and returns the
// masks' mean total variation. The masks are made a chunk of images at a
// time; each image's fill draws from its own generator (seed, its index),
// so the result does not depend on the chunks.
func removeInto(ctx context.Context, dst []float32, ds *data.Dataset, feats perturb.Features, keep func(mask []float32, i int), ref perturb.Reference, seed uint64) (float64, error) {
	copy(dst, ds.X)
	hw, dim, n := feats.H*feats.W, ds.Dim(), ds.Len()
	chunk := engine.Batch(ds.Shape, removeChunk)
	keeps := make([]float32, min(n, chunk)*hw)
	tvs := make([]float64, min(n, chunk))
	var tv float64
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		eachChunk(hi-lo, func(a, b int) {
			for i := lo + a; i < lo+b; i++ {
				m := keeps[(i-lo)*hw : (i-lo+1)*hw]
				keep(m, i)
				tvs[i-lo] = imageops.TotalVariation(m, feats.H, feats.W)
			}
		})
		for _, v := range tvs[:hi-lo] { // in order: the same sum on any number of cores
			tv += v
		}
		if err := perturb.FillAll(ctx, ref, dst[lo*dim:hi*dim], FeatureShape(ds.Shape), keeps[:(hi-lo)*hw], seed, uint64(lo)); err != nil {
			return 0, err
		}
	}
	return tv / float64(n), nil
}

// trainModel trains a fresh network on ds, through the environment's
// model cache (under key) when it has one; stage words it for progress.
func trainModel(ctx context.Context, env *Env, key, stage string, recipe train.Config, ds *data.Dataset) (engine.Network, error) {
	if env.NewNet == nil {
		return nil, fmt.Errorf("retraining needs the architecture (no NewNet in the environment)")
	}
	build := func() (engine.Network, error) {
		net, err := env.NewNet()
		if err != nil {
			return nil, err
		}
		_, err = train.Train(ctx, net, ds, recipe, func(p train.Progress) {
			env.report(Progress{Stage: stage, Train: &p})
		})
		return net, err
	}
	if env.Models != nil {
		return env.Models.Model(ctx, key, build)
	}
	return build()
}

func recipeKey(c train.Config) string {
	b, _ := json.Marshal(c.Defaults())
	return string(b)
}
