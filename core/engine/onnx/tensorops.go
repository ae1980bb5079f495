package onnx

import (
	"fmt"
	"slices"

	"faithlab/core/engine/native"
)

// The tensor operators of several inputs or of constants: arithmetic,
// means, Gather, Slice, Concat, Expand; and the attention probabilities.

// constShape is constant c's ONNX dims aligned on the last axes of tensor
// t, per sample: the batch's axis must be 1 in c.
func constShape(c *constant, t tshape) ([]int, bool) {
	r := len(t.dims)
	if len(c.dims) > r {
		return nil, false
	}
	out := slices.Repeat([]int{1}, r)
	for i, d := range c.dims {
		k := i + r - len(c.dims)
		if k == t.b && d != 1 || d < 1 {
			return nil, false
		}
		out[k] = int(d)
	}
	return out, true
}

// tensorArithmetic reads Add, Sub, Mul, Div and Pow of tensors, or of a
// tensor and a constant, broadcasting.
func (im *importer) tensorArithmetic(n *node) error {
	if len(n.inputs) != 2 {
		return fmt.Errorf("node %q: %s of %d inputs", n.name, n.op, len(n.inputs))
	}
	fn := map[string]string{"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow"}[n.op]
	out := n.outputs[0]
	va, vb := im.vals[n.inputs[0]], im.vals[n.inputs[1]]
	if va.a != nil && vb.a != nil {
		a, s, err := im.tensorOf(n, 0)
		if err != nil {
			return err
		}
		b, t, err := im.tensorOf(n, 1)
		if err != nil {
			return err
		}
		if !sameBatch(s, t) {
			return fmt.Errorf("node %q: %s of %s and %s: the batch on other axes", n.name, n.op, shapeText(s.logical()), shapeText(t.logical()))
		}
		r := max(len(s.dims), len(t.dims))
		u := tshape{dims: make([]int, r), b: r - (len(s.dims) - s.b), pre: s.pre}
		for i := range r {
			p, q := 1, 1
			if k := i - (r - len(s.dims)); k >= 0 {
				p = s.dims[k]
			}
			if k := i - (r - len(t.dims)); k >= 0 {
				q = t.dims[k]
			}
			if p != q && p != 1 && q != 1 {
				return fmt.Errorf("node %q: %s of %s and %s: shapes that do not broadcast", n.name, n.op, shapeText(s.logical()), shapeText(t.logical()))
			}
			u.dims[i] = max(p, q)
		}
		if slices.Equal(s.dims, t.dims) && (fn == "add" || fn == "mul") {
			im.emitTensor(native.Layer{Op: fn, Name: im.name(n, fn, "")}, out, u, a, b)
			return nil
		}
		im.emitTensor(native.Layer{Op: "elementwise", Fn: fn, Name: im.name(n, fn, ""), Shape: s.dims, Shape2: t.dims}, out, u, a, b)
		return nil
	}
	k := 0 // the activation's input
	if va.a == nil {
		k = 1
	}
	a, t, err := im.tensorOf(n, k)
	if err != nil {
		return err
	}
	c := im.vals[n.inputs[1-k]].c
	if c == nil {
		return fmt.Errorf("node %q: %s of inputs %q and %q that no node before makes", n.name, n.op, n.inputs[0], n.inputs[1])
	}
	v, err := c.floats()
	cs, ok := constShape(c, t)
	if err != nil || !ok || len(v) != prodInts(cs) {
		return fmt.Errorf("node %q: %s of a tensor %s and a constant of shape %v that does not broadcast to it per sample", n.name, n.op, shapeText(t.logical()), c.dims)
	}
	for i, d := range cs {
		if d != 1 && d != t.dims[i] {
			return fmt.Errorf("node %q: %s of a tensor %s and a constant of shape %v that would grow it", n.name, n.op, shapeText(t.logical()), c.dims)
		}
	}
	last := len(cs) - 1
	if fn == "add" && prodInts(cs) == cs[last] && cs[last] == t.dims[last] && im.foldBias(a, n.inputs[k], v) {
		im.vals[out] = value{a: a}
		return nil
	}
	im.emitTensor(native.Layer{Op: "arith", Fn: fn, Swap: k == 1, Name: im.name(n, "arith", ""), Shape: t.dims, Value: v, ValueShape: cs}, out, t, a)
	return nil
}

