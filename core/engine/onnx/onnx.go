// Package onnx reads an ONNX classifier into the native engine: its graph,
// a chain of layers the native engine has (Conv, Gemm or MatMul + Add,
// Relu, MaxPool, GlobalAveragePool, BatchNormalization, Flatten or a
// flattening Reshape, Dropout and Identity, a final Softmax dropped), is
// built from native layers with the file's weights (native.Sequential), so
// that an imported network gives logits, input gradients, Grad-CAM's
// activations, DeepLIFT's rescale rule and retraining from fresh weights
// exactly as a built-in architecture does, at the same speed.
//
// Contract. Parse takes a whole file's bytes (callers bound them: MaxBytes)
// and never panics; it returns the graph or an error naming the problem:
// the operator that is not supported (with its node), a malformed or
// truncated message, an opset outside 7–21, a graph that is not a chain
// (branches, residual connections, cycles), a tensor whose declared shape
// the file does not hold. Memory stays within a small multiple of the
// file's size: every tensor's declared values are checked against the
// bytes it holds before anything is converted. No gorgonia: the native
// engine runs the layers.
package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

// MaxBytes bounds an ONNX file.
const MaxBytes = 1 << 30

// Opsets Faithlab reads (the default domain).
const (
	MinOpset = 7
	MaxOpset = 21
)

// Supported lists the operators a graph may hold.
var Supported = []string{"Conv", "Gemm", "MatMul", "Add", "Relu", "MaxPool", "GlobalAveragePool", "BatchNormalization", "Flatten", "Reshape", "Dropout", "Identity", "Transpose", "Softmax", "LogSoftmax", "Constant"}

// Graph is an ONNX classifier read into native layers.
type Graph struct {
	Layers     []native.Layer
	Weights    map[string][]float32 // by native parameter name
	InputShape []int                // C, H, W of one input as Faithlab's data holds it
	Classes    int
	Opset      int64
	Producer   string
	// NHWC: the file's input is channels-last (a leading Transpose to
	// channels-first, as tf2onnx writes); Faithlab feeds its channels-first
	// data past that transpose.
	NHWC bool
	// DroppedSoftmax names a final Softmax or LogSoftmax left out: methods
	// explain the logits, as for built-in models.
	DroppedSoftmax string
}

// Parse reads an ONNX model's bytes.
func Parse(b []byte) (*Graph, error) {
	m, err := parseModel(b)
	if err != nil {
		return nil, fmt.Errorf("not a readable ONNX model (truncated or another kind of file?): %w", err)
	}
	if !m.hasGraph {
		return nil, errors.New("not an ONNX model: no graph")
	}
	g := &Graph{Weights: map[string][]float32{}, Producer: m.producer}
	for _, o := range m.opsets {
		if o.domain == "" || o.domain == "ai.onnx" {
			g.Opset = o.version
		}
	}
	if g.Opset == 0 {
		return nil, errors.New("the model imports no opset of the default ONNX domain")
	}
	if g.Opset < MinOpset || g.Opset > MaxOpset {
		return nil, fmt.Errorf("opset %d: Faithlab reads ONNX opsets %d to %d (export again with another opset_version)", g.Opset, MinOpset, MaxOpset)
	}
	if err := g.chain(&m.graph); err != nil {
		return nil, err
	}
	return g, nil
}

// Build returns the native network of the graph with the file's weights.
func (g *Graph) Build(arch string, kern gemm.Kernel) (*native.Net, error) {
	net, err := native.Sequential(arch, g.InputShape, g.Classes, kern, g.Layers)
	if err != nil {
		return nil, err
	}
	for _, p := range net.Params() {
		w, ok := g.Weights[p.Name]
		if !ok || len(w) != len(p.Data) {
			return nil, fmt.Errorf("%s: no weights for %s of shape %v", arch, p.Name, p.Shape)
		}
		copy(p.Data, w)
	}
	return net, nil
}

// state is where the walk along the chain is: the tensor flowing and its
// shape (channels, height, width; flat: a vector of c values).
type state struct {
	c, h, w int
	flat    bool
}

