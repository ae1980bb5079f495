package native

import (
	"fmt"
	"math"
	"slices"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// Tensors: the layers a transformer needs (ONNX imports of ViT and DeiT).
// Their activations are one tensor per sample, row-major over the shape
// the layer is given (Layer.Shape: the per-sample shape, the batch left
// out), not channels-last maps: the network sees them as vectors (dims
// 1×1×size), Activation gives them that shape. A layer of this kind reads
// whatever its producer makes (a map, a vector, a tensor) as long as it
// holds as many values per sample as its Shape declares; a map read as a
// tensor is channels-last (H, W, C), which is why an importer puts a
// permute first.

// maxTensorRank bounds a per-sample tensor's rank (odometers on the stack).
const maxTensorRank = 8

func prod(s []int) int {
	k := 1
	for _, d := range s {
		k *= d
	}
	return k
}

// rowStrides are the row-major strides of shape s.
func rowStrides(s []int) []int {
	st := make([]int, len(s))
	k := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = k
		k *= s[i]
	}
	return st
}

func vecDims(size int) dims { return dims{1, 1, size} }

// checkShape checks a per-sample shape against the values its producer makes.
func checkShape(op, name string, shape []int, in dims) error {
	if len(shape) == 0 || len(shape) > maxTensorRank || slices.Min(shape) <= 0 {
		return fmt.Errorf("%s layer %s of per-sample shape %v (want 1 to %d positive dimensions)", op, name, shape, maxTensorRank)
	}
	if prod(shape) != in.size() {
		return fmt.Errorf("%s layer %s of per-sample shape %v reads %d values a sample", op, name, shape, in.size())
	}
	return nil
}

// axisSplit is the outer, axis and inner extents of shape around axes
// [lo, hi).
func axisSplit(shape []int, lo, hi int) (outer, d, inner int) {
	return prod(shape[:lo]), prod(shape[lo:hi]), prod(shape[hi:])
}

// strided copies the values of one sample along an odometer: dst[o] =
// src[start + Σ idx[a]·step[a]] over the row-major indices idx of odims;
// with scatter, the other way round (dst[start + …] = src[o]).
func strided(dst, src []float32, odims, step []int, start int, scatter bool) {
	r := len(odims)
	last, ls := odims[r-1], step[r-1]
	var idx [maxTensorRank]int
	total := prod(odims)
	off := start
	for o := 0; o < total; o += last {
		p := off
		if ls == 1 { // a contiguous run: one move
			if scatter {
				copy(dst[p:p+last], src[o:o+last])
			} else {
				copy(dst[o:o+last], src[p:p+last])
			}
		} else if scatter {
			for j := range last {
				dst[p] = src[o+j]
				p += ls
			}
		} else {
			for j := range last {
				dst[o+j] = src[p]
				p += ls
			}
		}
		for a := r - 2; a >= 0; a-- {
			idx[a]++
			off += step[a]
			if idx[a] < odims[a] {
				break
			}
			off -= step[a] * odims[a]
			idx[a] = 0
		}
	}
}

// tensorShaped is a layer whose output Activation reports with its
// per-sample shape.
type tensorShaped interface{ tensorShape() []int }

// ---- Permute (Transpose) ----

// permute is ONNX's Transpose of one sample's axes.
type permute struct {
	nm                string
	i                 dims
	shape, perm, outS []int
	step, back        []int // input strides along the output's axes; output strides along the input's
	y, dx             []float32
}

func newPermute(name string, in dims, shape, perm []int) (*permute, error) {
	if err := checkShape("permute", name, shape, in); err != nil {
		return nil, err
	}
	seen := make([]bool, len(shape))
	if len(perm) != len(shape) {
		return nil, fmt.Errorf("permute layer %s: permutation %v of %d axes", name, perm, len(shape))
	}
	for _, p := range perm {
		if p < 0 || p >= len(shape) || seen[p] {
			return nil, fmt.Errorf("permute layer %s: permutation %v", name, perm)
		}
		seen[p] = true
	}
	l := &permute{nm: name, i: in, shape: slices.Clone(shape), perm: slices.Clone(perm)}
	is := rowStrides(shape)
	for _, p := range perm {
		l.outS = append(l.outS, shape[p])
		l.step = append(l.step, is[p])
	}
	os := rowStrides(l.outS)
	l.back = make([]int, len(shape))
	for i, p := range perm {
		l.back[p] = os[i]
	}
	return l, nil
}

