package protocol

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"faithlab/core/engine"
)

func TestAUROCHandSolved(t *testing.T) {
	for _, tc := range []struct {
		pos, neg []float64
		want     float64
	}{
		{[]float64{3, 4}, []float64{1, 2}, 1},
		{[]float64{1, 2}, []float64{3, 4}, 0},
		{[]float64{1}, []float64{1}, 0.5},
		{[]float64{1, 3}, []float64{2}, 0.5},
		{[]float64{2, 2, 5}, []float64{1, 2, 4}, (1.5 + 1.5 + 3) / 9.0}, // each 2 beats 1 and ties 2; 5 beats all
	} {
		if got := AUROC(tc.pos, tc.neg); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("AUROC(%v, %v) = %g, want %g", tc.pos, tc.neg, got, tc.want)
		}
	}
	if !math.IsNaN(AUROC(nil, []float64{1})) {
		t.Error("AUROC without positives is not NaN")
	}
}

// ssimDirect is SSIM with the 2-D window summed directly, as the
// definition reads, to check the separable filtering of ssim.
func ssimDirect(x, y []float32, h, w int, span float64) float64 {
	const size = 7
	var g [size][size]float64
	var gs float64
	for i := range size {
		for j := range size {
			di, dj := float64(i-size/2), float64(j-size/2)
			g[i][j] = math.Exp(-(di*di + dj*dj) / (2 * 1.5 * 1.5))
			gs += g[i][j]
		}
	}
	c1, c2 := math.Pow(0.01*span, 2), math.Pow(0.03*span, 2)
	var sum float64
	for r := 0; r+size <= h; r++ {
		for c := 0; c+size <= w; c++ {
			var mx, my, xx, yy, xy float64
			for i := range size {
				for j := range size {
					wt := g[i][j] / gs
					u, v := float64(x[(r+i)*w+c+j]), float64(y[(r+i)*w+c+j])
					mx, my, xx, yy, xy = mx+wt*u, my+wt*v, xx+wt*u*u, yy+wt*v*v, xy+wt*u*v
				}
			}
			sum += (2*mx*my + c1) * (2*(xy-mx*my) + c2) / ((mx*mx + my*my + c1) * (xx - mx*mx + yy - my*my + c2))
		}
	}
	return sum / float64((h-size+1)*(w-size+1))
}

func TestSSIMAndPSNR(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const h, w = 7, 12 // the window shrinks to 7 on a 7-row image
	x, y := make([]float32, h*w), make([]float32, h*w)
	for i := range x {
		x[i] = rng.Float32()
		y[i] = x[i] + 0.2*rng.Float32() - 0.1
	}
	if got := ssim(x, x, h, w, 1); math.Abs(got-1) > 1e-12 {
		t.Errorf("SSIM of an image with itself %g", got)
	}
	if got, want := ssim(x, y, h, w, 1), ssimDirect(x, y, h, w, 1); math.Abs(got-want) > 1e-9 || got >= 1 {
		t.Errorf("SSIM %g, directly %g", got, want)
	}
	// A constant offset d over data range L: PSNR = 20·log10(L/d).
	env, net := linearEnvShape(6, []int{1, 4, 4})
	clean := env.Test.X
	shifted := make([]float32, len(clean))
	for i, v := range clean {
		shifted[i] = v + 0.125
	}
	e, err := energies(context.Background(), net, clean, 6)
	if err != nil {
		t.Fatal(err)
	}
	s, err := measureShift(context.Background(), net, e, clean, shifted, 6, []int{1, 4, 4})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 1.0, 0.0
	for _, v := range clean {
		lo, hi = min(lo, float64(v)), max(hi, float64(v))
	}
	if want := 20 * math.Log10((hi-lo)/0.125); math.Abs(s.PSNR-want) > 1e-4 {
		t.Errorf("PSNR %g, want %g", s.PSNR, want)
	}
	if s.AUROC < 0 || s.AUROC > 1 || !(s.SSIM < 1) {
		t.Errorf("shift %+v", s)
	}
	// Energies are −log Σ exp of the linear model's logits.
	for i := range 6 {
		var z float64
		for k := range 2 {
			l := float64(net.B[k])
			for p := range 16 {
				l += float64(net.W[k*16+p] * clean[i*16+p])
			}
			z += math.Exp(l)
		}
		if math.Abs(e[i]+math.Log(z)) > 1e-4 {
			t.Errorf("energy %d: %g, want %g", i, e[i], -math.Log(z))
		}
	}
}