func (g *Graph) chain(gr *graph) error {
	inits := map[string]*tensor{}
	for i := range gr.initializers {
		t := &gr.initializers[i]
		inits[t.name] = t
	}
	// Constant nodes are initializers by another name.
	var nodes []*node
	for i := range gr.nodes {
		n := &gr.nodes[i]
		if n.op == "Constant" && len(n.outputs) == 1 && n.attrs["value"].t != nil {
			t := *n.attrs["value"].t
			t.name = n.outputs[0]
			inits[t.name] = &t
			continue
		}
		nodes = append(nodes, n)
	}
	var inputs []valueInfo
	for _, in := range gr.inputs {
		if inits[in.name] == nil {
			inputs = append(inputs, in)
		}
	}
	if len(inputs) != 1 {
		return fmt.Errorf("the graph takes %d inputs besides its weights: a classifier takes one", len(inputs))
	}
	if len(gr.outputs) != 1 {
		return fmt.Errorf("the graph gives %d outputs: a classifier gives one, its logits", len(gr.outputs))
	}
	in, out := inputs[0], gr.outputs[0].name
	if in.elemType != typeFloat {
		return fmt.Errorf("input %q of element type %d: want float32", in.name, in.elemType)
	}
	var declared []int
	for i, d := range in.dims {
		if i == 0 {
			continue // the batch
		}
		if !d.known || d.value <= 0 || d.value > 1<<16 {
			return fmt.Errorf("input %q: dimension %d is %q: Faithlab needs the input's shape (all but the batch) fixed", in.name, i, d.param)
		}
		declared = append(declared, int(d.value))
	}
	var s state
	switch len(declared) {
	case 3:
		s = state{c: declared[0], h: declared[1], w: declared[2]}
	case 1:
		s = state{c: declared[0], h: 1, w: 1, flat: true}
	default:
		return fmt.Errorf("input %q of shape %v: want (N, C, H, W) images or (N, D) tables", in.name, in.dims)
	}
	if engine.Size([]int{s.c, s.h, s.w}) > 1<<24 {
		return fmt.Errorf("input %q of shape %v: too large", in.name, declared)
	}
	consumers := map[string][]*node{}
	for _, n := range nodes {
		if slices.Contains(Supported, n.op) && n.domain != "" && n.domain != "ai.onnx" {
			return fmt.Errorf("node %q: operator %s of domain %q is not supported (only the default ONNX domain)", n.name, n.op, n.domain)
		}
		for _, i := range n.inputs {
			if i != "" && inits[i] == nil {
				consumers[i] = append(consumers[i], n)
			}
		}
	}
	used := map[*node]bool{}
	cur := in.name
	first := true
	count := map[string]int{}
	name := func(kind string, weight string) string {
		if p, ok := strings.CutSuffix(weight, ".weight"); ok && p != "" && !strings.ContainsAny(p, " \t\n") {
			return p
		}
		count[kind]++
		return fmt.Sprintf("%s%d", kind, count[kind])
	}
	for cur != out {
		cs := consumers[cur]
		if len(cs) == 0 {
			return fmt.Errorf("the chain of layers from the input ends at tensor %q, which is not the graph's output %q", cur, out)
		}
		if len(cs) > 1 {
			var ops []string
			for _, c := range cs {
				ops = append(ops, c.op)
			}
			return fmt.Errorf("tensor %q feeds %d nodes (%s): Faithlab imports chains of layers, without branches or residual connections (a Shape → Reshape flattening: use torch.flatten or nn.Flatten)", cur, len(cs), strings.Join(ops, ", "))
		}
		n := cs[0]
		if used[n] {
			return fmt.Errorf("node %q (%s) is reached twice: the graph has a cycle", n.name, n.op)
		}
		used[n] = true
		if len(n.outputs) < 1 || n.outputs[0] == "" {
			return fmt.Errorf("node %q (%s) has no output", n.name, n.op)
		}
		if n.inputs[0] != cur {
			return fmt.Errorf("node %q (%s) takes tensor %q as input %d: only the first input of a layer may be the flowing tensor", n.name, n.op, cur, slices.Index(n.inputs, cur))
		}
		isLast := n.outputs[0] == out
		var err error
		switch n.op {
		case "Transpose":
			if !first || s.flat || !slices.Equal(n.attrs["perm"].ints, []int64{0, 3, 1, 2}) {
				return fmt.Errorf("node %q: Transpose is supported only as the first node, from channels-last input to channels-first (perm 0,3,1,2)", n.name)
			}
			// The declared input is (N, H, W, C): Faithlab's data is (N, C, H, W).
			s = state{c: s.w, h: s.c, w: s.h}
			g.NHWC = true
		case "Conv":
			err = g.conv(n, inits, &s, name)
		case "Gemm", "MatMul":
			var next *node
			if n.op == "MatMul" {
				if cs := consumers[n.outputs[0]]; len(cs) == 1 && cs[0].op == "Add" && !used[cs[0]] {
					next = cs[0]
				}
			}
			err = g.linear(n, next, inits, &s, name)
			if next != nil && err == nil {
				used[next] = true
				n = next
				isLast = n.outputs[0] == out
			}
		case "Relu":
			count["relu"]++
			g.Layers = append(g.Layers, native.Layer{Op: "relu", Name: fmt.Sprintf("relu%d", count["relu"])})
		case "MaxPool":
			err = g.maxPool(n, &s)
		case "GlobalAveragePool":
			if s.flat {
				return fmt.Errorf("node %q: GlobalAveragePool of a vector", n.name)
			}
			count["avgpool"]++
			g.Layers = append(g.Layers, native.Layer{Op: "avgpool", Name: fmt.Sprintf("avgpool%d", count["avgpool"])})
			s = state{c: s.c, h: 1, w: 1}
		case "BatchNormalization":
			err = g.batchNorm(n, inits, &s, name)
		case "Flatten", "Reshape":
			err = g.flatten(n, inits, &s)
		case "Dropout", "Identity":
			if len(n.outputs) > 1 && n.outputs[1] != "" {
				return fmt.Errorf("node %q: a Dropout whose mask is used", n.name)
			}
		case "Softmax", "LogSoftmax":
			if !isLast {
				return fmt.Errorf("node %q: %s is supported only as the last node (it is left out: methods explain the logits)", n.name, n.op)
			}
			g.DroppedSoftmax = n.op
		case "Add":
			return fmt.Errorf("node %q: Add is supported only as the bias after a MatMul (a residual connection is not)", n.name)
		default:
			return fmt.Errorf("node %q: operator %s is not supported (supported: %s)", n.name, n.op, strings.Join(Supported, ", "))
		}
		if err != nil {
			return err
		}
		first = false
		cur = n.outputs[0]
	}
	for _, n := range nodes {
		if !used[n] {
			return fmt.Errorf("node %q (%s) is not on the chain from input %q to output %q: Faithlab imports chains of layers", n.name, n.op, in.name, out)
		}
	}
	if !s.flat && (s.h != 1 || s.w != 1) {
		return fmt.Errorf("the output is a %d×%d×%d map: a classifier gives one logit per class", s.c, s.h, s.w)
	}
	if s.c < 2 {
		return fmt.Errorf("the output holds %d value: a classifier gives a logit per class, at least 2", s.c)
	}
	if len(g.Layers) == 0 {
		return errors.New("the graph holds no layer")
	}
	g.Classes = s.c
	if g.NHWC {
		g.InputShape = []int{declared[2], declared[0], declared[1]}
	} else if len(declared) == 3 {
		g.InputShape = declared
	} else {
		g.InputShape = []int{declared[0], 1, 1}
	}
	return nil
}

