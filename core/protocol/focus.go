package protocol

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"faithlab/core/engine"
)

// Focus (Arias-Duart et al., "Focus! Rating XAI methods and finding
// biases", FUZZ-IEEE 2022) explains mosaics of four images, two of the
// class explained and two of other classes: per mosaic, the share of the
// map's positive relevance that lies on the explained class's two
// quadrants (Quantus 0.6's evaluate_instance; its defaults normalise the
// map by its largest magnitude, which leaves the share alone, and keep
// its sign). Random maps score about 0.5.
//
// Quantus takes the mosaics from its caller; Faithlab builds them from the
// test set, reproducibly from the run's seed, so that every method of a
// campaign is scored on the same mosaics (mosaic i is the same "input" i
// in every result of one dataset and seed): mosaic i draws, from the
// stream (seed, i), a class uniformly among those with two test images
// and other images besides, two distinct test images of it and two
// distinct test images of other classes, and a random placement of the
// four in the quadrants; it explains that class. The model takes inputs
// of one size, so each image is shrunk to half its sides (the mean of
// each 2×2 block) and the mosaic is as large as one input — Arias-Duart
// et al. and Quantus feed a mosaic of twice the sides to a model that
// pools globally. The images' sides must be even. Quadrants are named by
// rows, then columns (Quantus 0.6's "top right" slice is rows h:, columns
// :w of a row-major map, the lower left here; the score is the same for
// mosaics built to match).
type Focus struct {
	Samples int `json:"samples" doc:"mosaics built and explained" range:"[1,]"`
}

func (f Focus) defaults() Focus {
	f.Samples = cmp.Or(f.Samples, 100)
	return f
}

// CheckShape implements ShapeChecker: mosaics of half-size images need
// even sides.
func (Focus) CheckShape(shape []int) error {
	if len(shape) != 3 || shape[1]%2 != 0 || shape[2]%2 != 0 || shape[1] < 2 || shape[2] < 2 {
		return fmt.Errorf("Focus builds mosaics of images shrunk to half their sides: images of %v do not halve", shape)
	}
	return nil
}

// Info implements Protocol.
func (f Focus) Info() Info {
	return Info{Name: "Focus", Category: "model", Family: FamilyLocalisation, Data: []string{"image"},
		Doc:    "Focus (Arias-Duart et al. 2022): on mosaics of two images of the explained class and two of others, the share of the map's positive relevance on the explained class's images",
		Params: Params(f.defaults()),
		Metrics: []Metric{{Name: "focus", Better: Higher, Headline: true,
			Value: Axis{Title: "share of positive relevance on the explained class's quadrants, mean over mosaics", Range: []float64{0, 1}, Reference: &Reference{0.5, "chance"}},
			Doc:   "per mosaic, the map's positive relevance on the explained class's two quadrants over its positive relevance in all (undefined without any); mean over mosaics"}}}
}

// Mosaic is one mosaic Focus explains: four test images (by index), and
// which quadrants (top left, top right, bottom left, bottom right) hold
// the class explained.
type Mosaic struct {
	Images [4]int
	Target [4]bool
	Class  int
}

// Mosaics draws n mosaics from a test set's labels, reproducibly from
// seed (mosaic i from the stream (seed, i)).
func Mosaics(labels []int, n int, seed uint64) ([]Mosaic, error) {
	byClass := map[int][]int{}
	for i, y := range labels {
		byClass[y] = append(byClass[y], i)
	}
	var eligible []int
	for c, idx := range byClass {
		if len(idx) >= 2 && len(labels)-len(idx) >= 2 {
			eligible = append(eligible, c)
		}
	}
	if len(eligible) == 0 {
		return nil, fmt.Errorf("no class has two test images and two of other classes beside them")
	}
	slices.Sort(eligible)
	out := make([]Mosaic, n)
	for i := range out {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		c := eligible[rng.IntN(len(eligible))]
		own := byClass[c]
		a := rng.IntN(len(own))
		b := rng.IntN(len(own) - 1)
		if b >= a {
			b++
		}
		var others []int
		for j, y := range labels {
			if y != c {
				others = append(others, j)
			}
		}
		p := rng.IntN(len(others))
		q := rng.IntN(len(others) - 1)
		if q >= p {
			q++
		}
		perm := rng.Perm(4)
		m := Mosaic{Class: c}
		for k, img := range []int{own[a], own[b], others[p], others[q]} {
			m.Images[perm[k]] = img
			m.Target[perm[k]] = k < 2
		}
		out[i] = m
	}
	return out, nil
}

