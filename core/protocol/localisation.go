package protocol

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
)

// The localisation metrics (Quantus's localisation family) compare each
// map with its input's ground-truth mask (Env.Masks: n×H×W, 1 where the
// evidence lies): does the map's relevance lie on the evidence? Each is
// a definition of Quantus 0.6's evaluate_instance, restated on
// Faithlab's maps (one H×W map per input, shared by its channels, the
// same layout as the masks). Every per-input score is kept (Units).
//
// Before scoring, each map is prepared as Quantus prepares it, with
// Quantus's default for the metric: first normalised (normalise: "max"
// divides by the largest |φ|, Quantus's normalise_by_max; "negative"
// divides the positive values by the largest and the negative ones by
// |the smallest|, normalise_by_negative; "none"), then, where values is
// "magnitude", replaced by its absolute values (Quantus's abs). A blank
// map is left as it is (Quantus checks the whole batch for zeros; a blank
// map among others would be 0/0 there). Normalising by a positive number
// does not change an order or a ratio, so it matters only where a score
// adds a constant (Attribution Localisation's 10⁻⁹) or where magnitudes
// follow normalise_by_negative.
//
// An input whose mask is empty has no score (NaN, as in Quantus), and
// the run says how many there were only through the mean leaving them out.

// Choices of the localisation metrics' map preparation.
const (
	normaliseMax      = "max"
	normaliseNegative = "negative"
	normaliseNone     = "none"
)

// noMasks says why a localisation metric cannot run.
const noMasks = "compares maps with the dataset's ground-truth masks, and this dataset carries none (the planted-truth dataset has them, or an image folder with a mask beside each image)"

// prepared is map m as Quantus prepares it: normalised, then made
// absolute if magnitude.
func prepared(m []float32, normalise string, magnitude bool) []float64 {
	a := float64s(m)
	blank := !slices.ContainsFunc(a, func(v float64) bool { return v != 0 })
	if !blank {
		switch normalise {
		case normaliseMax:
			var top float64
			for _, v := range a {
				top = math.Max(top, math.Abs(v))
			}
			for i := range a {
				a[i] /= top
			}
		case normaliseNegative:
			hi, lo := slices.Max(a), slices.Min(a)
			for i, v := range a {
				switch {
				case lo >= 0: // hi > 0: the map is not blank
					a[i] = v / hi
				case hi <= 0:
					a[i] = -v / lo
				case v > 0:
					a[i] = v / hi
				case v < 0:
					a[i] = -v / lo
				}
			}
		}
	}
	if magnitude {
		for i, v := range a {
			a[i] = math.Abs(v)
		}
	}
	return a
}

// maskSize is the number of pixels a mask marks.
func maskSize(s []float32) int {
	k := 0
	for _, v := range s {
		if v != 0 {
			k++
		}
	}
	return k
}

// PointingGameScore (Zhang et al. 2018) is 1 when a pixel of the map's
// largest value lies on the mask, else 0; weighted, a hit scores
// 1 − |mask|/pixels (a small mask is harder to hit). Every pixel that
// ties for the largest value counts, as in Quantus.
func PointingGameScore(a []float64, s []float32, weighted bool) float64 {
	k := maskSize(s)
	if k == 0 {
		return math.NaN()
	}
	top := slices.Max(a)
	for i, v := range a {
		if v == top && s[i] != 0 {
			if weighted {
				return 1 - float64(k)/float64(len(s))
			}
			return 1
		}
	}
	return 0
}

// AttributionLocalisationScore (Kohlbrenner et al. 2020) is the share of
// the map's total that lies on the mask, Σ_mask φ / (Σ φ + 10⁻⁹) (the
// 10⁻⁹ is Quantus 0.6's); weighted, times |mask|/pixels. A share above 1
// (the map's total is smaller than its mass on the mask, which only a
// signed map allows) has no score, as in Quantus.
func AttributionLocalisationScore(a []float64, s []float32, weighted bool) float64 {
	k := maskSize(s)
	if k == 0 {
		return math.NaN()
	}
	var inside, total float64
	for i, v := range a {
		total += v
		if s[i] != 0 {
			inside += v
		}
	}
	r := inside / (total + 1e-9)
	if r > 1 {
		return math.NaN()
	}
	if weighted {
		r *= float64(k) / float64(len(s))
	}
	return r
}

