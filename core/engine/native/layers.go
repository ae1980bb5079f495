package native

import (
	"math"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// dims is one sample's channels-last shape.
type dims struct{ h, w, c int }

func (d dims) size() int { return d.h * d.w * d.c }

// node is one vertex of a network's graph: a layer (one input) or a
// junction (several).
type node interface {
	name() string
	out() dims
	params() []*engine.Param
}

// layer is a node of one input. forward reads x (n samples of in()) and
// returns its output buffer; backward reads the gradient of that output
// and returns the gradient of the input when needDX, else nil. Neither
// writes to what it reads.
type layer interface {
	node
	in() dims
	forward(x []float32, n int, train bool) []float32
	backward(dy []float32, n int, needDX, paramGrad bool) []float32
	clone(k gemm.Kernel) layer
}

// junction is a node of several inputs (a sum, a concatenation, a
// product): join reads xs (n samples of each of ins()) and returns its
// output buffer; split reads the gradient of that output and returns the
// gradient of each input k for which need[k] (nil for the others), which
// may be dy itself. Neither writes to what it reads.
type junction interface {
	node
	ins() []dims
	join(xs [][]float32, n int) []float32
	split(dy []float32, n int, need []bool) [][]float32
	copy() junction
}

// ---- Conv2d ----

type conv2d struct {
	nm                 string
	i, o               dims
	k, stride, pad     int
	w, b               engine.Param
	kern               gemm.Kernel
	cols, y, dcols, dx []float32
	x                  []float32
	wk, gk             []float32 // weights and their gradient in the GEMM's layout (see permuted)
	noBias             bool      // the layer has no bias parameter (convolutions before batch norm)
	// borrowed: wk is the network's, laid out before the pass, and gk holds
	// the weight gradient of every pass until flushGrad (a replica's layer,
	// see laidOut); pending: gk holds some not yet flushed.
	borrowed, pending bool
	pooled            bool      // a max-pool compares the outputs: the forward product runs on gemm16 (pooledconv.go)
	wt16, c16         []float32 // the weights as gemm16 reads them; its scratch
}

func newConv2d(name string, in dims, cout, k, stride, pad int, kern gemm.Kernel) *conv2d {
	oh := (in.h+2*pad-k)/stride + 1
	ow := (in.w+2*pad-k)/stride + 1
	return &conv2d{
		nm: name, i: in, o: dims{oh, ow, cout}, k: k, stride: stride, pad: pad, kern: kern,
		w: newParam(name+".weight", []int{cout, in.c, k, k}),
		b: newParam(name+".bias", []int{cout}),
	}
}

func (l *conv2d) name() string { return l.nm }
func (l *conv2d) in() dims     { return l.i }
func (l *conv2d) out() dims    { return l.o }
func (l *conv2d) params() []*engine.Param {
	if l.noBias {
		return []*engine.Param{&l.w}
	}
	return []*engine.Param{&l.w, &l.b}
}
func (l *conv2d) pointwise() bool { return l.k == 1 && l.stride == 1 && l.pad == 0 }
func (l *conv2d) clone(k gemm.Kernel) layer {
	c := newConv2d(l.nm, l.i, l.o.c, l.k, l.stride, l.pad, k)
	c.noBias = l.noBias
	c.w.Data, c.w.Grad = l.w.Data, l.w.Grad
	c.b.Data, c.b.Grad = l.b.Data, l.b.Grad
	return c
}

func (l *conv2d) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	K := l.i.c * l.k * l.k
	M := n * l.o.h * l.o.w
	cols := x
	if !l.pointwise() {
		cols = grow(&l.cols, M*K)
		parallel(n, func(lo, hi int) {
			for s := lo; s < hi; s++ {
				l.im2col(x[s*l.i.size():(s+1)*l.i.size()], cols[s*l.o.h*l.o.w*K:(s+1)*l.o.h*l.o.w*K])
			}
		})
	}
	y := grow(&l.y, M*l.o.c)
	beta := float32(0)
	if !l.noBias {
		fillRows(y, l.b.Data, M)
		beta = 1
	}
	if !l.borrowed {
		l.layout()
	}
	if l.pooled {
		l.pooledForward(cols, y, M, K)
		return y
	}
	l.kern.Sgemm(false, true, M, l.o.c, K, 1, cols, K, l.kernelWeights(), K, beta, y, l.o.c)
	return y
}

