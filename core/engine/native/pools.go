package native

import (
	"math"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// window is a convolution's or pool's window over height and width:
// kernel, stride and dilation, and the padding on each side.
type window struct {
	kh, kw, sh, sw, dh, dw int
	pt, pl, pb, pr         int
}

// span is the rows and columns a window covers: (k − 1)·d + 1.
func (w window) span() (int, int) { return (w.kh-1)*w.dh + 1, (w.kw-1)*w.dw + 1 }

// outSize is PyTorch's output length of a window of span k sliding at
// stride s over in values padded by a and b: rounded down, or up with
// ceil, where a last window that would start in the end padding is
// dropped. It is 0 where no window fits.
func outSize(in, k, s, a, b int, ceil bool) int {
	num := in + a + b - k
	if num < 0 {
		return 0
	}
	if ceil {
		num += s - 1
	}
	out := num/s + 1
	if ceil && (out-1)*s >= in+a {
		out--
	}
	return out
}

// outDims is the output map of window w over in with c channels.
func (w window) outDims(in dims, c int, ceil bool) dims {
	kh, kw := w.span()
	return dims{outSize(in.h, kh, w.sh, w.pt, w.pb, ceil), outSize(in.w, kw, w.sw, w.pl, w.pr, ceil), c}
}

// ---- Max and average pooling of any window ----

// pool2d is MaxPool2d or AvgPool2d of any window, stride, padding
// (ignored by the maximum; counted by the average with countPad, as
// PyTorch's count_include_pad) and rounding (ceil mode); the max-pool may
// be dilated. Its gradient goes, as PyTorch's, to each window's first
// maximum in raster order, or evenly over the window.
type pool2d struct {
	nm             string
	max            bool
	i, o           dims
	w              window
	ceil, countPad bool
	div            []float32 // average: each output pixel's divisor
	x, y, dx       []float32
}

func newPool2d(name string, isMax bool, in dims, w window, ceil, countPad bool) *pool2d {
	l := &pool2d{nm: name, max: isMax, i: in, o: w.outDims(in, in.c, ceil), w: w, ceil: ceil, countPad: countPad}
	if !isMax {
		l.div = make([]float32, l.o.h*l.o.w)
		for oy := range l.o.h {
			h0 := oy*w.sh - w.pt
			h1 := min(h0+w.kh, in.h+w.pb)
			for ox := range l.o.w {
				w0 := ox*w.sw - w.pl
				w1 := min(w0+w.kw, in.w+w.pr)
				d := (h1 - h0) * (w1 - w0)
				if !countPad {
					d = (min(h1, in.h) - max(h0, 0)) * (min(w1, in.w) - max(w0, 0))
				}
				l.div[oy*l.o.w+ox] = float32(d)
			}
		}
	}
	return l
}

func (l *pool2d) name() string            { return l.nm }
func (l *pool2d) in() dims                { return l.i }
func (l *pool2d) out() dims               { return l.o }
func (l *pool2d) params() []*engine.Param { return nil }
func (l *pool2d) clone(gemm.Kernel) layer {
	return newPool2d(l.nm, l.max, l.i, l.w, l.ceil, l.countPad)
}

// taps calls f with the input offset of every pixel of output pixel
// (oy, ox)'s window inside the map, in raster order.
func (l *pool2d) taps(oy, ox int, f func(at int)) {
	for ky := range l.w.kh {
		iy := oy*l.w.sh - l.w.pt + ky*l.w.dh
		if iy < 0 || iy >= l.i.h {
			continue
		}
		for kx := range l.w.kw {
			ix := ox*l.w.sw - l.w.pl + kx*l.w.dw
			if ix < 0 || ix >= l.i.w {
				continue
			}
			f((iy*l.i.w + ix) * l.i.c)
		}
	}
}

func (l *pool2d) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	y := grow(&l.y, n*l.o.size())
	c := l.i.c
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			xs := x[s*l.i.size() : (s+1)*l.i.size()]
			for oy := range l.o.h {
				for ox := range l.o.w {
					yo := y[s*l.o.size()+(oy*l.o.w+ox)*c:][:c]
					if l.max {
						for j := range yo {
							yo[j] = float32(math.Inf(-1))
						}
						l.taps(oy, ox, func(at int) {
							for j, v := range xs[at : at+c] {
								yo[j] = max(yo[j], v)
							}
						})
						continue
					}
					clear(yo)
					l.taps(oy, ox, func(at int) { addTo(yo, xs[at:at+c]) })
					d := l.div[oy*l.o.w+ox]
					for j := range yo {
						yo[j] /= d
					}
				}
			}
		}
	})
	return y
}

