package native

import (
	"fmt"
	"slices"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// Layer describes one node of a network that Compose builds from another
// tool's graph (an ONNX import): the native engine's own layers, so that
// such a network trains, explains and runs as fast as a built-in
// architecture. Parameters are named Name + ".weight", ".bias" (and
// ".running_mean", ".running_var" for batch norm), shaped as PyTorch
// shapes them; they start at zero (or the identity for batch norm) until
// set through Params or drawn by Init.
type Layer struct {
	// Op is the node's kind. Of one input: "conv" (Out channels, a
	// Kernel, Stride, Dilation, Pad and Groups), "linear" (Out outputs of
	// a flat input), "relu", "sigmoid", "silu" (x·σ(x)), "leakyrelu"
	// (slope Alpha), "clip" (to [Alpha, Beta]; ReLU6), "hardsigmoid"
	// (max(0, min(1, Alpha·x + Beta))), "hardswish", "maxpool" and
	// "avgpool" (a Kernel, Stride, Pad, CeilMode; the average counting
	// padding with CountPad; the maximum with a Dilation),
	// "globalavgpool", "flatten" (to PyTorch's channels-first order),
	// "batchnorm" (evaluation statistics; epsilon Eps), "normalize"
	// ((x − Mean)/Std per channel), "affine" (x·Scale + Shift per
	// channel), "pad" (zeros around each map), "identity". Of several:
	// "add" (the sum of inputs of one shape), "concat" (along channels),
	// "mul" (the product of two inputs of one shape, or of a map and one
	// value per channel, the second input).
	Op   string
	Name string
	// In names the layers whose outputs this one reads, in order, "" for
	// the network's input; none: the layer before it (the input, for the
	// first). The last layer gives the logits; every other is read.
	In               []string
	Out              int
	Kernel           [2]int // height, width
	Stride, Dilation [2]int // height, width; 0 is 1
	Pad              [4]int // top, left, bottom, right
	Groups           int    // 0 is 1
	CeilMode         bool
	CountPad         bool
	NoBias           bool
	Eps              float32 // 0 is 1e-5
	Alpha, Beta      float32
	Mean, Std        []float32
	Scale, Shift     []float32
	// Tensor layers (tensorlayers.go): the per-sample shape of the input
	// (Shape; Shapes for a concatenation, Shape2 for a junction's second
	// input), an Axis, a permutation (Perm), indices (Index), a slice's
	// Begin, Steps and Count per axis, a function (Fn: "add", "sub",
	// "mul", "div", "pow"; "erf", "sqrt", "tanh"), a constant (Value of
	// ValueShape, on the left where Swap) and the output's shape (OutShape)
	// where the layer cannot tell it.
	Shape, Shape2, OutShape []int
	Shapes                  [][]int
	Axis, AxisEnd           int // AxisEnd: a mean's axes are Axis to AxisEnd−1 (0: Axis alone)
	Perm, Index             []int
	Begin, Steps, Count     []int
	Fn                      string
	Swap                    bool
	Value                   []float32
	ValueShape              []int
	// Attention marks a softmax whose output is a transformer block's
	// attention probabilities (Net.AttentionLayers).
	Attention bool
}

// one is v, or 1 where v is 0.
func one(v int) int {
	if v == 0 {
		return 1
	}
	return v
}

// window is the layer's window, after checking it.
func (s Layer) window() (window, error) {
	w := window{kh: s.Kernel[0], kw: s.Kernel[1], sh: one(s.Stride[0]), sw: one(s.Stride[1]),
		dh: one(s.Dilation[0]), dw: one(s.Dilation[1]), pt: s.Pad[0], pl: s.Pad[1], pb: s.Pad[2], pr: s.Pad[3]}
	kh, kw := w.span()
	if w.kh <= 0 || w.kw <= 0 || w.sh <= 0 || w.sw <= 0 || w.dh <= 0 || w.dw <= 0 ||
		min(w.pt, w.pb) < 0 || max(w.pt, w.pb) >= kh || min(w.pl, w.pr) < 0 || max(w.pl, w.pr) >= kw {
		return w, fmt.Errorf("%s %s: kernel %v, stride %v, dilation %v, padding %v (padding must be smaller than the window)", s.Op, s.Name, s.Kernel, s.Stride, s.Dilation, s.Pad)
	}
	return w, nil
}

// Compose builds the network of layers for inputs of shape (C, H, W) and
// the given number of classes, checking that every layer fits what it
// reads.
func Compose(arch string, shape []int, classes int, kern gemm.Kernel, layers []Layer) (*Net, error) {
	if len(shape) != 3 || slices.Min(shape) <= 0 {
		return nil, fmt.Errorf("%s: input shape %v: want C, H, W, all positive", arch, shape)
	}
	if classes < 2 {
		return nil, fmt.Errorf("%s: %d classes: need at least 2", arch, classes)
	}
	input := dims{shape[1], shape[2], shape[0]}
	var nodes []node
	var from [][]int
	index := map[string]int{}
	for i, s := range layers {
		if _, dup := index[s.Name]; dup || s.Name == "" {
			return nil, fmt.Errorf("%s: two layers named %q", arch, s.Name)
		}
		src := []int{i - 1}
		if s.In != nil {
			src = nil
			for _, name := range s.In {
				j, ok := index[name]
				if name == "" {
					j, ok = -1, true
				}
				if !ok {
					return nil, fmt.Errorf("%s: layer %s reads %q, which is no layer before it", arch, s.Name, name)
				}
				src = append(src, j)
			}
		}
		ins := make([]dims, len(src))
		for k, j := range src {
			ins[k] = input
			if j >= 0 {
				ins[k] = nodes[j].out()
			}
		}
		nd, err := s.build(ins, kern)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", arch, err)
		}
		if o := nd.out(); o.h <= 0 || o.w <= 0 || o.c <= 0 {
			return nil, fmt.Errorf("%s: input %v is too small: layer %s has no output", arch, shape, s.Name)
		}
		index[s.Name] = i
		nodes = append(nodes, nd)
		from = append(from, src)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: no layers", arch)
	}
	return newGraph(arch, shape, classes, kern, nodes, from)
}

