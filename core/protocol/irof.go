package protocol

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"faithlab/core/imageops"
	"faithlab/core/perturb"
)

// IROF, iterative removal of features (Rieger & Hansen, "IROF: a low
// resource evaluation metric for explanation methods", 2020): each image
// is cut into superpixels by SLIC, the superpixels are ranked by their
// mean attribution (of the map's magnitudes by default, as the other
// removal protocols rank; the paper's signed mean relevance with rank
// signed) and removed most relevant first, and the explained
// class's probability, divided by its value on the untouched image, is
// recorded after each step. IROF is the area over that curve, over the
// fraction of superpixels removed from 0 to 1: higher means the map finds
// what the model needs sooner. A removed superpixel takes the image's
// own channel mean, as the paper's; Quantus 0.6, given a batch, fills
// with the mean over the whole batch instead (its mean is taken over the
// batch axis too: a bug, which makes an image's score depend on the
// others in its batch), so Faithlab agrees with Quantus run one image at
// a time. The default asks SLIC for 49 superpixels
// (about 4×4 pixels at 28×28; the paper's were for ImageNet's 224×224)
// and removes them one at a time.
type IROF struct {
	Samples     int     `json:"samples" doc:"test images evaluated: the first n of the test set" range:"[1,]"`
	Segments    int     `json:"segments" doc:"superpixels SLIC is asked for (it finds about as many)" range:"[2,]"`
	Compactness float64 `json:"compactness" doc:"SLIC's compactness m, in the data's units: larger gives squarer superpixels" range:"(0,]"`
	Steps       int     `json:"steps" doc:"removal steps, evenly spaced in superpixels; 0: one per superpixel" range:"[0,]"`
	Reference   string  `json:"reference" doc:"value of removed pixels: mean (the image's channel mean), zero, dataset-mean, blur[:σ], road[:noise], uniform"`
	Rank        string  `json:"rank" doc:"how superpixels are ranked: by their pixels' mean magnitude (|value|, as the other removal protocols) or mean signed value (the paper's mean relevance)" choices:"magnitude|signed"`
	Target      string  `json:"target" doc:"class explained: predicted or label" choices:"predicted|label"`
	Chunk       int     `json:"chunk" doc:"inputs per forward pass, at most: fewer where they would take more than 2 MiB (ImageNet-sized images: 4)" range:"[1,]"`
}

// Check implements param.Checker.
func (r IROF) Check() error { return checkReference(r.Reference) }

func (r IROF) defaults() IROF {
	r.Samples = cmp.Or(r.Samples, 100)
	r.Segments = cmp.Or(r.Segments, 49)
	r.Compactness = cmp.Or(r.Compactness, 0.1)
	r.Reference = cmp.Or(r.Reference, "mean")
	r.Rank = cmp.Or(r.Rank, Magnitude)
	r.Target = cmp.Or(r.Target, "predicted")
	r.Chunk = cmp.Or(r.Chunk, 1024)
	return r
}

// Info implements Protocol.
func (r IROF) Info() Info {
	over := removedAxis("superpixels")
	return Info{Name: "IROF", Category: "model", Family: FamilyFaithfulness, Data: []string{"image"},
		Doc:    "IROF (Rieger & Hansen 2020): SLIC superpixels removed most relevant first; the area over the explained class's relative probability",
		Params: Params(r.defaults()),
		Curves: []Metric{{Name: "relative_probability", Better: Lower, Label: "MoRF", Over: over, Value: Axis{Title: "probability of the explained class / its value untouched", Reference: &Reference{1, "untouched"}},
			Doc: "the explained class's probability divided by its value on the untouched image, superpixels removed most relevant first; mean over images"}},
		Metrics: []Metric{{Name: "irof", Better: Higher, Headline: true, Label: "AOC", Of: "relative_probability", Value: Axis{Title: "area over the relative probability curve"},
			Doc: "IROF: 1 − the area under each image's relative probability curve over the fraction of superpixels removed; mean over images"}}}
}

// Run implements Protocol.
func (r IROF) Run(ctx context.Context, env *Env) (Result, error) {
	r = r.defaults()
	res := Result{Protocol: "IROF", Method: env.Method, Config: config(r)}
	p, err := newProbe(ctx, env, r.Samples, pixelGrid, r.Reference, "probability", r.Target)
	if err != nil {
		return res, fmt.Errorf("IROF: %w", err)
	}
	C, H, W := p.shape[0], p.shape[1], p.shape[2]
	if H < 2 || W < 2 {
		return res, fmt.Errorf("IROF: superpixels need images, not %d×%d inputs", H, W)
	}
	// Each image's superpixels, most relevant first.
	dim, hw := C*H*W, H*W
	labels, orders, counts := make([][]int, p.n), make([][]int, p.n), make([]int, p.n)
	maps := ranked(p.maps, r.Rank)
	eachChunk(p.n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			l, k := imageops.SLIC(p.x[i*dim:(i+1)*dim], C, H, W, r.Segments, r.Compactness)
			sum, size := make([]float32, k), make([]float32, k)
			for q, s := range l {
				sum[s] += maps[i*hw+q]
				size[s]++
			}
			for s := range sum {
				sum[s] /= size[s]
			}
			labels[i], orders[i], counts[i] = l, perturb.Order(sum, true), k
		}
	})
	steps := r.Steps
	if steps == 0 {
		steps = r.Segments
	}
	frac := make([]float64, steps+1)
	for j := range frac {
		frac[j] = float64(j) / float64(steps)
	}
	out, err := p.perturbed(ctx, env, "IROF", steps+1, r.Chunk, func(i, j int, keep []float32) {
		removed := make([]bool, counts[i])
		for _, s := range orders[i][:int(math.Round(frac[j]*float64(counts[i])))] {
			removed[s] = true
		}
		for q, s := range labels[i] {
			keep[q] = 1
			if removed[s] {
				keep[q] = 0
			}
		}
	})
	if err != nil {
		return res, fmt.Errorf("IROF: %w", err)
	}
	per, curves := make([]float64, p.n), make([][]float64, p.n)
	for i, v := range out {
		c := make([]float64, len(v))
		for j, s := range v {
			c[j] = s / p.base[i]
			if p.base[i] == 0 {
				c[j] = math.NaN() // the label's probability underflowed: nothing to divide by
			}
		}
		curves[i], per[i] = c, 1-AUC(frac, c)
	}
	avg := make(Values, steps+1)
	for j := range avg {
		col := make([]float64, p.n)
		for i, c := range curves {
			col[i] = c[j]
		}
		avg[j] = mean(col)
	}
	sd, nIn := spread(curves)
	res.Curves = []Curve{{Name: "relative_probability", XLabel: "fraction of superpixels removed", YLabel: "relative probability", X: frac, Y: avg, SD: sd, N: nIn}}
	res.keep("irof", per)
	res.Scalars = []Scalar{{"irof", mean(per), Higher}}
	return res, nil
}

// Work implements Worker: every step of every image.
func (r IROF) Work(_, testN int, _ []int) Work {
	r = r.defaults()
	n := min(r.Samples, testN) * (cmp.Or(r.Steps, r.Segments) + 1)
	return Work{Forward: float64(min(r.Samples, testN) + n)}.Add(filling(r.Reference, n), 1)
}