func (l *permute) name() string            { return l.nm }
func (l *permute) in() dims                { return l.i }
func (l *permute) out() dims               { return vecDims(l.i.size()) }
func (l *permute) params() []*engine.Param { return nil }
func (l *permute) tensorShape() []int      { return l.outS }
func (l *permute) clone(gemm.Kernel) layer {
	c := *l
	c.y, c.dx = nil, nil
	return &c
}

func (l *permute) forward(x []float32, n int, _ bool) []float32 {
	per := l.i.size()
	y := grow(&l.y, n*per)
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			strided(y[s*per:(s+1)*per], x[s*per:(s+1)*per], l.outS, l.step, 0, false)
		}
	})
	return y
}

func (l *permute) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	per := l.i.size()
	dx := grow(&l.dx, n*per)
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			strided(dx[s*per:(s+1)*per], dy[s*per:(s+1)*per], l.shape, l.back, 0, false)
		}
	})
	return dx
}

// ---- Slice ----

// slice is ONNX's Slice of one sample: along each axis a, count[a] values
// from begin[a] every step[a].
type slice struct {
	nm                 string
	i                  dims
	shape, count, step []int
	start              int
	y, dx              []float32
}

func newSlice(name string, in dims, shape, begin, steps, count []int) (*slice, error) {
	if err := checkShape("slice", name, shape, in); err != nil {
		return nil, err
	}
	if len(begin) != len(shape) || len(steps) != len(shape) || len(count) != len(shape) {
		return nil, fmt.Errorf("slice layer %s of shape %v: begin %v, steps %v, counts %v", name, shape, begin, steps, count)
	}
	st := rowStrides(shape)
	l := &slice{nm: name, i: in, shape: slices.Clone(shape), count: slices.Clone(count)}
	for a := range shape {
		lastIdx := begin[a] + (count[a]-1)*steps[a]
		if count[a] <= 0 || steps[a] == 0 || begin[a] < 0 || begin[a] >= shape[a] || lastIdx < 0 || lastIdx >= shape[a] {
			return nil, fmt.Errorf("slice layer %s: %d values from %d every %d of an axis of %d", name, count[a], begin[a], steps[a], shape[a])
		}
		l.start += begin[a] * st[a]
		l.step = append(l.step, steps[a]*st[a])
	}
	return l, nil
}

func (l *slice) name() string            { return l.nm }
func (l *slice) in() dims                { return l.i }
func (l *slice) out() dims               { return vecDims(prod(l.count)) }
func (l *slice) params() []*engine.Param { return nil }
func (l *slice) tensorShape() []int      { return l.count }
func (l *slice) clone(gemm.Kernel) layer {
	c := *l
	c.y, c.dx = nil, nil
	return &c
}

func (l *slice) forward(x []float32, n int, _ bool) []float32 {
	per, out := l.i.size(), prod(l.count)
	y := grow(&l.y, n*out)
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			strided(y[s*out:(s+1)*out], x[s*per:(s+1)*per], l.count, l.step, l.start, false)
		}
	})
	return y
}

func (l *slice) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	per, out := l.i.size(), prod(l.count)
	dx := grow(&l.dx, n*per)
	clear(dx)
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			strided(dx[s*per:(s+1)*per], dy[s*out:(s+1)*out], l.count, l.step, l.start, true)
		}
	})
	return dx
}

// ---- Gather (constant indices along one axis) ----

type gatherAxis struct {
	nm              string
	i               dims
	outer, d, inner int
	idx, outS       []int
	y, dx           []float32
}

func newGather(name string, in dims, shape []int, axis int, idx, outShape []int) (*gatherAxis, error) {
	if err := checkShape("gather", name, shape, in); err != nil {
		return nil, err
	}
	if axis < 0 || axis >= len(shape) || len(idx) == 0 {
		return nil, fmt.Errorf("gather layer %s along axis %d of shape %v", name, axis, shape)
	}
	l := &gatherAxis{nm: name, i: in, idx: slices.Clone(idx), outS: slices.Clone(outShape)}
	l.outer, l.d, l.inner = axisSplit(shape, axis, axis+1)
	for _, j := range idx {
		if j < 0 || j >= l.d {
			return nil, fmt.Errorf("gather layer %s: index %d of an axis of %d", name, j, l.d)
		}
	}
	if prod(outShape) != l.outer*len(idx)*l.inner {
		return nil, fmt.Errorf("gather layer %s: output shape %v", name, outShape)
	}
	return l, nil
}

