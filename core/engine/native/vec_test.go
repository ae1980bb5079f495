package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// kernelData is n values for a kernel's test: mostly uniform on [-3, 3),
// with exact ties (for max-pooling's routing), zeros, and, with wide, values
// past expf's range on both sides.
func kernelData(rng *rand.Rand, n int, wide bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r := rng.IntN(20); {
		case r == 0:
			x[i] = 0
		case r <= 2 && i > 0:
			x[i] = x[i-1]
		case wide && r == 3:
			x[i] = float32(rng.NormFloat64() * 100)
		default:
			x[i] = 6*rng.Float32() - 3
		}
	}
	return x
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: value %d is %g (%08x), the scalar kernel's %g (%08x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// Each kernel this build runs (AVX2 assembly on amd64, scalar elsewhere or
// under purego) gives the scalar kernel's bits, for channel counts the
// vector code takes (multiples of 8, and past 32, where chanSums adds four
// blocks of 8 at a time) and one it leaves to the scalar code,
// at edges (one-row or one-column tiles), with and without the optional
// inputs.
func TestKernelsMatchScalar(t *testing.T) {
	t.Logf("kernels: %s", Kernels())
	rng := rand.New(rand.NewPCG(1, 2))
	data := func(n int) []float32 { return kernelData(rng, n, false) }
	for _, c := range []int{8, 16, 24, 12, 40, 64} {
		for _, w := range []int{1, 3} {
			name := fmt.Sprintf("c=%d w=%d", c, w)
			top, bot := data(2*w*c), data(2*w*c)
			y, want := make([]float32, w*c), make([]float32, w*c)
			pool2(y, top, bot, w, c, 0.5)
			pool2Scalar(want, top, bot, w, c, 0.5)
			sameBits(t, "pool2 "+name, y, want)
			g := data(w * c)
			for _, gate := range []bool{false, true} {
				d := [2][]float32{data(2 * w * c), data(2 * w * c)} // filled before, as a reused buffer would be
				e := [2][]float32{slices.Clone(d[0]), slices.Clone(d[1])}
				route2(d[0], d[1], top, bot, y, g, w, c, 0.5, gate)
				route2Scalar(e[0], e[1], top, bot, y, g, w, c, 0.5, gate)
				sameBits(t, fmt.Sprintf("route2 %s gate=%v dtop", name, gate), d[0], e[0])
				sameBits(t, fmt.Sprintf("route2 %s gate=%v dbot", name, gate), d[1], e[1])
			}
		}
		for _, n := range []int{c, 3*c + 5} {
			dst, src := data(n), data(n)
			want := slices.Clone(dst)
			addTo(dst, src)
			addToScalar(want, src)
			sameBits(t, fmt.Sprintf("addTo n=%d", n), dst, want)
		}

		// A Winograd tile inside a 6×5 image of c channels, with planes
		// wider than c.
		row, plane := 5*c, c+8
		x := data(6 * row)
		v := data(16 * plane)
		vs := slices.Clone(v)
		winoIn(v, plane, x[row+c:], row, c)
		winoInScalar(vs, plane, x[row+c:], row, c)
		sameBits(t, fmt.Sprintf("winoIn c=%d", c), v, vs)
		dx := data(6 * row)
		dxs := slices.Clone(dx)
		winoInAdj(dx[c:], row, v, plane, c)
		winoInAdjScalar(dxs[c:], row, v, plane, c)
		sameBits(t, fmt.Sprintf("winoInAdj c=%d", c), dx, dxs)
		bias := data(c)
		for _, rows := range []int{1, 2} {
			for _, cols := range []int{1, 2} {
				for _, res := range [][]float32{nil, data(6 * row)} {
					name := fmt.Sprintf("c=%d rows=%d cols=%d res=%v", c, rows, cols, res != nil)
					yo, ys := data(6*row), data(6*row)
					copy(ys, yo)
					var r []float32
					if res != nil {
						r = res[row:]
					}
					winoOut(yo[row:], row, v, plane, bias, r, c, rows, cols)
					winoOutScalar(ys[row:], row, v, plane, bias, r, c, rows, cols)
					sameBits(t, "winoOut "+name, yo, ys)
					dm, dms := data(16*plane), data(16*plane)
					copy(dms, dm)
					winoOutAdj(dm, plane, yo[row+c:], row, c, rows, cols)
					winoOutAdjScalar(dms, plane, yo[row+c:], row, c, rows, cols)
					sameBits(t, "winoOutAdj "+name, dm, dms)
				}
			}
		}

		// GroupNorm + SiLU over 7 pixels, x with values past expf's range.
		n := 7 * c
		xg := kernelData(rng, n, true)
		sum, sums := data(c), data(c)
		copy(sums, sum)
		chanSums(sum, xg, c)
		chanSumsScalar(sums, xg, c)
		sameBits(t, fmt.Sprintf("chanSums c=%d", c), sum, sums)
		mean := data(c)
		sq, sqs := data(c), data(c)
		copy(sqs, sq)
		chanSqDevs(sq, xg, mean, c)
		chanSqDevsScalar(sqs, xg, mean, c)
		sameBits(t, fmt.Sprintf("chanSqDevs c=%d", c), sq, sqs)
		scale, shift, inv := data(c), data(c), data(c)
		for _, withSig := range []bool{true, false} {
			name := fmt.Sprintf("c=%d sig=%v", c, withSig)
			ya, ys := make([]float32, n), make([]float32, n)
			var sa, ss []float32
			if withSig {
				sa, ss = make([]float32, n), make([]float32, n)
			}
			affineSiLU(ya, sa, xg, scale, shift, c)
			affineSiLUScalar(ys, ss, xg, scale, shift, c)
			sameBits(t, "affineSiLU y "+name, ya, ys)
			sameBits(t, "affineSiLU σ "+name, sa, ss)
			dy := data(n)
			da, das := make([]float32, n), make([]float32, n)
			sda, sdas, sdax, sdaxs := data(c), data(c), data(c), data(c)
			copy(sdas, sda)
			copy(sdaxs, sdax)
			siluGrad(da, dy, xg, sa, scale, shift, mean, inv, sda, sdax, c)
			siluGradScalar(das, dy, xg, ss, scale, shift, mean, inv, sdas, sdaxs, c)
			sameBits(t, "siluGrad da "+name, da, das)
			sameBits(t, "siluGrad Σda "+name, sda, sdas)
			sameBits(t, "siluGrad Σda·x̂ "+name, sdax, sdaxs)
		}
		p, q, r := data(c), data(c), data(c)
		da := data(n)
		dxa, dxs2 := make([]float32, n), make([]float32, n)
		affine3(dxa, da, xg, p, q, r, c)
		affine3Scalar(dxs2, da, xg, p, q, r, c)
		sameBits(t, fmt.Sprintf("affine3 c=%d", c), dxa, dxs2)
	}
}

