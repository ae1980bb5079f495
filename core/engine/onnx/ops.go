package onnx

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"faithlab/core/engine/native"
)

// node reads one node of the graph into layers, or into values known at
// import (constants, shapes, aliases).
func (im *importer) node(n *node, input string) error {
	out := n.outputs[0]
	if x, ok := im.silu[n]; ok {
		a := im.vals[x].a
		if a == nil {
			return fmt.Errorf("node %q: SiLU of a constant", n.name)
		}
		im.emit(native.Layer{Op: "silu", Name: im.name(n, "silu", "")}, out, a.s, a)
		return nil
	}
	if n.op == "Expand" && im.allConstant(n) && im.expandsOverBatch(n) {
		return im.expand(n, input)
	}
	if foldable[n.op] && im.allConstant(n) {
		return im.fold(n)
	}
	switch n.op {
	case "Identity", "Dropout", "Cast":
		return im.alias(n)
	}
	if tensorOps[n.op] && im.readsTensor(n) && !(n.op == "Softmax" && out == im.out) {
		return im.tensorNode(n, input)
	}
	err := im.mapNode(n, input)
	if err == nil || !tensorOps[n.op] {
		return err
	}
	// What the layers of maps and vectors refuse may read as tensors.
	if terr := im.tensorNode(n, input); terr != nil {
		return fmt.Errorf("%w; as tensors: %s", err, strings.TrimPrefix(terr.Error(), fmt.Sprintf("node %q", n.name)))
	}
	return nil
}

// mapNode reads node n of maps and vectors into the layers of package
// native's classifiers.
func (im *importer) mapNode(n *node, input string) error {
	out := n.outputs[0]
	switch n.op {
	case "Constant":
		return im.constantNode(n)
	case "Identity", "Dropout", "Cast":
		return im.alias(n)
	case "Softmax", "LogSoftmax":
		if out != im.out {
			return fmt.Errorf("node %q: %s is supported only as the last node (it is left out: methods explain the logits)", n.name, n.op)
		}
		if _, err := im.act(n, 0); err != nil {
			return err
		}
		im.g.DroppedSoftmax = n.op
		im.vals[out] = im.vals[n.inputs[0]]
		return nil
	case "Transpose":
		a, err := im.act(n, 0)
		if err != nil {
			return err
		}
		if n.inputs[0] != input || a.s.flat || im.readers[input] != 1 || !slices.Equal(ints(n, "perm"), []int64{0, 3, 1, 2}) {
			return fmt.Errorf("node %q: Transpose is supported only as the first node, from channels-last input to channels-first (perm 0,3,1,2)", n.name)
		}
		// The declared input is (N, H, W, C): Faithlab's data is (N, C, H, W).
		im.vals[out] = value{a: &act{s: shape{c: a.s.w, h: a.s.c, w: a.s.h}}}
		im.g.NHWC = true
		return nil
	case "Conv":
		return im.conv(n)
	case "Gemm", "MatMul":
		return im.linear(n)
	case "BatchNormalization":
		return im.batchNorm(n)
	case "Relu", "Sigmoid", "HardSigmoid", "HardSwish", "LeakyRelu", "Clip":
		return im.pointwise(n)
	case "MaxPool", "AveragePool":
		return im.pool(n)
	case "GlobalAveragePool", "ReduceMean":
		return im.globalPool(n)
	case "Add", "Sub", "Mul", "Div":
		return im.arithmetic(n)
	case "Concat":
		return im.concat(n)
	case "Pad":
		return im.pad(n)
	case "Flatten", "Reshape", "Squeeze", "Unsqueeze":
		return im.reshape(n)
	case "Shape":
		return im.shapeOf(n)
	}
	return fmt.Errorf("node %q: operator %s is not supported (supported: %s)", n.name, n.op, strings.Join(Supported, ", "))
}

