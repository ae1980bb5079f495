package native

import (
	"fmt"
	"math"
	"math/rand/v2"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// ---- SiLU ----

type silu struct {
	nm       string
	d        dims
	x, y, dx []float32
}

func (l *silu) name() string            { return l.nm }
func (l *silu) in() dims                { return l.d }
func (l *silu) out() dims               { return l.d }
func (l *silu) params() []*engine.Param { return nil }
func (l *silu) clone(gemm.Kernel) layer { return &silu{nm: l.nm, d: l.d} }

func (l *silu) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	y := grow(&l.y, len(x))
	per := len(x) / n
	parallel(n, func(lo, hi int) {
		for i := lo * per; i < hi*per; i++ {
			y[i] = x[i] * sigmoid(x[i])
		}
	})
	return y
}

func (l *silu) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	per := len(dy) / n
	parallel(n, func(lo, hi int) {
		for i := lo * per; i < hi*per; i++ {
			s := sigmoid(l.x[i])
			dx[i] = dy[i] * s * (1 + l.x[i]*(1-s))
		}
	})
	return dx
}

// ---- GroupNorm (channels-last) ----

// groupNorm is torch.nn.GroupNorm(groups, C) with a per-channel affine map:
// each sample's channels are split into groups, each normalised over its
// channels and all pixels.
type groupNorm struct {
	nm             string
	d              dims
	groups         int
	w, b           engine.Param
	eps            float32
	x, y, xhat, dx []float32
	invstd         []float32 // per sample and group
}

func newGroupNorm(name string, d dims, groups int) *groupNorm {
	l := &groupNorm{nm: name, d: d, groups: groups, eps: 1e-5,
		w: newParam(name+".weight", []int{d.c}), b: newParam(name+".bias", []int{d.c})}
	for i := range l.w.Data {
		l.w.Data[i] = 1
	}
	return l
}

func (l *groupNorm) name() string            { return l.nm }
func (l *groupNorm) in() dims                { return l.d }
func (l *groupNorm) out() dims               { return l.d }
func (l *groupNorm) params() []*engine.Param { return []*engine.Param{&l.w, &l.b} }
func (l *groupNorm) clone(gemm.Kernel) layer {
	c := newGroupNorm(l.nm, l.d, l.groups)
	copy(c.w.Data, l.w.Data)
	copy(c.b.Data, l.b.Data)
	return c
}

func (l *groupNorm) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	y := grow(&l.y, len(x))
	xhat := grow(&l.xhat, len(x))
	l.invstd = grow(&l.invstd, n*l.groups)
	c, hw, cg := l.d.c, l.d.h*l.d.w, l.d.c/l.groups
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			xs := x[s*hw*c : (s+1)*hw*c]
			for g := 0; g < l.groups; g++ {
				var sum, sq float64
				for p := 0; p < hw; p++ {
					for _, v := range xs[p*c+g*cg : p*c+(g+1)*cg] {
						sum += float64(v)
						sq += float64(v) * float64(v)
					}
				}
				m := float64(hw * cg)
				mean := sum / m
				inv := float32(1 / math.Sqrt(math.Max(sq/m-mean*mean, 0)+float64(l.eps)))
				l.invstd[s*l.groups+g] = inv
				for p := 0; p < hw; p++ {
					for j := g * cg; j < (g+1)*cg; j++ {
						i := s*hw*c + p*c + j
						xhat[i] = (x[i] - float32(mean)) * inv
						y[i] = xhat[i]*l.w.Data[j] + l.b.Data[j]
					}
				}
			}
		}
	})
	return y
}