// permuted says whether the GEMM's weight layout (output channel, kernel
// row, kernel column, input channel), which matches channels-last im2col
// rows, differs from PyTorch's (output, input, row, column).
func (l *conv2d) permuted() bool { return l.i.c > 1 && l.k > 1 }

// kernelWeights returns the weights in the GEMM's layout: l.wk, as layout
// made it, when it differs from PyTorch's.
func (l *conv2d) kernelWeights() []float32 {
	if !l.permuted() {
		return l.w.Data
	}
	return l.wk
}

// permute permutes PyTorch's layout of the weights into l.wk when the
// GEMM's differs from it (layout, in pooledconv.go, calls it).
func (l *conv2d) permute() {
	if !l.permuted() {
		return
	}
	kk, cin := l.k*l.k, l.i.c
	wk := grow(&l.wk, len(l.w.Data))
	for co := 0; co < l.o.c; co++ {
		src, dst := l.w.Data[co*cin*kk:(co+1)*cin*kk], wk[co*cin*kk:(co+1)*cin*kk]
		for ci := 0; ci < cin; ci++ {
			for off := 0; off < kk; off++ {
				dst[off*cin+ci] = src[ci*kk+off]
			}
		}
	}
}

func (l *conv2d) borrow(from laidOut) {
	f := from.(*conv2d)
	l.wk, l.wt16, l.borrowed = f.wk, f.wt16, true
}

// flushGrad adds the weight gradient gk holds, in the GEMM's layout, to the
// weights' in PyTorch's.
func (l *conv2d) flushGrad() {
	if !l.pending {
		return
	}
	kk, cin := l.k*l.k, l.i.c
	K := kk * cin
	for co := 0; co < l.o.c; co++ {
		src, dst := l.gk[co*K:(co+1)*K], l.w.Grad[co*K:(co+1)*K]
		for ci := 0; ci < cin; ci++ {
			for off := 0; off < kk; off++ {
				dst[ci*kk+off] += src[off*cin+ci]
			}
		}
	}
	l.pending = false
}

// im2col writes one row per output pixel with columns ordered (kernel row,
// kernel column, input channel). In channels-last memory the k taps of one
// kernel row are k consecutive pixels, so each kernel row is a single copy of
// k·C floats wherever the window lies inside the image.
func (l *conv2d) im2col(x, cols []float32) {
	c, k := l.i.c, l.k
	K := c * k * k
	run := k * c
	if run < shortRun {
		l.im2colShort(x, cols)
		return
	}
	for oy := 0; oy < l.o.h; oy++ {
		for ox := 0; ox < l.o.w; ox++ {
			row := cols[(oy*l.o.w+ox)*K : (oy*l.o.w+ox+1)*K]
			ix0 := ox*l.stride - l.pad
			inside := ix0 >= 0 && ix0+k <= l.i.w
			for ky := 0; ky < k; ky++ {
				iy := oy*l.stride - l.pad + ky
				dst := row[ky*run : (ky+1)*run]
				switch {
				case iy < 0 || iy >= l.i.h:
					clear(dst)
				case inside:
					copy(dst, x[(iy*l.i.w+ix0)*c:(iy*l.i.w+ix0)*c+run])
				default:
					for kx := 0; kx < k; kx++ {
						ix := ix0 + kx
						tap := dst[kx*c : (kx+1)*c]
						if ix < 0 || ix >= l.i.w {
							clear(tap)
							continue
						}
						copy(tap, x[(iy*l.i.w+ix)*c:(iy*l.i.w+ix+1)*c])
					}
				}
			}
		}
	}
}

// col2im adds the rows of dcols back onto the input pixels they came from,
// a kernel row (k·C contiguous floats) at a time where the window is inside.
func (l *conv2d) col2im(dcols, dx []float32) {
	c, k := l.i.c, l.k
	K := c * k * k
	run := k * c
	clear(dx)
	if run < shortRun {
		l.col2imShort(dcols, dx)
		return
	}
	for oy := 0; oy < l.o.h; oy++ {
		for ox := 0; ox < l.o.w; ox++ {
			row := dcols[(oy*l.o.w+ox)*K : (oy*l.o.w+ox+1)*K]
			ix0 := ox*l.stride - l.pad
			inside := ix0 >= 0 && ix0+k <= l.i.w
			for ky := 0; ky < k; ky++ {
				iy := oy*l.stride - l.pad + ky
				if iy < 0 || iy >= l.i.h {
					continue
				}
				src := row[ky*run : (ky+1)*run]
				if inside {
					addTo(dx[(iy*l.i.w+ix0)*c:(iy*l.i.w+ix0)*c+run], src)
					continue
				}
				for kx := 0; kx < k; kx++ {
					ix := ix0 + kx
					if ix < 0 || ix >= l.i.w {
						continue
					}
					addTo(dx[(iy*l.i.w+ix)*c:(iy*l.i.w+ix+1)*c], src[kx*c:(kx+1)*c])
				}
			}
		}
	}
}