// alias makes a node's output its input: Identity, Dropout (evaluation),
// a Cast of a constant or to float.
func (im *importer) alias(n *node) error {
	if len(n.inputs) == 0 || n.inputs[0] == "" {
		return fmt.Errorf("node %q (%s): no input", n.name, n.op)
	}
	v := im.vals[n.inputs[0]]
	if n.op == "Dropout" && len(n.outputs) > 1 && im.readers[n.outputs[1]] > 0 {
		return fmt.Errorf("node %q: a Dropout whose mask is used", n.name)
	}
	if n.op == "Cast" && v.a != nil && integer(n, "to", 0) != typeFloat {
		return fmt.Errorf("node %q: Cast of an activation to type %d (only float32)", n.name, integer(n, "to", 0))
	}
	im.vals[n.outputs[0]] = v
	return nil
}

// constantNode reads a Constant node's value.
func (im *importer) constantNode(n *node) error {
	c := &constant{}
	switch {
	case n.attrs["value"].t != nil:
		c.t = n.attrs["value"].t
		c.dims = c.t.dims
	case n.attrs["value_int"].set:
		c.ints = []int64{n.attrs["value_int"].i}
	case n.attrs["value_ints"].set:
		c.ints = slices.Clone(n.attrs["value_ints"].ints)
		c.dims = []int64{int64(len(c.ints))}
	case n.attrs["value_float"].set:
		c.t = &tensor{dataType: typeFloat, floats: []float32{n.attrs["value_float"].f}}
	default:
		return fmt.Errorf("node %q: a Constant of a kind Faithlab does not read (a tensor, value_int(s) or value_float)", n.name)
	}
	im.vals[n.outputs[0]] = value{c: c}
	return nil
}

// window reads a convolution's or pool's kernel_shape, strides, dilations,
// pads and auto_pad for a map of h×w: the window and the output's height
// and width.
func (im *importer) window(n *node, kh, kw int64, s shape, ceil bool) (native.Layer, int, int, error) {
	var l native.Layer
	fail := func(format string, a ...any) (native.Layer, int, int, error) {
		return l, 0, 0, fmt.Errorf("node %q (%s): %s", n.name, n.op, fmt.Sprintf(format, a...))
	}
	if ks := ints(n, "kernel_shape"); ks != nil && !slices.Equal(ks, []int64{kh, kw}) {
		return fail("kernel_shape %v, weights of %d×%d", ks, kh, kw)
	}
	strides := ints(n, "strides", 1, 1)
	dil := ints(n, "dilations", 1, 1)
	pads := ints(n, "pads", 0, 0, 0, 0)
	if len(strides) != 2 || len(dil) != 2 || len(pads) != 4 || min(strides[0], strides[1], dil[0], dil[1]) < 1 || slices.Min(pads) < 0 ||
		max(strides[0], strides[1], dil[0], dil[1], kh, kw) > 1<<16 || slices.Max(pads) > 1<<16 {
		return fail("strides %v, dilations %v, pads %v: want two positive strides and dilations, four pads", strides, dil, pads)
	}
	spanH, spanW := (kh-1)*dil[0]+1, (kw-1)*dil[1]+1
	switch a := n.attrs["auto_pad"]; string(a.s) {
	case "", "NOTSET":
	case "VALID":
		pads = []int64{0, 0, 0, 0}
	case "SAME_UPPER", "SAME_LOWER":
		pads = make([]int64, 4)
		for i, d := range []struct{ in, s, span int64 }{{int64(s.h), strides[0], spanH}, {int64(s.w), strides[1], spanW}} {
			total := max(((d.in+d.s-1)/d.s-1)*d.s+d.span-d.in, 0)
			small, big := total/2, total-total/2
			if string(a.s) == "SAME_LOWER" {
				small, big = big, small
			}
			pads[i], pads[i+2] = small, big
		}
	default:
		return fail("auto_pad %q", a.s)
	}
	if max(pads[0], pads[2]) >= spanH || max(pads[1], pads[3]) >= spanW {
		return fail("pads %v as large as the %d×%d window: not supported", pads, spanH, spanW)
	}
	l.Kernel = [2]int{int(kh), int(kw)}
	l.Stride = [2]int{int(strides[0]), int(strides[1])}
	l.Dilation = [2]int{int(dil[0]), int(dil[1])}
	l.Pad = [4]int{int(pads[0]), int(pads[1]), int(pads[2]), int(pads[3])}
	l.CeilMode = ceil
	oh := outSize(s.h, int(spanH), l.Stride[0], l.Pad[0], l.Pad[2], ceil)
	ow := outSize(s.w, int(spanW), l.Stride[1], l.Pad[1], l.Pad[3], ceil)
	if oh <= 0 || ow <= 0 {
		return fail("a %d×%d window on a %d×%d map", spanH, spanW, s.h, s.w)
	}
	return l, oh, ow, nil
}

