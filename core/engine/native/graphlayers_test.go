package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"faithlab/core/engine/gemm"
)

// randn fills n values from a normal distribution.
func randn(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

func dot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// checkAdjoint checks a layer's backward pass against its forward pass:
// for random x, dy and direction v, ⟨dy, (f(x + εv) − f(x − εv))/2ε⟩ is
// ⟨backward(dy), v⟩, and the same for each parameter. The inputs are
// spaced by 0.05, off every kink, so that no maximum or kink lies
// between x ± εv.
func checkAdjoint(t *testing.T, what string, l layer, n int, eps float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, n*l.in().size())
	for i, j := range rng.Perm(len(x)) {
		x[i] = (float32(j-len(x)/2) + 0.5) * 0.05
	}
	dy := randn(rng, n*l.out().size())
	for _, p := range l.params() {
		copy(p.Data, randn(rng, len(p.Data)))
		clear(p.Grad)
	}
	l.forward(x, n, false)
	dx := append([]float32(nil), l.backward(dy, n, true, true)...)
	f := func() []float32 { return append([]float32(nil), l.forward(x, n, false)...) }
	directional := func(v []float32, at []float32) float64 {
		old := append([]float32(nil), at...)
		for i := range at {
			at[i] = old[i] + float32(eps)*v[i]
		}
		up := f()
		for i := range at {
			at[i] = old[i] - float32(eps)*v[i]
		}
		down := f()
		copy(at, old)
		s := 0.0
		for i := range up {
			s += float64(dy[i]) * (float64(up[i]) - float64(down[i])) / (2 * eps)
		}
		return s
	}
	compare := func(name string, num, ana float64) {
		if d := math.Abs(num - ana); d > 2e-3*math.Max(1, math.Abs(num)) {
			t.Errorf("%s: %s: directional derivative %g by differences, %g by backward", what, name, num, ana)
		}
	}
	v := randn(rng, len(x))
	compare("input", directional(v, x), dot(dx, v))
	for _, p := range l.params() {
		if p.Grad == nil {
			continue
		}
		v := randn(rng, len(p.Data))
		compare(p.Name, directional(v, p.Data), dot(p.Grad, v))
	}
}

// directConv is a convolution by its definition, in float64, on
// channels-last x: PyTorch's weights (out, in/groups, kh, kw).
func directConv(x, wt, b []float32, n int, in, out dims, w window, groups int) []float64 {
	y := make([]float64, n*out.size())
	cin, cout := in.c/groups, out.c/groups
	for s := range n {
		for oy := range out.h {
			for ox := range out.w {
				for co := range out.c {
					g := co / cout
					acc := 0.0
					if b != nil {
						acc = float64(b[co])
					}
					for ci := range cin {
						for ky := range w.kh {
							for kx := range w.kw {
								iy, ix := oy*w.sh-w.pt+ky*w.dh, ox*w.sw-w.pl+kx*w.dw
								if iy < 0 || iy >= in.h || ix < 0 || ix >= in.w {
									continue
								}
								acc += float64(x[s*in.size()+(iy*in.w+ix)*in.c+g*cin+ci]) * float64(wt[((co*cin+ci)*w.kh+ky)*w.kw+kx])
							}
						}
					}
					y[s*out.size()+(oy*out.w+ox)*out.c+co] = acc
				}
			}
		}
	}
	return y
}