// shortRun is the kernel-row length (k·C floats) below which a copy or an
// addTo per kernel row costs more in calls than in floats (c1 of goar-cnn:
// 5 floats): im2colShort and col2imShort then move single floats.
const shortRun = 16

// insideCols returns the output columns ox0 ≤ ox < ox1 whose windows lie
// inside the image's width.
func (l *conv2d) insideCols() (ox0, ox1 int) {
	ox0 = min((l.pad+l.stride-1)/l.stride, l.o.w)
	return ox0, max(ox0, min(l.o.w, (l.i.w-l.k+l.pad)/l.stride+1))
}

// im2colShort is im2col for short kernel rows. An output row whose windows
// lie inside the image's height is written pixel by pixel, the pixels whose
// windows also lie inside its width by im2colRows (which may write past a
// run what is written again later: only forward, and never past cols);
// other rows a kernel row at a time, tap by tap.
func (l *conv2d) im2colShort(x, cols []float32) {
	c, k, s := l.i.c, l.k, l.stride
	K, run, iw := c*k*k, c*k, l.i.w
	ox0, ox1 := l.insideCols()
	taps := func(dst, xrow []float32, ox int) {
		for kx := 0; kx < k; kx++ {
			tap := dst[kx*c : (kx+1)*c]
			if ix := ox*s - l.pad + kx; ix >= 0 && ix < iw {
				copy(tap, xrow[ix*c:])
			} else {
				clear(tap)
			}
		}
	}
	for oy := 0; oy < l.o.h; oy++ {
		iy0 := oy*s - l.pad
		if iy0 >= 0 && iy0+k <= l.i.h {
			for ox := 0; ox < l.o.w; ox++ {
				if ox == ox0 && ox1 > ox0 {
					im2colRows(cols[(oy*l.o.w+ox0)*K:], x[(iy0*iw+ox0*s-l.pad)*c:], k, run, iw*c, s*c, ox1-ox0)
					ox = ox1 - 1
					continue
				}
				for ky := 0; ky < k; ky++ {
					at := (oy*l.o.w+ox)*K + ky*run
					taps(cols[at:at+run], x[(iy0+ky)*iw*c:], ox)
				}
			}
			continue
		}
		for ky := 0; ky < k; ky++ {
			iy := iy0 + ky
			for ox := 0; ox < l.o.w; ox++ {
				dst := cols[(oy*l.o.w+ox)*K+ky*run : (oy*l.o.w+ox)*K+(ky+1)*run]
				if iy < 0 || iy >= l.i.h {
					clear(dst)
					continue
				}
				taps(dst, x[iy*iw*c:], ox)
			}
		}
	}
}

// col2imShort is col2im for short kernel rows, in col2im's order (the output
// pixels in raster order), so both give the same bits: an output row whose
// windows lie inside the image's height pixel by pixel, the pixels whose
// windows also lie inside its width by col2imRows; other rows tap by tap.
func (l *conv2d) col2imShort(dcols, dx []float32) {
	c, k, s := l.i.c, l.k, l.stride
	K, run, iw := c*k*k, c*k, l.i.w
	ox0, ox1 := l.insideCols()
	for oy := 0; oy < l.o.h; oy++ {
		iy0 := oy*s - l.pad
		whole := iy0 >= 0 && iy0+k <= l.i.h
		for ox := 0; ox < l.o.w; ox++ {
			if whole && ox == ox0 && ox1 > ox0 {
				col2imRows(dx[(iy0*iw+ox0*s-l.pad)*c:], dcols[(oy*l.o.w+ox0)*K:], k, run, iw*c, s*c, ox1-ox0)
				ox = ox1 - 1
				continue
			}
			row := dcols[(oy*l.o.w+ox)*K : (oy*l.o.w+ox+1)*K]
			for ky := 0; ky < k; ky++ {
				iy := iy0 + ky
				if iy < 0 || iy >= l.i.h {
					continue
				}
				for kx := 0; kx < k; kx++ {
					if ix := ox*s - l.pad + kx; ix >= 0 && ix < iw {
						dst := dx[(iy*iw+ix)*c : (iy*iw+ix+1)*c]
						for j, v := range row[(ky*k+kx)*c : (ky*k+kx+1)*c] {
							dst[j] += v
						}
					}
				}
			}
		}
	}
}