// build makes the layer's node for inputs of the given shapes.
func (s Layer) build(ins []dims, kern gemm.Kernel) (node, error) {
	switch s.Op {
	case "add", "concat", "mul":
		return s.junction(ins)
	case "matmul", "elementwise", "join":
		return s.tensorJunction(ins, kern)
	}
	if len(ins) != 1 {
		return nil, fmt.Errorf("%s layer %s reads %d inputs, takes one", s.Op, s.Name, len(ins))
	}
	in := ins[0]
	if nd, ok, err := s.tensorLayer(in, kern); ok {
		return nd, err
	}
	switch s.Op {
	case "conv":
		w, err := s.window()
		if err != nil {
			return nil, err
		}
		g := one(s.Groups)
		if s.Out <= 0 || g < 0 || in.c%g != 0 || s.Out%g != 0 {
			return nil, fmt.Errorf("convolution %s: %d input and %d output channels in %d groups", s.Name, in.c, s.Out, g)
		}
		switch {
		case g == 1 && w.kh == w.kw && w.sh == w.sw && w.dh == 1 && w.dw == 1 && w.pt == w.pl && w.pt == w.pb && w.pt == w.pr:
			return newConv(s.Name, in, s.Out, w.kh, w.sh, w.pt, s.NoBias, kern), nil
		case g == in.c && s.Out == in.c:
			return newDepthwise(s.Name, in, w, s.NoBias), nil
		}
		return newConvg(s.Name, in, s.Out, w, g, s.NoBias, kern), nil
	case "linear":
		if in.h != 1 || in.w != 1 {
			return nil, fmt.Errorf("linear layer %s on a %d×%d×%d map: flatten it first", s.Name, in.c, in.h, in.w)
		}
		if s.Out <= 0 {
			return nil, fmt.Errorf("linear layer %s with %d outputs", s.Name, s.Out)
		}
		return newLinear(s.Name, in.c, s.Out, kern), nil
	case "relu":
		return &relu{nm: s.Name, d: in}, nil
	case "sigmoid", "silu", "leakyrelu", "hardswish":
		return newPointwise(s.Name, s.Op, in, s.Alpha, s.Beta)
	case "clip", "hardsigmoid":
		if !(s.Alpha < s.Beta) && s.Op == "clip" {
			return nil, fmt.Errorf("clip %s to [%g, %g]: an empty range", s.Name, s.Alpha, s.Beta)
		}
		return newPointwise(s.Name, s.Op, in, s.Alpha, s.Beta)
	case "maxpool", "avgpool":
		w, err := s.window()
		if err != nil {
			return nil, err
		}
		isMax := s.Op == "maxpool"
		if !isMax && (w.dh != 1 || w.dw != 1) {
			return nil, fmt.Errorf("average pool %s with dilation %v", s.Name, s.Dilation)
		}
		k := w.kh
		if isMax && w.kw == k && w.sh == k && w.sw == k && w.dh == 1 && w.dw == 1 && w.pt+w.pl+w.pb+w.pr == 0 && (!s.CeilMode || in.h%k == 0 && in.w%k == 0) {
			return newMaxPool(s.Name, in, k), nil
		}
		return newPool2d(s.Name, isMax, in, w, s.CeilMode, s.CountPad), nil
	case "globalavgpool":
		return &avgPool{nm: s.Name, i: in}, nil
	case "flatten":
		return &flatten{nm: s.Name, i: in}, nil
	case "batchnorm":
		l := newBatchNorm(s.Name, in)
		if s.Eps != 0 {
			if !(s.Eps > 0) {
				return nil, fmt.Errorf("batch norm %s with epsilon %g", s.Name, s.Eps)
			}
			l.eps = s.Eps
		}
		return l, nil
	case "normalize":
		if len(s.Mean) != in.c || len(s.Std) != in.c {
			return nil, fmt.Errorf("normalisation %s with %d means and %d deviations for %d channels", s.Name, len(s.Mean), len(s.Std), in.c)
		}
		for _, v := range s.Std {
			if !(v > 0) {
				return nil, fmt.Errorf("normalisation %s: standard deviation %g", s.Name, v)
			}
		}
		return &normalize{nm: s.Name, d: in, mean: slices.Clone(s.Mean), std: slices.Clone(s.Std)}, nil
	case "affine":
		if len(s.Scale) != in.c || len(s.Shift) != in.c {
			return nil, fmt.Errorf("affine map %s with %d scales and %d shifts for %d channels", s.Name, len(s.Scale), len(s.Shift), in.c)
		}
		return &affine{nm: s.Name, d: in, scale: slices.Clone(s.Scale), shift: slices.Clone(s.Shift)}, nil
	case "pad":
		if min(s.Pad[0], s.Pad[1], s.Pad[2], s.Pad[3]) < 0 || max(s.Pad[0]+s.Pad[2], s.Pad[1]+s.Pad[3]) > 1<<16 {
			return nil, fmt.Errorf("padding %s of %v", s.Name, s.Pad)
		}
		return &zeroPad{nm: s.Name, i: in, p: s.Pad}, nil
	case "identity":
		return &identity{nm: s.Name, d: in}, nil
	}
	return nil, fmt.Errorf("unknown layer kind %q (%s)", s.Op, s.Name)
}

