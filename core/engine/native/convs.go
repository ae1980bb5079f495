package native

import (
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// ---- Convolution of any window and groups ----

// convg is torch.nn.Conv2d in general: kernels of any height and width,
// strides, dilations, padding on each side, and groups (each group of
// in.c/groups input channels makes out.c/groups output channels). Each
// group is one im2col (columns ordered kernel row, kernel column, input
// channel, as conv2d's) and one GEMM writing its output channels in
// place. conv2d is the faster path where the window is square, undilated
// and evenly padded and there is one group; depthwise where every channel
// is its own group.
type convg struct {
	nm                 string
	i, o               dims
	w                  window
	groups             int
	wt, b              engine.Param
	noBias             bool
	kern               gemm.Kernel
	x                  []float32
	cols, dcols, y, dx []float32
	wk                 []float32 // the weights in the GEMM's layout, made at each forward pass
	gk                 []float32 // the weight gradient in that layout
	pooled             bool      // a max-pool compares the outputs: the forward product runs on gemm16 (pooledconv.go)
	wt16, c16          []float32 // the weights as gemm16 reads them, a group after another; its scratch
}

func newConvg(name string, in dims, cout int, w window, groups int, noBias bool, kern gemm.Kernel) *convg {
	return &convg{nm: name, i: in, o: w.outDims(in, cout, false), w: w, groups: groups, noBias: noBias, kern: kern,
		wt: newParam(name+".weight", []int{cout, in.c / groups, w.kh, w.kw}), b: newParam(name+".bias", []int{cout})}
}

func (l *convg) name() string { return l.nm }
func (l *convg) in() dims     { return l.i }
func (l *convg) out() dims    { return l.o }
func (l *convg) params() []*engine.Param {
	if l.noBias {
		return []*engine.Param{&l.wt}
	}
	return []*engine.Param{&l.wt, &l.b}
}
func (l *convg) clone(k gemm.Kernel) layer {
	c := newConvg(l.nm, l.i, l.o.c, l.w, l.groups, l.noBias, k)
	c.wt.Data, c.wt.Grad = l.wt.Data, l.wt.Grad
	c.b.Data, c.b.Grad = l.b.Data, l.b.Grad
	return c
}

// sizes: input and output channels of a group, and its GEMM's depth.
func (l *convg) sizes() (cin, cout, K int) {
	cin, cout = l.i.c/l.groups, l.o.c/l.groups
	return cin, cout, cin * l.w.kh * l.w.kw
}

// permute moves values between PyTorch's weight layout (out, in, row,
// column) and the GEMM's (out, row, column, in): to the GEMM's, or back
// adding into dst.
func (l *convg) permute(dst, src []float32, toGEMM bool) {
	cin, _, K := l.sizes()
	kk := l.w.kh * l.w.kw
	for co := range l.o.c {
		for ci := range cin {
			for t := range kk {
				p, g := co*K+ci*kk+t, co*K+t*cin+ci
				if toGEMM {
					dst[g] = src[p]
				} else {
					dst[p] += src[g]
				}
			}
		}
	}
}

// im2col writes group g's columns of one sample: a row per output pixel.
func (l *convg) im2col(x, cols []float32, g int) {
	cin, _, K := l.sizes()
	c := l.i.c
	for oy := range l.o.h {
		for ox := range l.o.w {
			row := cols[(oy*l.o.w+ox)*K:][:K]
			for ky := range l.w.kh {
				iy := oy*l.w.sh - l.w.pt + ky*l.w.dh
				for kx := range l.w.kw {
					ix := ox*l.w.sw - l.w.pl + kx*l.w.dw
					tap := row[(ky*l.w.kw+kx)*cin:][:cin]
					if iy < 0 || iy >= l.i.h || ix < 0 || ix >= l.i.w {
						clear(tap)
						continue
					}
					copy(tap, x[(iy*l.i.w+ix)*c+g*cin:])
				}
			}
		}
	}
}

// col2im adds group g's column gradients of one sample onto its input
// channels.
func (l *convg) col2im(dcols, dx []float32, g int) {
	cin, _, K := l.sizes()
	c := l.i.c
	for oy := range l.o.h {
		for ox := range l.o.w {
			row := dcols[(oy*l.o.w+ox)*K:][:K]
			for ky := range l.w.kh {
				iy := oy*l.w.sh - l.w.pt + ky*l.w.dh
				for kx := range l.w.kw {
					ix := ox*l.w.sw - l.w.pl + kx*l.w.dw
					if iy < 0 || iy >= l.i.h || ix < 0 || ix >= l.i.w {
						continue
					}
					at := (iy*l.i.w+ix)*c + g*cin
					addTo(dx[at:at+cin], row[(ky*l.w.kw+kx)*cin:][:cin])
				}
			}
		}
	}
}

func (l *convg) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	_, cout, K := l.sizes()
	px := l.o.h * l.o.w
	M := n * px
	cols := grow(&l.cols, l.groups*M*K)
	parallel(n*l.groups, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			s, g := j/l.groups, j%l.groups
			l.im2col(x[s*l.i.size():(s+1)*l.i.size()], cols[(g*M+s*px)*K:][:px*K], g)
		}
	})
	wk := grow(&l.wk, len(l.wt.Data))
	l.permute(wk, l.wt.Data, true)
	y := grow(&l.y, M*l.o.c)
	beta := float32(0)
	if !l.noBias {
		fillRows(y, l.b.Data, M)
		beta = 1
	}
	if l.pooled {
		n16 := pad16(cout)
		bt := grow(&l.wt16, l.groups*K*n16)
		for g := range l.groups {
			transpose16(bt[g*K*n16:], wk[g*cout*K:(g+1)*cout*K], cout, K)
			pooledGEMM(y[g*cout:], l.o.c, cols[g*M*K:], M, K, bt[g*K*n16:], cout, !l.noBias, spreads(l.kern), &l.c16)
		}
		return y
	}
	for g := range l.groups {
		l.kern.Sgemm(false, true, M, cout, K, 1, cols[g*M*K:], K, wk[g*cout*K:], K, beta, y[g*cout:], l.o.c)
	}
	return y
}