func (l *conv2d) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	K := l.i.c * l.k * l.k
	M := n * l.o.h * l.o.w
	cols := l.x
	if !l.pointwise() {
		cols = l.cols[:M*K]
	}
	if paramGrad {
		if l.permuted() {
			beta := float32(0)
			if l.pending {
				beta = 1
			}
			gk := grow(&l.gk, len(l.w.Grad))
			l.kern.Sgemm(true, false, l.o.c, K, M, 1, dy, l.o.c, cols, K, beta, gk, K)
			l.pending = true
			if !l.borrowed {
				l.flushGrad()
			}
		} else {
			l.kern.Sgemm(true, false, l.o.c, K, M, 1, dy, l.o.c, cols, K, 1, l.w.Grad, K)
		}
		if !l.noBias {
			chanSums(l.b.Grad, dy[:M*l.o.c], l.o.c)
		}
	}
	if !needDX {
		return nil
	}
	if l.pointwise() {
		dx := grow(&l.dx, M*K)
		l.kern.Sgemm(false, false, M, K, l.o.c, 1, dy, l.o.c, l.w.Data, K, 0, dx, K)
		return dx
	}
	w := l.kernelWeights() // as the forward pass this one differentiates read them
	dcols := grow(&l.dcols, M*K)
	l.kern.Sgemm(false, false, M, K, l.o.c, 1, dy, l.o.c, w, K, 0, dcols, K)
	dx := grow(&l.dx, n*l.i.size())
	per := l.o.h * l.o.w * K
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			l.col2im(dcols[s*per:(s+1)*per], dx[s*l.i.size():(s+1)*l.i.size()])
		}
	})
	return dx
}

// ---- Linear ----

type linear struct {
	nm       string
	i, o     dims
	w, b     engine.Param
	kern     gemm.Kernel
	x, y, dx []float32
}

func newLinear(name string, in, out int, kern gemm.Kernel) *linear {
	return &linear{nm: name, i: dims{1, 1, in}, o: dims{1, 1, out}, kern: kern,
		w: newParam(name+".weight", []int{out, in}), b: newParam(name+".bias", []int{out})}
}

func (l *linear) name() string            { return l.nm }
func (l *linear) in() dims                { return l.i }
func (l *linear) out() dims               { return l.o }
func (l *linear) params() []*engine.Param { return []*engine.Param{&l.w, &l.b} }
func (l *linear) clone(k gemm.Kernel) layer {
	c := newLinear(l.nm, l.i.c, l.o.c, k)
	c.w.Data, c.w.Grad = l.w.Data, l.w.Grad
	c.b.Data, c.b.Grad = l.b.Data, l.b.Grad
	return c
}

func (l *linear) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	y := grow(&l.y, n*l.o.c)
	fillRows(y, l.b.Data, n)
	l.kern.Sgemm(false, true, n, l.o.c, l.i.c, 1, x, l.i.c, l.w.Data, l.i.c, 1, y, l.o.c)
	return y
}

func (l *linear) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	if paramGrad {
		l.kern.Sgemm(true, false, l.o.c, l.i.c, n, 1, dy, l.o.c, l.x, l.i.c, 1, l.w.Grad, l.i.c)
		chanSums(l.b.Grad, dy[:n*l.o.c], l.o.c)
	}
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, n*l.i.c)
	l.kern.Sgemm(false, false, n, l.i.c, l.o.c, 1, dy, l.o.c, l.w.Data, l.i.c, 0, dx, l.i.c)
	return dx
}

// ---- ReLU ----

type relu struct {
	nm        string
	d         dims
	x, y, dx  []float32
	reference // under DeepLift's rescale rule
}

