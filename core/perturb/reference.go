package perturb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"faithlab/core/imageops"
)

// Reference fills the removed pixels of an image. Fill gets one (C, H, W)
// image, changes it in place where keep (H×W, 1 kept, 0 removed) is 0, and
// draws any randomness from rng. A Reference is safe for concurrent use.
type Reference interface {
	Name() string
	Fill(img []float32, shape []int, keep []float32, rng *rand.Rand) error
}

// Zero fills removed pixels with 0 (ROAR's fixed value).
type Zero struct{}

// Name implements Reference.
func (Zero) Name() string { return "zero" }

// Fill implements Reference.
func (z Zero) Fill(img []float32, shape []int, keep []float32, _ *rand.Rand) error {
	return fillFrom(z, img, shape, keep)
}

func (Zero) image(_ []float32, _ []int, dst []float32) error {
	clear(dst)
	return nil
}

// ChannelMean fills removed pixels with the mean of the image's own channel
// over all its pixels, computed before removal.
type ChannelMean struct{}

// Name implements Reference.
func (ChannelMean) Name() string { return "mean" }

// Fill implements Reference.
func (m ChannelMean) Fill(img []float32, shape []int, keep []float32, _ *rand.Rand) error {
	return fillFrom(m, img, shape, keep)
}

func (ChannelMean) image(img []float32, shape []int, dst []float32) error {
	hw := shape[1] * shape[2]
	for c := range shape[0] {
		var s float64
		for _, v := range img[c*hw : (c+1)*hw] {
			s += float64(v)
		}
		m := float32(s / float64(hw))
		for j := c * hw; j < (c+1)*hw; j++ {
			dst[j] = m
		}
	}
	return nil
}

// DatasetMean fills removed pixels with a fixed per-channel value, usually
// the training set's channel means.
type DatasetMean struct{ Mean []float32 }

// Name implements Reference.
func (DatasetMean) Name() string { return "dataset-mean" }

// Fill implements Reference.
func (d DatasetMean) Fill(img []float32, shape []int, keep []float32, _ *rand.Rand) error {
	return fillFrom(d, img, shape, keep)
}

func (d DatasetMean) image(_ []float32, shape []int, dst []float32) error {
	if len(d.Mean) != shape[0] {
		return fmt.Errorf("dataset mean has %d channels, image %d", len(d.Mean), shape[0])
	}
	hw := shape[1] * shape[2]
	for c, m := range d.Mean {
		for p := range hw {
			dst[c*hw+p] = m
		}
	}
	return nil
}

// ChannelMeans returns the mean of each channel over the images in x
// (n×C×H×W for shape C, H, W): DatasetMean's values for a training set.
func ChannelMeans(x []float32, shape []int) []float32 {
	C, hw := shape[0], shape[1]*shape[2]
	n := len(x) / (C * hw)
	sums := make([]float64, C)
	for i := range n {
		img := x[i*C*hw : (i+1)*C*hw]
		for c := range C {
			for _, v := range img[c*hw : (c+1)*hw] {
				sums[c] += float64(v)
			}
		}
	}
	m := make([]float32, C)
	for c := range m {
		m[c] = float32(sums[c] / float64(n*hw))
	}
	return m
}

// Blur fills removed pixels with the image blurred by a Gaussian of
// standard deviation Sigma pixels (computed before removal).
type Blur struct{ Sigma float64 }

// Name implements Reference.
func (b Blur) Name() string { return "blur:" + strconv.FormatFloat(b.Sigma, 'g', -1, 64) }

// Fill implements Reference.
func (b Blur) Fill(img []float32, shape []int, keep []float32, _ *rand.Rand) error {
	return fillFrom(b, img, shape, keep)
}

func (b Blur) image(img []float32, shape []int, dst []float32) error {
	if !(b.Sigma > 0) {
		return fmt.Errorf("blur σ %g: must be positive", b.Sigma)
	}
	copy(dst, img)
	hw := shape[1] * shape[2]
	for c := range shape[0] {
		imageops.GaussianBlur(dst[c*hw:(c+1)*hw], shape[1], shape[2], b.Sigma)
	}
	return nil
}

// imager is a Reference whose fill values form an image of their own,
// computed from the image before removal: every reference but ROAD's, whose
// values depend on which pixels are kept.
// Uniform fills each removed value with a draw from the uniform
// distribution over the image's own range of values, [min, max] over all
// its channels: the random values with which Samek et al. (2017) perturb
// regions, on whatever scale the data has.
type Uniform struct{}

// Name implements Reference.
func (Uniform) Name() string { return "uniform" }

// Fill implements Reference.
func (Uniform) Fill(img []float32, shape []int, keep []float32, rng *rand.Rand) error {
	if err := checkShapes(img, shape, keep); err != nil {
		return err
	}
	lo, hi := slices.Min(img), slices.Max(img)
	hw := shape[1] * shape[2]
	for c := range shape[0] {
		for p, k := range keep {
			if k == 0 {
				img[c*hw+p] = lo + (hi-lo)*rng.Float32()
			}
		}
	}
	return nil
}

type imager interface {
	Reference
	image(img []float32, shape []int, dst []float32) error
}