// weight returns an initializer's values, checked against want (nil: any
// shape of that many dimensions is checked by the caller).
func weight(n *node, inits map[string]*tensor, i int, what string) (*tensor, []float32, error) {
	if i >= len(n.inputs) || n.inputs[i] == "" {
		return nil, nil, fmt.Errorf("node %q (%s): no %s", n.name, n.op, what)
	}
	t := inits[n.inputs[i]]
	if t == nil {
		return nil, nil, fmt.Errorf("node %q (%s): its %s %q is computed, not stored: only weights stored in the file are supported", n.name, n.op, what, n.inputs[i])
	}
	v, err := t.values()
	if err != nil {
		return nil, nil, fmt.Errorf("node %q (%s): %w", n.name, n.op, err)
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, nil, fmt.Errorf("node %q (%s): %s %q holds %g", n.name, n.op, what, t.name, x)
		}
	}
	return t, v, nil
}

func ints(n *node, attr string, def ...int64) []int64 {
	if a, ok := n.attrs[attr]; ok && a.ints != nil {
		return a.ints
	}
	return def
}

func integer(n *node, attr string, def int64) int64 {
	if a, ok := n.attrs[attr]; ok {
		return a.i
	}
	return def
}

func allEqual(v []int64, x int64) bool {
	for _, y := range v {
		if y != x {
			return false
		}
	}
	return true
}

