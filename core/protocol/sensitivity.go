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
	"faithlab/core/perturb"
)

// SensitivityN (Ancona et al. 2018): for each N, random subsets of N pixels
// are removed; per image, the Pearson correlation between the subsets' sums
// of attributions and the output drops they cause is computed, then averaged
// over images. A map whose values add up to the effect of removing them
// scores 1 at every N. Faithfulness Correlation is its setting at one N
// (FaithfulnessCorrelation).
type SensitivityN struct {
	Samples   int    `json:"samples" doc:"test images evaluated: the first n" range:"[1,]"`
	Ns        []int  `json:"ns" doc:"subset sizes N, in pixels" range:"[1,]"`
	Subsets   int    `json:"subsets" doc:"random subsets per image and N" range:"[1,]"`
	Reference string `json:"reference" doc:"value of removed pixels: zero, mean, dataset-mean, blur[:σ], road[:noise]"`
	Output    string `json:"output" doc:"score: logit or probability of the target class" choices:"logit|probability"`
	Target    string `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`

	as named
}

// FaithfulnessCorrelation (Bhatt et al., "Evaluating and aggregating
// feature-based model explanations", IJCAI 2020): per input, the Pearson
// correlation over random subsets S of |S| features between the sum of
// their attributions and the drop in the explained class's score when they
// are set to the baseline, averaged over inputs: Sensitivity-N at the one
// N = |S|. The defaults follow Quantus's reading of the paper (100
// subsets, a zero baseline) with a subset of one row's worth of pixels
// (28 of a 28×28 image, as Quantus's 224 of a 224×224 one).
func FaithfulnessCorrelation() SensitivityN {
	return SensitivityN{Ns: []int{28}, as: named{"FaithfulnessCorrelation",
		"Faithfulness Correlation (Bhatt et al. 2020): correlation of attribution sums with output drops over random subsets of one size; Sensitivity-N at one N",
		"mean_correlation"}}.defaults()
}

// Check implements param.Checker.
func (s SensitivityN) Check() error { return checkReference(s.Reference) }

// CheckShape implements ShapeChecker: every subset size below the number
// of features (pixels of an image, values of a table's row) it is drawn
// from.
func (s SensitivityN) CheckShape(shape []int) error {
	s = s.defaults()
	fs := FeatureShape(shape)
	hw := fs[1] * fs[2]
	for _, n := range s.Ns {
		if n < 1 || n >= hw {
			return fmt.Errorf("%s: subset size %d is not below the %d features of a sample: set ns to sizes in [1, %d), e.g. ns: [%d]", s.as.or("SensitivityN"), n, hw, hw, max(1, hw/3))
		}
	}
	return nil
}

func (s SensitivityN) defaults() SensitivityN {
	if s.Samples == 0 {
		s.Samples = 100
	}
	if len(s.Ns) == 0 {
		s.Ns = []int{1, 2, 5, 10, 20, 50, 100, 200, 500}
	}
	if s.Subsets == 0 {
		s.Subsets = 100
	}
	if s.Reference == "" {
		s.Reference = "zero"
	}
	if s.Output == "" {
		s.Output = "logit"
	}
	if s.Target == "" {
		s.Target = "predicted"
	}
	return s
}

// Info implements Protocol.
func (s SensitivityN) Info() Info {
	doc := "Sensitivity-N: correlation of attribution sums with output drops over random pixel subsets"
	if s.as.doc != "" {
		doc = s.as.doc
	}
	return Info{Name: s.as.or("SensitivityN"), Category: "model", Family: FamilyFaithfulness, Data: []string{"image", "tabular"},
		Doc: doc, Params: Params(s.defaults())}.with(s.defaults().metrics())
}

