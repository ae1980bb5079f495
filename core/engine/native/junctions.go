package native

import (
	"faithlab/core/engine"
)

// The junctions of an imported graph: nodes of several inputs. All are
// linear in each input, so DeepLift's rescale rule passes through a sum
// and a concatenation as the gradient does; through a product (a
// squeeze-and-excitation gate) it is the gradient too, for which the rule
// is not defined.

// ---- Sum (a residual connection) ----

// sum adds inputs of the same shape.
type sum struct {
	nm string
	d  dims
	k  int
	y  []float32
	dx [][]float32
}

func newSum(name string, d dims, k int) *sum { return &sum{nm: name, d: d, k: k} }

func (l *sum) name() string            { return l.nm }
func (l *sum) out() dims               { return l.d }
func (l *sum) params() []*engine.Param { return nil }
func (l *sum) copy() junction          { return newSum(l.nm, l.d, l.k) }
func (l *sum) ins() []dims {
	ds := make([]dims, l.k)
	for i := range ds {
		ds[i] = l.d
	}
	return ds
}

func (l *sum) join(xs [][]float32, n int) []float32 {
	y := grow(&l.y, n*l.d.size())
	per := l.d.size()
	parallel(n, func(lo, hi int) {
		out := y[lo*per : hi*per]
		copy(out, xs[0][lo*per:hi*per])
		for _, x := range xs[1:] {
			addTo(out, x[lo*per:hi*per])
		}
	})
	return y
}

// split hands every input the output's gradient itself.
func (l *sum) split(dy []float32, n int, need []bool) [][]float32 {
	l.dx = l.dx[:0]
	for _, nd := range need {
		if nd {
			l.dx = append(l.dx, dy)
		} else {
			l.dx = append(l.dx, nil)
		}
	}
	return l.dx
}

// ---- Concatenation along channels ----

type concat struct {
	nm  string
	in  []dims
	o   dims
	y   []float32
	dxs [][]float32
	gs  [][]float32
}

func newConcat(name string, in []dims) *concat {
	o := dims{in[0].h, in[0].w, 0}
	for _, d := range in {
		o.c += d.c
	}
	return &concat{nm: name, in: append([]dims(nil), in...), o: o, dxs: make([][]float32, len(in))}
}

func (l *concat) name() string            { return l.nm }
func (l *concat) out() dims               { return l.o }
func (l *concat) params() []*engine.Param { return nil }
func (l *concat) copy() junction          { return newConcat(l.nm, l.in) }
func (l *concat) ins() []dims             { return l.in }

// join interleaves, pixel by pixel, each input's channels in input order.
func (l *concat) join(xs [][]float32, n int) []float32 {
	y := grow(&l.y, n*l.o.size())
	C := l.o.c
	parallel(n*l.o.h*l.o.w, func(lo, hi int) {
		off := 0
		for k, x := range xs {
			c := l.in[k].c
			for p := lo; p < hi; p++ {
				copy(y[p*C+off:p*C+off+c], x[p*c:(p+1)*c])
			}
			off += c
		}
	})
	return y
}

func (l *concat) split(dy []float32, n int, need []bool) [][]float32 {
	C, pixels := l.o.c, n*l.o.h*l.o.w
	l.gs = l.gs[:0]
	off := 0
	for k, d := range l.in {
		if !need[k] {
			l.gs = append(l.gs, nil)
			off += d.c
			continue
		}
		dx := grow(&l.dxs[k], pixels*d.c)
		c, o := d.c, off
		parallel(pixels, func(lo, hi int) {
			for p := lo; p < hi; p++ {
				copy(dx[p*c:(p+1)*c], dy[p*C+o:p*C+o+c])
			}
		})
		l.gs = append(l.gs, dx)
		off += d.c
	}
	return l.gs
}

// ---- Product (squeeze-and-excitation, gates) ----

// product multiplies two inputs elementwise: of the same shape, or the
// second (bcast) one value per channel for every pixel of the first, as
// a squeeze-and-excitation block scales its input's channels.
type product struct {
	nm     string
	a, b   dims
	xa, xb []float32
	y      []float32
	da, db []float32
	gs     [][]float32
}

func newProduct(name string, a, b dims) *product { return &product{nm: name, a: a, b: b} }

// broadcast says whether b holds one value per channel, for every pixel of a.
func (l *product) broadcast() bool { return l.b != l.a }

func (l *product) name() string            { return l.nm }
func (l *product) out() dims               { return l.a }
func (l *product) params() []*engine.Param { return nil }
func (l *product) copy() junction          { return newProduct(l.nm, l.a, l.b) }
func (l *product) ins() []dims             { return []dims{l.a, l.b} }

func (l *product) join(xs [][]float32, n int) []float32 {
	l.xa, l.xb = xs[0], xs[1]
	y := grow(&l.y, n*l.a.size())
	per, hw, c := l.a.size(), l.a.h*l.a.w, l.a.c
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			a, out := l.xa[s*per:(s+1)*per], y[s*per:(s+1)*per]
			if !l.broadcast() {
				for i, v := range l.xb[s*per : (s+1)*per] {
					out[i] = a[i] * v
				}
				continue
			}
			g := l.xb[s*c : (s+1)*c]
			for p := range hw {
				for j, v := range g {
					out[p*c+j] = a[p*c+j] * v
				}
			}
		}
	})
	return y
}

func (l *product) split(dy []float32, n int, need []bool) [][]float32 {
	per, hw, c := l.a.size(), l.a.h*l.a.w, l.a.c
	var da, db []float32
	if need[0] {
		da = grow(&l.da, n*per)
	}
	if need[1] {
		db = grow(&l.db, n*l.b.size())
	}
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			a, g := l.xa[s*per:(s+1)*per], dy[s*per:(s+1)*per]
			if !l.broadcast() {
				b := l.xb[s*per : (s+1)*per]
				for i, v := range g {
					if da != nil {
						da[s*per+i] = v * b[i]
					}
					if db != nil {
						db[s*per+i] = v * a[i]
					}
				}
				continue
			}
			b := l.xb[s*c : (s+1)*c]
			if da != nil {
				for p := range hw {
					for j, v := range b {
						da[s*per+p*c+j] = g[p*c+j] * v
					}
				}
			}
			if db != nil {
				d := db[s*c : (s+1)*c]
				clear(d)
				for p := range hw {
					for j := range d {
						d[j] += g[p*c+j] * a[p*c+j]
					}
				}
			}
		}
	})
	l.gs = append(l.gs[:0], da, db)
	return l.gs
}