// TopKIntersectionScore (Theiner et al. 2021) is the share of the map's k
// largest pixels that lie on the mask; with concept influence, divided by
// the mask's share of the pixels. Among pixels that tie at the k-th
// value, the later ones are taken (numpy's argsort(a)[-k:]).
func TopKIntersectionScore(a []float64, s []float32, k int, conceptInfluence bool) float64 {
	m := maskSize(s)
	if m == 0 {
		return math.NaN()
	}
	hits := 0
	for _, i := range topIndices(a, k, false) {
		if s[i] != 0 {
			hits++
		}
	}
	tki := float64(hits) / float64(k)
	if conceptInfluence {
		tki *= float64(len(s)) / float64(m)
	}
	return tki
}

// topIndices are the k indices of a's largest values; ties go to the
// earlier index when earlier, else to the later.
func topIndices(a []float64, k int, earlier bool) []int {
	idx := make([]int, len(a))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(p, q int) int {
		if c := cmp.Compare(a[q], a[p]); c != 0 {
			return c
		}
		if earlier {
			return cmp.Compare(p, q)
		}
		return cmp.Compare(q, p)
	})
	return idx[:min(k, len(idx))]
}

// RelevanceMassAccuracyScore (Arras et al. 2022) is Σ_mask φ / Σ φ.
func RelevanceMassAccuracyScore(a []float64, s []float32) float64 {
	if maskSize(s) == 0 {
		return math.NaN()
	}
	var inside, total float64
	for i, v := range a {
		total += v
		if s[i] != 0 {
			inside += v
		}
	}
	return inside / total
}

// RelevanceRankAccuracyScore (Arras et al. 2022) is the share of the
// map's |mask| largest pixels that lie on the mask. Among pixels that tie
// at the cut, the earlier ones are taken (Quantus 0.6's argsort(−a)).
func RelevanceRankAccuracyScore(a []float64, s []float32) float64 {
	k := maskSize(s)
	if k == 0 {
		return math.NaN()
	}
	hits := 0
	for _, i := range topIndices(a, k, true) {
		if s[i] != 0 {
			hits++
		}
	}
	return float64(hits) / float64(k)
}

// LocalisationAUCScore (Fawcett 2006) is the area under the ROC curve of
// the map's values as a score of the mask's pixels (scikit-learn's
// roc_curve and auc, as Quantus): the probability that a pixel on the
// mask outscores one off it, ties counted half. A mask of every pixel,
// or of none, has none (NaN).
func LocalisationAUCScore(a []float64, s []float32) float64 {
	k := maskSize(s)
	if k == 0 || k == len(s) {
		return math.NaN()
	}
	return AUROC(pick(a, s, true), pick(a, s, false))
}

// pick are a's values where s is set (on) or not.
func pick(a []float64, s []float32, on bool) []float64 {
	var out []float64
	for i, v := range a {
		if (s[i] != 0) == on {
			out = append(out, v)
		}
	}
	return out
}

// localised is what the localisation metrics read: the first n test
// inputs' maps and masks, H×W each.
type localised struct {
	n, h, w int
	maps    []float32
	masks   []float32
}

// map_ and mask are input i's.
func (l localised) map_(i int) []float32 { hw := l.h * l.w; return l.maps[i*hw : (i+1)*hw] }
func (l localised) mask(i int) []float32 { hw := l.h * l.w; return l.masks[i*hw : (i+1)*hw] }

// localise reads env's first samples test inputs' maps and masks,
// refusing, before any work, a dataset without masks.
func localise(ctx context.Context, env *Env, samples int) (localised, error) {
	if env.Masks == nil {
		return localised{}, fmt.Errorf("%s", noMasks)
	}
	_, n, shape, err := testImages(env, samples)
	if err != nil {
		return localised{}, err
	}
	maps, err := mapsFor(ctx, env, "test", n, shape)
	if err != nil {
		return localised{}, err
	}
	masks, err := env.Masks(ctx, "test")
	if err != nil {
		return localised{}, fmt.Errorf("test masks: %w", err)
	}
	hw := shape[1] * shape[2]
	if len(masks) < n*hw {
		return localised{}, fmt.Errorf("test masks: %d values for %d inputs of %d×%d", len(masks), n, shape[1], shape[2])
	}
	return localised{n: n, h: shape[1], w: shape[2], maps: maps, masks: masks[:n*hw]}, nil
}