// Run implements Protocol.
func (s SensitivityN) Run(ctx context.Context, env *Env) (Result, error) {
	s = s.defaults()
	res := Result{Protocol: s.as.or("SensitivityN"), Method: env.Method, Config: config(s)}
	x, n, shape, err := testImages(env, s.Samples)
	if err != nil {
		return res, fmt.Errorf("sensitivity-n: %w", err)
	}
	if err := s.CheckShape(env.Test.Shape); err != nil {
		return res, err
	}
	hw := shape[1] * shape[2]
	if s.Subsets < 3 {
		return res, fmt.Errorf("sensitivity-n: %d subsets are too few for a correlation", s.Subsets)
	}
	maps, err := mapsFor(ctx, env, "test", n, shape)
	if err != nil {
		return res, fmt.Errorf("sensitivity-n: %w", err)
	}
	prob := s.Output == "probability"
	u, err := passUntouched(ctx, env.Net, x, env.Test.Y[:n], n, s.Target, prob)
	if err != nil {
		return res, fmt.Errorf("sensitivity-n: %w", err)
	}
	target, base, cleanEnergy := u.target, u.score, u.energy
	ref, err := perturb.ParseReference(s.Reference, env.datasetMean)
	if err != nil {
		return res, fmt.Errorf("sensitivity-n: %w", err)
	}
	dim := engine.Size(shape)
	m := len(s.Ns) * s.Subsets
	rows := engine.Batch(shape, m) // an image's occluded copies at a time: all of them at 28×28
	batch := make([]float32, rows*dim)
	// What the model saw: each image's first occluded copy at each N, how
	// far from the data (FUD Tables 2 and 3's Sen-N row), measured as the
	// copies are made.
	firsts := make([]*shiftStream, len(s.Ns))
	for a := range firsts {
		firsts[a] = newShiftStream(env.Net, cleanEnergy, x, n, env.Test.Shape)
	}
	keeps := make([]float32, rows*hw)
	sums := make([]float64, m)
	out := make([]float64, m)
	corr := make([][]float64, len(s.Ns)) // [N][image]
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		env.report(Progress{Stage: "sensitivity-n", Done: i, Total: n})
		rng := rand.New(rand.NewPCG(env.Seed, uint64(i)))
		img, mp := x[i*dim:(i+1)*dim], maps[i*hw:(i+1)*hw]
		ts := slices.Repeat([]int{target[i]}, rows)
		for lo := 0; lo < m; lo += rows {
			hi := min(lo+rows, m)
			for r := lo; r < hi; r++ {
				copy(batch[(r-lo)*dim:(r-lo+1)*dim], img)
				keep := keeps[(r-lo)*hw : (r-lo+1)*hw]
				for p := range keep {
					keep[p] = 1
				}
				sums[r] = 0
				for _, p := range rng.Perm(hw)[:s.Ns[r/s.Subsets]] {
					keep[p] = 0
					sums[r] += float64(mp[p])
				}
			}
			if err := perturb.FillAll(ctx, ref, batch[:(hi-lo)*dim], shape, keeps[:(hi-lo)*hw], env.Seed, uint64(i*m+lo)); err != nil {
				return res, fmt.Errorf("sensitivity-n image %d: %w", i, err)
			}
			for a := range s.Ns {
				if r := a * s.Subsets; r >= lo && r < hi {
					if err := firsts[a].add(ctx, batch[(r-lo)*dim:(r-lo+1)*dim]); err != nil {
						return res, fmt.Errorf("sensitivity-n: %w", err)
					}
				}
			}
			v, err := scores(ctx, env.Net, batch[:(hi-lo)*dim], hi-lo, ts[:hi-lo], prob)
			if err != nil {
				return res, err
			}
			copy(out[lo:hi], v)
		}
		for a := range s.Ns {
			drop := make([]float64, s.Subsets)
			for b := range drop {
				drop[b] = base[i] - out[a*s.Subsets+b]
			}
			corr[a] = append(corr[a], Pearson(sums[a*s.Subsets:(a+1)*s.Subsets], drop))
		}
	}
	xs, ys := make([]float64, len(s.Ns)), make([]float64, len(s.Ns))
	for a, N := range s.Ns {
		xs[a], ys[a] = float64(N), mean(corr[a])
	}
	per, byImage := make([]float64, n), make([][]float64, n) // each image's correlation averaged over N: the scalar's mean where none is undefined
	for i := range per {
		for a := range s.Ns {
			byImage[i] = append(byImage[i], corr[a][i])
		}
		per[i] = mean(byImage[i])
	}
	if len(s.Ns) > 1 {
		sd, nIn := spread(byImage)
		res.Curves = []Curve{{Name: "correlation", XLabel: "N (pixels removed)", YLabel: "Pearson correlation", X: xs, Y: ys, SD: sd, N: nIn}}
	}
	res.keep("mean_correlation", per)
	res.Scalars = []Scalar{{"mean_correlation", mean(ys), Higher}}
	shifts := make([]Shift, len(s.Ns))
	for a := range s.Ns {
		if shifts[a], err = firsts[a].shift(ctx); err != nil {
			return res, fmt.Errorf("sensitivity-n: %w", err)
		}
	}
	cs, ss := shiftCurvesOver(shifts, xs, "N (pixels removed)", "")
	if len(s.Ns) > 1 {
		res.Curves = append(res.Curves, cs...)
	}
	res.Scalars = append(res.Scalars, ss...)
	return res, nil
}

