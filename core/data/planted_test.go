package data

import (
	"math"
	"os"
	"slices"
	"testing"
)

// flatImages is n 1×28×28 images of the constant v.
func flatImages(n int, v float32) *Dataset {
	d := &Dataset{Name: "flat", Shape: []int{1, 28, 28}, X: make([]float32, n*784), Y: make([]int, n), Classes: []string{"a", "b"}}
	for i := range d.X {
		d.X[i] = v
	}
	return d
}

// Each sample's patch is a 4×4 block of 1s at the place its class names,
// checked against positions written out by hand; its mask is exactly
// that block; the garment (here a grey 0.5 everywhere) is shrunk into
// the central 20×20 pixels, still 0.5 there, and the border around it is
// 0 outside the patch.
func TestPlantedPatchLiesWhereItsClassSaysAndIsTheMask(t *testing.T) {
	origins := map[string][2]int{ // by hand: top row, middles, bottom row
		"patch top-left": {0, 0}, "patch top, left of centre": {0, 8}, "patch top, right of centre": {0, 16}, "patch top-right": {0, 24},
		"patch middle-left": {12, 0}, "patch middle-right": {12, 24},
		"patch bottom-left": {24, 0}, "patch bottom, left of centre": {24, 8}, "patch bottom, right of centre": {24, 16}, "patch bottom-right": {24, 24},
	}
	d, err := Plant(flatImages(2000, 0.5), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Classes) != 10 || d.MaskLen() != 784 || len(d.Masks) != 2000*784 {
		t.Fatalf("%d classes, masks of %d values, %d in all", len(d.Classes), d.MaskLen(), len(d.Masks))
	}
	for i := range d.Len() {
		o, ok := origins[d.Classes[d.Y[i]]]
		if !ok {
			t.Fatalf("class %q has no hand-written place", d.Classes[d.Y[i]])
		}
		x, m := d.Sample(i), d.Masks[i*784:(i+1)*784]
		for r := range 28 {
			for c := range 28 {
				inPatch := r >= o[0] && r < o[0]+4 && c >= o[1] && c < o[1]+4
				inner := r >= 4 && r < 24 && c >= 4 && c < 24
				wantX, wantM := float32(0), float32(0)
				switch {
				case inPatch:
					wantX, wantM = 0.3, 1 // PatchValue
				case inner:
					wantX = 0.5
				}
				if m[r*28+c] != wantM || math.Abs(float64(x[r*28+c]-wantX)) > 1e-6 {
					t.Fatalf("sample %d (%s), pixel (%d, %d): value %g, mask %g; want %g, %g", i, d.Classes[d.Y[i]], r, c, x[r*28+c], m[r*28+c], wantX, wantM)
				}
			}
		}
	}
	// Labels are uniform: each class's count of 2000 within 4 binomial
	// standard deviations (√(2000·0.1·0.9) ≈ 13.4) of 200.
	for k, n := range d.ClassCounts() {
		if n < 146 || n > 254 {
			t.Errorf("class %d drawn %d times of 2000", k, n)
		}
	}
	if _, err := Plant(&Dataset{Name: "digits", Shape: []int{1, 8, 8}, X: make([]float32, 64), Y: []int{0}}, 1); err == nil {
		t.Error("8×8 images planted")
	}
}

// Shrinking by area averaging keeps a constant image constant and the
// garment's ink: the shrunk image holds (20/28)² of the original's sum.
func TestShrinkKeepsTheGarmentsInk(t *testing.T) {
	w := areaWeights(28, 20)
	for i, taps := range w {
		var s float64
		for _, t := range taps {
			s += t.w
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("weights of output pixel %d sum to %g", i, s)
		}
	}
	src, dst := make([]float32, 784), make([]float32, 784)
	var sum float64
	for i := range src {
		src[i] = float32(i%29) / 28
		sum += float64(src[i])
	}
	shrink(dst, src, w)
	var got float64
	for _, v := range dst {
		got += float64(v)
	}
	if want := sum * 400 / 784; math.Abs(got-want) > 1e-3 {
		t.Errorf("shrunk image holds %g, want %g", got, want)
	}
}

