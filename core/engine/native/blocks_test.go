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