// Common parameters of the localisation metrics.
const (
	samplesDoc   = "test inputs evaluated: the first n of the test set (0: all)"
	normaliseDoc = "how each map is scaled before scoring (Quantus's normalise_func): max (÷ max|φ|), negative (positives ÷ max, negatives ÷ |min|) or none"
	valuesDoc    = "the map's values as they are (signed) or their magnitudes (Quantus's abs), taken after normalising"
)

// localisationRun scores every input with score and keeps the per-input
// values under name, grid k (0: none) as keepGrid.
func localisationRun(ctx context.Context, env *Env, res Result, samples int, normalise, values, name string, k int,
	score func(a []float64, s []float32, hw int) float64) (Result, error) {
	l, err := localise(ctx, env, samples)
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Protocol, err)
	}
	per := make([]float64, l.n)
	eachChunk(l.n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			per[i] = score(prepared(l.map_(i), normalise, values == Magnitude), l.mask(i), l.h*l.w)
		}
	})
	res.keepGrid(name, per, k)
	res.Scalars = []Scalar{{name, mean(per), Higher}}
	return res, nil
}

// localisationInfo is the Info of a mask-reading metric with one score.
func localisationInfo(name, doc string, params []Param, metric, axis, metricDoc string) Info {
	return Info{Name: name, Category: "ground-truth", Family: FamilyLocalisation, Data: []string{"image"}, Masks: true,
		Doc: doc, Params: params,
		Metrics: []Metric{{Name: metric, Better: Higher, Headline: true, Value: unitAxis(axis), Doc: metricDoc}}}
}

// PointingGame (Zhang et al., "Top-down neural attention by excitation
// backprop", IJCV 2018): per input 1 when the map's largest value lies on
// the ground-truth mask, else 0 (weighted: a hit scores 1 − the mask's
// share of the pixels); the mean is the share of hits. Quantus 0.6's
// defaults: the map normalised by normalise_by_negative, signed. Every
// pixel tied for the largest counts, so a constant map hits any
// non-empty mask, as in Quantus.
type PointingGame struct {
	Samples   int    `json:"samples" doc:"test inputs evaluated: the first n of the test set (0: all)" range:"[0,]"`
	Weighted  bool   `json:"weighted" doc:"a hit scores 1 − the mask's share of the pixels (a small mask is harder to hit)"`
	Normalise string `json:"normalise" doc:"how each map is scaled before scoring (Quantus's normalise_func): max (÷ max|φ|), negative (positives ÷ max, negatives ÷ |min|) or none" choices:"negative|max|none"`
	Values    string `json:"values" doc:"the map's values as they are (signed) or their magnitudes (Quantus's abs), taken after normalising" choices:"signed|magnitude"`
}

func (p PointingGame) defaults() PointingGame {
	p.Normalise = cmp.Or(p.Normalise, normaliseNegative)
	p.Values = cmp.Or(p.Values, Signed)
	return p
}

// Info implements Protocol.
func (p PointingGame) Info() Info {
	return localisationInfo("PointingGame", "Pointing Game (Zhang et al. 2018): does the map's largest value lie on the ground-truth mask?",
		Params(p.defaults()), "pointing_game", "share of inputs whose largest map value lies on the mask",
		"per input 1 if a pixel of the map's largest value lies on the mask, else 0 (weighted: 1 − the mask's share of the pixels for a hit); mean over inputs")
}

// Run implements Protocol.
func (p PointingGame) Run(ctx context.Context, env *Env) (Result, error) {
	p = p.defaults()
	res := Result{Protocol: "PointingGame", Method: env.Method, Config: config(p)}
	k := 1
	if p.Weighted {
		k = 0
	}
	return localisationRun(ctx, env, res, p.Samples, p.Normalise, p.Values, "pointing_game", k,
		func(a []float64, s []float32, _ int) float64 { return PointingGameScore(a, s, p.Weighted) })
}

// Work implements Worker: nothing through the network.
func (PointingGame) Work(int, int, []int) Work { return Work{} }