// Convolutions of any window — dilated, grouped, depthwise, non-square,
// padded unevenly, strided differently across and down — compute the
// definition and differentiate as their forward pass says.
func TestGeneralConvolutionsMatchTheDefinition(t *testing.T) {
	for _, tc := range []struct {
		in     dims
		cout   int
		w      window
		groups int
	}{
		{dims{9, 8, 4}, 6, window{kh: 3, kw: 3, sh: 1, sw: 1, dh: 2, dw: 2, pt: 2, pl: 2, pb: 2, pr: 2}, 1},
		{dims{7, 9, 6}, 4, window{kh: 1, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pl: 1, pr: 1}, 2},
		{dims{8, 7, 4}, 4, window{kh: 3, kw: 1, sh: 2, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1}, 1},
		{dims{6, 6, 6}, 6, window{kh: 2, kw: 2, sh: 1, sw: 1, dh: 1, dw: 1, pb: 1, pr: 1}, 3},
		{dims{8, 8, 5}, 5, window{kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1}, 5},
		{dims{9, 9, 8}, 8, window{kh: 5, kw: 5, sh: 2, sw: 2, dh: 1, dw: 1, pt: 2, pl: 2, pb: 2, pr: 2}, 8},
		{dims{7, 7, 3}, 3, window{kh: 3, kw: 2, sh: 1, sw: 2, dh: 2, dw: 1, pt: 0, pl: 1, pb: 1, pr: 0}, 3},
	} {
		what := fmt.Sprintf("%v→%d %+v groups %d", tc.in, tc.cout, tc.w, tc.groups)
		var l layer
		if tc.groups == tc.in.c && tc.cout == tc.in.c {
			l = newDepthwise("c", tc.in, tc.w, false)
		} else {
			l = newConvg("c", tc.in, tc.cout, tc.w, tc.groups, false, gemm.Gonum{})
		}
		n := 2
		rng := rand.New(rand.NewPCG(1, 2))
		x := randn(rng, n*tc.in.size())
		ps := l.params()
		copy(ps[0].Data, randn(rng, len(ps[0].Data)))
		copy(ps[1].Data, randn(rng, len(ps[1].Data)))
		got := l.forward(x, n, false)
		want := directConv(x, ps[0].Data, ps[1].Data, n, tc.in, l.out(), tc.w, tc.groups)
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-4*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("%s: output %d is %g, want %g", what, i, got[i], want[i])
			}
		}
		checkAdjoint(t, what, l, n, 1) // linear in x and in the weights: differences are exact but for rounding
	}
}

// Pools of any window, stride, padding and rounding give PyTorch's output
// sizes and differentiate as their forward pass says.
func TestPoolsDifferentiate(t *testing.T) {
	for _, tc := range []struct {
		max, ceil, countPad bool
		in                  dims
		w                   window
		out                 dims
	}{
		{true, false, false, dims{8, 8, 3}, window{kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1}, dims{4, 4, 3}},
		{true, true, false, dims{7, 7, 3}, window{kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1}, dims{4, 4, 3}},
		{true, true, false, dims{6, 6, 2}, window{kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1}, dims{3, 3, 2}},
		{false, true, false, dims{7, 7, 3}, window{kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1}, dims{4, 4, 3}},
		{false, false, true, dims{7, 6, 3}, window{kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1}, dims{4, 3, 3}},
		{false, false, false, dims{8, 8, 4}, window{kh: 2, kw: 2, sh: 2, sw: 2, dh: 1, dw: 1}, dims{4, 4, 4}},
		{true, false, false, dims{9, 9, 2}, window{kh: 3, kw: 3, sh: 1, sw: 1, dh: 2, dw: 2, pt: 1, pl: 1, pb: 1, pr: 1}, dims{7, 7, 2}},
	} {
		what := fmt.Sprintf("max %v ceil %v countPad %v %v %+v", tc.max, tc.ceil, tc.countPad, tc.in, tc.w)
		l := newPool2d("p", tc.max, tc.in, tc.w, tc.ceil, tc.countPad)
		if l.out() != tc.out {
			t.Errorf("%s: output %v, PyTorch's %v", what, l.out(), tc.out)
		}
		checkAdjoint(t, what, l, 2, 1e-3)
	}
}

