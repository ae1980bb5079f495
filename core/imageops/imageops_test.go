package imageops

import (
	"math"
	"slices"
	"testing"
)

func TestBilinearMatchesTorch(t *testing.T) {
	// torch.nn.functional.interpolate([[0,1],[2,3]], size=4, mode="bilinear", align_corners=False)
	want := []float32{0, 0.25, 0.75, 1, 0.5, 0.75, 1.25, 1.5, 1.5, 1.75, 2.25, 2.5, 2, 2.25, 2.75, 3}
	got := make([]float32, 16)
	Bilinear(got, 4, 4, []float32{0, 1, 2, 3}, 2, 2)
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestGaussianBlur(t *testing.T) {
	const H, W = 15, 15
	img := make([]float32, H*W)
	img[7*W+7] = 1
	GaussianBlur(img, H, W, 1)
	var sum float64
	for _, v := range img {
		sum += float64(v)
	}
	if math.Abs(sum-1) > 1e-6 {
		t.Errorf("an impulse's mass is %g after blurring, want 1", sum)
	}
	// Separable Gaussian, normalised over ±3σ: ratio of neighbours is e^{-1/2}.
	if r := float64(img[7*W+8] / img[7*W+7]); math.Abs(r-math.Exp(-0.5)) > 1e-5 {
		t.Errorf("neighbour ratio %g, want e^-½", r)
	}
	flat := slices.Repeat([]float32{0.3}, H*W)
	GaussianBlur(flat, H, W, 2)
	for _, v := range flat {
		if math.Abs(float64(v)-0.3) > 1e-6 {
			t.Fatalf("a constant image changed to %g", v)
		}
	}
}

func TestMaxFilterAndTotalVariation(t *testing.T) {
	m := []float32{
		0, 0, 0, 0,
		0, 5, 0, 0,
		0, 0, 0, 0,
		0, 0, 0, 1,
	}
	mf := slices.Clone(m)
	MaxFilter(mf, 4, 4, 3)
	want := []float32{5, 5, 5, 0, 5, 5, 5, 0, 5, 5, 5, 1, 0, 0, 1, 1}
	if !slices.Equal(mf, want) {
		t.Errorf("max filter %v, want %v", mf, want)
	}
	// The 5 has four neighbours (20); the 1 in the corner has two (2).
	if tv := TotalVariation(m, 4, 4); tv != 22 {
		t.Errorf("total variation %g, want 22", tv)
	}
}

// A vertical edge has horizontal gradients only: every block's weight is
// in the first bin, and a blank plane has no gradient at all.
func TestHOGOfAnEdge(t *testing.T) {
	const H, W = 8, 8
	img := make([]float32, H*W)
	for y := range H {
		for x := W / 2; x < W; x++ {
			img[y*W+x] = 1
		}
	}
	h := HOG(img, H, W, 2)
	if len(h) != 3*3*4*9 {
		t.Fatalf("%d values, want 3×3 blocks of 4 cells of 9 bins", len(h))
	}
	var edge float64
	for i, v := range h {
		if i%9 != 0 && v != 0 {
			t.Fatalf("bin %d of cell %d holds %g", i%9, i/9, v)
		}
		edge += v
	}
	if edge == 0 {
		t.Error("no gradient found at the edge")
	}
	// Turned by 90°, the edge's gradients are vertical: bin 4 (80°–100°).
	rot := make([]float32, H*W)
	for y := range H {
		for x := range W {
			rot[x*W+y] = img[y*W+x]
		}
	}
	for i, v := range HOG(rot, H, W, 2) {
		if i%9 != 4 && v != 0 {
			t.Fatalf("turned edge: bin %d holds %g", i%9, v)
		}
	}
	for _, v := range HOG(make([]float32, H*W), H, W, 2) {
		if v != 0 {
			t.Fatal("blank plane has a gradient")
		}
	}
	if HOG(img, H, W, 5) != nil {
		t.Error("one cell made a descriptor")
	}
}

// An image of four flat quadrants is cut into exactly them, numbered in
// raster order; a two-channel image of two stripes that differ only in
// the second channel into the two stripes.
func TestSLICFindsKnownSegments(t *testing.T) {
	const H, W = 16, 16
	img := make([]float32, H*W)
	for y := range H {
		for x := range W {
			img[y*W+x] = []float32{0, 1, 0.5, 0.25}[2*(y/8)+x/8]
		}
	}
	label, n := SLIC(img, 1, H, W, 4, 0.1)
	if n != 4 {
		t.Fatalf("%d segments, want 4", n)
	}
	for p, l := range label {
		if want := 2*(p/W/8) + p%W/8; l != want {
			t.Fatalf("pixel (%d, %d) in segment %d, want %d", p/W, p%W, l, want)
		}
	}
	two := make([]float32, 2*H*W)
	for p := range H * W {
		if p%W >= 5 {
			two[H*W+p] = 1
		}
	}
	label, n = SLIC(two, 2, H, W, 2, 0.1)
	if n != 2 {
		t.Fatalf("stripes: %d segments, want 2", n)
	}
	for p, l := range label {
		if want := map[bool]int{true: 1}[p%W >= 5]; l != want {
			t.Fatalf("stripes: pixel (%d, %d) in segment %d, want %d", p/W, p%W, l, want)
		}
	}
}

// On a flat image SLIC is a grid of about k compact, connected segments.
func TestSLICOfAFlatImageIsAGrid(t *testing.T) {
	const H, W = 28, 28
	label, n := SLIC(make([]float32, H*W), 1, H, W, 49, 0.1)
	if n != 49 {
		t.Fatalf("%d segments, want 49", n)
	}
	size := make([]int, n)
	for _, l := range label {
		size[l]++
	}
	if slices.Min(size) != 16 || slices.Max(size) != 16 {
		t.Errorf("segment sizes from %d to %d, want 4×4 squares", slices.Min(size), slices.Max(size))
	}
}
