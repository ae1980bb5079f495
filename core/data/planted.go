package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// The planted-truth set, fashion-mnist-planted (the "decoy" construction):
// Fashion-MNIST's garments, each shrunk into the image's central 20×20
// pixels, with a 4×4 grey patch (PatchValue) planted in the 4-pixel border left around
// them, at one of ten places; the place is the label. Labels are drawn
// uniformly and independently of the garment, so the patch is the only
// evidence for a label and each sample's mask is exactly its patch.
//
// Why shrink the garment: Fashion-MNIST's garments reach the border. A
// 4×4 block at the middle of the top edge touches the garment (a pixel
// above 0.05) in 70 % of the training images, at the middle of the left
// edge in 32 %, even at the bottom corners in 18–26 %. A patch planted
// there would cover part of the garment, and removing it would leave a
// dark hole at a place the class decides: a second, unintended code. With
// the border empty in every image, removing the patch (setting its pixels
// to the background, 0) gives back exactly the garment alone, which says
// nothing of the label: any model's accuracy on it is 1/10 in expectation.
//
// Why 4×4: the size of Decoy-MNIST's swatch (Ross et al. 2017, "Right
// for the right reasons"), 16 of 784 pixels, small enough to be a sharp
// target for localisation metrics and large enough to survive the pooling
// of the usual convolutional networks. The ten places lie on the border 4
// pixels apart or more, so no two patches touch.
//
// Why grey (0.3), not white: a white patch on the empty border is the
// image's strongest edge (Sobel magnitude 4.24, above every shrunk
// garment's largest, whose median is 3.43 and 5th percentile 2.47 over
// 500 test images), so a map of edges, which ignores the model, would
// point at it as surely as a faithful map: the planted truth would not
// tell the model's evidence from the image's. At 0.3 the patch's edge
// (1.27) is below every one of those garments' largest, while a model
// still finds it on a border that is otherwise exactly 0.
const (
	PatchSide    = 4   // side of a planted patch, in pixels
	PatchValue   = 0.3 // its pixels' value
	plantedSide  = 28  // side of the images Plant takes (Fashion-MNIST's)
	plantedInner = 20  // side of the shrunk garment, centred
)

// PlantedClasses are the classes of fashion-mnist-planted, each named by
// where its patch lies (PatchOrigin).
func PlantedClasses() []string {
	return []string{"patch top-left", "patch top, left of centre", "patch top, right of centre", "patch top-right",
		"patch middle-left", "patch middle-right",
		"patch bottom-left", "patch bottom, left of centre", "patch bottom, right of centre", "patch bottom-right"}
}

// PatchOrigin is the row and column of the top-left pixel of class k's
// patch in a 28×28 image: along the top edge at columns 0, 8, 16 and 24
// (classes 0–3), at the middle of the left and right edges (4, 5), along
// the bottom edge as along the top (6–9).
func PatchOrigin(k int) (row, col int) {
	edge := []int{0, 8, 16, 24}
	switch {
	case k < 4:
		return 0, edge[k]
	case k < 6:
		return 12, 24 * (k - 4)
	}
	return 24, edge[k-6]
}

// Plant returns the planted-truth set made of d's images (1×28×28, as
// Fashion-MNIST's or MNIST's), each shrunk into the centre and given a
// patch for a label drawn with seed; d's labels are not used. d is left
// alone. Open("fashion-mnist-planted") gives Plant of Fashion-MNIST's
// training split with Options.Seed; its test split draws its labels from
// another stream of the same seed.
func Plant(d *Dataset, seed uint64) (*Dataset, error) {
	p := &Dataset{Name: d.Name, Shape: d.Shape, X: slices.Clone(d.X), Y: make([]int, d.Len())}
	if err := plant(p, rand.New(rand.NewPCG(seed, plantStream))); err != nil {
		return nil, err
	}
	return p, nil
}

// plantStream is the PCG stream of a training split's labels; a test
// split's is the next.
const plantStream = 0x706c616e74

// plant turns d into the planted-truth set in place: its images shrunk,
// its labels drawn from rng one sample after another (so that the first
// n samples of a set are planted as they are in the whole set), the
// patches and masks drawn.
func plant(d *Dataset, rng *rand.Rand) error {
	if !slices.Equal(d.Shape, []int{1, plantedSide, plantedSide}) {
		return fmt.Errorf("%s: samples of shape %v: a planted patch needs 1×%d×%d images", d.Name, d.Shape, plantedSide, plantedSide)
	}
	const area = plantedSide * plantedSide
	w := areaWeights(plantedSide, plantedInner)
	d.Classes, d.Masks = PlantedClasses(), make([]float32, d.Len()*area)
	var img [area]float32
	for i := range d.Len() {
		x := d.Sample(i)
		shrink(img[:], x, w)
		copy(x, img[:])
		k := rng.IntN(len(d.Classes))
		d.Y[i] = k
		r0, c0 := PatchOrigin(k)
		for r := r0; r < r0+PatchSide; r++ {
			for c := c0; c < c0+PatchSide; c++ {
				x[r*plantedSide+c] = PatchValue
				d.Masks[i*area+r*plantedSide+c] = 1
			}
		}
	}
	return d.Validate()
}

// areaTap is one source pixel's share of an output pixel.
type areaTap struct {
	src int
	w   float64
}

// areaWeights averages n pixels into m (m ≤ n): the taps of output pixel
// i are the source pixels that its span, [i·n/m, (i+1)·n/m), covers, each
// with the share of the span it covers. Each pixel's shares sum to 1.
func areaWeights(n, m int) [][]areaTap {
	taps := make([][]areaTap, m)
	step := float64(n) / float64(m)
	for i := range taps {
		lo, hi := float64(i)*step, float64(i+1)*step
		for s := range n {
			if o := min(hi, float64(s+1)) - max(lo, float64(s)); o > 1e-9 {
				taps[i] = append(taps[i], areaTap{s, o / step})
			}
		}
	}
	return taps
}

// shrink writes into dst (plantedSide²) the image src shrunk by area
// averaging to plantedInner² pixels and centred in an empty border:
// out = W·src·Wᵀ, W the taps as a matrix.
func shrink(dst, src []float32, taps [][]areaTap) {
	const off = (plantedSide - plantedInner) / 2
	clear(dst)
	var rows [plantedInner][plantedSide]float64 // W·src
	for i, ti := range taps {
		for _, t := range ti {
			for c := range plantedSide {
				rows[i][c] += t.w * float64(src[t.src*plantedSide+c])
			}
		}
	}
	for i := range plantedInner {
		for j, tj := range taps {
			var v float64
			for _, t := range tj {
				v += t.w * rows[i][t.src]
			}
			dst[(i+off)*plantedSide+j+off] = float32(min(v, 1))
		}
	}
}

// openPlanted opens fashion-mnist-planted: Fashion-MNIST's two splits
// (read only as far as opt's heads) planted with opt.Seed.
func openPlanted(opt Options) (*Dataset, *Dataset, error) {
	tr, te, err := loadIDXDir(FashionMNISTDir, "fashion-mnist-planted", FashionMNISTClasses(), opt)
	if err != nil {
		return nil, nil, err
	}
	for i, d := range []*Dataset{tr, te} {
		if err := plant(d, rand.New(rand.NewPCG(opt.Seed, plantStream+uint64(i)))); err != nil {
			return nil, nil, fmt.Errorf("load %s: %w", FashionMNISTDir, err)
		}
	}
	return tr, te, nil
}
