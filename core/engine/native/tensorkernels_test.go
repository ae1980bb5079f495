package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// The broadcasting kernels' fast paths (same shape, a constant or a row's
// value on one side, a trailing-axis bias, merged axes) give the bits of
// one value at a time along the output's own axes, for every function,
// values and gradients, with inputs that hold zeros, negatives and a
// power of 2.
func TestBroadcastFastPathsGiveTheGeneralLoopsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
			if i%7 == 3 {
				v[i] = 0
			}
		}
		return v
	}
	for _, tc := range []struct{ a, b []int }{
		{[]int{1, 5, 6}, []int{1, 5, 6}}, // same shape
		{[]int{1, 5, 6}, []int{1, 1, 1}}, // scalar
		{[]int{1, 5, 6}, []int{1}},       // scalar, lower rank
		{[]int{1, 5, 6}, []int{1, 1, 6}}, // trailing-axis bias
		{[]int{1, 5, 6}, []int{1, 5, 1}}, // one value a row
		{[]int{1, 5, 1}, []int{1, 5, 6}}, // the row's value on the left
		{[]int{2, 1, 3}, []int{1, 4, 1}}, // both broadcast
		{[]int{3, 1, 4, 2}, []int{3, 5, 1, 1}},
	} {
		bc, err := newBroadcast(tc.a, tc.b)
		if err != nil {
			t.Fatal(err)
		}
		for _, fn := range elementwiseFns {
			t.Run(fmt.Sprintf("%s %v %v", fn, tc.a, tc.b), func(t *testing.T) {
				a, b, dy := draw(prod(tc.a)), draw(prod(tc.b)), draw(prod(bc.out))
				if fn == "pow" {
					b[0] = 2 // the square, a path of its own
				}
				y := make([]float32, prod(bc.out))
				bc.apply(fn, y, a, b)
				da, db := make([]float32, len(a)), make([]float32, len(b))
				bc.grads(fn, dy, a, b, da, db, true)
				// One value at a time, as the kernels were first written.
				wy := make([]float32, len(y))
				wa, wb := make([]float32, len(a)), make([]float32, len(b))
				last, la, lb := bc.out[len(bc.out)-1], bc.sa[len(bc.out)-1], bc.sb[len(bc.out)-1]
				bc.each(func(o, ia, ib int) {
					for j := range last {
						p, q := a[ia+j*la], b[ib+j*lb]
						wy[o+j] = opf(fn, p, q)
						if fn == "pow" && q != 2 {
							wy[o+j] = float32(math.Pow(float64(p), float64(q)))
						}
						wa[ia+j*la] += gradA(fn, dy[o+j], p, q)
						wb[ib+j*lb] += gradB(fn, dy[o+j], p, q)
					}
				})
				same := func(what string, got, want []float32) {
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
							t.Fatalf("%s[%d] = %g, want %g", what, i, got[i], want[i])
						}
					}
				}
				same("y", y, wy)
				same("da", da, wa)
				same("db", db, wb)
			})
		}
	}
}

// A "gelu" layer gives the bits of the five layers PyTorch exports nn.GELU
// as (x/√2, erf, + 1, a product with x, ·0.5), its output and the
// gradient of its input alike.
func TestGELUGivesTheBitsOfItsFiveLayers(t *testing.T) {
	const d = 64
	sqrt2 := float32(math.Sqrt2)
	x := Layer{Op: "arith", Name: "x", Fn: "mul", Shape: []int{d}, Value: []float32{1.5}}
	chain := []Layer{x,
		{Op: "arith", Name: "div", Fn: "div", In: []string{"x"}, Shape: []int{d}, Value: []float32{sqrt2}},
		{Op: "erf", Name: "erf", In: []string{"div"}, Shape: []int{d}},
		{Op: "arith", Name: "add", Fn: "add", In: []string{"erf"}, Shape: []int{d}, Value: []float32{1}},
		{Op: "mul", Name: "mul", In: []string{"x", "add"}},
		{Op: "arith", Name: "half", Fn: "mul", In: []string{"mul"}, Shape: []int{d}, Value: []float32{0.5}},
	}
	fused := []Layer{x, {Op: "gelu", Name: "gelu", In: []string{"x"}, Shape: []int{d}, Alpha: sqrt2}}
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 3
	in, dl := make([]float32, n*d), make([]float32, n*d)
	for i := range in {
		in[i], dl[i] = float32(rng.NormFloat64()*3), float32(rng.NormFloat64())
	}
	run := func(ls []Layer) (y, dx []float32) {
		net, err := Compose("gelu", []int{d, 1, 1}, d, gemm.Gonum{}, ls)
		if err != nil {
			t.Fatal(err)
		}
		out, err := net.Forward(in, n)
		if err != nil {
			t.Fatal(err)
		}
		y = append(y, out...)
		g, err := net.Backward(dl, engine.InputGrad)
		if err != nil {
			t.Fatal(err)
		}
		return y, append(dx, g...)
	}
	y0, g0 := run(chain)
	y1, g1 := run(fused)
	for i := range y0 {
		if math.Float32bits(y0[i]) != math.Float32bits(y1[i]) || math.Float32bits(g0[i]) != math.Float32bits(g1[i]) {
			t.Fatalf("value %d: the five layers give %g (gradient %g), gelu %g (%g)", i, y0[i], g0[i], y1[i], g1[i])
		}
	}
}
