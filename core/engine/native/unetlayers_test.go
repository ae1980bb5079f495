package native

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// pad puts n images (h×w×c) inside the zero frame of pd, at offset (1, 1).
func pad(x []float32, n int, d, pd dims) []float32 {
	out := make([]float32, n*pd.size())
	for s := range n {
		for r := range d.h {
			copy(out[s*pd.size()+((r+1)*pd.w+1)*d.c:], x[s*d.size()+r*d.w*d.c:][:d.w*d.c])
		}
	}
	return out
}

// unpad is pad's inverse.
func unpad(xp []float32, n int, d, pd dims) []float32 {
	out := make([]float32, n*d.size())
	for s := range n {
		for r := range d.h {
			copy(out[s*d.size()+r*d.w*d.c:][:d.w*d.c], xp[s*pd.size()+((r+1)*pd.w+1)*d.c:])
		}
	}
	return out
}

// TestWinogradMatchesDirectConvolution checks the Winograd convolution's
// output, input gradient and parameter gradients against the im2col
// convolution on the same weights: odd sizes (edge tiles), channel counts
// the SIMD kernels take and ones they leave to the scalar code.
func TestWinogradMatchesDirectConvolution(t *testing.T) {
	for _, tc := range []struct{ h, w, cin, cout int }{{7, 5, 8, 16}, {6, 9, 3, 5}, {28, 28, 32, 32}, {2, 2, 16, 1}} {
		in := dims{tc.h, tc.w, tc.cin}
		const n = 3
		ref := newConv2d("c", in, tc.cout, 3, 1, 1, gemm.Gonum{})
		w := newWinoConv("c", in, tc.cout, 1, gemm.Gonum{}, &winoScratch{})
		copy(ref.w.Data, randBatch(1, len(ref.w.Data)))
		copy(ref.b.Data, randBatch(2, len(ref.b.Data)))
		copy(w.wt.Data, ref.w.Data)
		copy(w.b.Data, ref.b.Data)
		w.prepare()
		x := randBatch(3, n*in.size())
		res := randBatch(4, n*tc.h*tc.w*tc.cout)
		dy := randBatch(5, len(res))
		want := slices.Clone(ref.forward(x, n, false))
		for i := range want {
			want[i] += res[i]
		}
		got := w.forward(pad(x, n, in, w.padded()), n, nil, res)
		close(t, "winograd output", got, want, 1e-5)
		wantDX := slices.Clone(ref.backward(dy, n, true, true))
		gotDX := unpad(w.backward(dy, n, true, true), n, in, w.padded())
		close(t, "winograd input gradient", gotDX, wantDX, 1e-5)
		close(t, "winograd weight gradient", w.wt.Grad, ref.w.Grad, 1e-5)
		close(t, "winograd bias gradient", w.b.Grad, ref.b.Grad, 1e-5)
	}
}

