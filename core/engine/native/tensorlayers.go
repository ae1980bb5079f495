package native

import (
	"fmt"
	"math"
	"slices"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// tensorLayer builds the tensor layers of one input (tensors.go); ok is
// false for the other kinds.
func (s Layer) tensorLayer(in dims, kern gemm.Kernel) (nd node, ok bool, err error) {
	switch s.Op {
	case "permute":
		nd, err = newPermute(s.Name, in, s.Shape, s.Perm)
	case "slice":
		nd, err = newSlice(s.Name, in, s.Shape, s.Begin, s.Steps, s.Count)
	case "gather":
		nd, err = newGather(s.Name, in, s.Shape, s.Axis, s.Index, s.OutShape)
	case "softmax":
		nd, err = newSoftmax(s.Name, in, s.Shape, s.Axis, s.Attention)
	case "layernorm":
		eps := s.Eps
		if eps == 0 {
			eps = 1e-5
		}
		nd, err = newLayerNorm(s.Name, in, s.Shape, s.Axis, eps)
	case "erf", "sqrt", "tanh":
		if err = checkShape(s.Op, s.Name, s.Shape, in); err == nil {
			nd = &unary{nm: s.Name, fn: s.Op, i: in, shape: slices.Clone(s.Shape)}
		}
	case "gelu":
		if err = checkShape(s.Op, s.Name, s.Shape, in); err == nil && !(s.Alpha > 0) {
			err = fmt.Errorf("gelu layer %s dividing by %g", s.Name, s.Alpha)
		}
		if err == nil {
			nd = &gelu{nm: s.Name, i: in, shape: slices.Clone(s.Shape), div: s.Alpha}
		}
	case "reducemean":
		lo, hi := s.axes()
		nd, err = newReduceMean(s.Name, in, s.Shape, lo, hi)
	case "constant":
		if len(s.Value) == 0 || prod(s.Shape) != len(s.Value) {
			err = fmt.Errorf("constant layer %s of %d values, shape %v", s.Name, len(s.Value), s.Shape)
		} else {
			nd = &constant{nm: s.Name, i: in, value: slices.Clone(s.Value), shape: slices.Clone(s.Shape)}
		}
	case "arith":
		nd, err = newArith(s.Name, s.Fn, s.Swap, in, s.Shape, s.Value, s.ValueShape)
	case "linear":
		if s.Shape == nil {
			return nil, false, nil
		}
		if err = checkShape("linear", s.Name, s.Shape, in); err == nil && s.Out > 0 {
			k := s.Shape[len(s.Shape)-1]
			out := append(slices.Clone(s.Shape[:len(s.Shape)-1]), s.Out)
			nd = &rowLinear{linear: newLinear(s.Name, k, s.Out, kern), i: in, rows: in.size() / k, shape: out}
		} else if err == nil {
			err = fmt.Errorf("linear layer %s with %d outputs", s.Name, s.Out)
		}
	default:
		return nil, false, nil
	}
	return nd, true, err
}

// axes is a reduction's run of axes, Axis to AxisEnd (exclusive; 0: Axis
// alone).
func (s Layer) axes() (lo, hi int) {
	if s.AxisEnd == 0 {
		return s.Axis, s.Axis + 1
	}
	return s.Axis, s.AxisEnd
}

func newReduceMean(name string, in dims, shape []int, lo, hi int) (*reduceMean, error) {
	if err := checkShape("reducemean", name, shape, in); err != nil {
		return nil, err
	}
	if lo < 0 || hi > len(shape) || lo >= hi {
		return nil, fmt.Errorf("mean %s over axes %d to %d of shape %v", name, lo, hi-1, shape)
	}
	l := &reduceMean{nm: name, i: in}
	l.outer, l.d, l.inner = axisSplit(shape, lo, hi)
	l.outS = append(append(slices.Clone(shape[:lo]), slices.Repeat([]int{1}, hi-lo)...), shape[hi:]...)
	return l, nil
}

// tensorJunction builds the tensor junctions (tensorjoins.go).
func (s Layer) tensorJunction(ins []dims, kern gemm.Kernel) (node, error) {
	switch s.Op {
	case "matmul":
		return newMatmul(s.Name, ins, s.Shape, s.Shape2, kern)
	case "elementwise":
		return newElementwise(s.Name, s.Fn, ins, s.Shape, s.Shape2)
	}
	return newJoinAxis(s.Name, ins, s.Shapes, s.Axis)
}

// AttentionLayers implements engine.Attentioner: the softmax layers marked
// as attention probabilities, in order of depth.
func (m *Net) AttentionLayers() []string {
	var names []string
	for _, l := range m.nodes {
		if sm, ok := l.(*softmax); ok && sm.attention {
			names = append(names, sm.nm)
		}
	}
	return names
}

// ---- Unary functions: erf, sqrt, tanh ----

type unary struct {
	nm       string
	fn       string
	i        dims
	shape    []int
	x, y, dx []float32
}

func (l *unary) name() string            { return l.nm }
func (l *unary) in() dims                { return l.i }
func (l *unary) out() dims               { return vecDims(l.i.size()) }
func (l *unary) params() []*engine.Param { return nil }
func (l *unary) tensorShape() []int      { return l.shape }
func (l *unary) clone(gemm.Kernel) layer { return &unary{nm: l.nm, fn: l.fn, i: l.i, shape: l.shape} }

func (l *unary) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	y := grow(&l.y, len(x))
	parallel(len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := float64(x[i])
			switch l.fn {
			case "erf":
				y[i] = erff(x[i])
			case "sqrt":
				y[i] = float32(math.Sqrt(v))
			case "tanh":
				y[i] = float32(math.Tanh(v))
			}
		}
	})
	return y
}