// outSize is PyTorch's output length of a window of span k at stride s
// over in values padded by a and b (native's rule; 0 where none fits).
func outSize(in, k, s, a, b int, ceil bool) int {
	num := in + a + b - k
	if num < 0 {
		return 0
	}
	if ceil {
		num += s - 1
	}
	out := num/s + 1
	if ceil && (out-1)*s >= in+a {
		out--
	}
	return out
}

func (im *importer) conv(n *node) error {
	x, err := im.image(n, 0)
	if err != nil {
		return err
	}
	wc, w, err := im.weight(n, 1, "weight")
	if err != nil {
		return err
	}
	g := integer(n, "group", 1)
	d := wc.dims
	if len(d) != 4 || g < 1 || d[1]*g != int64(x.s.c) || d[0]%g != 0 || d[0] < 1 {
		return fmt.Errorf("node %q: Conv weight of shape %v in %d groups on %d channels: want (out, %d/groups, kh, kw)", n.name, d, g, x.s.c, x.s.c)
	}
	l, oh, ow, err := im.window(n, d[2], d[3], x.s, false)
	if err != nil {
		return err
	}
	l.Op, l.Out, l.Groups = "conv", int(d[0]), int(g)
	if cols := int64(oh*ow) * d[1] * d[2] * d[3] * g; cols > 4*maxActivation {
		return fmt.Errorf("node %q: Conv of %d×%d windows of %d channels over a %d×%d map: more than Faithlab lays out for one layer", n.name, d[2], d[3], x.s.c, oh, ow)
	}
	l.Name = im.name(n, "conv", tensorName(wc))
	im.g.Weights[l.Name+".weight"] = w
	if len(n.inputs) > 2 && n.inputs[2] != "" {
		_, b, err := im.weight(n, 2, "bias")
		if err != nil {
			return err
		}
		if len(b) != l.Out {
			return fmt.Errorf("node %q: Conv bias of %d values for %d channels", n.name, len(b), l.Out)
		}
		im.g.Weights[l.Name+".bias"] = b
	} else {
		l.NoBias = true
	}
	im.emit(l, n.outputs[0], shape{c: l.Out, h: oh, w: ow}, x)
	return nil
}

func tensorName(c *constant) string {
	if c.t != nil {
		return c.t.name
	}
	return ""
}