// TestGroupNormSiLUMatchesDefinition checks the fused layer against
// GroupNorm then SiLU computed in float64 from the definition, and its
// gradients against central differences of Σ y·v.
func TestGroupNormSiLUMatchesDefinition(t *testing.T) {
	for _, c := range []int{16, 12} { // SIMD kernels and scalar ones
		d := dims{3, 4, c}
		pd := dims{5, 6, c}
		const n, groups = 2, 4
		l := newGNSiLU("gn", d, pd, groups)
		copy(l.w.Data, randBatch(1, c))
		copy(l.b.Data, randBatch(2, c))
		x := randBatch(3, n*d.size())
		for i := range x {
			x[i] = 3*x[i] + 1 // off-centre, so the mean matters
		}
		v := randBatch(4, n*d.size())
		y := unpad(l.forward(x, n, true), n, d, pd)
		cg := c / groups
		for s := range n {
			for g := range groups {
				var sum, sq float64
				for p := range d.h * d.w {
					for j := g * cg; j < (g+1)*cg; j++ {
						sum += float64(x[s*d.size()+p*c+j])
					}
				}
				m := float64(d.h * d.w * cg)
				mean := sum / m
				for p := range d.h * d.w {
					for j := g * cg; j < (g+1)*cg; j++ {
						e := float64(x[s*d.size()+p*c+j]) - mean
						sq += e * e
					}
				}
				inv := 1 / math.Sqrt(sq/m+1e-5)
				for p := range d.h * d.w {
					for j := g * cg; j < (g+1)*cg; j++ {
						i := s*d.size() + p*c + j
						a := (float64(x[i])-mean)*inv*float64(l.w.Data[j]) + float64(l.b.Data[j])
						if want := a / (1 + math.Exp(-a)); math.Abs(float64(y[i])-want) > 1e-5 {
							t.Fatalf("c=%d value %d: %g, GroupNorm then SiLU gives %g", c, i, y[i], want)
						}
					}
				}
			}
		}
		clear(l.w.Grad)
		clear(l.b.Grad)
		dx := slices.Clone(l.backward(pad(v, n, d, pd), n, true))
		f := func() float64 {
			out := unpad(l.forward(x, n, false), n, d, pd)
			var s float64
			for i, o := range out {
				s += float64(o) * float64(v[i])
			}
			return s
		}
		check := func(what string, p []float32, i int, analytic float32) {
			old := p[i]
			p[i] = old + 1e-2
			up := f()
			p[i] = old - 1e-2
			down := f()
			p[i] = old
			num := (up - down) / 2e-2
			if math.Abs(num-float64(analytic)) > 2e-3*math.Max(1, math.Abs(num)) {
				t.Errorf("c=%d %s[%d]: analytic %g, numeric %g", c, what, i, analytic, num)
			}
		}
		for i := range x {
			check("x", x, i, dx[i])
		}
		for j := range c {
			check("weight", l.w.Data, j, l.w.Grad[j])
			check("bias", l.b.Data, j, l.b.Grad[j])
		}
	}
}

// TestUNetGradientSameOnAnyCoreCount runs a batch of several pieces, the
// last one short, on 1 and 3 cores: the noise predictions, input gradients
// and parameter gradients must agree bit for bit, and each sample's
// prediction must be what it gets alone.
func TestUNetGradientSameOnAnyCoreCount(t *testing.T) {
	k, _ := gemm.Best()
	const n = 2*unetPiece + 1
	x := randBatch(6, n*784)
	ts := make([]int, n)
	for i := range ts {
		ts[i] = 100 * i
	}
	w := randBatch(7, n*784)
	run := func(procs int) (pred, dx, grads []float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		u, err := NewUNet([]int{1, 28, 28}, k)
		if err != nil {
			t.Fatal(err)
		}
		u.Init(3)
		pred = make([]float32, n*784)
		dx, err = u.Gradient(x, ts, n, engine.InputGrad|engine.ParamGrad, func(first int, p, d []float32) {
			copy(pred[first*784:], p)
			copy(d, w[first*784:first*784+len(d)])
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range u.Params() {
			grads = append(grads, p.Grad...)
		}
		return pred, slices.Clone(dx), grads
	}
	p1, dx1, g1 := run(1)
	p3, dx3, g3 := run(3)
	if !slices.Equal(p1, p3) || !slices.Equal(dx1, dx3) || !slices.Equal(g1, g3) {
		t.Error("unet-s gives other bits on 1 and 3 cores")
	}
	u, _ := NewUNet([]int{1, 28, 28}, k)
	u.Init(3)
	for i := range n {
		alone, err := u.Forward(x[i*784:(i+1)*784], ts[i:i+1], 1)
		if err != nil {
			t.Fatal(err)
		}
		// Alone and in a batch the GEMMs have other shapes, which OpenBLAS
		// blocks (and so sums) differently: float32 rounding through the
		// U-Net's depth, 1.3e-6 with its Haswell kernels, under 1e-6 with
		// SkylakeX's.
		close(t, "a sample's prediction alone and in a batch", alone, p1[i*784:(i+1)*784], 5e-6)
	}
}
