package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// ErrWorkerLost is what an error of a network that computes in another
// process (the torch engine's worker) is when that process died or its
// connection dropped (errors.Is): the work did not fail, its worker did,
// and another try runs on a new one.
var ErrWorkerLost = errors.New("the network's worker was lost")

// Param is one named parameter tensor, named and shaped as PyTorch names it
// in the module it mirrors (e.g. "c1.weight", shape [32 1 5 5]).
type Param struct {
	Name  string
	Shape []int
	Data  []float32
	Grad  []float32
}

// Size is the number of elements a shape holds.
func Size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Want says which gradients a Backward call computes.
type Want uint8

const (
	// InputGrad asks for the gradient with respect to the input batch.
	InputGrad Want = 1 << iota
	// ParamGrad asks for parameter gradients, accumulated into Param.Grad.
	ParamGrad
)

// Rule is the backward rule of nonlinearities.
type Rule uint8

const (
	// Gradient is the ordinary chain rule.
	Gradient Rule = iota
	// Rescale is DeepLift's rescale rule (Shrikumar et al. 2017, §3.5.1): a
	// nonlinearity y=f(x) passes back (f(x)−f(x̄))/(x−x̄) for the reference x̄,
	// and its derivative where x = x̄.
	Rescale
)

// Activation is a named layer's output for the last Forward and the gradient
// of the backpropagated quantity with respect to it after the last Backward.
// Shape is n×C×H×W (or n×D) as for inputs; Values and Grad are NCHW copies.
type Activation struct {
	Shape  []int
	Values []float32
	Grad   []float32
}

// Network is a differentiable classifier.
type Network interface {
	// Arch names the architecture, e.g. "goar-cnn".
	Arch() string
	// InputShape is C, H, W of one input.
	InputShape() []int
	// Classes is the number of logits.
	Classes() int
	// Forward computes logits (n×Classes) for the n inputs in x.
	Forward(x []float32, n int) ([]float32, error)
	// Backward propagates dLogits (n×Classes) through the last Forward. With
	// InputGrad it returns the input gradient (n×C×H×W); with ParamGrad it adds
	// to every Param.Grad.
	Backward(dLogits []float32, want Want) ([]float32, error)
	// Params lists the parameters in a fixed order.
	Params() []Param
	// SetTraining switches layers that differ between training and
	// evaluation (batch norm). Networks start in evaluation mode.
	SetTraining(bool)
	// Layers lists the names Activation accepts, input to output.
	Layers() []string
	// Activation returns a copy of the named layer's values and gradient.
	Activation(name string) (Activation, error)
	// SetRule sets the backward rule of the nonlinearities. Rescale needs a
	// reference batch: one input (used for every sample) or as many as the
	// next Forward's batch.
	SetRule(r Rule, reference []float32, n int) error
	// Clone returns an independent copy with the same parameters.
	Clone() Network
}

// Releaser is a network held outside this process (in a PyTorch
// worker): Release frees it there now rather than when the collector
// finds it unreachable, and it must not be used after. A campaign's task
// releases its network when done, so that the next task's is not loaded
// beside it (at 224×224 a ResNet-18 module and its load's buffers held
// twice were a third of the worker's peak).
type Releaser interface{ Release() }

// Release releases net when it is a Releaser.
func Release(net Network) {
	if r, ok := net.(Releaser); ok {
		r.Release()
	}
}

// Randomiser is a Network that can draw one layer's parameters afresh, as
// a new network's are drawn: what the model parameter randomisation test
// (Adebayo et al. 2018) needs. A network that cannot does not implement
// it, or lists no layers (a TorchScript module, whose initialisation is
// its own), and the test refuses it saying so.
type Randomiser interface {
	Network
	// RandomLayers names the layers that hold parameters, input to output.
	RandomLayers() []string
	// Randomise draws the named layer's parameters afresh from the
	// network's initial distribution, from the seed's stream.
	Randomise(layer string, seed uint64) error
}

