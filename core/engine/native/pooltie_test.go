package native

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// flatMaps is n channels-last maps of an 8-bit image with flat regions:
// blocks of block×block pixels of one level of a few (so most pooling
// windows tie), a third of the blocks textured, minus shift.
func flatMaps(seed uint64, n int, d dims, shift float32, block int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	levels := []float32{0, 37, 128, 200, 255}
	x := make([]float32, n*d.size())
	for s := range n {
		for c := range d.c {
			for by := 0; by < d.h; by += block {
				for bx := 0; bx < d.w; bx += block {
					level, textured := levels[rng.IntN(len(levels))], rng.IntN(3) == 0
					for y := by; y < min(by+block, d.h); y++ {
						for xx := bx; xx < min(bx+block, d.w); xx++ {
							v := level
							if textured {
								v = float32(rng.IntN(256))
							}
							x[s*d.size()+(y*d.w+xx)*d.c+c] = v/255 - shift
						}
					}
				}
			}
		}
	}
	return x
}

// torchMaxPool is PyTorch's max_pool2d on CPU, on channels-last maps:
// each output is the largest value of its window (values below floor
// taken as floor), and its gradient goes to the first of them in the scan
// PyTorch makes — window rows top to bottom, each left to right, over the
// padded window, padding skipped — where a value is replaced only by a
// larger one. It returns the outputs, for each that input's index, and
// how many windows hold their largest value more than once.
func torchMaxPool(x []float32, n int, in dims, w window, out dims, floor float32) ([]float32, []int, int) {
	y, at := make([]float32, n*out.size()), make([]int, n*out.size())
	ties := 0
	for s := range n {
		for oy := range out.h {
			for ox := range out.w {
				for c := range in.c {
					best, arg, count := float32(math.Inf(-1)), -1, 0
					for ky := range w.kh {
						iy := oy*w.sh - w.pt + ky*w.dh
						for kx := range w.kw {
							ix := ox*w.sw - w.pl + kx*w.dw
							if iy < 0 || iy >= in.h || ix < 0 || ix >= in.w {
								continue
							}
							i := s*in.size() + (iy*in.w+ix)*in.c + c
							switch v := max(x[i], floor); {
							case arg < 0 || v > best:
								best, arg, count = v, i, 1
							case v == best:
								count++
							}
						}
					}
					j := s*out.size() + (oy*out.w+ox)*out.c + c
					y[j], at[j] = best, arg
					if count > 1 {
						ties++
					}
				}
			}
		}
	}
	return y, at, ties
}