// TestIm2colAndCol2imMatchTheDefinition checks both paths of im2col and
// col2im (kernel rows copied whole, and float by float for short rows)
// against the definition, col2im bit for bit: it must add into each input
// pixel in the output pixels' raster order, whatever the path.
func TestIm2colAndCol2imMatchTheDefinition(t *testing.T) {
	for _, tc := range []struct {
		in             dims
		k, stride, pad int
	}{
		{dims{28, 28, 1}, 5, 1, 0}, // goar-cnn's c1: a short row
		{dims{9, 7, 2}, 3, 2, 1},   // short, padded and strided
		{dims{13, 11, 1}, 5, 2, 0}, // short and strided
		{dims{8, 8, 3}, 3, 1, 1},   // short (9 floats), padded: resnet18's stem
		{dims{6, 6, 64}, 3, 1, 0},  // goar-cnn's c3: whole rows
		{dims{8, 8, 8}, 3, 2, 1},   // whole rows, padded and strided
	} {
		l := newConv2d("c", tc.in, 4, tc.k, tc.stride, tc.pad, nil)
		K := tc.in.c * tc.k * tc.k
		x := randBatch(7, tc.in.size())
		cols := make([]float32, l.o.h*l.o.w*K)
		for i := range cols {
			cols[i] = float32(math.NaN()) // what a buffer held before: all written again
		}
		l.im2col(x, cols)
		dcols := randBatch(8, len(cols))
		dx := make([]float32, tc.in.size())
		l.col2im(dcols, dx)
		want := make([]float32, tc.in.size())
		for oy := 0; oy < l.o.h; oy++ {
			for ox := 0; ox < l.o.w; ox++ {
				for ky := 0; ky < tc.k; ky++ {
					for kx := 0; kx < tc.k; kx++ {
						for ci := 0; ci < tc.in.c; ci++ {
							at := (oy*l.o.w+ox)*K + (ky*tc.k+kx)*tc.in.c + ci
							iy, ix := oy*tc.stride-tc.pad+ky, ox*tc.stride-tc.pad+kx
							var v float32
							if iy >= 0 && iy < tc.in.h && ix >= 0 && ix < tc.in.w {
								v = x[(iy*tc.in.w+ix)*tc.in.c+ci]
								want[(iy*tc.in.w+ix)*tc.in.c+ci] += dcols[at]
							}
							if cols[at] != v {
								t.Fatalf("%+v: im2col at %d = %v, want %v", tc, at, cols[at], v)
							}
						}
					}
				}
			}
		}
		for i := range want {
			if dx[i] != want[i] {
				t.Fatalf("%+v: col2im at %d = %v, want %v (bit for bit)", tc, i, dx[i], want[i])
			}
		}
	}
}