// RedrawLayer draws afresh, from rng, the parameters among ps (named as
// PyTorch's state_dict names them) of the module layer and the modules in
// it, as PyTorch initialises them by default and the native engine's Init
// does, in the order ps lists them: a convolution's or linear layer's
// weight and bias uniform on ±1/√fan_in, a batch norm's scale 1, shift 0
// and running statistics 0 and 1. It reports whether layer holds any.
func RedrawLayer(ps []Param, layer string, rng *rand.Rand) bool {
	byName := map[string]Param{}
	for _, p := range ps {
		byName[p.Name] = p
	}
	found := false
	for _, p := range ps {
		if p.Name != layer && !strings.HasPrefix(p.Name, layer+".") {
			continue
		}
		found = true
		module, field, _ := cutLast(p.Name)
		if _, bn := byName[module+".running_mean"]; bn {
			v := map[string]float32{"weight": 1, "bias": 0, "running_mean": 0, "running_var": 1}
			if x, ok := v[field]; ok {
				for i := range p.Data {
					p.Data[i] = x
				}
			}
			continue
		}
		w, ok := byName[module+".weight"]
		if !ok || len(w.Shape) < 2 || field != "weight" && field != "bias" {
			continue
		}
		bound := 1 / math.Sqrt(float64(Size(w.Shape[1:])))
		for i := range p.Data {
			p.Data[i] = float32((2*rng.Float64() - 1) * bound)
		}
	}
	return found
}

// cutLast splits a dotted name at its last dot.
func cutLast(name string) (string, string, bool) {
	i := strings.LastIndex(name, ".")
	if i < 0 {
		return "", name, false
	}
	return name[:i], name[i+1:], true
}

// CAMLayerer is a Network that names the activation Grad-CAM weighs by
// default: its last convolutional feature map.
type CAMLayerer interface {
	CAMLayer() string
}

// Attentioner is a Network that holds transformer attention: the layers
// whose outputs are a block's attention probabilities — the softmax of the
// query–key product that weighs the values — each n×heads×T×T (row i: how
// token i attends to every token; token 0 the class token), in order of
// depth. Their Activation gives the probabilities and, after a Backward,
// their gradient.
type Attentioner interface {
	AttentionLayers() []string
}

// OutputGrad writes into dLogits the gradient to backpropagate for rows
// first, first+1, … of a batch, given those rows' logits. Gradient may call it
// concurrently for disjoint rows, so it must write only to its own rows of
// whatever it shares.
type OutputGrad func(first int, logits, dLogits []float32)

// Gradienter is a Network that runs a forward and backward pass as one call,
// which lets it cut the batch into pieces and spread them over cores.
// Gradient adds the same parameter gradients and returns the same input
// gradients as Forward, outGrad and Backward on the whole batch would, up to
// float rounding; afterwards the network holds no forward pass to
// differentiate. When ctx is done it stops within a layer of the piece
// under way and returns ctx's error, with the parameter gradients partial:
// a caller that stops discards them.
type Gradienter interface {
	Network
	Gradient(ctx context.Context, x []float32, n int, want Want, outGrad OutputGrad) ([]float32, error)
}

// Differentiate runs x (n inputs) forward, asks outGrad for the output
// gradient and backpropagates it: through net's own Gradient when it has one,
// else through Forward and Backward.
func Differentiate(ctx context.Context, net Network, x []float32, n int, want Want, outGrad OutputGrad) ([]float32, error) {
	if g, ok := net.(Gradienter); ok {
		return g.Gradient(ctx, x, n, want, outGrad)
	}
	return WholeBatch(ctx, net, x, n, want, outGrad)
}

// WholeBatch is Differentiate through one Forward and one Backward of the
// whole batch, for networks that cannot cut it; it looks at ctx before
// each of the two passes.
func WholeBatch(ctx context.Context, net Network, x []float32, n int, want Want, outGrad OutputGrad) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	logits, err := net.Forward(x, n)
	if err != nil {
		return nil, err
	}
	dl := make([]float32, len(logits))
	outGrad(0, logits, dl)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return net.Backward(dl, want)
}

// Inferrer is a Network that computes logits without keeping what a
// backward pass needs, which lets it cut the batch into pieces and spread
// them over cores (and keep each piece in cache). Infer gives Forward's
// logits up to float rounding; afterwards the network holds no forward pass
// to differentiate. The returned slice is the network's until its next call.
type Inferrer interface {
	Network
	Infer(ctx context.Context, x []float32, n int) ([]float32, error)
}