// Baseline writes into dst the reference image of x (shape C, H, W): what
// ref fills every pixel with when all are removed. It is the baseline x′ of
// the path methods (Integrated Gradients, DeepLIFT), so that a baseline and
// a removal reference of the same name are the same values. ROAD has no
// baseline: it imputes removed pixels from the kept ones.
func Baseline(ref Reference, x []float32, shape []int, dst []float32) error {
	im, ok := ref.(imager)
	if !ok {
		return fmt.Errorf("reference %s cannot be a baseline: it fills removed pixels from the kept ones", ref.Name())
	}
	if len(shape) != 3 || shape[0]*shape[1]*shape[2] != len(x) || len(dst) != len(x) {
		return fmt.Errorf("baseline of %d values into %d for shape %v", len(x), len(dst), shape)
	}
	return im.image(x, shape, dst)
}

// fillFrom copies ref's image of img into the removed pixels of img.
func fillFrom(ref imager, img []float32, shape []int, keep []float32) error {
	if err := checkShapes(img, shape, keep); err != nil {
		return err
	}
	var vals []float32 // nil: zeros, without making an image of them
	if _, zero := ref.(Zero); !zero {
		vals = make([]float32, len(img))
		if err := ref.image(img, shape, vals); err != nil {
			return err
		}
	}
	hw := shape[1] * shape[2]
	for c := range shape[0] {
		for p, k := range keep {
			if k == 0 {
				v := float32(0)
				if vals != nil {
					v = vals[c*hw+p]
				}
				img[c*hw+p] = v
			}
		}
	}
	return nil
}

// checkShapes checks that img has the shape C×H×W and keep is one H×W mask
// of 1 (kept) and 0 (removed).
func checkShapes(img []float32, shape []int, keep []float32) error {
	if err := checkSizes(img, shape, keep); err != nil {
		return err
	}
	for p, k := range keep {
		if k != 0 && k != 1 {
			return maskValueError(k, p/shape[2], p%shape[2])
		}
	}
	return nil
}

// checkSizes is checkShapes without the pass over the mask's values, for a
// caller that reads them anyway.
func checkSizes(img []float32, shape []int, keep []float32) error {
	if len(shape) != 3 || shape[0]*shape[1]*shape[2] != len(img) {
		return fmt.Errorf("image of %d values does not have shape %v", len(img), shape)
	}
	if len(keep) != shape[1]*shape[2] {
		return fmt.Errorf("mask of %d values for a %d×%d image", len(keep), shape[1], shape[2])
	}
	return nil
}

func maskValueError(k float32, y, x int) error {
	return fmt.Errorf("mask value %g at pixel (%d, %d): want 1 (kept) or 0 (removed)", k, y, x)
}

// ParseReference reads a reference name: zero, mean, dataset-mean (with
// the channel means that datasetMean returns; it is called only for this
// reference, since it may scan a whole dataset), blur[:σ] (default σ 5),
// road[:noise] (default noise 0.01) or uniform.
func ParseReference(spec string, datasetMean func() []float32) (Reference, error) {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(spec), ":")
	num := func(def float64) (float64, error) {
		if !hasArg {
			return def, nil
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("reference %s: parameter %q is not a non-negative number", name, arg)
		}
		return v, nil
	}
	switch name {
	case "zero":
		return Zero{}, nil
	case "mean":
		return ChannelMean{}, nil
	case "dataset-mean":
		var m []float32
		if datasetMean != nil {
			m = datasetMean()
		}
		if m == nil {
			return nil, fmt.Errorf("reference dataset-mean needs the dataset's channel means")
		}
		return DatasetMean{Mean: m}, nil
	case "blur":
		s, err := num(5)
		if err != nil {
			return nil, err
		}
		return Blur{Sigma: s}, nil
	case "uniform":
		return Uniform{}, nil
	case "road":
		n, err := num(0.01)
		if err != nil {
			return nil, err
		}
		return ROAD{Noise: n}, nil
	}
	return nil, fmt.Errorf("unknown reference %q (zero, mean, dataset-mean, blur[:σ], road[:noise], uniform)", spec)
}

// FillAll fills the removed pixels of n images (n×C×H×W) given their masks
// (n×H×W), on all cores. Image i draws its randomness from its own stream
// (seed, first+i), so the result depends neither on the number of cores nor,
// when a caller numbers its images with first, on how it batches them.
// Fewer images than cores share the cores out within each image (ROAD's
// iterative solver).
func FillAll(ctx context.Context, ref Reference, imgs []float32, shape []int, keeps []float32, seed, first uint64) error {
	if len(shape) != 3 {
		return fmt.Errorf("image shape %v: want C, H, W", shape)
	}
	dim, hw := shape[0]*shape[1]*shape[2], shape[1]*shape[2]
	if dim == 0 || len(imgs)%dim != 0 || len(keeps) != len(imgs)/dim*hw {
		return fmt.Errorf("%d image values and %d mask values do not make images of shape %v with one H×W mask each", len(imgs), len(keeps), shape)
	}
	n := len(imgs) / dim
	var next atomic.Int64
	procs := runtime.GOMAXPROCS(0)
	errs := make([]error, max(1, min(procs, n)))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			road := roadSolver{threads: procs / len(errs)}
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				rng := rand.New(rand.NewPCG(seed, first+uint64(i)))
				img, keep := imgs[i*dim:(i+1)*dim], keeps[i*hw:(i+1)*hw]
				var err error
				if r, ok := ref.(ROAD); ok {
					err = road.fill(img, shape, keep, r.Noise, rng)
				} else {
					err = ref.Fill(img, shape, keep, rng)
				}
				if err != nil {
					errs[w] = fmt.Errorf("image %d: %w", i, err)
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}
