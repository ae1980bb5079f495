package native

import (
	"slices"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// winoChunkFloats bounds the transformed tiles one pass of a Winograd
// convolution holds (input and output planes, each at most this many
// floats), so that they stay in a core's cache between the transforms and
// the GEMMs: 128 K floats (512 KiB) is 256 tiles of 32 channels.
const winoChunkFloats = 1 << 17

// winoScratch holds one chunk's transformed tiles: shared by a replica's
// Winograd convolutions, which run one at a time.
type winoScratch struct{ v, m []float32 }

// planeGap separates the 16 planes of transformed tiles by a cache line more
// than they hold: planes a multiple of 4 KiB apart put a tile's 16 loads or
// stores on addresses that alias in the cache, which measured three times
// slower.
const planeGap = 16

// planes returns the stride of 16 planes of nt×c values and a buffer for them.
func planes(buf *[]float32, nt, c int) (int, []float32) {
	stride := nt*c + planeGap
	return stride, grow(buf, 16*stride)
}

// winoConv is torch.nn.Conv2d(cin, cout, 3, padding=pad), pad 1 or 0, computed with
// Winograd's minimal filtering F(2×2, 3×3) (Lavin & Gray 2016): each 2×2
// output tile is Aᵀ[Σ_cin (G g Gᵀ) ⊙ (Bᵀ d B)]A over its 4×4 input tile d,
// which is 16 GEMMs of (tiles × cin)·(cin × cout), one per tile position,
// with 16 instead of 36 multiplications per output pair and channel pair.
// The backward pass is the exact adjoint of that computation.
//
// With pad 1 its input comes padded: each sample inside a zero frame of
// padded(), the image at offset (1, 1), as the layers that feed it (gnSiLU,
// upsample2) write it; its output and output gradient are plain
// channels-last, and its input gradient is padded like its input. With pad 0
// (goar-cnn's c2) input and input gradient are plain channels-last too, and
// the output's height and width must be even, so that the 4×4 input tiles
// cover the input exactly.
type winoConv struct {
	nm      string
	i       dims // input, without the frame
	cout    int
	pad     int
	th, tw  int // tiles down and across: ⌈h/2⌉, ⌈w/2⌉
	wt, b   engine.Param
	kern    gemm.Kernel
	scr     *winoScratch
	u, ut   []float32 // G g Gᵀ: 16 planes of cin×cout, and transposed (cout×cin), wplane apart; a replica shares its network's
	xp      []float32 // the padded input of the last forward pass
	y, dxp  []float32
	du, bsn []float32 // weight gradient in the transformed domain (16 planes of cout×cin, wplane apart); per-sample bias
	// borrowed: u and ut are the network's, and du holds the weight
	// gradient of every pass until flushGrad (a replica's layer, see
	// laidOut); pending: du holds some not yet flushed.
	borrowed, pending bool
}

func newWinoConv(name string, in dims, cout, pad int, kern gemm.Kernel, scr *winoScratch) *winoConv {
	l := &winoConv{nm: name, i: in, cout: cout, pad: pad, kern: kern, scr: scr,
		wt: newParam(name+".weight", []int{cout, in.c, 3, 3}), b: newParam(name+".bias", []int{cout})}
	o := l.out()
	l.th, l.tw = (o.h+1)/2, (o.w+1)/2
	return l
}

// newConv is a convolution layer: a winoLayer where winograd allows it
// (and the layer has a bias), else im2col's conv2d.
func newConv(name string, in dims, cout, k, stride, pad int, noBias bool, kern gemm.Kernel) layer {
	if !noBias && winograd(in, cout, k, stride, pad) {
		return newWinoLayer(name, in, cout, pad, kern)
	}
	c := newConv2d(name, in, cout, k, stride, pad, kern)
	c.noBias = noBias
	return c
}

// winograd says whether a convolution of kernel k, stride and padding on
// input in can run as a winoConv: a 3×3 kernel, stride 1, padding 0 with
// an output of even height and width or padding 1 (any), and channel
// counts that the vector transforms take eight at a time. The choice
// depends on the shapes only, never on the CPU, so that a network sums in
// the same order everywhere.
func winograd(in dims, cout, k, stride, pad int) bool {
	shape := pad == 0 && in.h > 2 && in.w > 2 && in.h%2 == 0 && in.w%2 == 0 || pad == 1
	return k == 3 && stride == 1 && shape && in.c%8 == 0 && cout%8 == 0
}

func (l *winoConv) params() []*engine.Param { return []*engine.Param{&l.wt, &l.b} }
func (l *winoConv) out() dims               { return dims{l.i.h + 2*l.pad - 2, l.i.w + 2*l.pad - 2, l.cout} }

// padded is the input's layout: with pad 1 the framed (2·th+2) × (2·tw+2)
// pixels of cin, with pad 0 the input itself.
func (l *winoConv) padded() dims {
	if l.pad == 0 {
		return l.i
	}
	return dims{2*l.th + 2, 2*l.tw + 2, l.i.c}
}

// wplane is the stride of the planes of transformed weights (planeGap).
func (l *winoConv) wplane() int { return l.i.c*l.cout + planeGap }

// chunk is how many tiles one pass over T tiles takes: at most what fits
// winoChunkFloats, the passes as equal as can be (a short last pass makes a
// GEMM of few rows).
func (l *winoConv) chunk(T int) int {
	most := max(1, winoChunkFloats/(16*max(l.i.c, l.cout)))
	passes := (T + most - 1) / most
	return (T + passes - 1) / passes
}

// prepare computes U = G g Gᵀ from the weights (PyTorch's cout×cin×3×3),
// and its transpose, which spares the backward pass a transposed GEMM.
func (l *winoConv) prepare() {
	cin, cout, wp := l.i.c, l.cout, l.wplane()
	u := grow(&l.u, 16*wp)
	ut := grow(&l.ut, 16*wp)
	for co := range cout {
		for ci := range cin {
			g := l.wt.Data[(co*cin+ci)*9:][:9]
			var a [4][3]float32
			for k := range 3 {
				g0, g1, g2 := g[k], g[3+k], g[6+k]
				a[0][k], a[1][k], a[2][k], a[3][k] = g0, (g0+g1+g2)*0.5, (g0-g1+g2)*0.5, g2
			}
			for i := range 4 {
				a0, a1, a2 := a[i][0], a[i][1], a[i][2]
				row := [4]float32{a0, (a0 + a1 + a2) * 0.5, (a0 - a1 + a2) * 0.5, a2}
				for j, v := range row {
					u[(4*i+j)*wp+ci*cout+co] = v
					ut[(4*i+j)*wp+co*cin+ci] = v
				}
			}
		}
	}
}

// addWeightGrad adds Gᵀ dU G, the adjoint of prepare, to the weights'
// gradient; dU is 16 planes of cout×cin.
func (l *winoConv) addWeightGrad(du []float32) {
	cin, cout := l.i.c, l.cout
	plane := l.wplane()
	for co := range cout {
		for ci := range cin {
			var a [4][3]float32
			d := du[co*cin+ci:]
			for i := range 4 {
				d0, d1, d2, d3 := d[4*i*plane], d[(4*i+1)*plane], d[(4*i+2)*plane], d[(4*i+3)*plane]
				a[i] = [3]float32{d0 + (d1+d2)*0.5, (d1 - d2) * 0.5, (d1+d2)*0.5 + d3}
			}
			g := l.wt.Grad[(co*cin+ci)*9:][:9]
			for k := range 3 {
				e0, e1, e2, e3 := a[0][k], a[1][k], a[2][k], a[3][k]
				g[k] += e0 + (e1+e2)*0.5
				g[3+k] += (e1 - e2) * 0.5
				g[6+k] += (e1+e2)*0.5 + e3
			}
		}
	}
}

// tiles calls f for tiles t0 … t0+nt−1 of an n-sample batch with the tile's
// index k within the chunk, its input offset in the padded batch and its
// output offset, rows and columns in the plain output.
func (l *winoConv) tiles(t0, nt int, f func(k, in, out, rows, cols int)) {
	p, o := l.padded(), l.out()
	per := l.th * l.tw
	for k := range nt {
		t := t0 + k
		s, r := t/per, t%per
		ty, tx := r/l.tw, r%l.tw
		f(k, (s*p.h*p.w+2*ty*p.w+2*tx)*p.c, (s*o.h*o.w+2*ty*o.w+2*tx)*o.c,
			min(2, o.h-2*ty), min(2, o.w-2*tx))
	}
}

// forward convolves the padded batch xp, adds the bias, te (one extra bias
// row per sample, the time embedding; nil for none) and res (a tensor of the
// output's shape, the residual; nil for none), and returns the output.
func (l *winoConv) forward(xp []float32, n int, te, res []float32) []float32 {
	l.xp = xp
	cin, cout := l.i.c, l.cout
	p, o := l.padded(), l.out()
	bias := grow(&l.bsn, n*cout)
	for s := range n {
		copy(bias[s*cout:], l.b.Data)
		if te != nil {
			addTo(bias[s*cout:(s+1)*cout], te[s*cout:(s+1)*cout])
		}
	}
	y := grow(&l.y, n*o.size())
	T := n * l.th * l.tw
	ch := l.chunk(T)
	per := l.th * l.tw
	for t0 := 0; t0 < T; t0 += ch {
		nt := min(ch, T-t0)
		pv, v := planes(&l.scr.v, nt, cin)
		l.tiles(t0, nt, func(k, in, _, _, _ int) { winoIn(v[k*cin:], pv, xp[in:], p.w*cin, cin) })
		pm, m := planes(&l.scr.m, nt, cout)
		for xi := range 16 {
			l.gemm(m[xi*pm:], v[xi*pv:], l.u[xi*l.wplane():], nt, cout, cin, false, false)
		}
		l.tiles(t0, nt, func(k, _, out, rows, cols int) {
			var r []float32
			if res != nil {
				r = res[out:]
			}
			b := bias[(t0+k)/per*cout:]
			winoOut(y[out:], o.w*cout, m[k*cout:], pm, b, r, cout, rows, cols)
		})
	}
	return y
}

// backward takes the output gradient dy and returns the padded input
// gradient when needDX, adding the parameters' gradients when paramGrad.
func (l *winoConv) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	cin, cout := l.i.c, l.cout
	p, o := l.padded(), l.out()
	var du, dxp []float32
	if paramGrad {
		du = grow(&l.du, 16*l.wplane())
		if !l.pending {
			clear(du)
		}
		chanSums(l.b.Grad, dy[:n*o.size()], cout)
	}
	if needDX {
		dxp = grow(&l.dxp, n*p.size())
		clear(dxp)
	}
	T := n * l.th * l.tw
	ch := l.chunk(T)
	for t0 := 0; t0 < T; t0 += ch {
		nt := min(ch, T-t0)
		pm, dm := planes(&l.scr.m, nt, cout)
		l.tiles(t0, nt, func(k, _, out, rows, cols int) {
			winoOutAdj(dm[k*cout:], pm, dy[out:], o.w*cout, cout, rows, cols)
		})
		pv, v := planes(&l.scr.v, nt, cin)
		if paramGrad {
			// The transformed input again: cheaper than keeping it.
			l.tiles(t0, nt, func(k, in, _, _, _ int) { winoIn(v[k*cin:], pv, l.xp[in:], p.w*cin, cin) })
			for xi := range 16 {
				l.gemm(du[xi*l.wplane():], dm[xi*pm:], v[xi*pv:], cout, cin, nt, true, true)
			}
		}
		if needDX {
			for xi := range 16 {
				l.gemm(v[xi*pv:], dm[xi*pm:], l.ut[xi*l.wplane():], nt, cin, cout, false, false)
			}
			l.tiles(t0, nt, func(k, in, _, _, _ int) { winoInAdj(dxp[in:], p.w*cin, v[k*cin:], pv, cin) })
		}
	}
	if paramGrad {
		l.pending = true
		if !l.borrowed {
			l.flushGrad()
		}
	}
	return dxp
}