func (l *groupNorm) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	c, hw, cg := l.d.c, l.d.h*l.d.w, l.d.c/l.groups
	if paramGrad {
		for i, v := range dy {
			j := i % c
			l.w.Grad[j] += v * l.xhat[i]
			l.b.Grad[j] += v
		}
	}
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			for g := 0; g < l.groups; g++ {
				var sd, sdx float64 // Σ dxhat and Σ dxhat·xhat over the group
				for p := 0; p < hw; p++ {
					for j := g * cg; j < (g+1)*cg; j++ {
						i := s*hw*c + p*c + j
						d := float64(dy[i] * l.w.Data[j])
						sd += d
						sdx += d * float64(l.xhat[i])
					}
				}
				m := float64(hw * cg)
				inv := l.invstd[s*l.groups+g]
				for p := 0; p < hw; p++ {
					for j := g * cg; j < (g+1)*cg; j++ {
						i := s*hw*c + p*c + j
						dx[i] = inv * (dy[i]*l.w.Data[j] - float32(sd/m) - l.xhat[i]*float32(sdx/m))
					}
				}
			}
		}
	})
	return dx
}

// ---- Nearest upsampling by 2 ----

type upsample struct {
	nm    string
	i     dims
	y, dx []float32
}

func (l *upsample) name() string            { return l.nm }
func (l *upsample) in() dims                { return l.i }
func (l *upsample) out() dims               { return dims{2 * l.i.h, 2 * l.i.w, l.i.c} }
func (l *upsample) params() []*engine.Param { return nil }
func (l *upsample) clone(gemm.Kernel) layer { return &upsample{nm: l.nm, i: l.i} }

func (l *upsample) forward(x []float32, n int, _ bool) []float32 {
	o := l.out()
	y := grow(&l.y, n*o.size())
	c := l.i.c
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			for oy := 0; oy < o.h; oy++ {
				for ox := 0; ox < o.w; ox++ {
					src := x[s*l.i.size()+((oy/2)*l.i.w+ox/2)*c:][:c]
					copy(y[s*o.size()+(oy*o.w+ox)*c:][:c], src)
				}
			}
		}
	})
	return y
}

func (l *upsample) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	o := l.out()
	dx := grow(&l.dx, n*l.i.size())
	clear(dx)
	c := l.i.c
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			for oy := 0; oy < o.h; oy++ {
				for ox := 0; ox < o.w; ox++ {
					dst := dx[s*l.i.size()+((oy/2)*l.i.w+ox/2)*c:][:c]
					for j, v := range dy[s*o.size()+(oy*o.w+ox)*c:][:c] {
						dst[j] += v
					}
				}
			}
		}
	})
	return dx
}

// concatChannels joins a (ca channels) and b (cb channels) per pixel.
func concatChannels(dst, a, b []float32, pixels, ca, cb int) {
	for p := 0; p < pixels; p++ {
		copy(dst[p*(ca+cb):], a[p*ca:(p+1)*ca])
		copy(dst[p*(ca+cb)+ca:], b[p*cb:(p+1)*cb])
	}
}

// splitChannels is concatChannels' adjoint.
func splitChannels(da, db, src []float32, pixels, ca, cb int) {
	for p := 0; p < pixels; p++ {
		copy(da[p*ca:(p+1)*ca], src[p*(ca+cb):])
		copy(db[p*cb:(p+1)*cb], src[p*(ca+cb)+ca:][:cb])
	}
}

// TimestepEmbedding writes the sinusoidal embedding of each timestep into
// dst (len(t)×dim): sin(t·f_i) then cos(t·f_i) with f_i = 10000^(−i/(dim/2)),
// as the peer's timestep_embedding and DDPM.
func TimestepEmbedding(dst []float32, t []int, dim int) {
	half := dim / 2
	for s, tv := range t {
		for i := 0; i < half; i++ {
			f := math.Exp(-math.Log(10000) * float64(i) / float64(half))
			a := float64(float32(tv) * float32(f))
			dst[s*dim+i] = float32(math.Sin(a))
			dst[s*dim+half+i] = float32(math.Cos(a))
		}
	}
}

// ---- ResBlock with time embedding ----

type resBlock struct {
	nm           string
	n1, n2       *groupNorm
	s1, s2       *silu
	c1, c2, skip *conv2d
	t            *linear
	hb, y, dte   []float32
	x            []float32
}