// The shift of perturbed copies handed over one at a time, as
// Sensitivity-N hands them (the stream keeps four 3×224×224 copies, not
// all seven), is the one computed over all of them at once by hand:
// energies from one pass each, PSNR over every value, SSIM, MS-SSIM and
// GMSD averaged over every plane.
func TestShiftStreamHoldsABatchAndMeasuresAll(t *testing.T) {
	if testing.Short() {
		t.Skip("ImageNet-sized images")
	}
	ctx := context.Background()
	const n = 7
	env, _ := imageNetEnv(n)
	shape, dim, hw := env.Test.Shape, engine.Size(env.Test.Shape), 224*224
	clean := env.Test.X
	rng := rand.New(rand.NewPCG(9, 9))
	perturbed := make([]float32, len(clean))
	for i, v := range clean {
		perturbed[i] = v + float32(0.1*rng.NormFloat64())
	}
	ce, err := energies(ctx, env.Net, clean, n)
	if err != nil {
		t.Fatal(err)
	}
	st := newShiftStream(env.Net, ce, clean, n, shape)
	if held := len(st.buf) / dim; held >= n {
		t.Fatalf("the stream holds %d copies, want fewer than %d", held, n)
	}
	for i := range n {
		if err := st.add(ctx, perturbed[i*dim:(i+1)*dim]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.shift(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pe := make([]float64, n)
	for i := range n {
		e, err := energies(ctx, env.Net, perturbed[i*dim:(i+1)*dim], 1)
		if err != nil {
			t.Fatal(err)
		}
		pe[i] = e[0]
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var se float64
	for i, v := range clean {
		lo, hi = min(lo, float64(v)), max(hi, float64(v))
		d := float64(perturbed[i] - v)
		se += d * d
	}
	span := hi - lo
	var ss float64
	for p := range n * shape[0] {
		ss += ssim(clean[p*hw:(p+1)*hw], perturbed[p*hw:(p+1)*hw], 224, 224, span)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"AUROC", got.AUROC, AUROC(pe, ce)},
		{"PSNR", got.PSNR, 10 * math.Log10(span*span/(se/float64(n*dim)))},
		{"SSIM", got.SSIM, ss / float64(n*shape[0])},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s %v, by hand %v", c.name, c.got, c.want)
		}
	}
	if _, err := newShiftStream(env.Net, ce, clean, n, shape).shift(ctx); err == nil {
		t.Error("a stream shifted before its inputs were all added gave a result")
	}
}

// The image-quality measures of one 224×224 plane, which the shift
// diagnostics take of every perturbed ImageNet-sized image's channels.
func BenchmarkImageQuality224(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := make([]float32, 224*224), make([]float32, 224*224)
	for i := range x {
		x[i], y[i] = rng.Float32(), rng.Float32()
	}
	for _, m := range []struct {
		name string
		f    func(x, y []float32, h, w int, span float64) float64
	}{{"ssim", ssim}, {"msssim", msssim}, {"gmsd", gmsd}, {"ssim+msssim", func(x, y []float32, h, w int, span float64) float64 {
		s, ms := ssimAndMS(x, y, h, w, span)
		return s + ms
	}}} {
		b.Run(m.name, func(b *testing.B) {
			for b.Loop() {
				m.f(x, y, 224, 224, 1)
			}
		})
	}
}
