package native

import (
	"math"
	"testing"
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
	for _, k := range []int{2, 3} {
		d := dims{6, 6, 3}
		l := newMaxPool("p", d, k)
		n := 2
		x := randBatch(11, n*d.size())
		x[0], x[3] = 0.5, 0.5 // a tie inside the first window of channel 0
		y := l.forward(x, n, false)
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
								if at < 0 || x[i] > best {
									best, at = x[i], i
								}
							}
						}
						j := s*o.size() + (oy*o.w+ox)*o.c + c
						if y[j] != best {
							t.Fatalf("k=%d: output %d = %g, want %g", k, j, y[j], best)
						}
						want[at] += dy[j]
					}
				}
			}
		}
		for i := range want {
			if dx[i] != want[i] {
				t.Fatalf("k=%d: dx[%d] = %g, want %g", k, i, dx[i], want[i])
			}
		}
	}
}