func (l *unary) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	x, y := l.x, l.y
	parallel(len(dy), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var g float64
			switch l.fn {
			case "erf":
				g = float64(2 / math.SqrtPi * expf(-x[i]*x[i]))
			case "sqrt":
				g = 0.5 / float64(y[i])
			case "tanh":
				g = 1 - float64(y[i])*float64(y[i])
			}
			dx[i] = float32(float64(dy[i]) * g)
		}
	})
	return dx
}

// ---- GELU, as exporters write it ----

// gelu is x·(erf(x/div) + 1)·0.5 (div: √2), the Div, Erf, Add, Mul and Mul
// PyTorch exports nn.GELU as, in one pass: each value and each gradient
// the same float32 operations in the same order as those five layers
// (the gradient of x the product's share plus the quotient's, as the
// network adds a node's readers), without their four buffers.
type gelu struct {
	nm       string
	i        dims
	shape    []int
	div      float32
	x, y, dx []float32
}

func (l *gelu) name() string            { return l.nm }
func (l *gelu) in() dims                { return l.i }
func (l *gelu) out() dims               { return vecDims(l.i.size()) }
func (l *gelu) params() []*engine.Param { return nil }
func (l *gelu) tensorShape() []int      { return l.shape }
func (l *gelu) clone(gemm.Kernel) layer { return &gelu{nm: l.nm, i: l.i, shape: l.shape, div: l.div} }

func (l *gelu) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	y := grow(&l.y, len(x))
	c := l.div
	parallel(len(x), func(lo, hi int) { geluVec(y[lo:hi], x[lo:hi], c) })
	return y
}

func (l *gelu) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	x, c := l.x, l.div
	parallel(len(dy), func(lo, hi int) { geluGradVec(dx[lo:hi], dy[lo:hi], x[lo:hi], c) })
	return dx
}

// ---- Mean over a run of axes ----

type reduceMean struct {
	nm              string
	i               dims
	outer, d, inner int
	outS            []int
	y, dx           []float32
}

func (l *reduceMean) name() string            { return l.nm }
func (l *reduceMean) in() dims                { return l.i }
func (l *reduceMean) out() dims               { return vecDims(l.outer * l.inner) }
func (l *reduceMean) params() []*engine.Param { return nil }
func (l *reduceMean) tensorShape() []int      { return l.outS }
func (l *reduceMean) clone(gemm.Kernel) layer {
	c := *l
	c.y, c.dx = nil, nil
	return &c
}

func (l *reduceMean) forward(x []float32, n int, _ bool) []float32 {
	rows := n * l.outer
	d, in := l.d, l.inner
	y := grow(&l.y, rows*in)
	parallel(rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for i := range in {
				var s float64
				for j := range d {
					s += float64(x[(r*d+j)*in+i])
				}
				y[r*in+i] = float32(s / float64(d))
			}
		}
	})
	return y
}

func (l *reduceMean) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	rows := n * l.outer
	d, in := l.d, l.inner
	dx := grow(&l.dx, rows*d*in)
	inv := 1 / float32(d)
	parallel(rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for j := range d {
				for i := range in {
					dx[(r*d+j)*in+i] = dy[r*in+i] * inv
				}
			}
		}
	})
	return dx
}

// ---- A constant of every sample (a class token expanded over the batch) ----

// constant ignores its input (the network's, for an importer) and gives
// every sample the same values; its input's gradient is zero.
type constant struct {
	nm    string
	i     dims
	value []float32
	shape []int
	y, dx []float32
}

func (l *constant) name() string            { return l.nm }
func (l *constant) in() dims                { return l.i }
func (l *constant) out() dims               { return vecDims(len(l.value)) }
func (l *constant) params() []*engine.Param { return nil }
func (l *constant) tensorShape() []int      { return l.shape }
func (l *constant) clone(gemm.Kernel) layer {
	return &constant{nm: l.nm, i: l.i, value: l.value, shape: l.shape}
}

func (l *constant) forward(_ []float32, n int, _ bool) []float32 {
	y := grow(&l.y, n*len(l.value))
	fillRows(y, l.value, n)
	return y
}

func (l *constant) backward(_ []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, n*l.i.size())
	clear(dx)
	return dx
}

// ---- A linear map of every row (a token-wise Linear) ----

// rowLinear is a linear layer applied to each of a sample's rows (the
// last axis of its shape): its n samples are n·rows rows of one linear
// layer, whose parameters and names it keeps.
type rowLinear struct {
	*linear
	i     dims
	rows  int
	shape []int
}

func (l *rowLinear) in() dims           { return l.i }
func (l *rowLinear) out() dims          { return vecDims(l.rows * l.linear.o.c) }
func (l *rowLinear) tensorShape() []int { return l.shape }
func (l *rowLinear) clone(k gemm.Kernel) layer {
	return &rowLinear{linear: l.linear.clone(k).(*linear), i: l.i, rows: l.rows, shape: l.shape}
}
func (l *rowLinear) forward(x []float32, n int, train bool) []float32 {
	return l.linear.forward(x, n*l.rows, train)
}
func (l *rowLinear) backward(dy []float32, n int, needDX, paramGrad bool) []float32 {
	return l.linear.backward(dy, n*l.rows, needDX, paramGrad)
}