func newResBlock(name string, in dims, cout int, temb int, kern gemm.Kernel) *resBlock {
	r := &resBlock{nm: name}
	r.n1 = newGroupNorm(name+".n1", in, 8)
	r.s1 = &silu{nm: name + ".silu1", d: in}
	r.c1 = newConv2d(name+".c1", in, cout, 3, 1, 1, kern)
	o := r.c1.out()
	r.t = newLinear(name+".t", temb, cout, kern)
	r.n2 = newGroupNorm(name+".n2", o, 8)
	r.s2 = &silu{nm: name + ".silu2", d: o}
	r.c2 = newConv2d(name+".c2", o, cout, 3, 1, 1, kern)
	if in.c != cout {
		r.skip = newConv2d(name+".skip", in, cout, 1, 1, 0, kern)
	}
	return r
}

func (r *resBlock) layers() []layer {
	ls := []layer{r.n1, r.c1, r.t, r.n2, r.c2}
	if r.skip != nil {
		ls = append(ls, r.skip)
	}
	return ls
}

func (r *resBlock) forward(x, e []float32, n int) []float32 {
	r.x = x
	h := r.c1.forward(r.s1.forward(r.n1.forward(x, n, false), n, false), n, false)
	te := r.t.forward(e, n, false)
	o := r.c1.out()
	hb := grow(&r.hb, len(h))
	hw := o.h * o.w
	for s := 0; s < n; s++ {
		for p := 0; p < hw; p++ {
			for j := 0; j < o.c; j++ {
				i := (s*hw+p)*o.c + j
				hb[i] = h[i] + te[s*o.c+j]
			}
		}
	}
	out := r.c2.forward(r.s2.forward(r.n2.forward(hb, n, false), n, false), n, false)
	sk := x
	if r.skip != nil {
		sk = r.skip.forward(x, n, false)
	}
	y := grow(&r.y, len(out))
	for i := range out {
		y[i] = out[i] + sk[i]
	}
	return y
}

// backward returns the input gradient and adds the embedding's gradient to de.
func (r *resBlock) backward(dy []float32, de []float32, n int, paramGrad bool) []float32 {
	dhb := r.n2.backward(r.s2.backward(r.c2.backward(dy, n, true, paramGrad), n, true, false), n, true, paramGrad)
	o := r.c1.out()
	hw := o.h * o.w
	dte := grow(&r.dte, n*o.c)
	clear(dte)
	for s := 0; s < n; s++ {
		for p := 0; p < hw; p++ {
			for j := 0; j < o.c; j++ {
				dte[s*o.c+j] += dhb[(s*hw+p)*o.c+j]
			}
		}
	}
	dE := r.t.backward(dte, n, true, paramGrad)
	for i, v := range dE {
		de[i] += v
	}
	dx := r.n1.backward(r.s1.backward(r.c1.backward(dhb, n, true, paramGrad), n, true, false), n, true, paramGrad)
	if r.skip != nil {
		ds := r.skip.backward(dy, n, true, paramGrad)
		for i := range dx {
			dx[i] += ds[i]
		}
	} else {
		for i := range dx {
			dx[i] += dy[i]
		}
	}
	return dx
}

// UNet is unet-s, the ε-prediction U-Net of the peer script
// (shared/bench/torch_peer.py, UNetS), module for module and name for name.
// It implements engine.Denoiser.
type UNet struct {
	shape                    []int
	kern                     gemm.Kernel
	tDim                     int
	temb0, temb2             *linear
	tembAct                  *silu
	inp, down0, down1        *conv2d
	up1, up0, out            *conv2d
	d0, d1, mid, u1, u0      *resBlock
	upA, upB                 *upsample
	outN                     *groupNorm
	outAct                   *silu
	n                        int
	emb, xin, cat1, cat0, de []float32
	dcat1, dcat0, dxin, pred []float32
	dyin                     []float32
	dh0, dh1                 []float32
}

var _ engine.Denoiser = (*UNet)(nil)