func (l *relu) name() string            { return l.nm }
func (l *relu) in() dims                { return l.d }
func (l *relu) out() dims               { return l.d }
func (l *relu) params() []*engine.Param { return nil }
func (l *relu) clone(gemm.Kernel) layer { return &relu{nm: l.nm, d: l.d} }
func (l *relu) input() []float32        { return l.x }

func (l *relu) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	y := grow(&l.y, len(x))
	per := l.d.size()
	parallel(n, func(lo, hi int) {
		xs := x[lo*per : hi*per]
		ys := y[lo*per : hi*per]
		ys = ys[:len(xs)]
		// Clearing the bits of negative values instead of branching on
		// the sign: noisy inputs make the sign unpredictable, and a
		// mispredicted branch per value cost more than the memory traffic.
		for i, v := range xs {
			b := math.Float32bits(v)
			ys[i] = math.Float32frombits(b &^ uint32(int32(b)>>31))
		}
	})
	return y
}

func (l *relu) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	per := l.d.size()
	parallel(n, func(lo, hi int) {
		if l.ref != nil {
			l.rescale(dx, dy, lo, hi)
			return
		}
		xs, ds, out := l.x[lo*per:hi*per], dy[lo*per:hi*per], dx[lo*per:hi*per]
		ds, out = ds[:len(xs)], out[:len(xs)]
		for i, v := range xs {
			out[i] = math.Float32frombits(math.Float32bits(ds[i]) & positive(v))
		}
	})
	return dx
}

// rescale applies DeepLift's rescale rule to samples [lo, hi).
func (l *relu) rescale(dx, dy []float32, lo, hi int) {
	per := l.d.size()
	for s := lo; s < hi; s++ {
		r := s % l.refN
		ref := l.ref[r*per : (r+1)*per]
		for j, xr := range ref {
			i := s*per + j
			x := l.x[i]
			if d := x - xr; d > 1e-7 || d < -1e-7 {
				dx[i] = dy[i] * (max(x, 0) - max(xr, 0)) / d
			} else if x > 0 {
				dx[i] = dy[i]
			} else {
				dx[i] = 0
			}
		}
	}
}

// positive is all ones where v > 0 (a positive, non-zero float: its bits
// as int32 are > 0) and zero elsewhere, −0 included.
func positive(v float32) uint32 {
	b := int32(math.Float32bits(v))
	return uint32(-b>>31) &^ uint32(b>>31)
}

// b2u is 1 for true and 0 for false; the compiler makes it a SETcc.
func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// ---- Flatten: channels-last to PyTorch's channels-first order ----

type flatten struct {
	nm    string
	i     dims
	y, dx []float32
}

func (l *flatten) name() string            { return l.nm }
func (l *flatten) in() dims                { return l.i }
func (l *flatten) out() dims               { return dims{1, 1, l.i.size()} }
func (l *flatten) params() []*engine.Param { return nil }
func (l *flatten) clone(gemm.Kernel) layer { return &flatten{nm: l.nm, i: l.i} }

func (l *flatten) forward(x []float32, n int, _ bool) []float32 {
	y := grow(&l.y, len(x))
	hwcToCHW(y, x, n, l.i)
	return y
}

func (l *flatten) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	chwToHWC(dx, dy, n, l.i)
	return dx
}

// hwcToCHW transposes n samples from channels-last to channels-first.
func hwcToCHW(dst, src []float32, n int, d dims) {
	hw := d.h * d.w
	if d.c == 1 || hw == 1 {
		copy(dst, src[:n*d.size()])
		return
	}
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			o := s * d.size()
			for p := 0; p < hw; p++ {
				for c := 0; c < d.c; c++ {
					dst[o+c*hw+p] = src[o+p*d.c+c]
				}
			}
		}
	})
}

// chwToHWC transposes n samples from channels-first to channels-last.
func chwToHWC(dst, src []float32, n int, d dims) {
	hw := d.h * d.w
	if d.c == 1 || hw == 1 {
		copy(dst, src[:n*d.size()])
		return
	}
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			o := s * d.size()
			for p := 0; p < hw; p++ {
				for c := 0; c < d.c; c++ {
					dst[o+p*d.c+c] = src[o+c*hw+p]
				}
			}
		}
	})
}

func newParam(name string, shape []int) engine.Param {
	n := engine.Size(shape)
	return engine.Param{Name: name, Shape: shape, Data: make([]float32, n), Grad: make([]float32, n)}
}