func (g *Graph) conv(n *node, inits map[string]*tensor, s *state, name func(string, string) string) error {
	if s.flat {
		return fmt.Errorf("node %q: Conv of a vector", n.name)
	}
	t, w, err := weight(n, inits, 1, "weight")
	if err != nil {
		return err
	}
	if len(t.dims) != 4 || t.dims[1] != int64(s.c) || t.dims[2] != t.dims[3] {
		return fmt.Errorf("node %q: Conv weight of shape %v on %d channels: want (out, %d, k, k)", n.name, t.dims, s.c, s.c)
	}
	k := t.dims[2]
	if a := n.attrs["auto_pad"]; a.set && string(a.s) != "NOTSET" && string(a.s) != "" {
		return fmt.Errorf("node %q: Conv with auto_pad %s is not supported (export with explicit padding)", n.name, a.s)
	}
	if integer(n, "group", 1) != 1 {
		return fmt.Errorf("node %q: grouped convolution (group %d) is not supported", n.name, integer(n, "group", 1))
	}
	if d := ints(n, "dilations"); !allEqual(d, 1) {
		return fmt.Errorf("node %q: dilated convolution %v is not supported", n.name, d)
	}
	if ks := ints(n, "kernel_shape"); ks != nil && !allEqual(ks, k) {
		return fmt.Errorf("node %q: kernel_shape %v: only square kernels are supported", n.name, ks)
	}
	strides := ints(n, "strides", 1, 1)
	pads := ints(n, "pads", 0, 0, 0, 0)
	if len(strides) != 2 || strides[0] != strides[1] || strides[0] < 1 {
		return fmt.Errorf("node %q: strides %v: only equal strides are supported", n.name, strides)
	}
	if len(pads) != 4 || !allEqual(pads, pads[0]) || pads[0] < 0 || pads[0] > k {
		return fmt.Errorf("node %q: pads %v: only the same padding on every side is supported", n.name, pads)
	}
	cout := int(t.dims[0])
	nm := name("conv", t.name)
	l := native.Layer{Op: "conv", Name: nm, Out: cout, K: int(k), Stride: int(strides[0]), Pad: int(pads[0]), NoBias: len(n.inputs) < 3 || n.inputs[2] == ""}
	g.Weights[nm+".weight"] = w
	if !l.NoBias {
		bt, b, err := weight(n, inits, 2, "bias")
		if err != nil {
			return err
		}
		if len(b) != cout {
			return fmt.Errorf("node %q: Conv bias of shape %v for %d channels", n.name, bt.dims, cout)
		}
		g.Weights[nm+".bias"] = b
	}
	oh := (s.h+2*l.Pad-l.K)/l.Stride + 1
	ow := (s.w+2*l.Pad-l.K)/l.Stride + 1
	if oh <= 0 || ow <= 0 {
		return fmt.Errorf("node %q: a %d×%d kernel on a %d×%d map", n.name, k, k, s.h, s.w)
	}
	*s = state{c: cout, h: oh, w: ow}
	g.Layers = append(g.Layers, l)
	return nil
}

