package native

import (
	"fmt"
	"slices"

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
