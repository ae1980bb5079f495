package onnx

import (
	"errors"
	"fmt"
	"slices"

	"faithlab/core/engine/native"
)

// Tensors: the activations of a transformer, of any rank, where the batch
// may sit on any axis and share it with heads or tokens (torchvision's
// MultiheadAttention reshapes (T, N, E) to (T, N·heads, d)). Each sample's
// values are kept together, row-major over the ONNX dims with the batch
// taken out (tshape), so that moving the batch between axes moves nothing
// and the native tensor layers run on one sample at a time.

// tshape is a tensor activation's shape: ONNX's dims with the batch size
// divided out of axis b, whose dims[b] values per sample are pre outer
// ones, then the batch, then the rest (pre of dims[b]).
type tshape struct {
	dims   []int
	b, pre int
}

func (t tshape) size() int { return prodInts(t.dims) }

func prodInts(s []int) int {
	k := 1
	for _, d := range s {
		k *= d
	}
	return k
}

// logical is the ONNX shape, the batch axis as a multiple of the batch size.
func (t tshape) logical() []int64 {
	out := make([]int64, len(t.dims))
	for i, d := range t.dims {
		out[i] = int64(d)
	}
	out[t.b] = batched(int64(t.dims[t.b]))
	return out
}

// tensorOps lists the operators read as tensors when an activation is not
// a map or vector the layers of ops.go take.
var tensorOps = map[string]bool{"Reshape": true, "Flatten": true, "Transpose": true, "MatMul": true, "Gemm": true, "Softmax": true,
	"LayerNormalization": true, "Erf": true, "Sqrt": true, "Tanh": true, "Pow": true, "Gather": true, "Slice": true, "Concat": true,
	"Expand": true, "Add": true, "Sub": true, "Mul": true, "Div": true, "ReduceMean": true, "Squeeze": true, "Unsqueeze": true, "Shape": true}

// readsTensor says whether an input of n is a tensor activation.
func (im *importer) readsTensor(n *node) bool {
	for _, x := range n.inputs {
		if a := im.vals[x].a; a != nil && a.t != nil {
			return true
		}
	}
	return false
}

// emitTensor appends layer l making tensor t; a tensor that is a vector
// per sample, batch first, becomes one.
func (im *importer) emitTensor(l native.Layer, out string, t tshape, ins ...*act) {
	im.emit(l, out, shape{c: t.size(), h: 1, w: 1, flat: true}, ins...)
	im.vals[out] = value{a: asTensor(im.vals[out].a.layer, t)}
}

// asTensor is the activation of layer holding tensor t: a vector where t
// is (N, D).
func asTensor(layer string, t tshape) *act {
	a := &act{layer: layer, s: shape{c: t.size(), h: 1, w: 1, flat: true}}
	if !(len(t.dims) == 2 && t.b == 0 && t.dims[0] == 1) {
		a.t = &t
	}
	return a
}

// tensorOf returns node n's input k as a tensor: a vector as (N, D), a map
// (channels-last inside the network) permuted once to (N, C, H, W).
func (im *importer) tensorOf(n *node, k int) (*act, tshape, error) {
	a, err := im.act(n, k)
	if err != nil {
		return nil, tshape{}, err
	}
	switch {
	case a.t != nil:
		return a, *a.t, nil
	case a.s.flat:
		return a, tshape{dims: []int{1, a.s.c}, pre: 1}, nil
	}
	t := tshape{dims: []int{1, a.s.c, a.s.h, a.s.w}, pre: 1}
	if c, ok := im.chw[a.layer]; ok {
		return c, t, nil
	}
	l := native.Layer{Op: "permute", Name: im.name(n, "permute", ""), Shape: []int{a.s.h, a.s.w, a.s.c}, Perm: []int{2, 0, 1}}
	l.In = []string{a.layer}
	im.index[l.Name] = len(im.g.Layers)
	im.g.Layers = append(im.g.Layers, l)
	c := &act{layer: l.Name, s: shape{c: a.s.size(), h: 1, w: 1, flat: true}, t: &t}
	im.chw[a.layer] = c
	return c, t, nil
}