// linear reads Gemm (y = α·x·Wᵀ + β·b, or x·W) and MatMul (x·W, its bias
// an Add after it: see arithmetic) into a linear layer.
func (im *importer) linear(n *node) error {
	x, err := im.act(n, 0)
	if err != nil {
		return err
	}
	t := x.t // a tensor: the layer maps each row (its last axis)
	if t != nil && (t.b == len(t.dims)-1 || n.op == "Gemm" && len(t.dims) != 2) {
		return fmt.Errorf("node %q: %s of a tensor %s: only along its last axis, without the batch", n.name, n.op, shapeText(t.logical()))
	}
	if !x.s.flat {
		return fmt.Errorf("node %q: %s of a %d×%d×%d map: flatten it first", n.name, n.op, x.s.c, x.s.h, x.s.w)
	}
	width := x.s.c
	if t != nil {
		width = t.dims[len(t.dims)-1]
	}
	wc, w, err := im.weight(n, 1, "weight")
	if err != nil {
		return err
	}
	if len(wc.dims) != 2 {
		return fmt.Errorf("node %q: %s weight of shape %v: want a matrix", n.name, n.op, wc.dims)
	}
	alpha, beta := float32(1), float32(1)
	transB := n.op == "MatMul" || integer(n, "transB", 0) == 0
	if n.op == "Gemm" {
		if integer(n, "transA", 0) != 0 {
			return fmt.Errorf("node %q: Gemm with transA is not supported", n.name)
		}
		alpha, beta = float(n, "alpha", 1), float(n, "beta", 1)
	}
	in, out := int(wc.dims[1]), int(wc.dims[0]) // W is (out, in) under transB
	if transB {
		in, out = out, in
		tw := make([]float32, len(w))
		for i := range in {
			for o := range out {
				tw[o*in+i] = w[i*out+o]
			}
		}
		w = tw
	} else if alpha != 1 {
		w = slices.Clone(w)
	}
	if in != width {
		return fmt.Errorf("node %q: %s weight of shape %v on %d inputs", n.name, n.op, wc.dims, width)
	}
	if alpha != 1 {
		for i := range w {
			w[i] *= alpha
		}
	}
	nm := im.name(n, "linear", tensorName(wc))
	bias := make([]float32, out)
	if n.op == "Gemm" && len(n.inputs) > 2 && n.inputs[2] != "" {
		bc, b, err := im.weight(n, 2, "bias")
		if err != nil {
			return err
		}
		if len(bc.dims) > 2 || len(b) != out && len(b) != 1 {
			return fmt.Errorf("node %q: bias of shape %v for %d outputs", n.name, bc.dims, out)
		}
		for i := range bias {
			bias[i] = beta * b[i%len(b)]
		}
	}
	im.g.Weights[nm+".weight"] = w
	im.g.Weights[nm+".bias"] = bias
	if t != nil {
		u := tshape{dims: slices.Clone(t.dims), b: t.b, pre: t.pre}
		u.dims[len(u.dims)-1] = out
		im.emitTensor(native.Layer{Op: "linear", Name: nm, Out: out, Shape: t.dims}, n.outputs[0], u, x)
		return nil
	}
	im.emit(native.Layer{Op: "linear", Name: nm, Out: out}, n.outputs[0], shape{c: out, h: 1, w: 1, flat: true}, x)
	return nil
}

func (im *importer) batchNorm(n *node) error {
	x, err := im.act(n, 0)
	if err != nil {
		return err
	}
	eps := float(n, "epsilon", 1e-5)
	if !(eps > 0) || integer(n, "training_mode", 0) != 0 || slices.ContainsFunc(n.outputs[1:], func(o string) bool { return im.readers[o] > 0 }) {
		return fmt.Errorf("node %q: BatchNormalization in training mode or with epsilon %g is not supported (export the model in eval mode)", n.name, eps)
	}
	var vals [4][]float32
	var scale *constant
	for i, what := range []string{"scale", "bias", "mean", "variance"} {
		c, v, err := im.weight(n, i+1, what)
		if err != nil {
			return err
		}
		if len(v) != x.s.c {
			return fmt.Errorf("node %q: BatchNormalization %s of shape %v for %d channels", n.name, what, c.dims, x.s.c)
		}
		if i == 0 {
			scale = c
		}
		vals[i] = v
	}
	for _, v := range vals[3] {
		if v < 0 {
			return fmt.Errorf("node %q: BatchNormalization variance %g", n.name, v)
		}
	}
	nm := im.name(n, "bn", tensorName(scale))
	for i, suffix := range []string{".weight", ".bias", ".running_mean", ".running_var"} {
		im.g.Weights[nm+suffix] = vals[i]
	}
	im.emit(native.Layer{Op: "batchnorm", Name: nm, Eps: eps}, n.outputs[0], x.s, x)
	return nil
}