// flushGrad adds the weight gradient du holds to the weights' (Gᵀ dU G once
// for the passes since the last flush).
func (l *winoConv) flushGrad() {
	if l.pending {
		l.addWeightGrad(l.du)
		l.pending = false
	}
}

// gemm computes C = op(A)·B (C += op(A)·B when add) for one plane: C m×n,
// B k×n and A m×k (k×m when transA, op(A) its transpose), all row-major
// and packed. With both channel
// counts multiples of 16 it runs on gemm16, whose tiles fit these shapes —
// few rows, 32 or 64 columns, a short sum — better than a general kernel
// (in isolation 48–61 GFLOP/s a core against OpenBLAS's 36–43 here);
// otherwise on the layer's kernel.
func (l *winoConv) gemm(c, a, b []float32, m, n, k int, transA, add bool) {
	lda, ars, aks := k, k, 1
	if transA {
		lda, ars, aks = m, 1, m
	}
	if l.i.c%16 == 0 && l.cout%16 == 0 {
		gemm16(c, a, b, m, n, k, ars, aks, n, n, add)
		return
	}
	beta := float32(0)
	if add {
		beta = 1
	}
	l.kern.Sgemm(transA, false, m, n, k, 1, a, lda, b, n, beta, c, n)
}

// winoLayer is a winoConv as a layer of a Net (goar-cnn's c2; an imported
// ResNet's 3×3 convolutions), with a scratch of its own: its transformed
// weights are made again from the weights at every forward pass, as an
// optimiser step may have changed them, or borrowed from its network's
// layer by a replica, for which the network made them once before the
// pass. With padding 1 it copies its input into the zero frame winoConv
// reads (framed), and its input gradient out of the frame (dx): two
// copies of the input, where im2col writes nine.
type winoLayer struct {
	*winoConv
	scr        winoScratch
	framed, dx []float32
	prepared   []float32 // the weights the transformed ones were made from
}

