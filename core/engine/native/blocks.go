package native

import (
	"math"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// ---- BatchNorm2d (channels-last) ----

// batchNorm is torch.nn.BatchNorm2d: batch statistics in training (biased
// variance to normalise, unbiased for the running estimate, momentum 0.1),
// running statistics in evaluation. Running mean and variance are Params
// without gradients, so they are saved, exported and imported with the weights.
type batchNorm struct {
	nm                string
	d                 dims
	w, b, rmean, rvar engine.Param
	eps, momentum     float32
	train             bool
	x, y, xhat, dx    []float32
	mean, invstd      []float32
}

func newBatchNorm(name string, d dims) *batchNorm {
	l := &batchNorm{nm: name, d: d, eps: 1e-5, momentum: 0.1,
		w: newParam(name+".weight", []int{d.c}), b: newParam(name+".bias", []int{d.c}),
		rmean: engine.Param{Name: name + ".running_mean", Shape: []int{d.c}, Data: make([]float32, d.c)},
		rvar:  engine.Param{Name: name + ".running_var", Shape: []int{d.c}, Data: make([]float32, d.c)},
		mean:  make([]float32, d.c), invstd: make([]float32, d.c)}
	for i := range l.w.Data {
		l.w.Data[i], l.rvar.Data[i] = 1, 1
	}
	return l
}

func (l *batchNorm) name() string { return l.nm }
func (l *batchNorm) in() dims     { return l.d }
func (l *batchNorm) out() dims    { return l.d }
func (l *batchNorm) params() []*engine.Param {
	return []*engine.Param{&l.w, &l.b, &l.rmean, &l.rvar}
}
func (l *batchNorm) clone(gemm.Kernel) layer {
	c := newBatchNorm(l.nm, l.d)
	c.eps, c.momentum = l.eps, l.momentum
	for i, p := range l.params() {
		c.params()[i].Data, c.params()[i].Grad = p.Data, p.Grad
	}
	return c
}

func (l *batchNorm) forward(x []float32, n int, train bool) []float32 {
	l.x, l.train = x, train
	c := l.d.c
	m := len(x) / c
	if train {
		sum := make([]float64, c)
		sq := make([]float64, c)
		for r := 0; r < m; r++ {
			for j, v := range x[r*c : (r+1)*c] {
				sum[j] += float64(v)
				sq[j] += float64(v) * float64(v)
			}
		}
		for j := 0; j < c; j++ {
			mean := sum[j] / float64(m)
			v := math.Max(sq[j]/float64(m)-mean*mean, 0)
			l.mean[j] = float32(mean)
			l.invstd[j] = float32(1 / math.Sqrt(v+float64(l.eps)))
			unbiased := v
			if m > 1 {
				unbiased = v * float64(m) / float64(m-1)
			}
			l.rmean.Data[j] = (1-l.momentum)*l.rmean.Data[j] + l.momentum*float32(mean)
			l.rvar.Data[j] = (1-l.momentum)*l.rvar.Data[j] + l.momentum*float32(unbiased)
		}
	} else {
		for j := 0; j < c; j++ {
			l.mean[j] = l.rmean.Data[j]
			l.invstd[j] = float32(1 / math.Sqrt(float64(l.rvar.Data[j]+l.eps)))
		}
	}
	y := grow(&l.y, len(x))
	xhat := grow(&l.xhat, len(x))
	parallel(m, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for j := 0; j < c; j++ {
				i := r*c + j
				xhat[i] = (x[i] - l.mean[j]) * l.invstd[j]
				y[i] = xhat[i]*l.w.Data[j] + l.b.Data[j]
			}
		}
	})
	return y
}