// pointwise reads the elementwise nonlinearities.
func (im *importer) pointwise(n *node) error {
	x, err := im.act(n, 0)
	if err != nil {
		return err
	}
	l := native.Layer{Op: strings.ToLower(n.op)}
	switch n.op {
	case "HardSigmoid":
		l.Alpha, l.Beta = float(n, "alpha", 0.2), float(n, "beta", 0.5)
	case "LeakyRelu":
		l.Alpha = float(n, "alpha", 0.01)
	case "Clip":
		lo, hi := float(n, "min", -math.MaxFloat32), float(n, "max", math.MaxFloat32)
		if im.opset >= 11 {
			lo, hi = -math.MaxFloat32, math.MaxFloat32
			for k, bound := range []*float32{&lo, &hi} {
				c, err := im.constant(n, k+1, "bound")
				if err != nil || c == nil {
					if err != nil {
						return err
					}
					continue
				}
				v, err := c.floats()
				if err != nil || len(v) != 1 {
					return fmt.Errorf("node %q: Clip bound %q: want one value", n.name, n.inputs[k+1])
				}
				*bound = v[0]
			}
		}
		if !(lo < hi) {
			return fmt.Errorf("node %q: Clip to [%g, %g]", n.name, lo, hi)
		}
		l.Alpha, l.Beta = lo, hi
		if lo == 0 && hi == math.MaxFloat32 {
			l.Op = "relu"
		}
	}
	l.Name = im.name(n, l.Op, "")
	im.emit(l, n.outputs[0], x.s, x)
	return nil
}

func (im *importer) pool(n *node) error {
	x, err := im.image(n, 0)
	if err != nil {
		return err
	}
	if len(n.outputs) > 1 && im.readers[n.outputs[1]] > 0 {
		return fmt.Errorf("node %q: MaxPool's indices output is not supported", n.name)
	}
	ks := ints(n, "kernel_shape")
	if len(ks) != 2 || min(ks[0], ks[1]) < 1 {
		return fmt.Errorf("node %q: %s kernel_shape %v: want a height and a width", n.name, n.op, ks)
	}
	l, oh, ow, err := im.window(n, ks[0], ks[1], x.s, integer(n, "ceil_mode", 0) != 0)
	if err != nil {
		return err
	}
	l.Op = "maxpool"
	kind := "pool"
	if n.op == "AveragePool" {
		l.Op, kind = "avgpool", "avgpool"
		l.CountPad = integer(n, "count_include_pad", 0) != 0
		if l.Dilation != [2]int{1, 1} {
			return fmt.Errorf("node %q: dilated AveragePool is not supported", n.name)
		}
	}
	l.Name = im.name(n, kind, "")
	im.emit(l, n.outputs[0], shape{c: x.s.c, h: oh, w: ow}, x)
	return nil
}

// globalPool reads GlobalAveragePool and a ReduceMean over height and width.
func (im *importer) globalPool(n *node) error {
	x, err := im.image(n, 0)
	if err != nil {
		return err
	}
	s := shape{c: x.s.c, h: 1, w: 1}
	if n.op == "ReduceMean" {
		axes := ints(n, "axes")
		if im.opset >= 18 {
			c, err := im.constant(n, 1, "axes")
			if err != nil {
				return err
			}
			if c != nil {
				if axes, err = c.integers(); err != nil {
					return fmt.Errorf("node %q: axes: %w", n.name, err)
				}
			}
		}
		var set []int64
		for _, a := range axes {
			if a < 0 {
				a += 4
			}
			set = append(set, a)
		}
		slices.Sort(set)
		if !slices.Equal(set, []int64{2, 3}) {
			return fmt.Errorf("node %q: ReduceMean over axes %v: only over height and width (2, 3) is supported", n.name, axes)
		}
		s.flat = integer(n, "keepdims", 1) == 0
	}
	im.emit(native.Layer{Op: "globalavgpool", Name: im.name(n, "avgpool", "")}, n.outputs[0], s, x)
	return nil
}

// perChannel returns constant c as one value per channel of s: a scalar,
// or (C), (1, C) for vectors and (C, 1, 1), (1, C, 1, 1) for maps.
func perChannel(c *constant, s shape) ([]float32, bool) {
	v, err := c.floats()
	if err != nil || len(v) != c.count() {
		return nil, false
	}
	if len(v) == 1 {
		out := make([]float32, s.c)
		for i := range out {
			out[i] = v[0]
		}
		return out, true
	}
	d := slices.Clone(c.dims)
	for len(d) > 0 && d[0] == 1 && len(d) > 1 {
		d = d[1:]
	}
	if len(v) != s.c || s.flat && len(d) != 1 || !s.flat && !slices.Equal(d, []int64{int64(s.c), 1, 1}) {
		return nil, false
	}
	return v, true
}

