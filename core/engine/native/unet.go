package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

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

// unetPiece is how many samples one replica takes through unet-s at a
// time. A 28×28 sample's activations are ~3 MB, so four keep a pass within
// the shared cache while its Winograd GEMMs still have hundreds of rows; the
// piece size, not the core count, fixes the order of every sum.
const unetPiece = 4

// UNet is unet-s, the ε-prediction U-Net of the peer script
// (shared/bench/torch_peer.py, UNetS), module for module and name for name.
// It implements engine.Denoiser and engine.DenoiserGradienter.
//
// Every pass cuts the batch into pieces of unetPiece samples that replicas
// of the network — one per core, sharing its weights, each on a
// single-threaded GEMM — take through forward (and backward) while the
// piece is in cache; parameter gradients are summed in piece order, so
// results are the same bit for bit on any number of cores. Its 3×3
// stride-1 convolutions run as Winograd F(2×2, 3×3) (see winoConv),
// GroupNorm and SiLU fused (gnSiLU).
type UNet struct {
	shape []int
	kern  gemm.Kernel
	net   *unetNet   // owns the weights; runs nothing itself
	reps  []*unetNet // one per core, on the serial kernel
	// The last Forward's batch, which Backward runs again piece by piece.
	n              int
	x              []float32
	t              []int
	pred, dx       []float32
	slots, gradSum []float32
}

var (
	_ engine.Denoiser           = (*UNet)(nil)
	_ engine.DenoiserGradienter = (*UNet)(nil)
)

// NewUNet builds unet-s for inputs of shape (C, H, W), H and W divisible by 4.
func NewUNet(shape []int, kern gemm.Kernel) (*UNet, error) {
	if len(shape) != 3 || shape[0] <= 0 || shape[1] <= 0 || shape[2] <= 0 || shape[1]%4 != 0 || shape[2]%4 != 0 {
		return nil, fmt.Errorf("unet-s: input shape %v: want C, H, W with H and W divisible by 4", shape)
	}
	return &UNet{shape: append([]int(nil), shape...), kern: kern, net: newUNetNet(shape, kern)}, nil
}

// Arch implements engine.Denoiser.
func (u *UNet) Arch() string { return "unet-s" }

// InputShape implements engine.Denoiser.
func (u *UNet) InputShape() []int { return append([]int(nil), u.shape...) }

// Kernel names the GEMM kernel the network runs on.
func (u *UNet) Kernel() string { return u.kern.Name() }

// Params implements engine.Denoiser, in PyTorch's state_dict order. The
// returned values share storage with the network.
func (u *UNet) Params() []engine.Param {
	var ps []engine.Param
	for _, p := range u.net.params() {
		ps = append(ps, *p)
	}
	return ps
}