// Logits runs x (n inputs) forward for their logits alone: through net's
// Infer when it has one, else Forward.
func Logits(ctx context.Context, net Network, x []float32, n int) ([]float32, error) {
	if i, ok := net.(Inferrer); ok {
		return i.Infer(ctx, x, n)
	}
	return net.Forward(x, n)
}

// EachLogits runs the n inputs in x forward, chunk at a time (chunk ≤ 0:
// 1024; at most Batch's), and hands each input's logits to use(i, row) in
// order; row is valid only during the call. It stops between chunks when
// ctx is done.
func EachLogits(ctx context.Context, net Network, x []float32, n, chunk int, use func(i int, row []float32)) error {
	if chunk <= 0 {
		chunk = 1024
	}
	chunk = Batch(net.InputShape(), chunk)
	dim, k := Size(net.InputShape()), net.Classes()
	for lo := 0; lo < n; lo += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+chunk, n)
		logits, err := Logits(ctx, net, x[lo*dim:hi*dim], hi-lo)
		if err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			use(i, logits[(i-lo)*k:(i-lo+1)*k])
		}
	}
	return nil
}

// Predicted returns each input's predicted class (its largest logit), chunk
// inputs per forward pass (chunk ≤ 0: 256; at most Batch's).
func Predicted(ctx context.Context, net Network, x []float32, n, chunk int) ([]int, error) {
	if chunk <= 0 {
		chunk = 256
	}
	out := make([]int, n)
	err := EachLogits(ctx, net, x, n, chunk, func(i int, row []float32) { out[i] = Argmax(row) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Argmax is the index of the largest value, the first of equal ones.
func Argmax(row []float32) int {
	a := 0
	for j, v := range row {
		if v > row[a] {
			a = j
		}
	}
	return a
}

// CheckInput returns an error when x does not hold n finite inputs of shape.
func CheckInput(x []float32, n int, shape []int) error {
	per := Size(shape)
	if n <= 0 {
		return fmt.Errorf("batch of %d inputs: need at least one", n)
	}
	if len(x) != n*per {
		return fmt.Errorf("batch holds %d values, want %d inputs × %v = %d", len(x), n, shape, n*per)
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("input %d has a non-finite value %g at offset %d", i/per, v, i%per)
		}
	}
	return nil
}

// Softmax writes the row-wise softmax of logits (n×k) into dst and returns it;
// dst may alias logits.
func Softmax(dst, logits []float32, k int) []float32 {
	if len(dst) < len(logits) {
		dst = make([]float32, len(logits))
	}
	for r := 0; r+k <= len(logits); r += k {
		row := logits[r : r+k]
		mx := row[0]
		for _, v := range row {
			mx = max(mx, v)
		}
		var s float64
		for j, v := range row {
			e := math.Exp(float64(v - mx))
			dst[r+j] = float32(e)
			s += e
		}
		for j := range row {
			dst[r+j] = float32(float64(dst[r+j]) / s)
		}
	}
	return dst[:len(logits)]
}

// Denoiser is the ε-prediction network of a diffusion model: from noisy
// inputs x_t (n×C×H×W) and their timesteps it predicts the noise that was
// added, with the shape of x. Ownership and concurrency rules are those of
// Network.
type Denoiser interface {
	Arch() string
	InputShape() []int
	// Forward predicts the noise for the n inputs in x at timesteps t (len n).
	Forward(x []float32, t []int, n int) ([]float32, error)
	// Backward propagates dOut (the shape of x) through the last Forward.
	Backward(dOut []float32, want Want) ([]float32, error)
	Params() []Param
	Clone() Denoiser
}

// DenoiserGradienter is a Denoiser that runs a forward and backward pass as
// one call, as Gradienter does for networks: outGrad receives each piece's
// predicted noise (rows first, first+1, …) and writes the gradient to
// backpropagate for those rows only. Afterwards the denoiser holds no
// forward pass to differentiate.
type DenoiserGradienter interface {
	Denoiser
	Gradient(x []float32, t []int, n int, want Want, outGrad OutputGrad) ([]float32, error)
}