// Every max-pool path routes each window's gradient as PyTorch's
// max_pool2d does, on maps with flat regions where most windows tie: to the
// first of the window's largest values in PyTorch's scan; a value that is
// the largest of overlapping windows (ResNet's 3×3 windows of stride 2 and
// padding 1) gets the gradient of each. The paths: the general pool
// (pool2d), the 2×2 pool of stride 2 on eight channels (AVX2 on amd64
// unless built with purego) and on three (scalar), alone and with the ReLU
// before it fused in, and the k×k pool of stride k.
func TestMaxPoolTiesGoToTheFirstMaximum(t *testing.T) {
	stem := window{kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pl: 1, pb: 1, pr: 1}
	square := func(k int) window { return window{kh: k, kw: k, sh: k, sw: k, dh: 1, dw: 1} }
	for _, tc := range []struct {
		in    dims
		w     window
		fused bool // maxPool with the ReLU before it fused in
		gen   bool // pool2d, the general path
	}{
		{dims{16, 16, 3}, stem, false, true},
		{dims{15, 17, 8}, stem, false, true},
		{dims{9, 9, 2}, window{kh: 2, kw: 2, sh: 1, sw: 1, dh: 1, dw: 1}, false, true},
		{dims{12, 16, 8}, square(2), false, false},
		{dims{12, 16, 8}, square(2), true, false},
		{dims{12, 10, 3}, square(2), false, false},
		{dims{12, 10, 3}, square(2), true, false},
		{dims{12, 9, 8}, square(3), false, false},
		{dims{12, 9, 8}, square(3), true, false},
	} {
		what := fmt.Sprintf("%v %+v fused %v", tc.in, tc.w, tc.fused)
		n, shift, floor := 2, float32(0), float32(math.Inf(-1))
		if tc.fused {
			shift, floor = 0.4, 0 // a third of the values negative, taken as 0 by the ReLU
		}
		x := flatMaps(3, n, tc.in, shift, 4)
		x[(1*tc.in.w+1)*tc.in.c] = 2 // the largest of every window that holds it
		var l layer
		var y []float32
		if tc.gen {
			p := newPool2d("p", true, tc.in, tc.w, false, false)
			l, y = p, p.forward(x, n, false)
		} else {
			p := newMaxPool("p", tc.in, tc.w.kh)
			l, y = p, p.pool(x, n, tc.fused)
		}
		y = append([]float32(nil), y...)
		dy := randBatch(5, len(y))
		dx := l.backward(dy, n, true, false)
		wantY, at, ties := torchMaxPool(x, n, tc.in, tc.w, l.out(), floor)
		want := make([]float32, len(x))
		for j, i := range at {
			want[i] += dy[j]
			if y[j] != wantY[j] {
				t.Fatalf("%s: output %d is %g, PyTorch's %g", what, j, y[j], wantY[j])
			}
		}
		for i := range want {
			if dx[i] != want[i] {
				t.Fatalf("%s: input gradient %d is %g, PyTorch's %g", what, i, dx[i], want[i])
			}
		}
		// The maps tie in many windows, and the planted value collects
		// the gradient of each window that holds it: four of the stem's.
		planted, windows := (1*tc.in.w+1)*tc.in.c, 0
		var sum float32
		for j, i := range at {
			if i == planted {
				sum, windows = sum+dy[j], windows+1
			}
		}
		if got := dx[planted]; got != sum {
			t.Errorf("%s: the planted maximum's gradient is %g, want the sum of its %d windows' %g", what, got, windows, sum)
		}
		if tc.w == stem && windows != 4 {
			t.Errorf("%s: the planted maximum is the largest of %d windows, want 4", what, windows)
		}
		if ties < len(y)/10 {
			t.Errorf("%s: %d of %d windows tie: too few to test the rule", what, ties, len(y))
		}
		t.Logf("%s: %d of %d windows tie", what, ties, len(y))
	}
}