// AttributionLocalisation (Kohlbrenner et al., "Towards best practice in
// explaining neural network decisions with LRP", IJCNN 2020): per input
// the share of the map's total on the ground-truth mask, Σ_mask φ /
// (Σ φ + 10⁻⁹) (weighted: times the mask's share of the pixels). Quantus
// 0.6's defaults: the map normalised by its largest magnitude, then its
// magnitudes. Differences: the mask's share of the pixels (weighted) is
// |mask|/(H·W) — Quantus 0.6's batched code divides by the size of the
// batch's inputs after the second (x_batch[2:].size), which is not the
// image's size; Quantus's max_size only warns and is left out; a share
// above 1 has no score (NaN), as in Quantus.
type AttributionLocalisation struct {
	Samples   int    `json:"samples" doc:"test inputs evaluated: the first n of the test set (0: all)" range:"[0,]"`
	Weighted  bool   `json:"weighted" doc:"multiply the share by the mask's share of the pixels (Kohlbrenner et al.'s weighted variant)"`
	Normalise string `json:"normalise" doc:"how each map is scaled before scoring (Quantus's normalise_func): max (÷ max|φ|), negative (positives ÷ max, negatives ÷ |min|) or none" choices:"max|negative|none"`
	Values    string `json:"values" doc:"the map's values as they are (signed) or their magnitudes (Quantus's abs), taken after normalising" choices:"magnitude|signed"`
}

func (p AttributionLocalisation) defaults() AttributionLocalisation {
	p.Normalise = cmp.Or(p.Normalise, normaliseMax)
	p.Values = cmp.Or(p.Values, Magnitude)
	return p
}

// Info implements Protocol.
func (p AttributionLocalisation) Info() Info {
	return localisationInfo("AttributionLocalisation", "Attribution Localisation (Kohlbrenner et al. 2020): the share of the map's total that lies on the ground-truth mask",
		Params(p.defaults()), "attribution_localisation", "share of the map's total on the mask, mean over inputs",
		"per input Σ_mask φ / (Σ φ + 1e-9) of the prepared map (weighted: times the mask's share of the pixels; above 1: undefined); mean over inputs")
}

// Run implements Protocol.
func (p AttributionLocalisation) Run(ctx context.Context, env *Env) (Result, error) {
	p = p.defaults()
	res := Result{Protocol: "AttributionLocalisation", Method: env.Method, Config: config(p)}
	return localisationRun(ctx, env, res, p.Samples, p.Normalise, p.Values, "attribution_localisation", 0,
		func(a []float64, s []float32, _ int) float64 { return AttributionLocalisationScore(a, s, p.Weighted) })
}

// Work implements Worker: nothing through the network.
func (AttributionLocalisation) Work(int, int, []int) Work { return Work{} }

// TopKIntersection (Theiner et al., "Interpretable semantic photo
// geolocalization", WACV 2022): per input the share of the map's k
// largest pixels that lie on the ground-truth mask (with concept
// influence: divided by the mask's share of the pixels). Quantus 0.6's
// defaults: the map normalised by its largest magnitude, signed, k =
// 1000. Difference: k = 1000 is more pixels than a 28×28 image holds
// (Quantus refuses it there), so the default k (0) is 2 % of the
// pixels, at least one — Quantus's 1000 of a 224×224 image; a k set is
// used as it is and must be below the pixels, as Quantus asks.
type TopKIntersection struct {
	Samples          int    `json:"samples" doc:"test inputs evaluated: the first n of the test set (0: all)" range:"[0,]"`
	K                int    `json:"k" doc:"pixels taken from the top of each map (0: 2 % of the pixels, at least one: Quantus's 1000 of 224×224)" range:"[0,]"`
	ConceptInfluence bool   `json:"concept_influence" doc:"divide by the mask's share of the pixels (Theiner et al.'s concept influence)"`
	Normalise        string `json:"normalise" doc:"how each map is scaled before scoring (Quantus's normalise_func): max (÷ max|φ|), negative (positives ÷ max, negatives ÷ |min|) or none" choices:"max|negative|none"`
	Values           string `json:"values" doc:"the map's values as they are (signed) or their magnitudes (Quantus's abs), taken after normalising" choices:"signed|magnitude"`
}

func (p TopKIntersection) defaults() TopKIntersection {
	p.Normalise = cmp.Or(p.Normalise, normaliseMax)
	p.Values = cmp.Or(p.Values, Signed)
	return p
}

// top is the k used on maps of hw pixels.
func (p TopKIntersection) top(hw int) int {
	if p.K > 0 {
		return p.K
	}
	return max(1, int(math.Round(0.02*float64(hw))))
}