// linear maps Gemm (y = x·Wᵀ + b, or x·W + b) and MatMul (with the Add
// after it, add, as its bias).
func (g *Graph) linear(n, add *node, inits map[string]*tensor, s *state, name func(string, string) string) error {
	if !s.flat {
		return fmt.Errorf("node %q: %s of a %d×%d×%d map: flatten it first", n.name, n.op, s.c, s.h, s.w)
	}
	t, w, err := weight(n, inits, 1, "weight")
	if err != nil {
		return err
	}
	if len(t.dims) != 2 {
		return fmt.Errorf("node %q: %s weight of shape %v: want a matrix", n.name, n.op, t.dims)
	}
	transB := n.op == "MatMul" || integer(n, "transB", 0) == 0
	if n.op == "Gemm" {
		if integer(n, "transA", 0) != 0 {
			return fmt.Errorf("node %q: Gemm with transA is not supported", n.name)
		}
		for _, a := range []string{"alpha", "beta"} {
			if v, ok := n.attrs[a]; ok && v.f != 1 {
				return fmt.Errorf("node %q: Gemm with %s %g is not supported (only 1)", n.name, a, v.f)
			}
		}
	}
	in, out := int(t.dims[1]), int(t.dims[0]) // W is (out, in) under transB
	if transB {
		in, out = out, in
		tw := make([]float32, len(w))
		for i := range in {
			for o := range out {
				tw[o*in+i] = w[i*out+o]
			}
		}
		w = tw
	}
	if in != s.c {
		return fmt.Errorf("node %q: %s weight of shape %v on %d inputs", n.name, n.op, t.dims, s.c)
	}
	nm := name("linear", t.name)
	g.Weights[nm+".weight"] = w
	bias := make([]float32, out)
	bn, bi := n, 2
	if add != nil {
		bn, bi = add, 1
		if add.inputs[0] != n.outputs[0] {
			bi = 0
		}
	}
	if bi < len(bn.inputs) && bn.inputs[bi] != "" {
		bt, b, err := weight(bn, inits, bi, "bias")
		if err != nil {
			return err
		}
		if len(b) != out || len(bt.dims) > 2 {
			return fmt.Errorf("node %q: bias of shape %v for %d outputs", bn.name, bt.dims, out)
		}
		bias = b
	}
	g.Weights[nm+".bias"] = bias
	g.Layers = append(g.Layers, native.Layer{Op: "linear", Name: nm, Out: out})
	*s = state{c: out, h: 1, w: 1, flat: true}
	return nil
}

func (g *Graph) maxPool(n *node, s *state) error {
	if s.flat {
		return fmt.Errorf("node %q: MaxPool of a vector", n.name)
	}
	if len(n.outputs) > 1 && n.outputs[1] != "" {
		return fmt.Errorf("node %q: MaxPool's indices output is not supported", n.name)
	}
	ks := ints(n, "kernel_shape")
	if len(ks) != 2 || ks[0] != ks[1] || ks[0] < 1 {
		return fmt.Errorf("node %q: MaxPool kernel_shape %v: only square windows are supported", n.name, ks)
	}
	k := ks[0]
	if st := ints(n, "strides", 1, 1); !allEqual(st, k) {
		return fmt.Errorf("node %q: MaxPool with strides %v and %d×%d windows: only strides equal to the window are supported", n.name, st, k, k)
	}
	if p := ints(n, "pads"); !allEqual(p, 0) {
		return fmt.Errorf("node %q: padded MaxPool %v is not supported", n.name, p)
	}
	if d := ints(n, "dilations"); !allEqual(d, 1) {
		return fmt.Errorf("node %q: dilated MaxPool %v is not supported", n.name, d)
	}
	if integer(n, "ceil_mode", 0) != 0 || integer(n, "storage_order", 0) != 0 {
		return fmt.Errorf("node %q: MaxPool with ceil_mode or storage_order is not supported", n.name)
	}
	if a := n.attrs["auto_pad"]; a.set && string(a.s) != "NOTSET" && string(a.s) != "" && string(a.s) != "VALID" {
		return fmt.Errorf("node %q: MaxPool with auto_pad %s is not supported", n.name, a.s)
	}
	if int(k) > min(s.h, s.w) {
		return fmt.Errorf("node %q: %d×%d MaxPool on a %d×%d map", n.name, k, k, s.h, s.w)
	}
	pools := 0
	for _, l := range g.Layers {
		if l.Op == "maxpool" {
			pools++
		}
	}
	g.Layers = append(g.Layers, native.Layer{Op: "maxpool", Name: fmt.Sprintf("pool%d", pools+1), K: int(k)})
	*s = state{c: s.c, h: s.h / int(k), w: s.w / int(k)}
	return nil
}

