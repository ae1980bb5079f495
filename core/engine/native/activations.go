package native

import (
	"fmt"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// ---- Elementwise nonlinearities ----

// pointwise is an elementwise nonlinearity y = f(x) of an imported graph,
// with its derivative as PyTorch defines it (at kinks, the derivative of
// the side the inequalities below exclude is taken: ReLU6's is 0 at 0 and
// at 6). Under DeepLift's rescale rule it passes back
// (f(x) − f(x̄))/(x − x̄) as ReLU does.
type pointwise struct {
	nm       string
	kind     string
	d        dims
	a, b     float32 // leakyrelu: slope a; clip: bounds [a, b]; hardsigmoid: max(0, min(1, a·x + b))
	f, df    func(float32) float32
	x, y, dx []float32
	reference
}

// Pointwise kinds and their parameters.
var pointwiseKinds = map[string]func(a, b float32) (f, df func(float32) float32){
	"sigmoid": func(_, _ float32) (func(float32) float32, func(float32) float32) {
		return sigmoid, func(x float32) float32 { s := sigmoid(x); return s * (1 - s) }
	},
	// silu is x·σ(x) (SiLU, Swish).
	"silu": func(_, _ float32) (func(float32) float32, func(float32) float32) {
		return func(x float32) float32 { return x * sigmoid(x) },
			func(x float32) float32 { s := sigmoid(x); return s * (1 + x*(1-s)) }
	},
	"leakyrelu": func(a, _ float32) (func(float32) float32, func(float32) float32) {
		return func(x float32) float32 {
				if x > 0 {
					return x
				}
				return a * x
			}, func(x float32) float32 {
				if x > 0 {
					return 1
				}
				return a
			}
	},
	"clip": func(a, b float32) (func(float32) float32, func(float32) float32) {
		return func(x float32) float32 { return min(max(x, a), b) }, func(x float32) float32 {
			if x > a && x < b {
				return 1
			}
			return 0
		}
	},
	"hardsigmoid": func(a, b float32) (func(float32) float32, func(float32) float32) {
		return func(x float32) float32 { return min(max(a*x+b, 0), 1) }, func(x float32) float32 {
			if v := a*x + b; v > 0 && v < 1 {
				return a
			}
			return 0
		}
	},
	// hardswish is x·relu6(x + 3)/6.
	"hardswish": func(_, _ float32) (func(float32) float32, func(float32) float32) {
		return func(x float32) float32 { return x * min(max(x+3, 0), 6) / 6 }, func(x float32) float32 {
			switch {
			case x < -3:
				return 0
			case x <= 3:
				return x/3 + 0.5
			}
			return 1
		}
	},
}

func newPointwise(name, kind string, d dims, a, b float32) (*pointwise, error) {
	mk, ok := pointwiseKinds[kind]
	if !ok {
		return nil, fmt.Errorf("unknown nonlinearity %q", kind)
	}
	f, df := mk(a, b)
	return &pointwise{nm: name, kind: kind, d: d, a: a, b: b, f: f, df: df}, nil
}

func (l *pointwise) name() string            { return l.nm }
func (l *pointwise) in() dims                { return l.d }
func (l *pointwise) out() dims               { return l.d }
func (l *pointwise) params() []*engine.Param { return nil }
func (l *pointwise) input() []float32        { return l.x }
func (l *pointwise) clone(gemm.Kernel) layer {
	c, _ := newPointwise(l.nm, l.kind, l.d, l.a, l.b) // l's kind: cannot fail
	return c
}

func (l *pointwise) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	y := grow(&l.y, len(x))
	per := l.d.size()
	parallel(n, func(lo, hi int) {
		for i, v := range x[lo*per : hi*per] {
			y[lo*per+i] = l.f(v)
		}
	})
	return y
}