func (l *convg) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	_, cout, K := l.sizes()
	px := l.o.h * l.o.w
	M := n * px
	if paramGrad {
		gk := grow(&l.gk, len(l.wt.Data))
		for g := range l.groups {
			l.kern.Sgemm(true, false, cout, K, M, 1, dy[g*cout:], l.o.c, l.cols[g*M*K:], K, 0, gk[g*cout*K:], K)
		}
		l.permute(l.wt.Grad, gk, false)
		if !l.noBias {
			chanSums(l.b.Grad, dy[:M*l.o.c], l.o.c)
		}
	}
	if !needDX {
		return nil
	}
	dcols := grow(&l.dcols, l.groups*M*K)
	for g := range l.groups {
		l.kern.Sgemm(false, false, M, K, cout, 1, dy[g*cout:], l.o.c, l.wk[g*cout*K:], K, 0, dcols[g*M*K:], K)
	}
	dx := grow(&l.dx, n*l.i.size())
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			d := dx[s*l.i.size() : (s+1)*l.i.size()]
			clear(d)
			for g := range l.groups {
				l.col2im(dcols[(g*M+s*px)*K:][:px*K], d, g)
			}
		}
	})
	return dx
}

// ---- Depthwise convolution ----

// depthwise is a convolution with one group per channel (MobileNet's and
// EfficientNet's), computed directly: each output pixel's channels are the
// sum over the window's taps of a tap's channels times that tap's weights,
// channels-last memory making each tap one contiguous row.
type depthwise struct {
	nm       string
	i, o     dims
	w        window
	wt, b    engine.Param
	noBias   bool
	x, y, dx []float32
	wk       []float32 // weights as taps × channels, made at each forward pass
	gk       []float32 // their gradient in that layout
}