func newWinoLayer(name string, in dims, cout, pad int, kern gemm.Kernel) *winoLayer {
	l := &winoLayer{}
	l.winoConv = newWinoConv(name, in, cout, pad, kern, &l.scr)
	return l
}

func (l *winoLayer) name() string { return l.nm }
func (l *winoLayer) in() dims     { return l.i }

func (l *winoLayer) clone(k gemm.Kernel) layer {
	c := newWinoLayer(l.nm, l.i, l.cout, l.pad, k)
	c.wt.Data, c.wt.Grad = l.wt.Data, l.wt.Grad
	c.b.Data, c.b.Grad = l.b.Data, l.b.Grad
	return c
}

// layout makes the transformed weights, unless the weights are those they
// were made from: comparing the weights costs a read of them, making the
// transform (16 scattered planes, twice) several times more.
func (l *winoLayer) layout() {
	if l.u != nil && slices.Equal(l.wt.Data, l.prepared) {
		return
	}
	l.prepare()
	l.prepared = append(l.prepared[:0], l.wt.Data...)
}

func (l *winoLayer) borrow(from laidOut) {
	f := from.(*winoLayer)
	l.u, l.ut, l.borrowed = f.u, f.ut, true
}

func (l *winoLayer) forward(x []float32, n int, _ bool) []float32 {
	if !l.borrowed {
		l.layout()
	}
	if l.pad == 1 {
		p, row := l.padded(), l.i.w*l.i.c
		xp := grow(&l.framed, n*p.size())
		parallel(n, func(lo, hi int) {
			for s := lo; s < hi; s++ {
				f := xp[s*p.size() : (s+1)*p.size()]
				clear(f[:(p.w+1)*p.c]) // the top row and the first left edge
				for r := range l.i.h {
					at := ((r+1)*p.w + 1) * p.c
					copy(f[at:at+row], x[s*l.i.size()+r*row:])
					// the right edge of this row and the left edge of the next
					clear(f[at+row : at+row+(p.w-l.i.w)*p.c])
				}
				clear(f[((l.i.h+1)*p.w+1)*p.c:]) // the rows below
			}
		})
		x = xp
	}
	return l.winoConv.forward(x, n, nil, nil)
}

func (l *winoLayer) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	dxp := l.winoConv.backward(dy, n, needDX, paramGrad)
	if l.pad == 0 || dxp == nil {
		return dxp
	}
	p, row := l.padded(), l.i.w*l.i.c
	dx := grow(&l.dx, n*l.i.size())
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			for r := range l.i.h {
				copy(dx[s*l.i.size()+r*row:][:row], dxp[s*p.size()+((r+1)*p.w+1)*p.c:])
			}
		}
	})
	return dx
}