// tensorMean reads a ReduceMean over a run of axes without the batch's.
func (im *importer) tensorMean(n *node) error {
	a, t, err := im.tensorOf(n, 0)
	if err != nil {
		return err
	}
	axes, err := im.list(n, "axes", 1, 18)
	if err != nil {
		return fmt.Errorf("node %q: axes: %w", n.name, err)
	}
	var set []int
	for _, v := range axes {
		k, err := axis(v, len(t.dims))
		if err != nil || k == t.b || slices.Contains(set, k) {
			return fmt.Errorf("node %q: ReduceMean over axes %v of %s: only axes without the batch's", n.name, axes, shapeText(t.logical()))
		}
		set = append(set, k)
	}
	slices.Sort(set)
	if len(set) == 0 || set[len(set)-1]-set[0] != len(set)-1 {
		return fmt.Errorf("node %q: ReduceMean over axes %v: only over a run of axes", n.name, axes)
	}
	lo, hi := set[0], set[len(set)-1]+1
	u := tshape{dims: slices.Clone(t.dims), b: t.b, pre: t.pre}
	for i := lo; i < hi; i++ {
		u.dims[i] = 1
	}
	if integer(n, "keepdims", 1) == 0 {
		u.dims = slices.Delete(u.dims, lo, hi)
		if t.b >= hi {
			u.b -= hi - lo
		}
	}
	im.emitTensor(native.Layer{Op: "reducemean", Name: im.name(n, "mean", ""), Shape: t.dims, Axis: lo, AxisEnd: hi}, n.outputs[0], u, a)
	return nil
}

// tensorGather reads a Gather of stored indices along an axis other than
// the batch's (the class token's row).
func (im *importer) tensorGather(n *node) error {
	a, t, err := im.tensorOf(n, 0)
	if err != nil {
		return err
	}
	k, err := axisOf(n, 0, t, "Gather")
	if err != nil {
		return err
	}
	c, err := im.constant(n, 1, "indices")
	if err != nil || c == nil {
		return fmt.Errorf("node %q: Gather without stored indices", n.name)
	}
	idx, err := c.integers()
	if err != nil || len(idx) == 0 || len(idx) != c.count() || len(idx) > maxFilled {
		return fmt.Errorf("node %q: Gather indices: want integers", n.name)
	}
	var index []int
	for _, j := range idx {
		if j < 0 {
			j += int64(t.dims[k])
		}
		if j < 0 || j >= int64(t.dims[k]) {
			return fmt.Errorf("node %q: Gather index %d of an axis of %d", n.name, j, t.dims[k])
		}
		index = append(index, int(j))
	}
	u := tshape{pre: t.pre, b: t.b}
	u.dims = append(u.dims, t.dims[:k]...)
	for _, d := range c.dims {
		u.dims = append(u.dims, int(d))
	}
	u.dims = append(u.dims, t.dims[k+1:]...)
	if k < t.b {
		u.b += len(c.dims) - 1
	}
	if len(u.dims) == 0 || len(u.dims) > 8 {
		return fmt.Errorf("node %q: Gather to rank %d", n.name, len(u.dims))
	}
	im.emitTensor(native.Layer{Op: "gather", Name: im.name(n, "gather", ""), Shape: t.dims, Axis: k, Index: index, OutShape: u.dims}, n.outputs[0], u, a)
	return nil
}

// tensorSlice reads a Slice of stored bounds that keeps the batch's axis whole.
func (im *importer) tensorSlice(n *node) error {
	a, t, err := im.tensorOf(n, 0)
	if err != nil {
		return err
	}
	in := make([]int64, len(t.dims))
	for i, d := range t.dims {
		in[i] = int64(d)
	}
	first, step, dims, err := im.sliced(n, in)
	if err != nil {
		return fmt.Errorf("node %q (Slice): %w", n.name, err)
	}
	if first[t.b] != 0 || step[t.b] != 1 || dims[t.b] != in[t.b] {
		return fmt.Errorf("node %q: Slice of the batch's axis", n.name)
	}
	l := native.Layer{Op: "slice", Name: im.name(n, "slice", ""), Shape: t.dims}
	u := tshape{b: t.b, pre: t.pre}
	for i := range dims {
		if dims[i] == 0 {
			return fmt.Errorf("node %q: a Slice of no values", n.name)
		}
		l.Begin, l.Steps, l.Count = append(l.Begin, int(first[i])), append(l.Steps, int(step[i])), append(l.Count, int(dims[i]))
		u.dims = append(u.dims, int(dims[i]))
	}
	if slices.Equal(u.dims, t.dims) {
		im.vals[n.outputs[0]] = value{a: a}
		return nil
	}
	im.emitTensor(l, n.outputs[0], u, a)
	return nil
}