// Infidelity (Yeh et al. 2019) is the expected squared difference between
// Iᵀφ — the perturbation I weighted by the attribution φ (each pixel's
// value applied to all its channels) — and the output change
// f(x) − f(x − I), over random perturbations: Gaussian noise of standard
// deviation Sigma, or square removal (I = x on a random Patch×Patch square,
// 0 elsewhere). With Normalize the attribution is first scaled by the
// least-squares factor β = E[Iᵀφ·Δf]/E[(Iᵀφ)²], so the score does not
// depend on the map's scale (Captum's normalize option); the maps of
// different methods are then comparable.
type Infidelity struct {
	Samples      int     `json:"samples" doc:"test images evaluated: the first n" range:"[1,]"`
	Perturbation string  `json:"perturbation" doc:"gaussian (noise of σ sigma), square (a random patch zeroed) or blur (the saliency-guided blur FUD's INFID row uses: the map's top ρ of the pixels, ρ uniform in (0, 1) a draw, replaced by the image blurred with σ blur)" choices:"gaussian|square|blur"`
	Sigma        float64 `json:"sigma" doc:"standard deviation of the Gaussian perturbation" range:"(0,]"`
	Patch        int     `json:"patch" doc:"side of the removed square, in pixels" range:"[1,]"`
	Blur         float64 `json:"blur" doc:"σ of the saliency-guided blur, in pixels" range:"(0,]"`
	Draws        int     `json:"draws" doc:"perturbations per image" range:"[1,]"`
	Normalize    bool    `json:"normalize" doc:"scale each map by its optimal factor first"`
	Output       string  `json:"output" doc:"score: logit or probability of the target class" choices:"logit|probability"`
	Target       string  `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`
}

func (f Infidelity) defaults() Infidelity {
	if f.Samples == 0 {
		f.Samples = 100
	}
	if f.Perturbation == "" {
		f.Perturbation = "gaussian"
	}
	if f.Sigma == 0 {
		f.Sigma = 0.1
	}
	if f.Patch == 0 {
		f.Patch = 4
	}
	if f.Blur == 0 {
		f.Blur = 5
	}
	if f.Draws == 0 {
		f.Draws = 100
	}
	if f.Output == "" {
		f.Output = "logit"
	}
	if f.Target == "" {
		f.Target = "predicted"
	}
	return f
}

// Info implements Protocol.
func (f Infidelity) Info() Info {
	return Info{Name: "Infidelity", Category: "model", Family: FamilyFaithfulness, Data: []string{"image", "tabular"},
		Doc:    "Infidelity: squared error between attribution-weighted perturbations and output changes",
		Params: Params(f.defaults())}.with(f.metrics())
}