// mosaicImage writes into dst (C×H×W) the mosaic of the four images of
// x (n×C×H×W) that m names, each shrunk to half its sides.
func mosaicImage(dst, x []float32, shape []int, m Mosaic) {
	c, h, w := shape[0], shape[1], shape[2]
	dim, h2, w2 := c*h*w, h/2, w/2
	for q, img := range m.Images {
		src := x[img*dim : (img+1)*dim]
		r0, c0 := (q/2)*h2, (q%2)*w2
		for ch := range c {
			for r := range h2 {
				for col := range w2 {
					s := ch*h*w + 2*r*w + 2*col
					v := (src[s] + src[s+1] + src[s+w] + src[s+w+1]) / 4
					dst[ch*h*w+(r0+r)*w+c0+col] = v
				}
			}
		}
	}
}

// FocusScore is the share of map a's (H×W) positive relevance on the
// quadrants target marks (top left, top right, bottom left, bottom
// right; rows split at ⌊H/2⌋, columns at ⌊W/2⌋, as Quantus splits);
// NaN for a map without positive relevance.
func FocusScore(a []float64, h, w int, target [4]bool) float64 {
	var on, total float64
	for r := range h {
		for c := range w {
			v := a[r*w+c]
			if v <= 0 {
				continue
			}
			total += v
			q := 0
			if r >= h/2 {
				q += 2
			}
			if c >= w/2 {
				q++
			}
			if target[q] {
				on += v
			}
		}
	}
	if total == 0 {
		return math.NaN()
	}
	return on / total
}

// Run implements Protocol.
func (f Focus) Run(ctx context.Context, env *Env) (Result, error) {
	f = f.defaults()
	res := Result{Protocol: "Focus", Method: env.Method, Config: config(f)}
	if env.Explain == nil {
		return res, fmt.Errorf("Focus: needs the method itself to explain the mosaics it builds, which this caller does not give")
	}
	if env.Test == nil || env.Test.Len() == 0 {
		return res, fmt.Errorf("Focus: no test images")
	}
	shape := env.Test.Shape
	if err := f.CheckShape(shape); err != nil {
		return res, err
	}
	ms, err := Mosaics(env.Test.Y, f.Samples, env.Seed)
	if err != nil {
		return res, fmt.Errorf("Focus: %w", err)
	}
	n, dim := len(ms), engine.Size(shape)
	x := make([]float32, n*dim)
	target := make([]int, n)
	for i, m := range ms {
		mosaicImage(x[i*dim:(i+1)*dim], env.Test.X, shape, m)
		target[i] = m.Class
	}
	env.report(Progress{Stage: "Focus maps", Total: n})
	maps, err := explainOn(ctx, env, env.Net, x, n, target, shape)
	if err != nil {
		return res, fmt.Errorf("Focus: %w", err)
	}
	h, w := shape[1], shape[2]
	per := make([]float64, n)
	for i, m := range ms {
		per[i] = FocusScore(prepared(maps[i*h*w:(i+1)*h*w], normaliseMax, false), h, w, m.Target)
	}
	res.keep("focus", per)
	res.Scalars = []Scalar{{"focus", mean(per), Higher}}
	res.Samples = []Sample{
		{Name: "Focus mosaics", Kind: Perturbed, Shape: append([]int{min(PreviewCount, n)}, shape...), Values: slices.Clone(x[:min(PreviewCount, n)*dim])},
		{Name: "Focus maps", Kind: AttributionMap, Shape: []int{min(PreviewCount, n), 1, h, w}, Values: slices.Clone(maps[:min(PreviewCount, n)*h*w])},
	}
	return res, nil
}

// Work implements Worker: a map of each mosaic.
func (f Focus) Work(int, int, []int) Work { return Work{Forward: float64(f.defaults().Samples)} }
