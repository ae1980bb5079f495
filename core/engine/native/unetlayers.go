package native

import (
	"math"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// gnSiLU is torch.nn.GroupNorm(groups, C) followed by SiLU, fused into
// three passes over each sample (channel sums, squared deviations, the
// normalised activation) that keep the sample in cache. It writes its
// output in the padded layout of the Winograd convolution it feeds (frame
// pad, image at offset (1, 1)) and keeps only the statistics for the
// backward pass, which recomputes the rest from its input.
type gnSiLU struct {
	nm        string
	d         dims // input and output, without the frame
	pad       dims // the output's frame
	groups    int
	w, b      engine.Param
	eps       float32
	x, y, dx  []float32
	sig       []float32 // σ of the SiLU's input, kept by a forward pass that a backward pass follows; nil otherwise
	sigBuf    []float32 // sig's storage, kept between passes
	mean, inv []float32 // per sample and group
	// Per-channel scratch: two sums, the affine map, the group's mean and
	// inverse deviation, and the backward pass's three coefficients.
	sa, sb, scale, shift, cm, ci, p, q, r []float32
}

func newGNSiLU(name string, d, pad dims, groups int) *gnSiLU {
	l := &gnSiLU{nm: name, d: d, pad: pad, groups: groups, eps: 1e-5,
		w: newParam(name+".weight", []int{d.c}), b: newParam(name+".bias", []int{d.c})}
	for i := range l.w.Data {
		l.w.Data[i] = 1
	}
	for _, s := range []*[]float32{&l.sa, &l.sb, &l.scale, &l.shift, &l.cm, &l.ci, &l.p, &l.q, &l.r} {
		*s = make([]float32, d.c)
	}
	return l
}

func (l *gnSiLU) params() []*engine.Param { return []*engine.Param{&l.w, &l.b} }

// affine sets scale, shift, cm and ci for sample s from its statistics.
func (l *gnSiLU) affine(s int) {
	cg := l.d.c / l.groups
	for j := range l.d.c {
		g := s*l.groups + j/cg
		l.cm[j], l.ci[j] = l.mean[g], l.inv[g]
		l.scale[j] = l.w.Data[j] * l.inv[g]
		l.shift[j] = l.b.Data[j] - l.mean[g]*l.scale[j]
	}
}

// groupMeans writes into out, per channel, the mean over its group of
// sum's channel totals, each total over hw pixels.
func (l *gnSiLU) groupMeans(out, sum []float32) {
	cg := l.d.c / l.groups
	m := float64(l.d.h * l.d.w * cg)
	for g := range l.groups {
		var t float64
		for _, v := range sum[g*cg : (g+1)*cg] {
			t += float64(v)
		}
		for j := g * cg; j < (g+1)*cg; j++ {
			out[j] = float32(t / m)
		}
	}
}

// forward normalises x and applies SiLU; with keep it also keeps σ of the
// SiLU's input, which spares the backward pass an exponential per value.
func (l *gnSiLU) forward(x []float32, n int, keep bool) []float32 {
	l.x = x
	var sig []float32
	if keep {
		sig = grow(&l.sigBuf, n*l.d.size())
	}
	l.sig = sig
	c, hw, w := l.d.c, l.d.h*l.d.w, l.d.w
	cg := c / l.groups
	y := grow(&l.y, n*l.pad.size())
	l.mean = grow(&l.mean, n*l.groups)
	l.inv = grow(&l.inv, n*l.groups)
	for s := range n {
		xs := x[s*hw*c : (s+1)*hw*c]
		clear(l.sa)
		chanSums(l.sa, xs, c)
		l.groupMeans(l.cm, l.sa)
		clear(l.sb)
		chanSqDevs(l.sb, xs, l.cm, c) // two passes: no cancellation in E[x²] − E[x]²
		l.groupMeans(l.ci, l.sb)
		for g := range l.groups {
			l.mean[s*l.groups+g] = l.cm[g*cg]
			l.inv[s*l.groups+g] = float32(1 / math.Sqrt(float64(l.ci[g*cg])+float64(l.eps)))
		}
		l.affine(s)
		ys := y[s*l.pad.size():]
		for r := range l.d.h {
			var sr []float32
			if sig != nil {
				sr = sig[(s*hw+r*w)*c:]
			}
			affineSiLU(ys[((r+1)*l.pad.w+1)*c:], sr, xs[r*w*c:(r+1)*w*c], l.scale, l.shift, c)
		}
	}
	return y
}

// backward takes the padded output gradient and returns the input gradient.
func (l *gnSiLU) backward(dyp []float32, n int, paramGrad bool) []float32 {
	c, hw, w := l.d.c, l.d.h*l.d.w, l.d.w
	cg := c / l.groups
	m := float64(hw * cg)
	dx := grow(&l.dx, n*hw*c)
	for s := range n {
		xs, ds := l.x[s*hw*c:(s+1)*hw*c], dx[s*hw*c:(s+1)*hw*c]
		l.affine(s)
		clear(l.sa)
		clear(l.sb)
		dys := dyp[s*l.pad.size():]
		for r := range l.d.h {
			var sr []float32
			if l.sig != nil {
				sr = l.sig[(s*hw+r*w)*c:]
			}
			siluGrad(ds[r*w*c:], dys[((r+1)*l.pad.w+1)*c:], xs[r*w*c:(r+1)*w*c], sr, l.scale, l.shift, l.cm, l.ci, l.sa, l.sb, c)
		}
		if paramGrad {
			for j := range c {
				l.w.Grad[j] += l.sb[j]
				l.b.Grad[j] += l.sa[j]
			}
		}
		// dx = inv·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) over the group, with
		// dx̂ = γ·da and x̂ = (x − mean)·inv: p·da − q·x + r per channel.
		for g := range l.groups {
			var k1, k2 float64
			for j := g * cg; j < (g+1)*cg; j++ {
				k1 += float64(l.w.Data[j]) * float64(l.sa[j])
				k2 += float64(l.w.Data[j]) * float64(l.sb[j])
			}
			inv, mean := float64(l.ci[g*cg]), float64(l.cm[g*cg])
			q := inv * inv * k2 / m
			for j := g * cg; j < (g+1)*cg; j++ {
				l.p[j] = float32(inv * float64(l.w.Data[j]))
				l.q[j] = float32(q)
				l.r[j] = float32(q*mean - inv*k1/m)
			}
		}
		affine3(ds, ds, xs, l.p, l.q, l.r, c)
	}
	return dx
}

// upsample2 is nearest-neighbour upsampling by 2 (F.interpolate(scale 2,
// "nearest")), written into the padded layout of the convolution after it.
type upsample2 struct {
	i     dims // input
	pad   dims // the output's frame
	y, dx []float32
}

func (l *upsample2) forward(x []float32, n int) []float32 {
	c := l.i.c
	y := grow(&l.y, n*l.pad.size())
	for s := range n {
		xs, ys := x[s*l.i.size():], y[s*l.pad.size():]
		for oy := range 2 * l.i.h {
			row := ys[((oy+1)*l.pad.w+1)*c:]
			src := xs[(oy/2)*l.i.w*c:]
			for ix := range l.i.w {
				copy(row[2*ix*c:][:c], src[ix*c:][:c])
				copy(row[(2*ix+1)*c:][:c], src[ix*c:][:c])
			}
		}
	}
	return y
}

// backward sums each 2×2 block of the padded output gradient.
func (l *upsample2) backward(dyp []float32, n int) []float32 {
	c := l.i.c
	dx := grow(&l.dx, n*l.i.size())
	clear(dx)
	for s := range n {
		ds, gs := dx[s*l.i.size():], dyp[s*l.pad.size():]
		for oy := range 2 * l.i.h {
			row := gs[((oy+1)*l.pad.w+1)*c:]
			dst := ds[(oy/2)*l.i.w*c:]
			for ox := range 2 * l.i.w {
				addTo(dst[(ox/2)*c:][:c], row[ox*c:][:c])
			}
		}
	}
	return dx
}

// resBlock is the peer's ResBlock: GroupNorm(8)+SiLU, 3×3 conv, plus the
// time embedding's projection, GroupNorm(8)+SiLU, 3×3 conv, plus the input
// (through a 1×1 conv when the channel count changes). The embedding and
// the residual are added where the convolutions write their outputs.
type resBlock struct {
	n1, n2 *gnSiLU
	c1, c2 *winoConv
	t      *linear
	skip   *conv2d // nil: identity
	dte    []float32
}

func newResBlock(name string, in dims, cout, temb int, kern gemm.Kernel, scr *winoScratch) *resBlock {
	r := &resBlock{}
	r.c1 = newWinoConv(name+".c1", in, cout, 1, kern, scr)
	r.n1 = newGNSiLU(name+".n1", in, r.c1.padded(), 8)
	r.t = newLinear(name+".t", temb, cout, kern)
	o := r.c1.out()
	r.c2 = newWinoConv(name+".c2", o, cout, 1, kern, scr)
	r.n2 = newGNSiLU(name+".n2", o, r.c2.padded(), 8)
	if in.c != cout {
		r.skip = newConv2d(name+".skip", in, cout, 1, 1, 0, kern)
	}
	return r
}

// params lists the parameters in PyTorch's registration order.
func (r *resBlock) params() []*engine.Param {
	ps := append(r.n1.params(), r.c1.params()...)
	ps = append(ps, r.t.params()...)
	ps = append(ps, r.n2.params()...)
	ps = append(ps, r.c2.params()...)
	if r.skip != nil {
		ps = append(ps, r.skip.params()...)
	}
	return ps
}

func (r *resBlock) convs() []*winoConv { return []*winoConv{r.c1, r.c2} }

// forward runs the block; keep says a backward pass follows.
func (r *resBlock) forward(x, e []float32, n int, keep bool) []float32 {
	te := r.t.forward(e, n, false)
	h := r.c1.forward(r.n1.forward(x, n, keep), n, te, nil)
	sk := x
	if r.skip != nil {
		sk = r.skip.forward(x, n, false)
	}
	return r.c2.forward(r.n2.forward(h, n, keep), n, nil, sk)
}

// backward returns the input gradient and adds the embedding's gradient to de.
func (r *resBlock) backward(dy, de []float32, n int, paramGrad bool) []float32 {
	dh := r.n2.backward(r.c2.backward(dy, n, true, paramGrad), n, paramGrad)
	o := r.c1.out()
	hw := o.h * o.w
	dte := grow(&r.dte, n*o.c)
	clear(dte)
	for s := range n {
		chanSums(dte[s*o.c:(s+1)*o.c], dh[s*hw*o.c:(s+1)*hw*o.c], o.c)
	}
	addTo(de[:n*r.t.i.c], r.t.backward(dte, n, true, paramGrad))
	dx := r.n1.backward(r.c1.backward(dh, n, true, paramGrad), n, paramGrad)
	if r.skip != nil {
		addTo(dx, r.skip.backward(dy, n, true, paramGrad))
	} else {
		addTo(dx, dy[:len(dx)])
	}
	return dx
}