// TestGemm16MatchesScalar checks the AVX2 tiles, and the AVX-512 ones where
// the CPU has them, against gemm16Scalar bit for bit (row tiles of every
// height, blocks of 32 columns with a last one of 16, A row-major and
// transposed, set and add) and all against a float64 product.
func TestGemm16MatchesScalar(t *testing.T) {
	defer func(v bool) { useAVX512 = v }(useAVX512)
	for _, wide := range slices.Compact([]bool{useAVX512, false}) {
		useAVX512 = wide
		t.Run(fmt.Sprintf("avx512=%v", wide), testGemm16MatchesScalar)
	}
}

func testGemm16MatchesScalar(t *testing.T) {
	for _, tc := range []struct {
		m, n, k int
		trans   bool
	}{{100, 64, 32, false}, {100, 32, 64, false}, {64, 32, 100, true}, {1, 16, 1, false}, {5, 48, 7, true}, {13, 16, 3, false}, {11, 80, 9, true}, {7, 96, 5, false}} {
		lda := tc.k
		if tc.trans {
			lda = tc.m
		}
		rng := rand.New(rand.NewPCG(uint64(tc.m), uint64(tc.k)))
		a := kernelData(rng, tc.m*tc.k, true)
		b := kernelData(rng, tc.k*tc.n+5, false)
		ars, aks := lda, 1
		if tc.trans {
			ars, aks = 1, lda
		}
		for _, add := range []bool{false, true} {
			ldc := tc.n + 3
			c0 := kernelData(rng, tc.m*ldc, false)
			got, want := slices.Clone(c0), slices.Clone(c0)
			gemm16(got, a, b, tc.m, tc.n, tc.k, ars, aks, tc.n, ldc, add)
			gemm16Scalar(want, a, b, tc.m, tc.n, tc.k, ars, aks, tc.n, ldc, add)
			sameBits(t, fmt.Sprintf("gemm16 %+v add=%v", tc, add), got, want)
			for i := range tc.m {
				for j := range tc.n {
					var s, mag float64 // the product, and the sum of its terms' sizes
					for kk := range tc.k {
						p := float64(a[i*ars+kk*aks]) * float64(b[kk*tc.n+j])
						s, mag = s+p, mag+math.Abs(p)
					}
					if add {
						s, mag = s+float64(c0[i*ldc+j]), mag+math.Abs(float64(c0[i*ldc+j]))
					}
					if g := float64(got[i*ldc+j]); math.Abs(g-s) > 1e-6*(1+mag) {
						t.Fatalf("gemm16 %+v add=%v: C[%d,%d] = %g, want %g", tc, add, i, j, g, s)
					}
				}
				for j := tc.n; j < ldc; j++ { // the columns past n are not C's
					if math.Float32bits(got[i*ldc+j]) != math.Float32bits(c0[i*ldc+j]) {
						t.Fatalf("gemm16 %+v: wrote past column n at row %d", tc, i)
					}
				}
			}
		}
	}
}