// arithmetic reads Add, Sub, Mul and Div: of two activations (a residual
// sum, a gate), of an activation and a per-channel constant (an affine
// map, or a bias folded into the layer before), or of two integer
// constants (shapes).
func (im *importer) arithmetic(n *node) error {
	if len(n.inputs) != 2 {
		return fmt.Errorf("node %q: %s of %d inputs", n.name, n.op, len(n.inputs))
	}
	va, vb := im.vals[n.inputs[0]], im.vals[n.inputs[1]]
	out := n.outputs[0]
	switch {
	case va.a != nil && vb.a != nil:
		a, b := va.a, vb.a
		switch n.op {
		case "Add":
			if a.s != b.s {
				return fmt.Errorf("node %q: Add of shapes %v and %v: only activations of one shape are added", n.name, a.s, b.s)
			}
			im.emit(native.Layer{Op: "add", Name: im.name(n, "add", "")}, out, a.s, a, b)
			return nil
		case "Mul":
			gate := func(s shape) bool { return !s.flat && s.h == 1 && s.w == 1 }
			if b.s != a.s && gate(a.s) {
				a, b = b, a
			}
			if a.s != b.s && (!gate(b.s) || a.s.flat || a.s.c != b.s.c) {
				return fmt.Errorf("node %q: Mul of shapes %v and %v: only of one shape, or of a map and one value per channel", n.name, a.s, b.s)
			}
			im.emit(native.Layer{Op: "mul", Name: im.name(n, "mul", "")}, out, a.s, a, b)
			return nil
		}
		return fmt.Errorf("node %q: %s of two activations is not supported", n.name, n.op)
	}
	k := 0 // the activation's input
	if va.a == nil {
		k = 1
	}
	a, c := im.vals[n.inputs[k]].a, im.vals[n.inputs[1-k]].c
	if a == nil || c == nil {
		return fmt.Errorf("node %q: %s of inputs %q and %q that no node before makes", n.name, n.op, n.inputs[0], n.inputs[1])
	}
	v, ok := perChannel(c, a.s)
	if !ok {
		return fmt.Errorf("node %q: %s of an activation of shape %v and a constant of shape %v: only a scalar or one value per channel is supported", n.name, n.op, a.s, c.dims)
	}
	scale, shift := make([]float32, len(v)), make([]float32, len(v))
	for i, x := range v {
		switch {
		case n.op == "Add":
			scale[i], shift[i] = 1, x
		case n.op == "Sub" && k == 0:
			scale[i], shift[i] = 1, -x
		case n.op == "Sub":
			scale[i], shift[i] = -1, x
		case n.op == "Mul":
			scale[i] = x
		case n.op == "Div" && k == 0 && x != 0:
			scale[i] = 1 / x
		default:
			return fmt.Errorf("node %q: %s of a constant by an activation, or by zero, is not supported", n.name, n.op)
		}
	}
	if (n.op == "Add" || n.op == "Sub" && k == 0) && im.foldBias(a, n.inputs[k], shift) {
		im.vals[out] = value{a: a}
		return nil
	}
	im.emit(native.Layer{Op: "affine", Name: im.name(n, "affine", ""), Scale: scale, Shift: shift}, out, a.s, a)
	return nil
}

// foldBias adds shift to the bias of the convolution or linear layer that
// makes activation a (tensor t), where nothing else reads t: PyTorch's
// export of a linear layer as MatMul and Add.
func (im *importer) foldBias(a *act, t string, shift []float32) bool {
	i, ok := im.index[a.layer]
	if !ok || im.readers[t] != 1 {
		return false
	}
	l := &im.g.Layers[i]
	if l.Op != "linear" && l.Op != "conv" {
		return false
	}
	b := make([]float32, len(shift))
	if !l.NoBias {
		copy(b, im.g.Weights[l.Name+".bias"])
	}
	for j, v := range shift {
		b[j] += v
	}
	im.g.Weights[l.Name+".bias"] = b
	l.NoBias = false
	return true
}

