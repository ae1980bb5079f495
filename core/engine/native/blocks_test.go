package native

import (
	"math"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// TestBatchNormGradients checks batch norm alone, where the loss Σ y·w is
// smooth, against central differences in both modes.
func TestBatchNormGradients(t *testing.T) {
	for _, train := range []bool{false, true} {
		d := dims{2, 3, 4}
		l := newBatchNorm("bn", d)
		for i := range l.w.Data {
			l.w.Data[i], l.b.Data[i], l.rmean.Data[i], l.rvar.Data[i] = 0.5+float32(i), 0.1*float32(i), 0.2, 1.5
		}
		n := 2
		x := randBatch(3, n*d.size())
		w := randBatch(4, n*d.size())
		f := func() float64 {
			saved := append([]float32(nil), l.rmean.Data...)
			savedV := append([]float32(nil), l.rvar.Data...)
			y := l.forward(x, n, train)
			copy(l.rmean.Data, saved)
			copy(l.rvar.Data, savedV)
			var s float64
			for i, v := range y {
				s += float64(v) * float64(w[i])
			}
			return s
		}
		f()
		clear(l.w.Grad)
		clear(l.b.Grad)
		dx := append([]float32(nil), l.backward(w, n, true, true)...)
		check := func(what string, v []float32, i int, analytic float32) {
			const h = 1e-3
			old := v[i]
			v[i] = old + h
			up := f()
			v[i] = old - h
			down := f()
			v[i] = old
			num := (up - down) / (2 * h)
			if math.Abs(num-float64(analytic)) > 1e-2*math.Max(1, math.Abs(num)) {
				t.Errorf("train=%v %s[%d]: analytic %g numeric %g", train, what, i, analytic, num)
			}
		}
		for i := range x {
			check("x", x, i, dx[i])
		}
		for i := range l.w.Data {
			check("weight", l.w.Data, i, l.w.Grad[i])
			check("bias", l.b.Data, i, l.b.Grad[i])
		}
	}
}

// TestMaxPool checks both max-pool paths (2×2 and general k) against the
// definition: each output is its window's maximum, the first one on ties,
// and the gradient goes to that element only.
func TestMaxPool(t *testing.T) {
	for _, tc := range []struct {
		k    int
		relu bool // pool max(x, 0), as a ReLU before the pool
	}{{2, false}, {3, false}, {2, true}, {3, true}} {
		k := tc.k
		d := dims{6, 6, 3}
		l := newMaxPool("p", d, k)
		n := 2
		x := randBatch(11, n*d.size())
		if tc.relu {
			for i := range x {
				x[i] -= 0.5
			}
			// An all-negative window: every ReLU output 0, so the first wins.
			for ky := 0; ky < k; ky++ {
				for kx := 0; kx < k; kx++ {
					x[(ky*d.w+kx)*d.c+1] = -0.1 * float32(1+ky*k+kx)
				}
			}
		}
		x[0], x[3] = 0.5, 0.5 // a tie inside the first window of channel 0
		y := l.pool(x, n, tc.relu)
		dy := randBatch(12, len(y))
		dx := l.backward(dy, n, true, false)
		want := make([]float32, len(x))
		o := l.out()
		for s := 0; s < n; s++ {
			for oy := 0; oy < o.h; oy++ {
				for ox := 0; ox < o.w; ox++ {
					for c := 0; c < d.c; c++ {
						best, at := float32(-1), -1
						for ky := 0; ky < k; ky++ {
							for kx := 0; kx < k; kx++ {
								i := s*d.size() + ((oy*k+ky)*d.w+ox*k+kx)*d.c + c
								v := x[i]
								if tc.relu {
									v = max(v, 0)
								}
								if at < 0 || v > best {
									best, at = v, i
								}
							}
						}
						j := s*o.size() + (oy*o.w+ox)*o.c + c
						if y[j] != best {
							t.Fatalf("%+v: output %d = %g, want %g", tc, j, y[j], best)
						}
						want[at] += dy[j]
					}
				}
			}
		}
		for i := range want {
			if dx[i] != want[i] {
				t.Fatalf("%+v: dx[%d] = %g, want %g", tc, i, dx[i], want[i])
			}
		}
	}
}

// TestFusedReLUActivation checks that a ReLU fused into the pool after it
// still reports its own values and gradient.
func TestFusedReLUActivation(t *testing.T) {
	m, err := New("goar-cnn", []int{1, 20, 20}, 3, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	m.Init(5)
	x := randBatch(6, 2*400)
	if _, err := m.Forward(x, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Backward(randBatch(7, 6), engine.InputGrad); err != nil {
		t.Fatal(err)
	}
	c1, err := m.Activation("c1")
	if err != nil {
		t.Fatal(err)
	}
	r1, err := m.Activation("relu1")
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range c1.Values {
		if r1.Values[i] != max(v, 0) {
			t.Fatalf("relu1[%d] = %g, want max(%g, 0)", i, r1.Values[i], v)
		}
		// The gradient reaching c1 is relu1's, gated by the ReLU.
		if want := r1.Grad[i] * float32(b2u(v > 0)); c1.Grad[i] != want {
			t.Fatalf("c1 gradient [%d] = %g, want %g", i, c1.Grad[i], want)
		}
	}
}
