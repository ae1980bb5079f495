// Package onnx reads an ONNX classifier into the native engine: its graph
// — residual sums, concatenations and squeeze-and-excitation products
// included — is built from native layers with the file's weights
// (native.Compose), so that an imported network gives logits, input
// gradients, Grad-CAM's activations, DeepLIFT's rescale rule and
// retraining from fresh weights exactly as a built-in architecture does,
// at the same speed.
//
// What it reads (Supported lists the operators): Conv (any kernel,
// stride, dilation, padding and groups), Gemm, MatMul with a bias Add,
// BatchNormalization (evaluation), Relu, Clip (ReLU6), Sigmoid, SiLU as
// Sigmoid and Mul, HardSigmoid, HardSwish, LeakyRelu, MaxPool and
// AveragePool (any window, stride and padding, ceil mode), GlobalAveragePool
// and ReduceMean over height and width, Add and Concat of activations, Mul
// of an activation by a per-channel gate or by another of its shape,
// arithmetic with per-channel constants, zero Pad, Flatten, Squeeze and
// Unsqueeze between a 1×1 map and a vector, and a flattening Reshape — its
// shape given or computed by the Shape, Gather, Unsqueeze, Concat, Slice,
// ConstantOfShape, Cast chains exporters write, which are folded at import
// (consts.go) — Dropout and Identity, a leading Transpose from
// channels-last input, a final Softmax (left out). Vision transformers
// (torchvision's ViT, timm's DeiT, opsets 13–17) read as tensors of any rank
// (tensors.go): each sample's values apart, the batch on whatever axis the
// exporter moves it to and shared with heads or tokens, so that Reshape,
// Squeeze, Unsqueeze and Transpose of the batch are views; batched MatMul,
// Softmax, LayerNormalization and its decomposition (read as one layer),
// Erf (nn.GELU's five exported nodes read as one layer: fuse.go), Gather, Slice,
// Concat, Expand over the batch and broadcasting arithmetic become native
// tensor layers, and each block's attention probabilities are marked
// (engine.Attentioner). A reshape that would mix samples is refused. Layers
// are named as PyTorch names the modules that make them (rename).
//
// Contract. Parse takes a whole file's bytes (callers bound them: MaxBytes)
// and never panics; it returns the graph or an error naming the problem:
// the node and operator that is not supported, a malformed or truncated
// message, an opset outside 7–21, a node that does not lead to the output,
// a graph whose nodes are out of order or cyclic, a tensor whose declared
// shape the file does not hold. Memory stays within a small multiple of the
// file's size: every tensor's declared values are checked against the
// bytes it holds before anything is converted, and every constant folded
// at import against the caps of one node and of the file before it is
// built (consts.go): a file of a few KB is refused in milliseconds, never
// after building gigabytes. ParseFile reads a file without holding its
// bytes (mapped, each weight's pages given back once decoded) and
// BuildMoved hands the network the decoded weights themselves, so that an
// opened model holds its weights once. No gorgonia: the native engine runs
// the layers.
package onnx

import (
	"errors"
	"fmt"

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
var Supported = []string{"Conv", "Gemm", "MatMul", "BatchNormalization",
	"Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "LeakyRelu",
	"MaxPool", "AveragePool", "GlobalAveragePool", "ReduceMean",
	"Add", "Sub", "Mul", "Div", "Concat", "Pad", "Flatten", "Reshape", "Squeeze", "Unsqueeze",
	"Shape", "Gather", "Slice", "ConstantOfShape", "Cast", "Constant", "Dropout", "Identity", "Transpose", "Softmax", "LogSoftmax",
	"LayerNormalization", "Erf", "Sqrt", "Tanh", "Pow", "Expand", "Equal", "Where"}

// Graph is an ONNX classifier read into native layers.
type Graph struct {
	// Layers are in topological order, the last giving the logits. The
	// first alone reads the input (reading the layer before it: none), so
	// that a layer put before them all (a normalisation) is the graph's
	// new input.
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
func Parse(b []byte) (*Graph, error) { return parse(b, nil) }

// parse is Parse, telling drop of each weight's bytes once they are
// decoded.
func parse(b []byte, drop func([]byte)) (*Graph, error) {
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
	for i := range m.graph.initializers {
		m.graph.initializers[i].drop = drop
	}
	if err := g.read(&m.graph, len(b)); err != nil {
		return nil, err
	}
	return g, nil
}

// BuildMoved is Build for a graph built once: the network takes the
// weights themselves rather than copies, and g.Weights is empty
// afterwards, so that a model's weights are held once (Build copies them).
func (g *Graph) BuildMoved(arch string, kern gemm.Kernel) (*native.Net, error) {
	net, err := native.Compose(arch, g.InputShape, g.Classes, kern, g.Layers)
	if err != nil {
		return nil, err
	}
	if err := net.TakeWeights(g.Weights); err != nil {
		return nil, err
	}
	clear(g.Weights)
	return net, nil
}

// Build returns the native network of the graph with a copy of the
// file's weights.
func (g *Graph) Build(arch string, kern gemm.Kernel) (*native.Net, error) {
	net, err := native.Compose(arch, g.InputShape, g.Classes, kern, g.Layers)
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