func newDepthwise(name string, in dims, w window, noBias bool) *depthwise {
	return &depthwise{nm: name, i: in, o: w.outDims(in, in.c, false), w: w, noBias: noBias,
		wt: newParam(name+".weight", []int{in.c, 1, w.kh, w.kw}), b: newParam(name+".bias", []int{in.c})}
}

func (l *depthwise) name() string { return l.nm }
func (l *depthwise) in() dims     { return l.i }
func (l *depthwise) out() dims    { return l.o }
func (l *depthwise) params() []*engine.Param {
	if l.noBias {
		return []*engine.Param{&l.wt}
	}
	return []*engine.Param{&l.wt, &l.b}
}
func (l *depthwise) clone(gemm.Kernel) layer {
	c := newDepthwise(l.nm, l.i, l.w, l.noBias)
	c.wt.Data, c.wt.Grad = l.wt.Data, l.wt.Grad
	c.b.Data, c.b.Grad = l.b.Data, l.b.Grad
	return c
}

// taps calls f with each tap t of output pixel (oy, ox)'s window that lies
// inside the map and its input offset, in raster order.
func (l *depthwise) taps(oy, ox int, f func(t, at int)) {
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
			f(ky*l.w.kw+kx, (iy*l.i.w+ix)*l.i.c)
		}
	}
}

func (l *depthwise) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	c, kk := l.i.c, l.w.kh*l.w.kw
	wk := grow(&l.wk, c*kk)
	for ch := range c {
		for t := range kk {
			wk[t*c+ch] = l.wt.Data[ch*kk+t]
		}
	}
	y := grow(&l.y, n*l.o.size())
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			xs := x[s*l.i.size() : (s+1)*l.i.size()]
			for oy := range l.o.h {
				for ox := range l.o.w {
					yo := y[s*l.o.size()+(oy*l.o.w+ox)*c:][:c]
					if l.noBias {
						clear(yo)
					} else {
						copy(yo, l.b.Data)
					}
					l.taps(oy, ox, func(t, at int) {
						wr, xr := wk[t*c:(t+1)*c], xs[at:at+c]
						for j, v := range xr {
							yo[j] += wr[j] * v
						}
					})
				}
			}
		}
	})
	return y
}

func (l *depthwise) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	c, kk := l.i.c, l.w.kh*l.w.kw
	if paramGrad {
		gk := grow(&l.gk, c*kk)
		clear(gk)
		for s := range n {
			xs := l.x[s*l.i.size() : (s+1)*l.i.size()]
			for oy := range l.o.h {
				for ox := range l.o.w {
					g := dy[s*l.o.size()+(oy*l.o.w+ox)*c:][:c]
					l.taps(oy, ox, func(t, at int) {
						gr, xr := gk[t*c:(t+1)*c], xs[at:at+c]
						for j, v := range g {
							gr[j] += v * xr[j]
						}
					})
				}
			}
		}
		for ch := range c {
			for t := range kk {
				l.wt.Grad[ch*kk+t] += gk[t*c+ch]
			}
		}
		if !l.noBias {
			chanSums(l.b.Grad, dy[:n*l.o.size()], c)
		}
	}
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, n*l.i.size())
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			d := dx[s*l.i.size() : (s+1)*l.i.size()]
			clear(d)
			for oy := range l.o.h {
				for ox := range l.o.w {
					g := dy[s*l.o.size()+(oy*l.o.w+ox)*c:][:c]
					l.taps(oy, ox, func(t, at int) {
						wr, dr := l.wk[t*c:(t+1)*c], d[at:at+c]
						for j, v := range g {
							dr[j] += wr[j] * v
						}
					})
				}
			}
		}
	})
	return dx
}