// Run implements Protocol.
func (f Infidelity) Run(ctx context.Context, env *Env) (Result, error) {
	f = f.defaults()
	res := Result{Protocol: "Infidelity", Method: env.Method, Config: config(f)}
	if f.Perturbation != "gaussian" && f.Perturbation != "square" && f.Perturbation != "blur" {
		return res, fmt.Errorf("infidelity: perturbation %q: want gaussian, square or blur", f.Perturbation)
	}
	x, n, shape, err := testImages(env, f.Samples)
	if err != nil {
		return res, fmt.Errorf("infidelity: %w", err)
	}
	C, H, W := shape[0], shape[1], shape[2]
	if f.Perturbation == "square" && (f.Patch < 1 || f.Patch > H || f.Patch > W) {
		return res, fmt.Errorf("infidelity: %d-pixel square does not fit %d×%d images", f.Patch, H, W)
	}
	maps, err := mapsFor(ctx, env, "test", n, shape)
	if err != nil {
		return res, fmt.Errorf("infidelity: %w", err)
	}
	prob := f.Output == "probability"
	u, err := passUntouched(ctx, env.Net, x, env.Test.Y[:n], n, f.Target, prob)
	if err != nil {
		return res, fmt.Errorf("infidelity: %w", err)
	}
	target, base, cleanEnergy := u.target, u.score, u.energy
	dim, hw := engine.Size(shape), H*W
	rows := engine.Batch(shape, f.Draws) // an image's perturbed copies at a time: all of them at 28×28
	batch := make([]float32, rows*dim)
	firsts := make([]float32, n*dim) // each image's first perturbed copy, for the shift measures
	dot := make([]float64, f.Draws)
	out := make([]float64, f.Draws)
	per := make([]float64, n)
	var blurred []float32 // the image blurred, and its pixels by |map|, largest first (blur)
	var order []int
	if f.Perturbation == "blur" {
		blurred, order = make([]float32, dim), make([]int, hw)
	}
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		env.report(Progress{Stage: "infidelity", Done: i, Total: n})
		rng := rand.New(rand.NewPCG(env.Seed, uint64(i)))
		img, mp := x[i*dim:(i+1)*dim], maps[i*hw:(i+1)*hw]
		if f.Perturbation == "blur" {
			copy(blurred, img)
			for c := 0; c < C; c++ {
				imageops.GaussianBlur(blurred[c*hw:(c+1)*hw], H, W, f.Blur)
			}
			for p := range order {
				order[p] = p
			}
			slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(math.Abs(float64(mp[b])), math.Abs(float64(mp[a]))) })
		}
		ts := slices.Repeat([]int{target[i]}, rows)
		for lo := 0; lo < f.Draws; lo += rows {
			hi := min(lo+rows, f.Draws)
			for d := lo; d < hi; d++ {
				dst := batch[(d-lo)*dim : (d-lo+1)*dim]
				copy(dst, img)
				var s float64
				if f.Perturbation == "blur" {
					k := int(math.Round(rng.Float64() * float64(hw)))
					for _, p := range order[:k] {
						for c := 0; c < C; c++ {
							j := c*hw + p
							s += float64(img[j]-blurred[j]) * float64(mp[p])
							dst[j] = blurred[j]
						}
					}
				} else if f.Perturbation == "gaussian" {
					for c := 0; c < C; c++ {
						for p := 0; p < hw; p++ {
							v := f.Sigma * rng.NormFloat64()
							dst[c*hw+p] -= float32(v)
							s += v * float64(mp[p])
						}
					}
				} else {
					y0, x0 := rng.IntN(H-f.Patch+1), rng.IntN(W-f.Patch+1)
					for c := 0; c < C; c++ {
						for y := y0; y < y0+f.Patch; y++ {
							for xx := x0; xx < x0+f.Patch; xx++ {
								j := c*hw + y*W + xx
								s += float64(img[j]) * float64(mp[y*W+xx])
								dst[j] = 0
							}
						}
					}
				}
				dot[d] = s
			}
			if lo == 0 {
				copy(firsts[i*dim:(i+1)*dim], batch[:dim])
			}
			v, err := scores(ctx, env.Net, batch[:(hi-lo)*dim], hi-lo, ts[:hi-lo], prob)
			if err != nil {
				return res, err
			}
			copy(out[lo:hi], v)
		}
		beta := 1.0
		if f.Normalize {
			var num, den float64
			for d := range dot {
				num += dot[d] * (base[i] - out[d])
				den += dot[d] * dot[d]
			}
			if den > 0 {
				beta = num / den
			}
		}
		var se float64
		for d := range dot {
			e := beta*dot[d] - (base[i] - out[d])
			se += e * e
		}
		per[i] = se / float64(f.Draws)
	}
	res.keep("infidelity", per)
	res.Scalars = []Scalar{{"infidelity", mean(per), Lower}}
	// What the model saw: each image's first perturbed copy, how far from
	// the data (FUD Tables 2 and 3's INFID row).
	sh, err := measureShift(ctx, env.Net, cleanEnergy, x, firsts, n, env.Test.Shape)
	if err != nil {
		return res, fmt.Errorf("infidelity: %w", err)
	}
	_, ss := shiftCurvesOver([]Shift{sh}, []float64{0}, "", "")
	res.Scalars = append(res.Scalars, ss...)
	return res, nil
}

// targetScore is class t's probability (prob; soft holds the softmax) or
// logit in one input's logits.
func targetScore(soft, logits []float32, t int, prob bool) float64 {
	if prob {
		logits = engine.Softmax(soft, logits, len(soft))
	}
	return float64(logits[t])
}

// scores is the target's logit (or probability) for each of n inputs.
func scores(ctx context.Context, net engine.Network, x []float32, n int, target []int, prob bool) ([]float64, error) {
	out := make([]float64, n)
	p := make([]float32, net.Classes())
	err := engine.EachLogits(ctx, net, x, n, 0, func(i int, row []float32) { out[i] = targetScore(p, row, target[i], prob) })
	if err != nil {
		return nil, err
	}
	return out, nil
}
