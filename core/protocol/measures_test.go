package protocol

import (
	"math"
	"math/rand/v2"
	"testing"
)

// FPR@95%TPR, AUPR-In and AUPR-Out (FUD Table 2) on scores worked out by
// hand, with the clean inputs' energies the in-distribution set.
func TestOODMeasuresHandSolved(t *testing.T) {
	for _, tc := range []struct {
		name     string
		id, ood  []float64 // energies: lower is more familiar
		tpr      float64
		fpr      float64
		in, outP float64 // AUPR-In, AUPR-Out
	}{
		// Perfectly apart: the 95 % threshold (the largest clean energy)
		// lets no perturbed input through; both precisions are 1.
		{"separated", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0.95, 0, 1, 1},
		// The same scores: the threshold lets every input through (ties
		// count as in-distribution); AP with ties entering together is the
		// share of positives.
		{"identical", []float64{1, 1}, []float64{1, 1}, 0.95, 1, 0.5, 0.5},
		// Clean 1, 3; perturbed 2. At TPR 0.5 the threshold is 1 and lets
		// none through; at 0.95 it is 3 and lets the 2 through. AUPR-Out
		// (perturbed positive, energy as score): 3 (clean), 2 (pert.) →
		// AP = 1·(1/2). AUPR-In (clean positive, −energy): −1 (clean, P 1,
		// recall ½), −2 (pert.), −3 (clean, P ⅔, recall 1) → ½ + ½·⅔.
		{"interleaved", []float64{1, 3}, []float64{2}, 0.5, 0, 0.5 + 1.0/3, 0.5},
		{"interleaved at 95%", []float64{1, 3}, []float64{2}, 0.95, 1, 0.5 + 1.0/3, 0.5},
	} {
		fpr := FPRAtTPR(tc.id, tc.ood, tc.tpr)
		in := AveragePrecision(negated(tc.id), negated(tc.ood))
		out := AveragePrecision(tc.ood, tc.id)
		if math.Abs(fpr-tc.fpr) > 1e-12 || math.Abs(in-tc.in) > 1e-12 || math.Abs(out-tc.outP) > 1e-12 {
			t.Errorf("%s: FPR %g AUPR-In %g AUPR-Out %g, want %g %g %g", tc.name, fpr, in, out, tc.fpr, tc.in, tc.outP)
		}
	}
	// Average precision with positives 3, 1 and a negative 2 ranked
	// between them: ½·1 + ½·⅔.
	if got := AveragePrecision([]float64{3, 1}, []float64{2}); math.Abs(got-(0.5+1.0/3)) > 1e-12 {
		t.Errorf("AP %g, want %g", got, 0.5+1.0/3)
	}
	if !math.IsNaN(AveragePrecision(nil, []float64{1})) || !math.IsNaN(FPRAtTPR(nil, []float64{1}, 0.95)) {
		t.Error("an empty set gives a number")
	}
	// Two draws of one distribution: FPR@95 near 0.95, APs near 0.5.
	rng := rand.New(rand.NewPCG(1, 1))
	a, b := make([]float64, 20000), make([]float64, 20000)
	for i := range a {
		a[i], b[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	if f := FPRAtTPR(a, b, 0.95); math.Abs(f-0.95) > 0.01 {
		t.Errorf("FPR@95 of one distribution %g", f)
	}
	if p := AveragePrecision(a, b); math.Abs(p-0.5) > 0.01 {
		t.Errorf("AP of one distribution %g", p)
	}
}

// MS-SSIM: 1 for an image with itself; of two constant images (no
// contrast: every cs term is 1) the coarsest scale's luminance term
// l = (2ab + C1)/(a² + b² + C1), raised to its rescaled exponent; one
// scale on a small image is SSIM itself.
func TestMSSSIM(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const h, w = 28, 28
	x := make([]float32, h*w)
	for i := range x {
		x[i] = rng.Float32()
	}
	if got := msssim(x, x, h, w, 1); math.Abs(got-1) > 1e-12 {
		t.Errorf("MS-SSIM of an image with itself %g", got)
	}
	if m := msssimScales(h, w); m != 3 {
		t.Errorf("28×28 has %d scales, want 3 (28, 14, 7)", m)
	}
	a, b := make([]float32, h*w), make([]float32, h*w)
	for i := range a {
		a[i], b[i] = 0.25, 0.75
	}
	c1 := 0.01 * 0.01
	l := (2*0.25*0.75 + c1) / (0.25*0.25 + 0.75*0.75 + c1)
	beta := msssimWeights[2] / (msssimWeights[0] + msssimWeights[1] + msssimWeights[2])
	if got, want := msssim(a, b, h, w, 1), math.Pow(l, beta); math.Abs(got-want) > 1e-12 {
		t.Errorf("MS-SSIM of constant images %g, want %g", got, want)
	}
	y := make([]float32, 8*8)
	for i := range y {
		y[i] = x[i] + 0.1*rng.Float32()
	}
	if got, want := msssim(x[:64], y, 8, 8, 1), ssim(x[:64], y, 8, 8, 1); math.Abs(got-want) > 1e-12 {
		t.Errorf("MS-SSIM of 8×8 (one scale) %g, SSIM %g", got, want)
	}
}

// GMSD is 0 for identical images; against a constant image (no gradient)
// every similarity is c/(m² + c), m the other image's gradient magnitude,
// worked out here by hand on a 4×4 image.
func TestGMSDHandSolved(t *testing.T) {
	x := []float32{
		0, 0, 1, 1,
		0, 0, 1, 1,
		0, 0, 1, 1,
		0, 0, 1, 1,
	}
	if got := gmsd(x, x, 4, 4, 1); got != 0 {
		t.Errorf("GMSD of an image with itself %g", got)
	}
	flat := make([]float32, 16)
	// The block means D = [[0, 1], [0, 1]]. Each pixel's Prewitt sums over
	// its 3×3 neighbourhood (zeros outside): ix = Σ D(r+k, c−1) − D(r+k,
	// c+1), iy = Σ D(r−1, c+k) − D(r+1, c+k), both /3.
	//   (0,0): ix = (0+0) − (1+1) = −2 → −2/3; iy = 0 − (0+1) = −1 → −1/3
	//   (0,1): ix = (0+0) − 0 = 0;             iy = 0 − (0+1) = −1 → −1/3
	//   (1,0): ix = −2/3; iy = (0+1) − 0 = 1/3;  (1,1): ix 0, iy 1/3.
	m2 := []float64{5.0 / 9, 1.0 / 9, 5.0 / 9, 1.0 / 9} // squared magnitudes
	c := 170.0 / (255 * 255)
	var q []float64
	for _, v := range m2 {
		q = append(q, c/(v+c))
	}
	mean := (q[0] + q[1] + q[2] + q[3]) / 4
	var ss float64
	for _, v := range q {
		ss += (v - mean) * (v - mean)
	}
	if got, want := gmsd(x, flat, 4, 4, 1), math.Sqrt(ss/4); math.Abs(got-want) > 1e-12 {
		t.Errorf("GMSD against a flat image %g, want %g", got, want)
	}
}

// The shift diagnostics read SSIM off MS-SSIM's finest scale: the same
// bits as each computed on its own, on images of one scale up to five.
func TestSSIMAndMSSSIMTogetherAreEachAlone(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, hw := range [][2]int{{7, 9}, {28, 28}, {64, 48}, {224, 224}} {
		h, w := hw[0], hw[1]
		x, y := make([]float32, h*w), make([]float32, h*w)
		for i := range x {
			x[i] = rng.Float32()
			y[i] = x[i] + 0.2*rng.Float32()
		}
		s, ms := ssimAndMS(x, y, h, w, 1.2)
		if s != ssim(x, y, h, w, 1.2) || ms != msssim(x, y, h, w, 1.2) {
			t.Errorf("%d×%d: together %v, %v; alone %v, %v", h, w, s, ms, ssim(x, y, h, w, 1.2), msssim(x, y, h, w, 1.2))
		}
	}
}