// junction makes the layer's node of several inputs.
func (s Layer) junction(ins []dims) (node, error) {
	mismatch := func() error { return fmt.Errorf("%s layer %s of inputs %v", s.Op, s.Name, ins) }
	switch s.Op {
	case "add":
		for _, d := range ins {
			if d != ins[0] {
				return nil, mismatch()
			}
		}
		if len(ins) < 2 {
			return nil, mismatch()
		}
		return newSum(s.Name, ins[0], len(ins)), nil
	case "concat":
		for _, d := range ins {
			if d.h != ins[0].h || d.w != ins[0].w {
				return nil, mismatch()
			}
		}
		if len(ins) < 2 {
			return nil, mismatch()
		}
		return newConcat(s.Name, ins), nil
	}
	if len(ins) != 2 || ins[1] != ins[0] && ins[1] != (dims{1, 1, ins[0].c}) {
		return nil, mismatch()
	}
	return newProduct(s.Name, ins[0], ins[1]), nil
}

// normalize is (x − mean)/std per channel: a model's own normalisation,
// so that attributions are with respect to the data's values.
type normalize struct {
	nm        string
	d         dims
	mean, std []float32
	y, dx     []float32
}

func (l *normalize) name() string            { return l.nm }
func (l *normalize) in() dims                { return l.d }
func (l *normalize) out() dims               { return l.d }
func (l *normalize) params() []*engine.Param { return nil }
func (l *normalize) clone(gemm.Kernel) layer {
	return &normalize{nm: l.nm, d: l.d, mean: l.mean, std: l.std}
}

func (l *normalize) forward(x []float32, n int, _ bool) []float32 {
	y := grow(&l.y, len(x))
	c := l.d.c
	for i, v := range x {
		ch := i % c
		y[i] = (v - l.mean[ch]) / l.std[ch]
	}
	return y
}

func (l *normalize) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	dx := grow(&l.dx, len(dy))
	c := l.d.c
	for i, v := range dy {
		dx[i] = v / l.std[i%c]
	}
	return dx
}