func (l *pool2d) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, n*l.i.size())
	c := l.i.c
	parallel(n, func(lo, hi int) {
		done := make([]bool, c)
		g := make([]float32, c)
		for s := lo; s < hi; s++ {
			xs := l.x[s*l.i.size() : (s+1)*l.i.size()]
			d := dx[s*l.i.size() : (s+1)*l.i.size()]
			clear(d)
			for oy := range l.o.h {
				for ox := range l.o.w {
					o := s*l.o.size() + (oy*l.o.w+ox)*c
					yo, gs := l.y[o:o+c], dy[o:o+c]
					if l.max {
						clear(done)
						l.taps(oy, ox, func(at int) {
							for j, v := range xs[at : at+c] {
								if !done[j] && v == yo[j] {
									d[at+j] += gs[j]
									done[j] = true
								}
							}
						})
						continue
					}
					dv := l.div[oy*l.o.w+ox]
					for j, v := range gs {
						g[j] = v / dv
					}
					l.taps(oy, ox, func(at int) { addTo(d[at:at+c], g) })
				}
			}
		}
	})
	return dx
}

// ---- MaxPool2d (kernel = stride, no padding, floor) ----

// maxPool keeps no argmax: backward finds each window's maximum again as
// the first value in it equal to the output, which is PyTorch's choice
// (the first maximum) and spares the forward pass writing an index per
// output.
type maxPool struct {
	nm    string
	i, o  dims
	k     int
	x     []float32 // the input of the last forward pass
	floor float32   // what that pass took values below as: −∞, or 0 with a ReLU fused in
	y, dx []float32
	at    []int // window position t's offset in the input from the window's first value
}

// newMaxPool builds a k×k max-pool with stride k.
func newMaxPool(name string, in dims, k int) *maxPool {
	at := make([]int, k*k)
	for t := range at {
		at[t] = ((t/k)*in.w + t%k) * in.c
	}
	return &maxPool{nm: name, i: in, o: dims{in.h / k, in.w / k, in.c}, k: k, at: at}
}

func (l *maxPool) name() string            { return l.nm }
func (l *maxPool) in() dims                { return l.i }
func (l *maxPool) out() dims               { return l.o }
func (l *maxPool) params() []*engine.Param { return nil }
func (l *maxPool) clone(gemm.Kernel) layer { return newMaxPool(l.nm, l.i, l.k) }

func (l *maxPool) forward(x []float32, n int, _ bool) []float32 {
	return l.pool(x, n, false)
}

// pool max-pools x; with relu it pools max(x, 0) instead, which is ReLU
// followed by the pool in one pass over the ReLU's input (ReLU is monotone,
// so it commutes with the max).
func (l *maxPool) pool(x []float32, n int, relu bool) []float32 {
	l.x, l.floor = x, float32(math.Inf(-1))
	if relu {
		l.floor = 0
	}
	y := grow(&l.y, n*l.o.size())
	c := l.i.c
	rowLen := l.i.w * c
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			xs := x[s*l.i.size() : (s+1)*l.i.size()]
			for oy := 0; oy < l.o.h; oy++ {
				if l.k == 2 {
					pool2(y[s*l.o.size()+oy*l.o.w*c:], xs[2*oy*rowLen:], xs[(2*oy+1)*rowLen:], l.o.w, c, l.floor)
					continue
				}
				for ox := 0; ox < l.o.w; ox++ {
					yo := y[s*l.o.size()+(oy*l.o.w+ox)*c:][:c]
					first := ((oy*l.k)*l.i.w + ox*l.k) * c
					for ch, v := range xs[first : first+c] {
						yo[ch] = max(v, l.floor)
					}
					for _, at := range l.at[1:] {
						for ch, v := range xs[first+at : first+at+c] {
							yo[ch] = max(yo[ch], v)
						}
					}
				}
			}
		}
	})
	return y
}

func (l *maxPool) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	return l.scatter(grow(&l.dx, n*l.i.size()), dy, n, false)
}

// scatter writes the input gradient of n samples into dx: each output's
// gradient goes to its window's first maximum. With gate, it goes there only
// where the window's maximum is positive, which is the gradient through a
// ReLU feeding the pool as well.
func (l *maxPool) scatter(dx, dy []float32, n int, gate bool) []float32 {
	c, k := l.i.c, l.k
	rowLen := l.i.w * c
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			xs := l.x[s*l.i.size() : (s+1)*l.i.size()]
			d := dx[s*l.i.size() : (s+1)*l.i.size()]
			if k != 2 || l.i.h%2 != 0 || l.i.w%2 != 0 {
				clear(d) // windows that do not tile the input leave some of it untouched
			}
			for oy := 0; oy < l.o.h; oy++ {
				if k == 2 {
					o := s*l.o.size() + oy*l.o.w*c
					top, bot := 2*oy*rowLen, (2*oy+1)*rowLen
					route2(d[top:], d[bot:], xs[top:], xs[bot:], l.y[o:], dy[o:], l.o.w, c, l.floor, gate)
					continue
				}
				for ox := 0; ox < l.o.w; ox++ {
					o := s*l.o.size() + (oy*l.o.w+ox)*c
					ys, gs := l.y[o:o+c], dy[o:o+c]
					first := ((oy*k)*l.i.w + ox*k) * c
					for ch, y := range ys {
						g := gs[ch]
						if gate && !(y > 0) {
							continue
						}
						for _, at := range l.at {
							if max(xs[first+at+ch], l.floor) == y {
								d[first+at+ch] = g
								break
							}
						}
					}
				}
			}
		}
	})
	return dx
}