// CheckShape implements ShapeChecker: k below the pixels, as Quantus asks.
func (p TopKIntersection) CheckShape(shape []int) error {
	fs := FeatureShape(shape)
	if hw := fs[1] * fs[2]; p.K >= hw {
		return fmt.Errorf("TopKIntersection: k %d is not below the %d pixels of a %d×%d map", p.K, hw, fs[1], fs[2])
	}
	return nil
}

// Info implements Protocol.
func (p TopKIntersection) Info() Info {
	return localisationInfo("TopKIntersection", "Top-K Intersection (Theiner et al. 2022): the share of the map's k largest pixels that lie on the ground-truth mask",
		Params(p.defaults()), "top_k_intersection", "share of the k largest pixels on the mask, mean over inputs",
		"per input the share of the map's k largest pixels on the mask (concept influence: divided by the mask's share of the pixels); mean over inputs")
}

// Run implements Protocol.
func (p TopKIntersection) Run(ctx context.Context, env *Env) (Result, error) {
	p = p.defaults()
	res := Result{Protocol: "TopKIntersection", Method: env.Method, Config: config(p)}
	if env.Test != nil {
		if err := p.CheckShape(env.Test.Shape); err != nil {
			return res, err
		}
	}
	var k, grid int
	if env.Test != nil && env.Test.Len() > 0 {
		fs := FeatureShape(env.Test.Shape)
		k = p.top(fs[1] * fs[2])
	}
	if !p.ConceptInfluence {
		grid = k
	}
	return localisationRun(ctx, env, res, p.Samples, p.Normalise, p.Values, "top_k_intersection", grid,
		func(a []float64, s []float32, hw int) float64 {
			return TopKIntersectionScore(a, s, p.top(hw), p.ConceptInfluence)
		})
}

// Work implements Worker: nothing through the network.
func (TopKIntersection) Work(int, int, []int) Work { return Work{} }

// RelevanceMassAccuracy (Arras et al., "CLEVR-XAI: a benchmark dataset
// for the ground truth evaluation of neural network explanations", Inf.
// Fusion 2022): per input Σ_mask φ / Σ φ. Quantus 0.6's defaults: the
// map normalised by its largest magnitude, signed (so a map with
// negative values can score outside [0, 1]).
type RelevanceMassAccuracy struct {
	Samples   int    `json:"samples" doc:"test inputs evaluated: the first n of the test set (0: all)" range:"[0,]"`
	Normalise string `json:"normalise" doc:"how each map is scaled before scoring (Quantus's normalise_func): max (÷ max|φ|), negative (positives ÷ max, negatives ÷ |min|) or none" choices:"max|negative|none"`
	Values    string `json:"values" doc:"the map's values as they are (signed) or their magnitudes (Quantus's abs), taken after normalising" choices:"signed|magnitude"`
}

func (p RelevanceMassAccuracy) defaults() RelevanceMassAccuracy {
	p.Normalise = cmp.Or(p.Normalise, normaliseMax)
	p.Values = cmp.Or(p.Values, Signed)
	return p
}

// Info implements Protocol.
func (p RelevanceMassAccuracy) Info() Info {
	return localisationInfo("RelevanceMassAccuracy", "Relevance Mass Accuracy (Arras et al. 2022): the share of the map's relevance that lies on the ground-truth mask",
		Params(p.defaults()), "relevance_mass_accuracy", "Σ_mask φ / Σ φ, mean over inputs",
		"per input the map's sum on the mask over its total (signed maps can leave [0, 1]); mean over inputs")
}

// Run implements Protocol.
func (p RelevanceMassAccuracy) Run(ctx context.Context, env *Env) (Result, error) {
	p = p.defaults()
	res := Result{Protocol: "RelevanceMassAccuracy", Method: env.Method, Config: config(p)}
	return localisationRun(ctx, env, res, p.Samples, p.Normalise, p.Values, "relevance_mass_accuracy", 0,
		func(a []float64, s []float32, _ int) float64 { return RelevanceMassAccuracyScore(a, s) })
}

// Work implements Worker: nothing through the network.
func (RelevanceMassAccuracy) Work(int, int, []int) Work { return Work{} }