// The same seed plants the same set bit for bit; another seed draws
// other labels; the input is left alone.
func TestPlantedSameSeedSameSet(t *testing.T) {
	in := flatImages(500, 0.25)
	before := slices.Clone(in.X)
	a, _ := Plant(in, 7)
	b, _ := Plant(in, 7)
	c, _ := Plant(in, 8)
	if !slices.Equal(a.X, b.X) || !slices.Equal(a.Y, b.Y) || !slices.Equal(a.Masks, b.Masks) {
		t.Error("seed 7 planted two different sets")
	}
	if slices.Equal(a.Y, c.Y) {
		t.Error("seeds 7 and 8 drew the same labels")
	}
	if !slices.Equal(in.X, before) || !slices.Equal(in.Y, make([]int, 500)) || in.Masks != nil {
		t.Error("Plant changed its input")
	}
}

// Subset, Split and Head carry each sample's mask with it: after each,
// every sample's mask is still the patch its label places, where its
// pixels are 1.
func TestPlantedMasksStayWithTheirSamples(t *testing.T) {
	d, err := Plant(flatImages(300, 0.5), 3)
	if err != nil {
		t.Fatal(err)
	}
	a, b := d.Split(0.3, 5)
	for name, s := range map[string]*Dataset{"subset": d.Subset([]int{299, 5, 17, 5}), "split (first)": a, "split (second)": b, "head": d.Head(40)} {
		if err := s.Validate(); err != nil || s.Masks == nil {
			t.Fatalf("%s: %v (masks: %v)", name, err, s.Masks != nil)
		}
		for i := range s.Len() {
			r0, c0 := PatchOrigin(s.Y[i])
			m, x := s.Masks[i*784:(i+1)*784], s.Sample(i)
			for j, v := range m {
				r, c := j/28, j%28
				want := float32(0)
				if r >= r0 && r < r0+4 && c >= c0 && c < c0+4 {
					want = 1
				}
				if v != want || (v == 1 && x[j] != PatchValue) {
					t.Fatalf("%s: sample %d (class %d): mask %g at (%d, %d), value %g", name, i, s.Y[i], v, r, c, x[j])
				}
			}
		}
	}
}

// Open("fashion-mnist-planted") is Plant of Fashion-MNIST's training
// split with the seed, read only as far as the heads; the same seed opens
// the same set bit for bit, a longer head the same samples first.
func TestOpenPlantedIsFashionMNISTPlanted(t *testing.T) {
	if _, err := os.Stat(FashionMNISTDir); err != nil {
		t.Skip("Fashion-MNIST is not installed (dataset-fashion-mnist)")
	}
	opt := Options{Seed: 4, TrainHead: 300, TestHead: 100}
	tr, te, err := Open("fashion-mnist-planted", opt)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 300 || te.Len() != 100 || !slices.Equal(tr.Classes, PlantedClasses()) || len(te.Masks) != 100*784 {
		t.Fatalf("%d and %d samples, classes %v, %d test mask values", tr.Len(), te.Len(), tr.Classes, len(te.Masks))
	}
	fm, _, err := Open("fashion-mnist", opt)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Plant(fm, 4)
	if !slices.Equal(tr.X, want.X) || !slices.Equal(tr.Y, want.Y) || !slices.Equal(tr.Masks, want.Masks) {
		t.Error("the planted training split is not Plant of Fashion-MNIST's")
	}
	tr2, te2, _ := Open("fashion-mnist-planted", opt)
	if !slices.Equal(tr.X, tr2.X) || !slices.Equal(te.Y, te2.Y) || !slices.Equal(te.Masks, te2.Masks) {
		t.Error("seed 4 opened two different sets")
	}
	longer, _, _ := Open("fashion-mnist-planted", Options{Seed: 4, TrainHead: 600, TestHead: 1})
	if !slices.Equal(longer.Head(300).X, tr.X) || !slices.Equal(longer.Y[:300], tr.Y) {
		t.Error("a longer head planted its first samples otherwise")
	}
	if slices.Equal(tr.Y[:100], te.Y) {
		t.Error("the test split drew the training split's labels")
	}
	s, err := Describe("fashion-mnist-planted")
	if err != nil || !s.Masks || s.Train != 60000 || s.Test != 10000 || !slices.Equal(s.Classes, PlantedClasses()) {
		t.Errorf("described as %+v (%v)", s, err)
	}
}