// Every nonlinearity, the per-channel affine map and zero padding
// differentiate as their forward pass says.
func TestElementwiseLayersDifferentiate(t *testing.T) {
	d := dims{3, 4, 5}
	for _, tc := range []struct {
		kind string
		a, b float32
	}{{"sigmoid", 0, 0}, {"silu", 0, 0}, {"leakyrelu", 0.1, 0}, {"clip", -1, 2}, {"clip", 0, 6}, {"hardsigmoid", 1. / 6, 0.5}, {"hardswish", 0, 0}} {
		l, err := newPointwise("f", tc.kind, d, tc.a, tc.b)
		if err != nil {
			t.Fatal(err)
		}
		checkAdjoint(t, tc.kind, l, 2, 1e-3)
	}
	checkAdjoint(t, "affine", &affine{nm: "a", d: d, scale: []float32{1, -2, 0.5, 3, 1}, shift: []float32{0, 1, 2, 3, 4}}, 2, 1e-2)
	checkAdjoint(t, "pad", &zeroPad{nm: "p", i: d, p: [4]int{0, 1, 2, 3}}, 2, 1e-2)
}

// checkJunction is checkAdjoint for a junction: each input's gradient
// against differences along a direction in that input.
func checkJunction(t *testing.T, what string, j junction, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	var xs [][]float32
	for _, d := range j.ins() {
		xs = append(xs, randn(rng, n*d.size()))
	}
	dy := randn(rng, n*j.out().size())
	j.join(xs, n)
	need := make([]bool, len(xs))
	for k := range need {
		need[k] = true
	}
	var dxs [][]float32
	for _, g := range j.split(dy, n, need) {
		dxs = append(dxs, append([]float32(nil), g...))
	}
	const eps = 1e-2
	for k, x := range xs {
		v := randn(rng, len(x))
		old := append([]float32(nil), x...)
		for i := range x {
			x[i] = old[i] + eps*v[i]
		}
		up := append([]float32(nil), j.join(xs, n)...)
		for i := range x {
			x[i] = old[i] - eps*v[i]
		}
		down := j.join(xs, n)
		copy(x, old)
		num := 0.0
		for i := range up {
			num += float64(dy[i]) * (float64(up[i]) - float64(down[i])) / (2 * eps)
		}
		if ana := dot(dxs[k], v); math.Abs(num-ana) > 1e-3*math.Max(1, math.Abs(num)) {
			t.Errorf("%s: input %d: directional derivative %g by differences, %g by split", what, k, num, ana)
		}
	}
}

// Sums, concatenations and products (of one shape, or gated per channel)
// differentiate as they join.
func TestJunctionsDifferentiate(t *testing.T) {
	d := dims{3, 4, 5}
	checkJunction(t, "sum", newSum("s", d, 3), 2)
	checkJunction(t, "concat", newConcat("c", []dims{d, {3, 4, 2}, {3, 4, 7}}), 2)
	checkJunction(t, "concat of vectors", newConcat("c", []dims{{1, 1, 3}, {1, 1, 4}}), 2)
	checkJunction(t, "product", newProduct("p", d, d), 2)
	checkJunction(t, "gate", newProduct("g", d, dims{1, 1, 5}), 2)
}

// A padded 3×3 convolution run as Winograd's F(2×2, 3×3) from a zero
// frame — an imported ResNet's — computes the definition and
// differentiates as its forward pass says, on maps of even and odd sides.
func TestPaddedWinogradLayerMatchesTheDefinition(t *testing.T) {
	for _, in := range []dims{{8, 8, 16}, {7, 5, 8}} {
		l := newConv("w", in, 16, 3, 1, 1, false, gemm.Gonum{})
		if _, ok := l.(*winoLayer); !ok {
			t.Fatalf("%v: a padded 3×3 convolution is a %T, not a winoLayer", in, l)
		}
		n := 2
		rng := rand.New(rand.NewPCG(7, 8))
		x := randn(rng, n*in.size())
		ps := l.params()
		copy(ps[0].Data, randn(rng, len(ps[0].Data)))
		copy(ps[1].Data, randn(rng, len(ps[1].Data)))
		got := l.forward(x, n, false)
		w := window{kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1}
		want := directConv(x, ps[0].Data, ps[1].Data, n, in, l.out(), w, 1)
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-4*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("%v: output %d is %g, want %g", in, i, got[i], want[i])
			}
		}
		checkAdjoint(t, fmt.Sprint("winograd ", in), l, n, 1)
	}
}