func (l *gatherAxis) name() string            { return l.nm }
func (l *gatherAxis) in() dims                { return l.i }
func (l *gatherAxis) out() dims               { return vecDims(l.outer * len(l.idx) * l.inner) }
func (l *gatherAxis) params() []*engine.Param { return nil }
func (l *gatherAxis) tensorShape() []int      { return l.outS }
func (l *gatherAxis) clone(gemm.Kernel) layer {
	c := *l
	c.y, c.dx = nil, nil
	return &c
}

func (l *gatherAxis) forward(x []float32, n int, _ bool) []float32 {
	per, out := l.i.size(), l.out().size()
	y := grow(&l.y, n*out)
	for s := range n {
		pos := s * out
		for o := range l.outer {
			for _, j := range l.idx {
				b := s*per + (o*l.d+j)*l.inner
				pos += copy(y[pos:], x[b:b+l.inner])
			}
		}
	}
	return y
}

func (l *gatherAxis) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	per, out := l.i.size(), l.out().size()
	dx := grow(&l.dx, n*per)
	clear(dx)
	for s := range n {
		pos := s * out
		for o := range l.outer {
			for _, j := range l.idx {
				b := s*per + (o*l.d+j)*l.inner
				addToScalar(dx[b:b+l.inner], dy[pos:pos+l.inner])
				pos += l.inner
			}
		}
	}
	return dx
}

// ---- Softmax along one axis ----

type softmax struct {
	nm              string
	i               dims
	shape           []int
	outer, d, inner int
	attention       bool // the attention probabilities of a transformer block
	y, dx           []float32
}

func newSoftmax(name string, in dims, shape []int, axis int, attention bool) (*softmax, error) {
	if err := checkShape("softmax", name, shape, in); err != nil {
		return nil, err
	}
	if axis < 0 || axis >= len(shape) {
		return nil, fmt.Errorf("softmax layer %s along axis %d of shape %v", name, axis, shape)
	}
	l := &softmax{nm: name, i: in, shape: slices.Clone(shape), attention: attention}
	l.outer, l.d, l.inner = axisSplit(shape, axis, axis+1)
	return l, nil
}

func (l *softmax) name() string            { return l.nm }
func (l *softmax) in() dims                { return l.i }
func (l *softmax) out() dims               { return vecDims(l.i.size()) }
func (l *softmax) params() []*engine.Param { return nil }
func (l *softmax) tensorShape() []int      { return l.shape }
func (l *softmax) clone(gemm.Kernel) layer {
	c := *l
	c.y, c.dx = nil, nil
	return &c
}

func (l *softmax) forward(x []float32, n int, _ bool) []float32 {
	y := grow(&l.y, len(x))
	rows := n * l.outer
	d, in := l.d, l.inner
	parallel(rows, func(lo, hi int) {
		if in == 1 { // rows in a run: the same operations, indexed without strides
			for r := lo; r < hi; r++ {
				softmaxRow(y[r*d:(r+1)*d], x[r*d:(r+1)*d])
			}
			return
		}
		for r := lo; r < hi; r++ {
			for i := range in {
				b := r*d*in + i
				m := float32(math.Inf(-1))
				for j := range d {
					m = max(m, x[b+j*in])
				}
				var s [8]float64
				for j := range d {
					e := expf(x[b+j*in] - m)
					y[b+j*in] = e
					s[j%8] += float64(e)
				}
				inv := float32(1 / laneSum(&s))
				for j := range d {
					y[b+j*in] *= inv
				}
			}
		}
	})
	return y
}

// softmaxRow is the softmax of one contiguous row x into y, as the
// strided loop computes it.
func softmaxRow(y, x []float32) {
	y = y[:len(x)]
	// The maximum in four lanes (the same value in any order).
	m0, m1, m2, m3 := float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))
	j := 0
	for ; j+4 <= len(x); j += 4 {
		m0, m1, m2, m3 = max(m0, x[j]), max(m1, x[j+1]), max(m2, x[j+2]), max(m3, x[j+3])
	}
	for ; j < len(x); j++ {
		m0 = max(m0, x[j])
	}
	m := max(max(m0, m1), max(m2, m3))
	var s [8]float64
	expSumVec(y, x, m, &s)
	scaleVec(y, float32(1/laneSum(&s)))
}