// concat reads a Concat of activations along channels.
func (im *importer) concat(n *node) error {
	var acts []*act
	for _, x := range n.inputs {
		if v := im.vals[x]; v.a != nil {
			acts = append(acts, v.a)
		}
	}
	if len(acts) != len(n.inputs) || len(n.inputs) == 0 {
		return fmt.Errorf("node %q: Concat of activations and constants is not supported", n.name)
	}
	rank := int64(4)
	if acts[0].s.flat {
		rank = 2
	}
	axis := integer(n, "axis", 1)
	if axis < 0 {
		axis += rank
	}
	s := acts[0].s
	s.c = 0
	for _, a := range acts {
		if axis != 1 || a.s.flat != acts[0].s.flat || a.s.h != acts[0].s.h || a.s.w != acts[0].s.w {
			return fmt.Errorf("node %q: Concat along axis %d of shapes %v: only along channels is supported", n.name, integer(n, "axis", 1), a.s)
		}
		s.c += a.s.c
	}
	if len(acts) == 1 {
		im.vals[n.outputs[0]] = value{a: acts[0]}
		return nil
	}
	im.emit(native.Layer{Op: "concat", Name: im.name(n, "concat", "")}, n.outputs[0], s, acts...)
	return nil
}

// pad reads a constant zero Pad of height and width.
func (im *importer) pad(n *node) error {
	x, err := im.image(n, 0)
	if err != nil {
		return err
	}
	if m := n.attrs["mode"]; m.set && string(m.s) != "constant" {
		return fmt.Errorf("node %q: Pad of mode %s: only constant (zero) padding is supported", n.name, m.s)
	}
	pads, fill := ints(n, "pads"), float(n, "value", 0)
	if im.opset >= 11 {
		c, err := im.constant(n, 1, "pads")
		if err != nil || c == nil {
			return fmt.Errorf("node %q: Pad without stored pads", n.name)
		}
		if pads, err = c.integers(); err != nil {
			return fmt.Errorf("node %q: pads: %w", n.name, err)
		}
		if vc, err := im.constant(n, 2, "value"); err != nil {
			return err
		} else if vc != nil {
			v, err := vc.floats()
			if err != nil || len(v) != 1 {
				return fmt.Errorf("node %q: Pad value: want one number", n.name)
			}
			fill = v[0]
		}
		if len(n.inputs) > 3 && n.inputs[3] != "" {
			return fmt.Errorf("node %q: Pad with axes is not supported", n.name)
		}
	}
	if len(pads) != 8 || fill != 0 || pads[0] != 0 || pads[1] != 0 || pads[4] != 0 || pads[5] != 0 || slices.Min(pads) < 0 || slices.Max(pads) > 1<<16 {
		return fmt.Errorf("node %q: Pad %v with %g: only zeros around height and width are supported", n.name, pads, fill)
	}
	p := [4]int{int(pads[2]), int(pads[3]), int(pads[6]), int(pads[7])}
	if p == [4]int{} {
		im.vals[n.outputs[0]] = value{a: x}
		return nil
	}
	s := shape{c: x.s.c, h: x.s.h + p[0] + p[2], w: x.s.w + p[1] + p[3]}
	im.emit(native.Layer{Op: "pad", Name: im.name(n, "pad", ""), Pad: p}, n.outputs[0], s, x)
	return nil
}