func (l *pointwise) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	per := l.d.size()
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			var ref []float32
			if l.ref != nil {
				r := s % l.refN
				ref = l.ref[r*per : (r+1)*per]
			}
			for j, x := range l.x[s*per : (s+1)*per] {
				i := s*per + j
				if ref != nil {
					if d := x - ref[j]; d > 1e-7 || d < -1e-7 {
						dx[i] = dy[i] * (l.f(x) - l.f(ref[j])) / d
						continue
					}
				}
				dx[i] = dy[i] * l.df(x)
			}
		}
	})
	return dx
}

// ---- Per-channel affine map (constants of an imported graph) ----

// affine is y = x·scale + shift per channel: an imported graph's
// arithmetic with constants (its own normalisation, a bias added apart).
type affine struct {
	nm           string
	d            dims
	scale, shift []float32
	y, dx        []float32
}

func (l *affine) name() string            { return l.nm }
func (l *affine) in() dims                { return l.d }
func (l *affine) out() dims               { return l.d }
func (l *affine) params() []*engine.Param { return nil }
func (l *affine) clone(gemm.Kernel) layer {
	return &affine{nm: l.nm, d: l.d, scale: l.scale, shift: l.shift}
}

func (l *affine) forward(x []float32, n int, _ bool) []float32 {
	y := grow(&l.y, len(x))
	c := l.d.c
	parallel(n*l.d.h*l.d.w, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			for j, v := range x[p*c : (p+1)*c] {
				y[p*c+j] = v*l.scale[j] + l.shift[j]
			}
		}
	})
	return y
}

func (l *affine) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	c := l.d.c
	parallel(n*l.d.h*l.d.w, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			for j, v := range dy[p*c : (p+1)*c] {
				dx[p*c+j] = v * l.scale[j]
			}
		}
	})
	return dx
}

// ---- Zero padding of height and width ----

// zeroPad frames each map with zeros: top, left, bottom, right pixels.
type zeroPad struct {
	nm    string
	i     dims
	p     [4]int
	y, dx []float32
}

func (l *zeroPad) name() string            { return l.nm }
func (l *zeroPad) in() dims                { return l.i }
func (l *zeroPad) out() dims               { return dims{l.i.h + l.p[0] + l.p[2], l.i.w + l.p[1] + l.p[3], l.i.c} }
func (l *zeroPad) params() []*engine.Param { return nil }
func (l *zeroPad) clone(gemm.Kernel) layer { return &zeroPad{nm: l.nm, i: l.i, p: l.p} }

func (l *zeroPad) forward(x []float32, n int, _ bool) []float32 {
	o := l.out()
	y := grow(&l.y, n*o.size())
	row := l.i.w * l.i.c
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			ys := y[s*o.size() : (s+1)*o.size()]
			clear(ys)
			for r := range l.i.h {
				at := ((r+l.p[0])*o.w + l.p[1]) * o.c
				copy(ys[at:at+row], x[s*l.i.size()+r*row:])
			}
		}
	})
	return y
}

func (l *zeroPad) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	o := l.out()
	dx := grow(&l.dx, n*l.i.size())
	row := l.i.w * l.i.c
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			for r := range l.i.h {
				at := s*o.size() + ((r+l.p[0])*o.w+l.p[1])*o.c
				copy(dx[s*l.i.size()+r*row:s*l.i.size()+(r+1)*row], dy[at:at+row])
			}
		}
	})
	return dx
}

// ---- Identity ----

// identity passes its input on: the one reader of an imported graph's
// input when the graph reads it more than once, so that a layer put before
// the graph (a normalisation) comes before all of them.
type identity struct {
	nm string
	d  dims
}

func (l *identity) name() string                                 { return l.nm }
func (l *identity) in() dims                                     { return l.d }
func (l *identity) out() dims                                    { return l.d }
func (l *identity) params() []*engine.Param                      { return nil }
func (l *identity) clone(gemm.Kernel) layer                      { return &identity{nm: l.nm, d: l.d} }
func (l *identity) forward(x []float32, _ int, _ bool) []float32 { return x }
func (l *identity) backward(dy []float32, _ int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	return dy
}