// Init draws the parameters as PyTorch's defaults do: convolution and
// linear weights and biases uniform on ±1/√fan_in, group norms untouched
// (unit scale, zero shift).
func (u *UNet) Init(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x0e7))
	for _, ps := range u.net.modules() {
		if len(ps[0].Shape) < 2 {
			continue // a group norm
		}
		bound := 1 / math.Sqrt(float64(engine.Size(ps[0].Shape[1:])))
		for _, p := range ps {
			for i := range p.Data {
				p.Data[i] = float32((2*rng.Float64() - 1) * bound)
			}
		}
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

func (u *UNet) check(x []float32, t []int, n int) error {
	if err := engine.CheckInput(x, n, u.shape); err != nil {
		return err
	}
	if len(t) != n {
		return fmt.Errorf("%d timesteps for %d inputs", len(t), n)
	}
	return nil
}

// Forward implements engine.Denoiser.
func (u *UNet) Forward(x []float32, t []int, n int) ([]float32, error) {
	if err := u.check(x, t, n); err != nil {
		return nil, fmt.Errorf("unet-s forward: %w", err)
	}
	u.n = n
	u.x = append(u.x[:0], x...)
	u.t = append(u.t[:0], t...)
	pred := grow(&u.pred, len(x))
	u.run(x, t, n, 0, nil, pred)
	return pred, nil
}

// Backward implements engine.Denoiser. It runs the last Forward's batch
// again, piece by piece, as Gradient does.
func (u *UNet) Backward(dOut []float32, want engine.Want) ([]float32, error) {
	if u.n == 0 {
		return nil, fmt.Errorf("unet-s backward: no forward pass to differentiate")
	}
	dim := engine.Size(u.shape)
	if len(dOut) != u.n*dim {
		return nil, fmt.Errorf("unet-s backward: %d output gradients, want %d", len(dOut), u.n*dim)
	}
	return u.run(u.x, u.t, u.n, want, func(first int, _, d []float32) { copy(d, dOut[first*dim:]) }, nil), nil
}

// Gradient implements engine.DenoiserGradienter.
func (u *UNet) Gradient(x []float32, t []int, n int, want engine.Want, outGrad engine.OutputGrad) ([]float32, error) {
	if err := u.check(x, t, n); err != nil {
		return nil, fmt.Errorf("unet-s gradient: %w", err)
	}
	u.n = 0
	return u.run(x, t, n, want, outGrad, nil), nil
}

// run takes the batch through the replicas piece by piece: forward only
// into pred when outGrad is nil, else forward, outGrad and backward,
// returning the input gradient (nil unless wanted).
func (u *UNet) run(x []float32, t []int, n int, want engine.Want, outGrad engine.OutputGrad, pred []float32) []float32 {
	for _, c := range u.net.convs() {
		c.prepare()
	}
	pieces := (n + unetPiece - 1) / unetPiece
	reps := u.replicasFor(min(runtime.GOMAXPROCS(0), pieces))
	dim := engine.Size(u.shape)
	var dx, slots []float32
	if outGrad != nil && want&engine.InputGrad != 0 {
		dx = grow(&u.dx, n*dim)
	}
	params := u.net.params()
	size := 0
	for _, p := range params {
		size += len(p.Data)
	}
	if outGrad != nil && want&engine.ParamGrad != 0 {
		slots = grow(&u.slots, pieces*size)
	}
	eachPiece(pieces, len(reps), func(r, p int) error {
		rep := reps[r]
		lo, hi := p*unetPiece, min((p+1)*unetPiece, n)
		y := rep.forward(x[lo*dim:hi*dim], t[lo:hi], hi-lo, outGrad != nil)
		if outGrad == nil {
			copy(pred[lo*dim:], y)
			return nil
		}
		d := grow(&rep.dout, len(y))
		outGrad(lo, y, d)
		if slots != nil {
			slot := slots[p*size : (p+1)*size]
			clear(slot)
			for _, q := range rep.params() {
				q.Grad, slot = slot[:len(q.Data):len(q.Data)], slot[len(q.Data):]
			}
		}
		if g := rep.backward(d, hi-lo, want); dx != nil {
			copy(dx[lo*dim:], g)
		}
		return nil
	})
	if slots != nil {
		addSlots(params, slots, pieces, size, &u.gradSum)
	}
	return dx
}

// replicasFor returns k replicas of the network on the serial kernel,
// sharing its weights and transformed weights.
func (u *UNet) replicasFor(k int) []*unetNet {
	for len(u.reps) < k {
		u.reps = append(u.reps, newUNetNet(u.shape, gemm.Serial(u.kern)))
	}
	own, convs := u.net.params(), u.net.convs()
	for _, r := range u.reps[:k] {
		// Point at the weights on every call: loading weights may have
		// replaced the slices since the replica was made.
		for i, q := range r.params() {
			q.Data = own[i].Data
		}
		for i, c := range r.convs() {
			c.u, c.ut = convs[i].u, convs[i].ut
		}
	}
	return u.reps[:k]
}

// unetNet is one copy of unet-s's layers and buffers.
type unetNet struct {
	shape               []int
	scr                 winoScratch
	temb0, temb2        *linear
	inp, down0, down1   *conv2d
	d0, d1, mid, u1, u0 *resBlock
	up1, up0, out       *winoConv
	upA, upB            *upsample2
	outN                *gnSiLU

	xin, emb, ea, cat1, cat0 []float32
	de, dea, dy, dcat0, dh0  []float32
	dcat1, dh1, pred, dxin   []float32
	dout                     []float32 // the output gradient run hands to backward
}

func newUNetNet(shape []int, kern gemm.Kernel) *unetNet {
	ch := [3]int{32, 64, 64}
	u := &unetNet{shape: shape}
	s := &u.scr
	in := dims{shape[1], shape[2], shape[0]}
	u.temb0 = newLinear("temb.0", 128, 128, kern)
	u.temb2 = newLinear("temb.2", 128, 128, kern)
	u.inp = newConv2d("inp", in, ch[0], 3, 1, 1, kern)
	l0 := u.inp.out()
	u.d0 = newResBlock("d0", l0, ch[0], 128, kern, s)
	u.down0 = newConv2d("down0", l0, ch[0], 3, 2, 1, kern)
	u.d1 = newResBlock("d1", u.down0.out(), ch[1], 128, kern, s)
	l1 := u.d1.c2.out()
	u.down1 = newConv2d("down1", l1, ch[1], 3, 2, 1, kern)
	u.mid = newResBlock("mid", u.down1.out(), ch[2], 128, kern, s)
	u.up1 = newWinoConv("up1", dims{l1.h, l1.w, ch[2]}, ch[1], 1, kern, s)
	u.upA = &upsample2{i: u.mid.c2.out(), pad: u.up1.padded()}
	u.u1 = newResBlock("u1", dims{l1.h, l1.w, 2 * ch[1]}, ch[1], 128, kern, s)
	u.up0 = newWinoConv("up0", dims{l0.h, l0.w, ch[1]}, ch[0], 1, kern, s)
	u.upB = &upsample2{i: u.u1.c2.out(), pad: u.up0.padded()}
	u.u0 = newResBlock("u0", dims{l0.h, l0.w, 2 * ch[0]}, ch[0], 128, kern, s)
	u.out = newWinoConv("out", u.u0.c2.out(), shape[0], 1, kern, s)
	u.outN = newGNSiLU("out_n", u.u0.c2.out(), u.out.padded(), 8)
	return u
}

// modules lists each parameterised module's parameters in PyTorch's
// registration order.
func (u *unetNet) modules() [][]*engine.Param {
	ms := [][]*engine.Param{u.temb0.params(), u.temb2.params(), u.inp.params()}
	block := func(r *resBlock) {
		ms = append(ms, r.n1.params(), r.c1.params(), r.t.params(), r.n2.params(), r.c2.params())
		if r.skip != nil {
			ms = append(ms, r.skip.params())
		}
	}
	block(u.d0)
	ms = append(ms, u.down0.params())
	block(u.d1)
	ms = append(ms, u.down1.params())
	block(u.mid)
	ms = append(ms, u.up1.params())
	block(u.u1)
	ms = append(ms, u.up0.params())
	block(u.u0)
	return append(ms, u.outN.params(), u.out.params())
}

// params lists the parameters in PyTorch's state_dict order.
func (u *unetNet) params() []*engine.Param {
	var ps []*engine.Param
	for _, m := range u.modules() {
		ps = append(ps, m...)
	}
	return ps
}

// convs lists the Winograd convolutions.
func (u *unetNet) convs() []*winoConv {
	var cs []*winoConv
	for _, r := range []*resBlock{u.d0, u.d1, u.mid, u.u1, u.u0} {
		cs = append(cs, r.convs()...)
	}
	return append(cs, u.up1, u.up0, u.out)
}

// forward runs n inputs (NCHW) at timesteps t and returns the predicted
// noise (NCHW); the convolutions' transformed weights must be ready. keep
// says a backward pass follows.
func (u *unetNet) forward(x []float32, t []int, n int, keep bool) []float32 {
	in := dims{u.shape[1], u.shape[2], u.shape[0]}
	xin := grow(&u.xin, len(x))
	chwToHWC(xin, x, n, in)
	emb := grow(&u.emb, n*128)
	TimestepEmbedding(emb, t, 128)
	a := u.temb0.forward(emb, n, false)
	ea := grow(&u.ea, len(a))
	for i, v := range a {
		ea[i] = v * sigmoid(v)
	}
	e := u.temb2.forward(ea, n, false)
	h0 := u.d0.forward(u.inp.forward(xin, n, false), e, n, keep)
	h1 := u.d1.forward(u.down0.forward(h0, n, false), e, n, keep)
	m := u.mid.forward(u.down1.forward(h1, n, false), e, n, keep)
	up := u.up1.forward(u.upA.forward(m, n), n, nil, nil)
	o1 := u.up1.out()
	cat1 := grow(&u.cat1, n*o1.h*o1.w*2*o1.c)
	concatChannels(cat1, up, h1, n*o1.h*o1.w, o1.c, o1.c)
	b := u.u1.forward(cat1, e, n, keep)
	up = u.up0.forward(u.upB.forward(b, n), n, nil, nil)
	o0 := u.up0.out()
	cat0 := grow(&u.cat0, n*o0.h*o0.w*2*o0.c)
	concatChannels(cat0, up, h0, n*o0.h*o0.w, o0.c, o0.c)
	d := u.u0.forward(cat0, e, n, keep)
	y := u.out.forward(u.outN.forward(d, n, keep), n, nil, nil)
	pred := grow(&u.pred, len(y))
	hwcToCHW(pred, y, n, in)
	return pred
}

// backward propagates dOut (NCHW) through the last forward pass and
// returns the input gradient (NCHW) when want has InputGrad.
func (u *unetNet) backward(dOut []float32, n int, want engine.Want) []float32 {
	pg := want&engine.ParamGrad != 0
	in := dims{u.shape[1], u.shape[2], u.shape[0]}
	dy := grow(&u.dy, len(dOut))
	chwToHWC(dy, dOut, n, in)
	de := grow(&u.de, n*128)
	clear(de)
	g := u.outN.backward(u.out.backward(dy, n, true, pg), n, pg)
	g = u.u0.backward(g, de, n, pg)
	o0 := u.up0.out()
	dc := grow(&u.dcat0, n*o0.size())
	dh0 := grow(&u.dh0, n*o0.size())
	splitChannels(dc, dh0, g, n*o0.h*o0.w, o0.c, o0.c)
	g = u.u1.backward(u.upB.backward(u.up0.backward(dc, n, true, pg), n), de, n, pg)
	o1 := u.up1.out()
	da := grow(&u.dcat1, n*o1.size())
	dh1 := grow(&u.dh1, n*o1.size())
	splitChannels(da, dh1, g, n*o1.h*o1.w, o1.c, o1.c)
	g = u.mid.backward(u.upA.backward(u.up1.backward(da, n, true, pg), n), de, n, pg)
	g = u.down1.backward(g, n, true, pg)
	addTo(g, dh1)
	g = u.d1.backward(g, de, n, pg)
	g = u.down0.backward(g, n, true, pg)
	addTo(g, dh0)
	g = u.d0.backward(g, de, n, pg)
	g = u.inp.backward(g, n, want&engine.InputGrad != 0, pg)
	if pg {
		dea := u.temb2.backward(de, n, true, true)
		da := grow(&u.dea, len(dea))
		for i, a := range u.temb0.y[:len(dea)] {
			s := sigmoid(a)
			da[i] = dea[i] * s * (1 + a*(1-s))
		}
		u.temb0.backward(da, n, false, true)
	}
	if want&engine.InputGrad == 0 {
		return nil
	}
	dx := grow(&u.dxin, len(g))
	hwcToCHW(dx, g, n, in)
	return dx
}