// reshape reads Flatten, a Reshape that flattens (or keeps the shape), and
// Squeeze and Unsqueeze that move between a 1×1 map and a vector.
func (im *importer) reshape(n *node) error {
	out := n.outputs[0]
	x, err := im.act(n, 0)
	if err != nil {
		return err
	}
	flat := shape{c: x.s.size(), h: 1, w: 1, flat: true}
	single := !x.s.flat && x.s.h == 1 && x.s.w == 1
	switch n.op {
	case "Flatten":
		if a := integer(n, "axis", 1); a != 1 && !(a == -3 && !x.s.flat) && !(a == -1 && x.s.flat) {
			return fmt.Errorf("node %q: Flatten with axis %d: only axis 1 (keep the batch) is supported", n.name, a)
		}
	case "Reshape":
		c, err := im.constant(n, 1, "shape")
		if err != nil || c == nil {
			return fmt.Errorf("node %q: Reshape to a shape Faithlab cannot compute at import", n.name)
		}
		target, err := c.integers()
		if err != nil {
			return fmt.Errorf("node %q: shape: %w", n.name, err)
		}
		src := []int64{batchSize, int64(x.s.c)}
		if !x.s.flat {
			src = append(src, int64(x.s.h), int64(x.s.w))
		}
		got := slices.Clone(target)
		for i, d := range got {
			if d == 0 && i < len(src) && integer(n, "allowzero", 0) == 0 {
				got[i] = src[i]
			}
		}
		if slices.Equal(got, src) {
			im.vals[out] = value{a: x}
			return nil
		}
		size := int64(flat.c)
		if len(got) != 2 || !(got[0] == batchSize || got[0] == -1 && got[1] == size) || !(got[1] == size || got[1] == -1 && got[0] == batchSize) {
			return fmt.Errorf("node %q: Reshape to %v: only flattening to (N, %d) is supported", n.name, shapeText(target), size)
		}
	case "Squeeze", "Unsqueeze":
		axes := ints(n, "axes")
		if im.opset >= 13 {
			if c, err := im.constant(n, 1, "axes"); err != nil {
				return err
			} else if c != nil {
				if axes, err = c.integers(); err != nil {
					return fmt.Errorf("node %q: axes: %w", n.name, err)
				}
			}
		}
		var set []int64
		for _, a := range axes {
			set = append(set, (a+4)%4)
		}
		slices.Sort(set)
		twoThree := slices.Equal(set, []int64{2, 3})
		switch {
		case n.op == "Squeeze" && single && (twoThree || len(axes) == 0):
			im.vals[out] = value{a: &act{layer: x.layer, s: flat}}
		case n.op == "Unsqueeze" && x.s.flat && twoThree:
			im.vals[out] = value{a: &act{layer: x.layer, s: shape{c: x.s.c, h: 1, w: 1}}}
		default:
			return fmt.Errorf("node %q: %s of axes %v of shape %v: only between a 1×1 map and a vector is supported", n.name, n.op, axes, x.s)
		}
		return nil
	}
	if x.s.flat || single {
		im.vals[out] = value{a: &act{layer: x.layer, s: flat}}
		return nil
	}
	im.emit(native.Layer{Op: "flatten", Name: im.name(n, "flatten", "")}, out, flat, x)
	return nil
}

// shapeText writes a shape with the batchSize as N, its first 8 values
// and their count where it holds more (a file's "shape" of a million).
func shapeText(v []int64) string {
	var parts []string
	for i, d := range v {
		if i == 8 && len(v) > 9 {
			parts = append(parts, fmt.Sprintf("… (%d values)", len(v)))
			break
		}
		if f := batchFactor(d); f == 1 {
			parts = append(parts, "N")
		} else if f > 1 {
			parts = append(parts, fmt.Sprintf("%dN", f))
		} else {
			parts = append(parts, fmt.Sprint(d))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// shapeOf computes an activation's Shape at import: the shape exporters
// take apart and put together for a flattening Reshape.
func (im *importer) shapeOf(n *node) error {
	x, err := im.act(n, 0)
	if err != nil {
		return err
	}
	out := []int64{batchSize, int64(x.s.c)}
	if !x.s.flat {
		out = append(out, int64(x.s.h), int64(x.s.w))
	}
	r := int64(len(out))
	lo, hi := integer(n, "start", 0), integer(n, "end", r)
	if lo < 0 {
		lo += r
	}
	if hi < 0 {
		hi += r
	}
	lo, hi = min(max(lo, 0), r), min(max(hi, 0), r)
	out = out[lo:max(lo, hi)]
	im.vals[n.outputs[0]] = value{c: &constant{dims: []int64{int64(len(out))}, ints: out}}
	return nil
}