func (g *Graph) batchNorm(n *node, inits map[string]*tensor, s *state, name func(string, string) string) error {
	if s.flat {
		return fmt.Errorf("node %q: BatchNormalization of a vector is not supported", n.name)
	}
	if a, ok := n.attrs["epsilon"]; ok && math.Abs(float64(a.f)-1e-5) > 1e-9 {
		return fmt.Errorf("node %q: BatchNormalization with epsilon %g is not supported (only 1e-5, PyTorch's default)", n.name, a.f)
	}
	if len(n.outputs) > 1 && slices.ContainsFunc(n.outputs[1:], func(o string) bool { return o != "" }) {
		return fmt.Errorf("node %q: BatchNormalization in training mode is not supported (export the model in eval mode)", n.name)
	}
	var vals [4][]float32
	var scale *tensor
	for i, what := range []string{"scale", "bias", "mean", "variance"} {
		t, v, err := weight(n, inits, i+1, what)
		if err != nil {
			return err
		}
		if len(v) != s.c {
			return fmt.Errorf("node %q: BatchNormalization %s of shape %v for %d channels", n.name, what, t.dims, s.c)
		}
		if i == 0 {
			scale = t
		}
		vals[i] = v
	}
	nm := name("bn", scale.name)
	for i, suffix := range []string{".weight", ".bias", ".running_mean", ".running_var"} {
		g.Weights[nm+suffix] = vals[i]
	}
	g.Layers = append(g.Layers, native.Layer{Op: "batchnorm", Name: nm})
	return nil
}

// flatten maps Flatten (axis 1) and a Reshape to (N, −1) or (N, C·H·W).
func (g *Graph) flatten(n *node, inits map[string]*tensor, s *state) error {
	size := s.c * s.h * s.w
	if n.op == "Flatten" {
		if integer(n, "axis", 1) != 1 {
			return fmt.Errorf("node %q: Flatten with axis %d: only axis 1 (keep the batch) is supported", n.name, integer(n, "axis", 1))
		}
	} else {
		if len(n.inputs) < 2 || inits[n.inputs[1]] == nil {
			return fmt.Errorf("node %q: Reshape to a shape computed in the graph: only a stored shape is supported (flatten with torch.flatten or nn.Flatten)", n.name)
		}
		shape, err := inits[n.inputs[1]].integers()
		if err != nil {
			return fmt.Errorf("node %q: %w", n.name, err)
		}
		ok := len(shape) == 2 && (shape[1] == -1 || shape[1] == int64(size)) && (shape[0] == -1 || shape[0] == 0) && !(shape[0] == -1 && shape[1] == -1)
		if !ok {
			return fmt.Errorf("node %q: Reshape to %v: only flattening to (N, %d) is supported", n.name, shape, size)
		}
	}
	if !s.flat {
		count := 0
		for _, l := range g.Layers {
			if l.Op == "flatten" {
				count++
			}
		}
		nm := "flatten"
		if count > 0 {
			nm = fmt.Sprintf("flatten%d", count+1)
		}
		g.Layers = append(g.Layers, native.Layer{Op: "flatten", Name: nm})
	}
	*s = state{c: size, h: 1, w: 1, flat: true}
	return nil
}