// tensorConcat reads a Concat of tensors along an axis other than the batch's.
func (im *importer) tensorConcat(n *node) error {
	var acts []*act
	var shapes [][]int
	var first tshape
	for k := range n.inputs {
		a, t, err := im.tensorOf(n, k)
		if err != nil {
			return fmt.Errorf("node %q: Concat of tensors and constants: %w", n.name, err)
		}
		if k == 0 {
			first = t
		}
		if len(t.dims) != len(first.dims) || t.b != first.b || !sameBatch(t, first) {
			return fmt.Errorf("node %q: Concat of %s and %s", n.name, shapeText(first.logical()), shapeText(t.logical()))
		}
		acts, shapes = append(acts, a), append(shapes, t.dims)
	}
	k, err := axisOf(n, 0, first, "Concat")
	if err != nil {
		return err
	}
	u := tshape{dims: slices.Clone(first.dims), b: first.b, pre: first.pre}
	u.dims[k] = 0
	for _, s := range shapes {
		u.dims[k] += s[k]
	}
	if len(acts) == 1 {
		im.vals[n.outputs[0]] = value{a: acts[0]}
		return nil
	}
	im.emitTensor(native.Layer{Op: "join", Name: im.name(n, "concat", ""), Shapes: shapes, Axis: k}, n.outputs[0], u, acts...)
	return nil
}

// expandsOverBatch says whether an Expand's shape holds the batch size.
func (im *importer) expandsOverBatch(n *node) bool {
	if len(n.inputs) < 2 {
		return false
	}
	c := im.vals[n.inputs[1]].c
	v, err := c.integers()
	return err == nil && slices.ContainsFunc(v, isBatch)
}

// expand reads an Expand of a stored constant over the batch (the class
// token put before every sample's patches): a layer that gives every
// sample the constant, reading the network's input for nothing. The values
// count against the folding budget, as a folded constant's would.
func (im *importer) expand(n *node, input string) error {
	c, err := im.constant(n, 0, "input")
	if err != nil || c == nil {
		return fmt.Errorf("node %q: Expand of an activation is not supported", n.name)
	}
	sc, err := im.constant(n, 1, "shape")
	if err != nil || sc == nil {
		return fmt.Errorf("node %q: Expand to a shape Faithlab cannot compute at import", n.name)
	}
	target, err := sc.integers()
	if err != nil || len(target) == 0 || len(target) > 8 {
		return fmt.Errorf("node %q: Expand to shape %s", n.name, shapeText(target))
	}
	j := slices.IndexFunc(target, isBatch)
	plain := slices.Clone(target)
	if j >= 0 {
		plain[j] = batchFactor(target[j])
	}
	r := max(len(plain), len(c.dims))
	if j >= 0 {
		j += r - len(target)
		if k := j - (r - len(c.dims)); k >= 0 && c.dims[k] != 1 {
			return fmt.Errorf("node %q: Expand of a constant of shape %v over the batch", n.name, c.dims)
		}
	}
	dims, err := broadcastDims(c.dims, plain)
	if err != nil {
		return fmt.Errorf("node %q: Expand: %w", n.name, err)
	}
	v, err := im.input(n, 0)
	if err == nil && v.fl == nil {
		err = fmt.Errorf("integers")
	}
	if err != nil {
		return fmt.Errorf("node %q: Expand of %v: %w", n.name, c.dims, err)
	}
	k, err := im.room(dims)
	if err != nil {
		return fmt.Errorf("node %q (Expand) of a constant: %w", n.name, err)
	}
	if j < 0 {
		im.vals[n.outputs[0]] = value{c: expandValues(v, dims, k)}
		return nil
	}
	t := tshape{dims: make([]int, len(dims)), b: j, pre: 1}
	for i, d := range dims {
		t.dims[i] = int(d)
	}
	in := im.vals[input].a
	l := native.Layer{Op: "constant", Name: im.name(n, "constant", ""), Value: expandValues(v, dims, k).fl, Shape: t.dims}
	im.emitTensor(l, n.outputs[0], t, in)
	return nil
}

// markAttention marks the attention probabilities: a softmax whose input
// is a product of two activations (queries and keys), maybe scaled or
// masked by constants on the way, and whose output is the first factor of
// another (with the values).
func (im *importer) markAttention() {
	ls := im.g.Layers
	byName := map[string]int{}
	for i, l := range ls {
		byName[l.Name] = i
	}
	weighs := map[string]bool{}
	for _, l := range ls {
		if l.Op == "matmul" && len(l.In) == 2 {
			weighs[l.In[0]] = true
		}
	}
	for i := range ls {
		l := &ls[i]
		if l.Op != "softmax" || !weighs[l.Name] || len(l.In) != 1 {
			continue
		}
		src, ok := byName[l.In[0]]
		for ok && ls[src].Op == "arith" {
			src, ok = byName[ls[src].In[0]]
		}
		l.Attention = ok && ls[src].Op == "matmul"
	}
}