func (l *batchNorm) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	c := l.d.c
	m := len(dy) / c
	sdy := make([]float64, c)
	sdyx := make([]float64, c)
	for r := 0; r < m; r++ {
		for j := 0; j < c; j++ {
			i := r*c + j
			sdy[j] += float64(dy[i])
			sdyx[j] += float64(dy[i]) * float64(l.xhat[i])
		}
	}
	if paramGrad {
		for j := 0; j < c; j++ {
			l.w.Grad[j] += float32(sdyx[j])
			l.b.Grad[j] += float32(sdy[j])
		}
	}
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	parallel(m, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for j := 0; j < c; j++ {
				i := r*c + j
				g := l.w.Data[j] * l.invstd[j]
				if !l.train {
					dx[i] = dy[i] * g
					continue
				}
				dx[i] = g * (dy[i] - float32(sdy[j]/float64(m)) - l.xhat[i]*float32(sdyx[j]/float64(m)))
			}
		}
	})
	return dx
}

// ---- Global average pooling ----

type avgPool struct {
	nm    string
	i     dims
	y, dx []float32
}

func (l *avgPool) name() string            { return l.nm }
func (l *avgPool) in() dims                { return l.i }
func (l *avgPool) out() dims               { return dims{1, 1, l.i.c} }
func (l *avgPool) params() []*engine.Param { return nil }
func (l *avgPool) clone(gemm.Kernel) layer { return &avgPool{nm: l.nm, i: l.i} }

func (l *avgPool) forward(x []float32, n int, _ bool) []float32 {
	c, hw := l.i.c, l.i.h*l.i.w
	y := grow(&l.y, n*c)
	clear(y)
	for s := 0; s < n; s++ {
		for p := 0; p < hw; p++ {
			for j, v := range x[(s*hw+p)*c : (s*hw+p+1)*c] {
				y[s*c+j] += v
			}
		}
		for j := 0; j < c; j++ {
			y[s*c+j] /= float32(hw)
		}
	}
	return y
}

func (l *avgPool) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	c, hw := l.i.c, l.i.h*l.i.w
	dx := grow(&l.dx, n*hw*c)
	for s := 0; s < n; s++ {
		for p := 0; p < hw; p++ {
			for j := 0; j < c; j++ {
				dx[(s*hw+p)*c+j] = dy[s*c+j] / float32(hw)
			}
		}
	}
	return dx
}

// ---- Residual block: relu(main(x) + shortcut(x)) ----

// residual is ResNet's BasicBlock. An empty shortcut is the identity.
type residual struct {
	nm             string
	main, shortcut []layer
	y, dx          []float32
	sum            []float32
}

func (l *residual) name() string { return l.nm }
func (l *residual) in() dims     { return l.main[0].in() }
func (l *residual) out() dims    { return l.main[len(l.main)-1].out() }
func (l *residual) params() []*engine.Param {
	var ps []*engine.Param
	for _, s := range append(append([]layer(nil), l.main...), l.shortcut...) {
		ps = append(ps, s.params()...)
	}
	return ps
}
func (l *residual) clone(k gemm.Kernel) layer {
	c := &residual{nm: l.nm}
	for _, s := range l.main {
		c.main = append(c.main, s.clone(k))
	}
	for _, s := range l.shortcut {
		c.shortcut = append(c.shortcut, s.clone(k))
	}
	return c
}

func (l *residual) forward(x []float32, n int, train bool) []float32 {
	h := x
	for _, s := range l.main {
		h = s.forward(h, n, train)
	}
	sc := x
	for _, s := range l.shortcut {
		sc = s.forward(sc, n, train)
	}
	sum := grow(&l.sum, len(h))
	y := grow(&l.y, len(h))
	for i := range h {
		sum[i] = h[i] + sc[i]
		y[i] = max(sum[i], 0)
	}
	return y
}

func (l *residual) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	ds := grow(&l.dx, len(dy))
	for i, v := range dy {
		if l.sum[i] > 0 {
			ds[i] = v
		} else {
			ds[i] = 0
		}
	}
	g := ds
	for i := len(l.main) - 1; i >= 0; i-- {
		g = l.main[i].backward(g, n, true, paramGrad)
	}
	gs := ds
	for i := len(l.shortcut) - 1; i >= 0; i-- {
		gs = l.shortcut[i].backward(gs, n, true, paramGrad)
	}
	// g belongs to the first main layer; add the shortcut's gradient into it.
	for i := range g {
		g[i] += gs[i]
	}
	return g
}