// NewUNet builds unet-s for inputs of shape (C, H, W), H and W divisible by 4.
func NewUNet(shape []int, kern gemm.Kernel) (*UNet, error) {
	if len(shape) != 3 || shape[0] <= 0 || shape[1] <= 0 || shape[2] <= 0 || shape[1]%4 != 0 || shape[2]%4 != 0 {
		return nil, fmt.Errorf("unet-s: input shape %v: want C, H, W with H and W divisible by 4", shape)
	}
	ch := [3]int{32, 64, 64}
	u := &UNet{shape: append([]int(nil), shape...), kern: kern, tDim: 128}
	in := dims{shape[1], shape[2], shape[0]}
	u.temb0 = newLinear("temb.0", 128, 128, kern)
	u.tembAct = &silu{nm: "temb.1", d: dims{1, 1, 128}}
	u.temb2 = newLinear("temb.2", 128, 128, kern)
	u.inp = newConv2d("inp", in, ch[0], 3, 1, 1, kern)
	l0 := u.inp.out()
	u.d0 = newResBlock("d0", l0, ch[0], 128, kern)
	u.down0 = newConv2d("down0", l0, ch[0], 3, 2, 1, kern)
	l1 := u.down0.out()
	u.d1 = newResBlock("d1", l1, ch[1], 128, kern)
	l1 = u.d1.c2.out()
	u.down1 = newConv2d("down1", l1, ch[1], 3, 2, 1, kern)
	l2 := u.down1.out()
	u.mid = newResBlock("mid", l2, ch[2], 128, kern)
	u.upA = &upsample{nm: "up1.upsample", i: u.mid.c2.out()}
	u.up1 = newConv2d("up1", u.upA.out(), ch[1], 3, 1, 1, kern)
	u.u1 = newResBlock("u1", dims{l1.h, l1.w, 2 * ch[1]}, ch[1], 128, kern)
	u.upB = &upsample{nm: "up0.upsample", i: u.u1.c2.out()}
	u.up0 = newConv2d("up0", u.upB.out(), ch[0], 3, 1, 1, kern)
	u.u0 = newResBlock("u0", dims{l0.h, l0.w, 2 * ch[0]}, ch[0], 128, kern)
	u.outN = newGroupNorm("out_n", u.u0.c2.out(), 8)
	u.outAct = &silu{nm: "out.silu", d: u.u0.c2.out()}
	u.out = newConv2d("out", u.u0.c2.out(), shape[0], 3, 1, 1, kern)
	return u, nil
}

// Arch implements engine.Denoiser.
func (u *UNet) Arch() string { return "unet-s" }

// InputShape implements engine.Denoiser.
func (u *UNet) InputShape() []int { return append([]int(nil), u.shape...) }

// modules lists every parameterised layer in PyTorch's registration order.
func (u *UNet) modules() []layer {
	ls := []layer{u.temb0, u.temb2, u.inp}
	add := func(r *resBlock) { ls = append(ls, r.layers()...) }
	add(u.d0)
	ls = append(ls, u.down0)
	add(u.d1)
	ls = append(ls, u.down1)
	add(u.mid)
	ls = append(ls, u.up1)
	add(u.u1)
	ls = append(ls, u.up0)
	add(u.u0)
	return append(ls, u.outN, u.out)
}

// Params implements engine.Denoiser, in PyTorch's state_dict order.
func (u *UNet) Params() []engine.Param {
	var ps []engine.Param
	for _, l := range u.modules() {
		for _, p := range l.params() {
			ps = append(ps, *p)
		}
	}
	return ps
}

// Init draws the parameters as PyTorch's defaults do.
func (u *UNet) Init(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x0e7))
	for _, l := range u.modules() {
		initLayer(l, rng)
	}
}

// Clone implements engine.Denoiser.
func (u *UNet) Clone() engine.Denoiser {
	c, _ := NewUNet(u.shape, u.kern) // u's shape was valid
	src, dst := u.Params(), c.Params()
	for i := range src {
		copy(dst[i].Data, src[i].Data)
	}
	return c
}