// The transformer's kernels (GELU both ways, a softmax row's exponentials,
// scaling and gradient, a layer norm's sums and affine map) give the scalar kernels' bits at lengths the vector code
// takes whole, in part and not at all, on values that reach erf's clamp,
// exp's overflow and underflow, zeros of both signs, infinities and NaN.
func TestTransformerKernelsMatchScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	special := []float32{0, float32(math.Copysign(0, -1)), 4, -4, 5.657, -5.657, 100, -100, 90, -90,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-30, -1e-30, 1e-40}
	for _, n := range []int{1, 7, 8, 16, 197, 203} {
		x := kernelData(rng, n, true)
		for i := range x {
			if rng.IntN(6) == 0 {
				x[i] = special[rng.IntN(len(special))]
			}
		}
		dy := kernelData(rng, n, true)
		name := fmt.Sprintf("n=%d", n)
		const c = math.Sqrt2
		y, want := make([]float32, n), make([]float32, n)
		geluVec(y, x, c)
		geluScalar(want, x, c)
		sameBits(t, "gelu "+name, y, want)
		geluGradVec(y, dy, x, c)
		geluGradScalar(want, dy, x, c)
		sameBits(t, "gelu gradient "+name, y, want)

		var s, sw [8]float64
		s[3], sw[3] = 0.25, 0.25 // the lanes add to what they hold
		expSumVec(y, x, 2.5, &s)
		expSumScalar(want, x, 2.5, &sw)
		sameBits(t, "expSum "+name, y, want)
		if fmt.Sprint(s) != fmt.Sprint(sw) { // NaN lanes alike
			t.Fatalf("expSum %s: lane sums %v, the scalar kernel's %v", name, s, sw)
		}
		scaleVec(y, 0.37)
		scaleScalar(want, 0.37)
		sameBits(t, "scale "+name, y, want)

		s, sw = [8]float64{}, [8]float64{}
		sums64Vec(x, &s)
		sums64Scalar(x, &sw)
		sqDevs64Vec(dy, 0.3, &s)
		sqDevs64Scalar(dy, 0.3, &sw)
		if fmt.Sprint(s) != fmt.Sprint(sw) {
			t.Fatalf("sums64, sqDevs64 %s: lane sums %v, the scalar kernels' %v", name, s, sw)
		}
		s, sw = [8]float64{}, [8]float64{}
		dots64Vec(x, dy, &s)
		dots64Scalar(x, dy, &sw)
		if fmt.Sprint(s) != fmt.Sprint(sw) {
			t.Fatalf("dots64 %s: lane sums %v, the scalar kernel's %v", name, s, sw)
		}
		softmaxGradVec(y, dy, x, 0.6)
		softmaxGradScalar(want, dy, x, 0.6)
		sameBits(t, "softmaxGrad "+name, y, want)
		w, b := kernelData(rng, n, false), kernelData(rng, n, false)
		h, hw := make([]float32, n), make([]float32, n)
		normAffineVec(y, h, dy, w, b, 0.3, 1.7)
		normAffineScalar(want, hw, dy, w, b, 0.3, 1.7)
		sameBits(t, "normAffine y "+name, y, want)
		sameBits(t, "normAffine x̂ "+name, h, hw)
	}
}