func (l *softmax) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	rows := n * l.outer
	d, in, y := l.d, l.inner, l.y
	parallel(rows, func(lo, hi int) {
		if in == 1 { // rows in a run: the same operations, indexed without strides
			for r := lo; r < hi; r++ {
				var s [8]float64
				dots64Vec(dy[r*d:(r+1)*d], y[r*d:(r+1)*d], &s)
				softmaxGradVec(dx[r*d:(r+1)*d], dy[r*d:(r+1)*d], y[r*d:(r+1)*d], float32(laneSum(&s)))
			}
			return
		}
		for r := lo; r < hi; r++ {
			for i := range in {
				b := r*d*in + i
				var s8 [8]float64
				for j := range d {
					s8[j%8] += float64(dy[b+j*in]) * float64(y[b+j*in])
				}
				s := laneSum(&s8)
				for j := range d {
					dx[b+j*in] = y[b+j*in] * (dy[b+j*in] - float32(s))
				}
			}
		}
	})
	return dx
}

// ---- Layer normalisation over the trailing axes ----

type layerNorm struct {
	nm         string
	i          dims
	shape      []int
	d          int // values normalised together
	eps        float32
	w, b       engine.Param
	xhat, rstd []float32
	y, dx      []float32
}

func newLayerNorm(name string, in dims, shape []int, axis int, eps float32) (*layerNorm, error) {
	if err := checkShape("layernorm", name, shape, in); err != nil {
		return nil, err
	}
	if axis < 0 || axis >= len(shape) || !(eps > 0) {
		return nil, fmt.Errorf("layer norm %s from axis %d of shape %v, epsilon %g", name, axis, shape, eps)
	}
	d := prod(shape[axis:])
	return &layerNorm{nm: name, i: in, shape: slices.Clone(shape), d: d, eps: eps,
		w: newParam(name+".weight", []int{d}), b: newParam(name+".bias", []int{d})}, nil
}

func (l *layerNorm) name() string            { return l.nm }
func (l *layerNorm) in() dims                { return l.i }
func (l *layerNorm) out() dims               { return vecDims(l.i.size()) }
func (l *layerNorm) params() []*engine.Param { return []*engine.Param{&l.w, &l.b} }
func (l *layerNorm) tensorShape() []int      { return l.shape }
func (l *layerNorm) clone(gemm.Kernel) layer {
	c := &layerNorm{nm: l.nm, i: l.i, shape: l.shape, d: l.d, eps: l.eps,
		w: newParam(l.w.Name, l.w.Shape), b: newParam(l.b.Name, l.b.Shape)}
	c.w.Data, c.w.Grad = l.w.Data, l.w.Grad
	c.b.Data, c.b.Grad = l.b.Data, l.b.Grad
	return c
}

func (l *layerNorm) forward(x []float32, n int, _ bool) []float32 {
	y := grow(&l.y, len(x))
	xh := grow(&l.xhat, len(x))
	rows := len(x) / l.d
	rstd := grow(&l.rstd, rows)
	d, w, b := l.d, l.w.Data, l.b.Data
	parallel(rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := x[r*d : (r+1)*d]
			var s [8]float64
			sums64Vec(row, &s)
			m := laneSum(&s) / float64(d)
			s = [8]float64{}
			sqDevs64Vec(row, m, &s)
			rs := 1 / math.Sqrt(laneSum(&s)/float64(d)+float64(l.eps))
			rstd[r] = float32(rs)
			normAffineVec(y[r*d:(r+1)*d], xh[r*d:(r+1)*d], row, w, b, m, rs)
		}
	})
	return y
}

func (l *layerNorm) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	d, rows := l.d, len(dy)/l.d
	if paramGrad {
		for r := range rows {
			for j := range d {
				g := dy[r*d+j]
				l.w.Grad[j] += g * l.xhat[r*d+j]
				l.b.Grad[j] += g
			}
		}
	}
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	w := l.w.Data
	parallel(rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			var s1, s2 float64
			for j := range d {
				g := float64(dy[r*d+j]) * float64(w[j])
				s1 += g
				s2 += g * float64(l.xhat[r*d+j])
			}
			s1 /= float64(d)
			s2 /= float64(d)
			rs := float64(l.rstd[r])
			for j := range d {
				g := float64(dy[r*d+j]) * float64(w[j])
				dx[r*d+j] = float32(rs * (g - s1 - float64(l.xhat[r*d+j])*s2))
			}
		}
	})
	return dx
}