// A convolution whose outputs a max-pool compares (through batch norm and
// ReLU) gives pixels whose windows hold the same inputs the same value, to
// the bit, on the engine's fastest kernel, so that the pool's ties are
// PyTorch's: OpenBLAS's Haswell kernel (CI's OPENBLAS_CORETYPE) sums rows
// of a product in two orders and broke them. The values are still the
// convolution's, through both routes (a square window, and a non-square
// one of 24 output channels, not a multiple of gemm16's 16); a convolution
// no max-pool reads keeps the layer's kernel.
func TestConvolutionsAMaxPoolReadsSumEveryPixelInOneOrder(t *testing.T) {
	kern, err := gemm.Best()
	if err != nil {
		t.Log(err)
	}
	stem := [4]int{3, 3, 3, 3}
	side := 96
	m, err := Compose("ties", []int{3, side, side}, 10, kern, []Layer{
		{Op: "conv", Name: "conv1", Out: 16, Kernel: [2]int{7, 7}, Stride: [2]int{2, 2}, Pad: stem, NoBias: true},
		{Op: "batchnorm", Name: "bn1"},
		{Op: "relu", Name: "relu"},
		{Op: "maxpool", Name: "maxpool", Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [4]int{1, 1, 1, 1}},
		{Op: "conv", Name: "conv2", Out: 24, Kernel: [2]int{5, 3}, Pad: [4]int{2, 1, 2, 1}},
		{Op: "relu", Name: "relu2"},
		{Op: "maxpool", Name: "pool2", Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}},
		{Op: "conv", Name: "conv3", Out: 16, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [4]int{1, 1, 1, 1}},
		{Op: "relu", Name: "relu3"},
		{Op: "globalavgpool", Name: "gap"},
		{Op: "flatten", Name: "flat"},
		{Op: "linear", Name: "fc", Out: 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Init(4)
	pooled := map[string]bool{}
	for _, nd := range m.nodes {
		switch l := nd.(type) {
		case *conv2d:
			pooled[l.nm] = l.pooled
		case *convg:
			pooled[l.nm] = l.pooled
		}
	}
	if want := map[string]bool{"conv1": true, "conv2": true, "conv3": false}; fmt.Sprint(pooled) != fmt.Sprint(want) {
		t.Errorf("convolutions on gemm16: %v, want %v", pooled, want)
	}
	n := 3
	d := dims{side, side, 3}
	x := chwOf(flatMaps(9, n, d, 0, 32), n, d)
	if _, err := m.Forward(x, n); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, conv string
		w        window
	}{
		{"", "conv1", window{kh: 7, kw: 7, sh: 2, sw: 2, dh: 1, dw: 1, pt: 3, pl: 3, pb: 3, pr: 3}},
		{"maxpool", "conv2", window{kh: 5, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 2, pl: 1, pb: 2, pr: 1}},
	} {
		in := engine.Activation{Shape: []int{n, 3, side, side}, Values: x}
		if tc.in != "" {
			if in, err = m.Activation(tc.in); err != nil {
				t.Fatal(err)
			}
		}
		out, err := m.Activation(tc.conv)
		if err != nil {
			t.Fatal(err)
		}
		repeats := sameWindowsSameValues(t, tc.conv, in, out, tc.w)
		t.Logf("%s: %d pixels repeat another's window", tc.conv, repeats)
		if repeats < 30 {
			t.Errorf("%s: %d pixels repeat another's window: too few to test", tc.conv, repeats)
		}
		// The values are the convolution's.
		var wt, b []float32
		for _, p := range m.Params() {
			switch p.Name {
			case tc.conv + ".weight":
				wt = p.Data
			case tc.conv + ".bias":
				b = p.Data
			}
		}
		id, od := dims{in.Shape[2], in.Shape[3], in.Shape[1]}, dims{out.Shape[2], out.Shape[3], out.Shape[1]}
		want := directConv(hwcOf(in.Values, n, id), wt, b, n, id, od, tc.w, 1)
		got := hwcOf(out.Values, n, od)
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("%s: output %d is %g, want %g", tc.conv, i, got[i], want[i])
			}
		}
	}
}

// sameWindowsSameValues checks that output pixels of the convolution of
// window w from in to out whose windows hold the same inputs have the
// same values, and returns how many pixels repeat an earlier one's window.
func sameWindowsSameValues(t *testing.T, what string, in, out engine.Activation, w window) int {
	t.Helper()
	n, c, h, wd := in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3]
	oc, oh, ow := out.Shape[1], out.Shape[2], out.Shape[3]
	repeats := 0
	for s := range n {
		seen := map[string]int{}
		for oy := range oh {
			for ox := range ow {
				key := make([]byte, 0, 4*c*w.kh*w.kw)
				for ch := range c {
					for ky := range w.kh {
						for kx := range w.kw {
							iy, ix := oy*w.sh-w.pt+ky*w.dh, ox*w.sw-w.pl+kx*w.dw
							v := float32(0)
							if iy >= 0 && iy < h && ix >= 0 && ix < wd {
								v = in.Values[((s*c+ch)*h+iy)*wd+ix]
							}
							key = binary.LittleEndian.AppendUint32(key, math.Float32bits(v))
						}
					}
				}
				p, ok := seen[string(key)]
				if !ok {
					seen[string(key)] = oy*ow + ox
					continue
				}
				repeats++
				for co := range oc {
					a, b := out.Values[(s*oc+co)*oh*ow+p], out.Values[(s*oc+co)*oh*ow+oy*ow+ox]
					if a != b {
						t.Fatalf("%s: sample %d, channel %d: pixel (%d, %d) holds the window of pixel %d but is %g, not %g", what, s, co, oy, ox, p, b, a)
					}
				}
			}
		}
	}
	return repeats
}

// chwOf and hwcOf move n maps between channels-last and channels-first.
func chwOf(x []float32, n int, d dims) []float32 {
	y := make([]float32, len(x))
	hwcToCHW(y, x, n, d)
	return y
}

func hwcOf(x []float32, n int, d dims) []float32 {
	y := make([]float32, len(x))
	chwToHWC(y, x, n, d)
	return y
}