// tensorNode reads node n of tensors.
func (im *importer) tensorNode(n *node, input string) error {
	switch n.op {
	case "Reshape", "Flatten", "Squeeze", "Unsqueeze":
		return im.tensorReshape(n)
	case "Transpose":
		return im.tensorTranspose(n)
	case "Shape":
		_, t, err := im.tensorOf(n, 0)
		if err != nil {
			return err
		}
		out := t.logical()
		r := int64(len(out))
		lo, hi := integer(n, "start", 0), integer(n, "end", r)
		lo, hi = min(max(lo+r*b2i(lo < 0), 0), r), min(max(hi+r*b2i(hi < 0), 0), r)
		out = out[lo:max(lo, hi)]
		im.vals[n.outputs[0]] = value{c: &constant{dims: []int64{int64(len(out))}, ints: out}}
		return nil
	case "MatMul", "Gemm":
		if v := im.vals[n.inputs[1]]; v.c != nil {
			return im.linear(n)
		}
		return im.batchedMatMul(n)
	case "Softmax":
		return im.tensorSoftmax(n)
	case "LayerNormalization":
		return im.layerNorm(n)
	case "Erf", "Sqrt", "Tanh":
		a, t, err := im.tensorOf(n, 0)
		if err != nil {
			return err
		}
		op := map[string]string{"Erf": "erf", "Sqrt": "sqrt", "Tanh": "tanh"}[n.op]
		im.emitTensor(native.Layer{Op: op, Name: im.name(n, op, ""), Shape: t.dims}, n.outputs[0], t, a)
		return nil
	case "Add", "Sub", "Mul", "Div", "Pow":
		return im.tensorArithmetic(n)
	case "ReduceMean":
		return im.tensorMean(n)
	case "Gather":
		return im.tensorGather(n)
	case "Slice":
		return im.tensorSlice(n)
	case "Concat":
		return im.tensorConcat(n)
	case "Expand":
		return im.expand(n, input)
	}
	return fmt.Errorf("node %q: %s of a tensor of rank > 2 is not supported", n.name, n.op)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// axisOf normalises node n's axis attribute (default def) for rank r and
// refuses the batch's axis.
func axisOf(n *node, def int64, t tshape, what string) (int, error) {
	a, err := axis(integer(n, "axis", def), len(t.dims))
	if err == nil && a == t.b {
		err = fmt.Errorf("%s along the batch's axis %d", what, a)
	}
	if err != nil {
		return 0, fmt.Errorf("node %q (%s): %w", n.name, n.op, err)
	}
	return a, nil
}

// tensorReshape reads Reshape, Flatten, Squeeze and Unsqueeze of a tensor:
// a new view of the same values, no layer, where the batch keeps its place
// among them (as every exporter's reshape of a model that treats samples
// apart does).
func (im *importer) tensorReshape(n *node) error {
	a, t, err := im.tensorOf(n, 0)
	if err != nil {
		return err
	}
	in := t.logical()
	var target []int64
	switch n.op {
	case "Reshape":
		c, err := im.constant(n, 1, "shape")
		if err != nil || c == nil {
			return fmt.Errorf("node %q: Reshape to a shape Faithlab cannot compute at import", n.name)
		}
		if target, err = c.integers(); err != nil {
			return fmt.Errorf("node %q: shape: %w", n.name, err)
		}
		target = slices.Clone(target)
		for i, d := range target {
			if d == 0 && i < len(in) && integer(n, "allowzero", 0) == 0 {
				target[i] = in[i]
			}
		}
	case "Flatten":
		k, err := axis(integer(n, "axis", 1), len(in)+1)
		if err != nil {
			return fmt.Errorf("node %q: %w", n.name, err)
		}
		target = []int64{1, 1}
		for i, d := range in {
			target[b2i(i >= k)] *= int64(max(d, 1))
		}
		target[b2i(t.b >= k)] = -1
	default:
		placeholder := slices.Clone(in)
		placeholder[t.b] = batchSize
		dims, err := im.squeezed(n, placeholder)
		if err != nil {
			return fmt.Errorf("node %q (%s): %w", n.name, n.op, err)
		}
		target = dims
		if j := slices.Index(dims, batchSize); j >= 0 {
			target[j] = in[t.b]
		}
	}
	u, err := reshaped(t, target)
	if err != nil {
		return fmt.Errorf("node %q: %s of %s to %s: %w", n.name, n.op, shapeText(in), shapeText(target), err)
	}
	im.vals[n.outputs[0]] = value{a: asTensor(a.layer, u)}
	return nil
}

// reshaped is tensor t under the ONNX shape target (a multiple of the
// batch size or −1 on the batch's new axis): the batch must keep as many
// values before it.
func reshaped(t tshape, target []int64) (tshape, error) {
	if len(target) == 0 || len(target) > 8 {
		return t, errors.New("want 1 to 8 dimensions")
	}
	size := int64(t.size())
	j, infer, known := -1, -1, int64(1)
	var factor int64
	for i, d := range target {
		switch f := batchFactor(d); {
		case f > 0 && j < 0:
			j, factor = i, f
		case d == -1 && infer < 0:
			infer = i
		case d <= 0:
			return t, errors.New("a dimension that is neither a size, the batch's nor one −1")
		default:
			known *= d
			if known > size {
				return t, errors.New("more values than the tensor holds")
			}
		}
	}
	dims := make([]int, len(target))
	for i, d := range target {
		dims[i] = int(d)
	}
	switch {
	case j >= 0 && infer >= 0:
		if size%(known*factor) != 0 {
			return t, errors.New("sizes that do not divide")
		}
		dims[infer], dims[j] = int(size/(known*factor)), int(factor)
	case j >= 0:
		dims[j] = int(factor)
	case infer >= 0:
		j = infer
		dims[j] = int(size / known)
	default:
		return t, errors.New("no axis for the batch")
	}
	if int64(prodInts(dims)) != size {
		return t, errors.New("another count of values")
	}
	before := prodInts(t.dims[:t.b]) * t.pre
	q := prodInts(dims[:j])
	if before%q != 0 || dims[j]%(before/q) != 0 {
		return t, errors.New("the batch would move among the values: only reshapes that keep each sample's values apart are supported")
	}
	return tshape{dims: dims, b: j, pre: before / q}, nil
}

// tensorTranspose reads a Transpose: no layer where the axes of more than
// one value keep their order, a permute otherwise.
func (im *importer) tensorTranspose(n *node) error {
	a, t, err := im.tensorOf(n, 0)
	if err != nil {
		return err
	}
	r := len(t.dims)
	perm := ints(n, "perm")
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != r {
		return fmt.Errorf("node %q: Transpose perm %v of a tensor of rank %d", n.name, perm, r)
	}
	u := tshape{dims: make([]int, r), pre: t.pre}
	p, seen, last, moves := make([]int, r), make([]bool, r), -1, false
	for i, v := range perm {
		if v < 0 || v >= int64(r) || seen[v] {
			return fmt.Errorf("node %q: Transpose perm %v", n.name, perm)
		}
		seen[v], p[i] = true, int(v)
		u.dims[i] = t.dims[v]
		if int(v) == t.b {
			u.b = i
		}
		if t.dims[v] > 1 {
			moves = moves || int(v) < last
			last = int(v)
		}
	}
	if !moves {
		im.vals[n.outputs[0]] = value{a: asTensor(a.layer, u)}
		return nil
	}
	im.emitTensor(native.Layer{Op: "permute", Name: im.name(n, "permute", ""), Shape: t.dims, Perm: p}, n.outputs[0], u, a)
	return nil
}

// sameBatch checks that tensors s and t, aligned on their last axes, hold
// the batch on one axis, in one place among its values.
func sameBatch(s, t tshape) bool {
	return len(s.dims)-s.b == len(t.dims)-t.b && s.pre == t.pre && s.dims[s.b] == t.dims[t.b]
}

// batchedMatMul reads a MatMul of two activations (attention's query–key
// and probability–value products).
func (im *importer) batchedMatMul(n *node) error {
	a, s, err := im.tensorOf(n, 0)
	if err != nil {
		return err
	}
	b, t, err := im.tensorOf(n, 1)
	if err != nil {
		return err
	}
	ra, rb := len(s.dims), len(t.dims)
	if ra < 3 || rb < 3 || s.b >= ra-2 || t.b >= rb-2 || !sameBatch(s, t) {
		return fmt.Errorf("node %q: MatMul of %s and %s: only products of matrices batched over leading axes that hold the batch are supported", n.name, shapeText(s.logical()), shapeText(t.logical()))
	}
	r := max(ra, rb)
	u := tshape{dims: make([]int, r-2), b: r - (ra - s.b), pre: s.pre}
	for i := range r - 2 {
		p, q := 1, 1
		if k := i - (r - ra); k >= 0 {
			p = s.dims[k]
		}
		if k := i - (r - rb); k >= 0 {
			q = t.dims[k]
		}
		if p != q && p != 1 && q != 1 {
			return fmt.Errorf("node %q: MatMul of %s and %s: leading axes that do not broadcast", n.name, shapeText(s.logical()), shapeText(t.logical()))
		}
		u.dims[i] = max(p, q)
	}
	u.dims = append(u.dims, s.dims[ra-2], t.dims[rb-1])
	if s.dims[ra-1] != t.dims[rb-2] {
		return fmt.Errorf("node %q: MatMul of %s and %s", n.name, shapeText(s.logical()), shapeText(t.logical()))
	}
	im.emitTensor(native.Layer{Op: "matmul", Name: im.name(n, "matmul", ""), Shape: s.dims, Shape2: t.dims}, n.outputs[0], u, a, b)
	return nil
}

// tensorSoftmax reads a Softmax inside the graph (a final one is left out:
// ops.go), along one axis from opset 13, along the last before.
func (im *importer) tensorSoftmax(n *node) error {
	a, t, err := im.tensorOf(n, 0)
	if err != nil {
		return err
	}
	k, err := axisOf(n, -1, t, "Softmax")
	if err != nil {
		return err
	}
	if im.opset < 13 && k != len(t.dims)-1 {
		if k, err = axisOf(n, 1, t, "Softmax"); err == nil && k != len(t.dims)-1 {
			err = fmt.Errorf("node %q: Softmax before opset 13 is supported along the last axis only", n.name)
		}
		if err != nil {
			return err
		}
	}
	im.emitTensor(native.Layer{Op: "softmax", Name: im.name(n, "softmax", ""), Shape: t.dims, Axis: k}, n.outputs[0], t, a)
	return nil
}

// layerNorm reads LayerNormalization (opset 17) over the axes from its
// axis on, with its stored scale and bias.
func (im *importer) layerNorm(n *node) error {
	a, t, err := im.tensorOf(n, 0)
	if err != nil {
		return err
	}
	k, err := axisOf(n, -1, t, "LayerNormalization")
	if err != nil {
		return err
	}
	if k < t.b || len(n.outputs) > 1 && slices.ContainsFunc(n.outputs[1:], func(o string) bool { return o != "" && im.readers[o] > 0 }) {
		return fmt.Errorf("node %q: LayerNormalization over the batch's axis, or with its mean and deviation used", n.name)
	}
	d := prodInts(t.dims[k:])
	sc, scale, err := im.weight(n, 1, "scale")
	if err != nil {
		return err
	}
	bias := make([]float32, d)
	if len(n.inputs) > 2 && n.inputs[2] != "" {
		if _, bias, err = im.weight(n, 2, "bias"); err != nil {
			return err
		}
	}
	if len(scale) != d || len(bias) != d {
		return fmt.Errorf("node %q: LayerNormalization of %d values with %d scales and %d biases", n.name, d, len(scale), len(bias))
	}
	eps := float(n, "epsilon", 1e-5)
	if !(eps > 0) {
		return fmt.Errorf("node %q: LayerNormalization with epsilon %g", n.name, eps)
	}
	nm := im.name(n, "layernorm", tensorName(sc))
	im.g.Weights[nm+".weight"], im.g.Weights[nm+".bias"] = scale, bias
	im.emitTensor(native.Layer{Op: "layernorm", Name: nm, Shape: t.dims, Axis: k, Eps: eps}, n.outputs[0], t, a)
	return nil
}
