package native

import (
	"fmt"
	"slices"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// Layer describes one layer of a network that Sequential builds from
// another tool's graph (an ONNX import): the native engine's own layers,
// so that such a network trains, explains and runs as fast as a built-in
// architecture. Parameters are named Name + ".weight", ".bias" (and
// ".running_mean", ".running_var" for batch norm), shaped as PyTorch
// shapes them; they start at zero (or the identity for batch norm) until
// set through Params or drawn by Init.
type Layer struct {
	// Op is the layer's kind: "conv" (Out channels, a K×K kernel, Stride,
	// Pad on every side), "linear" (Out outputs of the flattened input),
	// "relu", "maxpool" (K×K windows, stride K), "flatten" (to PyTorch's
	// channels-first order), "avgpool" (global average pooling),
	// "batchnorm" (evaluation statistics; epsilon 1e-5) or "normalize"
	// ((x − Mean)/Std per channel, no parameters).
	Op          string
	Name        string
	Out, K      int
	Stride, Pad int
	NoBias      bool
	Mean, Std   []float32
}

// Sequential builds the network of layers for inputs of shape (C, H, W)
// and the given number of classes, checking that every layer fits the
// output of the one before it.
func Sequential(arch string, shape []int, classes int, kern gemm.Kernel, layers []Layer) (*Net, error) {
	if len(shape) != 3 || slices.Min(shape) <= 0 {
		return nil, fmt.Errorf("%s: input shape %v: want C, H, W, all positive", arch, shape)
	}
	if classes < 2 {
		return nil, fmt.Errorf("%s: %d classes: need at least 2", arch, classes)
	}
	in := dims{shape[1], shape[2], shape[0]}
	var ls []layer
	seen := map[string]bool{}
	for _, s := range layers {
		if seen[s.Name] {
			return nil, fmt.Errorf("%s: two layers named %q", arch, s.Name)
		}
		seen[s.Name] = true
		var l layer
		switch s.Op {
		case "conv":
			if s.Out <= 0 || s.K <= 0 || s.Stride <= 0 || s.Pad < 0 {
				return nil, fmt.Errorf("%s: convolution %s: %d channels, kernel %d, stride %d, padding %d", arch, s.Name, s.Out, s.K, s.Stride, s.Pad)
			}
			l = newConv(s.Name, in, s.Out, s.K, s.Stride, s.Pad, s.NoBias, kern)
		case "linear":
			if in.h != 1 || in.w != 1 {
				return nil, fmt.Errorf("%s: linear layer %s on a %d×%d×%d map: flatten it first", arch, s.Name, in.c, in.h, in.w)
			}
			if s.Out <= 0 {
				return nil, fmt.Errorf("%s: linear layer %s with %d outputs", arch, s.Name, s.Out)
			}
			l = newLinear(s.Name, in.c, s.Out, kern)
		case "relu":
			l = &relu{nm: s.Name, d: in}
		case "maxpool":
			if s.K <= 0 || s.K > min(in.h, in.w) {
				return nil, fmt.Errorf("%s: max-pool %s of %d×%d windows on a %d×%d map", arch, s.Name, s.K, s.K, in.h, in.w)
			}
			l = newMaxPool(s.Name, in, s.K)
		case "flatten":
			l = &flatten{nm: s.Name, i: in}
		case "avgpool":
			l = &avgPool{nm: s.Name, i: in}
		case "batchnorm":
			l = newBatchNorm(s.Name, in)
		case "normalize":
			if len(s.Mean) != in.c || len(s.Std) != in.c {
				return nil, fmt.Errorf("%s: normalisation %s with %d means and %d deviations for %d channels", arch, s.Name, len(s.Mean), len(s.Std), in.c)
			}
			for _, v := range s.Std {
				if !(v > 0) {
					return nil, fmt.Errorf("%s: normalisation %s: standard deviation %g", arch, s.Name, v)
				}
			}
			l = &normalize{nm: s.Name, d: in, mean: slices.Clone(s.Mean), std: slices.Clone(s.Std)}
		default:
			return nil, fmt.Errorf("%s: unknown layer kind %q (%s)", arch, s.Op, s.Name)
		}
		if o := l.out(); o.h <= 0 || o.w <= 0 || o.c <= 0 {
			return nil, fmt.Errorf("%s: input %v is too small: layer %s has no output", arch, shape, s.Name)
		}
		ls = append(ls, l)
		in = l.out()
	}
	if len(ls) == 0 {
		return nil, fmt.Errorf("%s: no layers", arch)
	}
	return newNet(arch, shape, classes, kern, ls)
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