// RelevanceRankAccuracy (Arras et al. 2022): per input, with K the
// mask's pixels, the share of the map's K largest pixels that lie on the
// mask. Quantus 0.6's defaults: the map normalised by its largest
// magnitude, signed; ties at the cut go to the earlier pixel.
type RelevanceRankAccuracy struct {
	Samples   int    `json:"samples" doc:"test inputs evaluated: the first n of the test set (0: all)" range:"[0,]"`
	Normalise string `json:"normalise" doc:"how each map is scaled before scoring (Quantus's normalise_func): max (÷ max|φ|), negative (positives ÷ max, negatives ÷ |min|) or none" choices:"max|negative|none"`
	Values    string `json:"values" doc:"the map's values as they are (signed) or their magnitudes (Quantus's abs), taken after normalising" choices:"signed|magnitude"`
}

func (p RelevanceRankAccuracy) defaults() RelevanceRankAccuracy {
	p.Normalise = cmp.Or(p.Normalise, normaliseMax)
	p.Values = cmp.Or(p.Values, Signed)
	return p
}

// Info implements Protocol.
func (p RelevanceRankAccuracy) Info() Info {
	return localisationInfo("RelevanceRankAccuracy", "Relevance Rank Accuracy (Arras et al. 2022): the share of the map's |mask| largest pixels that lie on the ground-truth mask",
		Params(p.defaults()), "relevance_rank_accuracy", "share of the |mask| largest pixels on the mask, mean over inputs",
		"per input, with K the mask's pixels, the share of the map's K largest pixels on the mask; mean over inputs")
}

// Run implements Protocol.
func (p RelevanceRankAccuracy) Run(ctx context.Context, env *Env) (Result, error) {
	p = p.defaults()
	res := Result{Protocol: "RelevanceRankAccuracy", Method: env.Method, Config: config(p)}
	return localisationRun(ctx, env, res, p.Samples, p.Normalise, p.Values, "relevance_rank_accuracy", 0,
		func(a []float64, s []float32, _ int) float64 { return RelevanceRankAccuracyScore(a, s) })
}

// Work implements Worker: nothing through the network.
func (RelevanceRankAccuracy) Work(int, int, []int) Work { return Work{} }

// LocalisationAUC is Quantus's AUC (Fawcett, "An introduction to ROC
// analysis", Pattern Recognit. Lett. 2006): per input the area under the
// ROC curve of the map's values as a score of the mask's pixels, the
// probability that a pixel on the mask outscores one off it (ties count
// half). Quantus 0.6's defaults: the map normalised by its largest
// magnitude, signed. Named LocalisationAUC since Faithlab's other AUCs are
// areas under removal curves. Difference: a mask of every pixel has no
// score (NaN; scikit-learn warns and returns NaN there too).
type LocalisationAUC struct {
	Samples   int    `json:"samples" doc:"test inputs evaluated: the first n of the test set (0: all)" range:"[0,]"`
	Normalise string `json:"normalise" doc:"how each map is scaled before scoring (Quantus's normalise_func): max (÷ max|φ|), negative (positives ÷ max, negatives ÷ |min|) or none" choices:"max|negative|none"`
	Values    string `json:"values" doc:"the map's values as they are (signed) or their magnitudes (Quantus's abs), taken after normalising" choices:"signed|magnitude"`
}

func (p LocalisationAUC) defaults() LocalisationAUC {
	p.Normalise = cmp.Or(p.Normalise, normaliseMax)
	p.Values = cmp.Or(p.Values, Signed)
	return p
}

// Info implements Protocol.
func (p LocalisationAUC) Info() Info {
	info := localisationInfo("LocalisationAUC", "AUC (Fawcett 2006; Quantus's localisation AUC): how well the map's values tell the ground-truth mask's pixels from the rest",
		Params(p.defaults()), "localisation_auc", "ROC AUC of the map against the mask, mean over inputs",
		"per input the area under the ROC curve of the map's values scoring the mask's pixels (0.5: chance); mean over inputs")
	info.Metrics[0].Value.Reference = &Reference{0.5, "chance"}
	return info
}

// Run implements Protocol.
func (p LocalisationAUC) Run(ctx context.Context, env *Env) (Result, error) {
	p = p.defaults()
	res := Result{Protocol: "LocalisationAUC", Method: env.Method, Config: config(p)}
	return localisationRun(ctx, env, res, p.Samples, p.Normalise, p.Values, "localisation_auc", 0,
		func(a []float64, s []float32, _ int) float64 { return LocalisationAUCScore(a, s) })
}

// Work implements Worker: nothing through the network.
func (LocalisationAUC) Work(int, int, []int) Work { return Work{} }