// Forward implements engine.Denoiser.
func (u *UNet) Forward(x []float32, t []int, n int) ([]float32, error) {
	if err := engine.CheckInput(x, n, u.shape); err != nil {
		return nil, fmt.Errorf("unet-s forward: %w", err)
	}
	if len(t) != n {
		return nil, fmt.Errorf("unet-s forward: %d timesteps for %d inputs", len(t), n)
	}
	u.n = n
	in := dims{u.shape[1], u.shape[2], u.shape[0]}
	xin := grow(&u.xin, len(x))
	chwToHWC(xin, x, n, in)
	emb := grow(&u.emb, n*u.tDim)
	TimestepEmbedding(emb, t, u.tDim)
	e := u.temb2.forward(u.tembAct.forward(u.temb0.forward(emb, n, false), n, false), n, false)
	h0 := u.d0.forward(u.inp.forward(xin, n, false), e, n)
	h1 := u.d1.forward(u.down0.forward(h0, n, false), e, n)
	m := u.mid.forward(u.down1.forward(h1, n, false), e, n)
	a := u.up1.forward(u.upA.forward(m, n, false), n, false)
	o1 := u.up1.out()
	cat1 := grow(&u.cat1, n*o1.h*o1.w*(o1.c+u.d1.c2.o.c))
	concatChannels(cat1, a, h1, n*o1.h*o1.w, o1.c, u.d1.c2.o.c)
	b := u.u1.forward(cat1, e, n)
	c := u.up0.forward(u.upB.forward(b, n, false), n, false)
	o0 := u.up0.out()
	cat0 := grow(&u.cat0, n*o0.h*o0.w*(o0.c+u.d0.c2.o.c))
	concatChannels(cat0, c, h0, n*o0.h*o0.w, o0.c, u.d0.c2.o.c)
	d := u.u0.forward(cat0, e, n)
	y := u.out.forward(u.outAct.forward(u.outN.forward(d, n, false), n, false), n, false)
	pred := grow(&u.pred, len(y))
	hwcToCHW(pred, y, n, in)
	return pred, nil
}

// Backward implements engine.Denoiser.
func (u *UNet) Backward(dOut []float32, want engine.Want) ([]float32, error) {
	if u.n == 0 {
		return nil, fmt.Errorf("unet-s backward: no forward pass to differentiate")
	}
	n := u.n
	in := dims{u.shape[1], u.shape[2], u.shape[0]}
	if len(dOut) != n*in.size() {
		return nil, fmt.Errorf("unet-s backward: %d output gradients, want %d", len(dOut), n*in.size())
	}
	pg := want&engine.ParamGrad != 0
	dy := grow(&u.dyin, len(dOut))
	chwToHWC(dy, dOut, n, in)
	de := grow(&u.de, n*u.tDim)
	clear(de)
	g := u.outN.backward(u.outAct.backward(u.out.backward(dy, n, true, pg), n, true, false), n, true, pg)
	g = u.u0.backward(g, de, n, pg)
	o0 := u.up0.out()
	ch0 := u.d0.c2.o.c
	dc := grow(&u.dcat0, n*o0.h*o0.w*o0.c)
	dh0 := grow(&u.dh0, n*o0.h*o0.w*ch0)
	splitChannels(dc, dh0, g, n*o0.h*o0.w, o0.c, ch0)
	g = u.u1.backward(u.upB.backward(u.up0.backward(dc, n, true, pg), n, true, false), de, n, pg)
	o1 := u.up1.out()
	ch1 := u.d1.c2.o.c
	db := grow(&u.dcat1, n*o1.h*o1.w*o1.c)
	dh1 := grow(&u.dh1, n*o1.h*o1.w*ch1)
	splitChannels(db, dh1, g, n*o1.h*o1.w, o1.c, ch1)
	g = u.mid.backward(u.upA.backward(u.up1.backward(db, n, true, pg), n, true, false), de, n, pg)
	g = u.down1.backward(g, n, true, pg)
	for i := range g {
		g[i] += dh1[i]
	}
	g = u.d1.backward(g, de, n, pg)
	g = u.down0.backward(g, n, true, pg)
	for i := range g {
		g[i] += dh0[i]
	}
	g = u.d0.backward(g, de, n, pg)
	g = u.inp.backward(g, n, want&engine.InputGrad != 0, pg)
	u.temb0.backward(u.tembAct.backward(u.temb2.backward(de, n, true, pg), n, true, false), n, false, pg)
	if want&engine.InputGrad == 0 {
		return nil, nil
	}
	dx := grow(&u.dxin, len(g))
	hwcToCHW(dx, g, n, in)
	return dx, nil
}
