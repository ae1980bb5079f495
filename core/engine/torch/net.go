package torch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"

	"faithlab/core/engine"
)

// Architectures lists the built-in classifiers New builds: native's.
func Architectures() []string { return []string{"goar-cnn", "mlp", "resnet18", "logreg"} }

// ScriptArch is the architecture name of a TorchScript classifier.
const ScriptArch = "torchscript"

// Net is a classifier served by a worker: a built-in architecture or a
// TorchScript module. It implements engine.Network, engine.Gradienter,
// engine.CAMLayerer and train.EpochRunner (training runs in the worker).
// Like every Network it is not safe for concurrent use.
type Net struct {
	*handle
	arch    string
	classes int
	n       int // the last Forward's batch, 0 when there is nothing to differentiate
	cleanup runtime.Cleanup
}

var (
	_ engine.Network    = (*Net)(nil)
	_ engine.Gradienter = (*Net)(nil)
	_ engine.CAMLayerer = (*Net)(nil)
	_ engine.Releaser   = (*Net)(nil)
)

// New builds a built-in architecture (goar-cnn, mlp, resnet18, logreg)
// in the worker, module for module and name for name as native.New does,
// for inputs of shape (C, H, W) and the given number of classes, with zero
// weights: set them through Params (model.Engine copies a native
// network's, so that both engines start from the same weights).
func (e *Engine) New(ctx context.Context, arch string, shape []int, classes int) (*Net, error) {
	if len(shape) != 3 || slices.Min(shape) <= 0 {
		return nil, fmt.Errorf("%s: input shape %v: want C, H, W, all positive", arch, shape)
	}
	if classes < 2 {
		return nil, fmt.Errorf("%s: %d classes: need at least 2", arch, classes)
	}
	if !slices.Contains(Architectures(), arch) {
		return nil, fmt.Errorf("unknown architecture %q (built-in: %v)", arch, Architectures())
	}
	h, err := newHandle(ctx, e, map[string]any{"op": "build", "arch": arch, "shape": shape, "classes": classes}, nil, shape, false)
	if err != nil {
		return nil, fmt.Errorf("%s on the torch engine: %w", arch, err)
	}
	return e.wrap(h, arch, classes), nil
}

// Script describes a researcher's TorchScript classifier: what it takes
// and gives, which the file does not say.
type Script struct {
	Shape   []int // C, H, W of one input as Faithlab's data holds it
	Classes int
	// Mean and Std, when set, normalise each channel before the module
	// sees it: it computes on (x − Mean)/Std, and attributions are with
	// respect to x. One value each, or one per channel.
	Mean, Std []float64
	// CAMLayer names the activation Grad-CAM weighs by default (""
	// the last spatial one the module exposes).
	CAMLayer string
}

// LoadScript loads a TorchScript classifier (torch.jit.save's bytes) in
// the worker and checks that it maps inputs of s.Shape to s.Classes
// logits. Its layers are the activations it exposes through an exported
// method forward_activations(x) returning (logits, {name: tensor}) — the
// hooks of the built-in architectures do not reach inside TorchScript —
// and none without one.
func (e *Engine) LoadScript(ctx context.Context, b []byte, s Script) (*Net, error) {
	if len(s.Shape) != 3 || slices.Min(s.Shape) <= 0 {
		return nil, fmt.Errorf("TorchScript model: input shape %v: want C, H, W, all positive", s.Shape)
	}
	if s.Classes < 2 {
		return nil, fmt.Errorf("TorchScript model: %d classes: need at least 2", s.Classes)
	}
	req := map[string]any{"op": "load_script", "shape": s.Shape, "classes": s.Classes, "cam_layer": s.CAMLayer}
	if len(s.Mean) > 0 || len(s.Std) > 0 {
		mean, std, err := channels(s)
		if err != nil {
			return nil, err
		}
		req["mean"], req["std"] = mean, std
	}
	h, err := newHandle(ctx, e, req, []array{{Name: "script", DType: "u1", Shape: []int{len(b)}, B: b}}, s.Shape, true)
	if err != nil {
		return nil, fmt.Errorf("TorchScript model: %w", err)
	}
	return e.wrap(h, ScriptArch, s.Classes), nil
}

// channels expands a script's normalisation to one value per channel.
func channels(s Script) (mean, std []float64, err error) {
	c := s.Shape[0]
	expand := func(v []float64, what string) ([]float64, error) {
		switch len(v) {
		case 1:
			return slices.Repeat(v, c), nil
		case c:
			return v, nil
		}
		return nil, fmt.Errorf("TorchScript model: %d normalisation %s for %d channels: give one, or one per channel", len(v), what, c)
	}
	if mean, err = expand(s.Mean, "means"); err != nil {
		return nil, nil, err
	}
	if std, err = expand(s.Std, "deviations"); err != nil {
		return nil, nil, err
	}
	for i, d := range std {
		if !(d > 0) {
			return nil, nil, fmt.Errorf("TorchScript model: deviation %g of channel %d: want a positive number", d, i)
		}
	}
	return mean, std, nil
}

func (e *Engine) wrap(h *handle, arch string, classes int) *Net {
	m := &Net{handle: h, arch: arch, classes: classes}
	m.cleanup = runtime.AddCleanup(m, e.release, h.id)
	return m
}

// Release implements engine.Releaser: the worker frees the network with
// the engine's next request (a network's build among them).
func (m *Net) Release() {
	m.cleanup.Stop()
	m.e.release(m.id)
}

// Arch implements engine.Network.
func (m *Net) Arch() string { return m.arch }

// InputShape implements engine.Network.
func (m *Net) InputShape() []int { return slices.Clone(m.shape) }

// Classes implements engine.Network.
func (m *Net) Classes() int { return m.classes }

// SetTraining implements engine.Network.
func (m *Net) SetTraining(on bool) { m.train = on }

// Layers implements engine.Network.
func (m *Net) Layers() []string { return slices.Clone(m.layers) }

// CAMLayer implements engine.CAMLayerer: native's layer for the built-in
// architectures, the script's own or last spatial activation.
func (m *Net) CAMLayer() string { return m.cam }

var _ engine.Randomiser = (*Net)(nil)

// RandomLayers implements engine.Randomiser: the layers with parameters
// of a built-in architecture, as the native engine names them; none for
// a TorchScript module, whose initialisation is its own.
func (m *Net) RandomLayers() []string {
	if len(m.buildA) > 0 {
		return nil
	}
	var out []string
	for _, l := range m.layers {
		if slices.ContainsFunc(m.params, func(p engine.Param) bool { return p.Grad != nil && strings.HasPrefix(p.Name, l+".") }) {
			out = append(out, l)
		}
	}
	return out
}

// Randomise implements engine.Randomiser, drawing the layer as the native
// engine does (the same values for the same seed); the worker gets them
// with the next request.
func (m *Net) Randomise(layer string, seed uint64) error {
	if !slices.Contains(m.RandomLayers(), layer) {
		return fmt.Errorf("%s on the torch engine has no layer %q it can re-initialise (layers: %v; a TorchScript module's initialisation is its own)", m.arch, layer, m.RandomLayers())
	}
	engine.RedrawLayer(m.params, layer, rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)))
	return nil
}

// Clone implements engine.Network: a copy with its own weights, built in
// the worker on its first request.
func (m *Net) Clone() engine.Network { return m.e.wrap(m.handle.clone(), m.arch, m.classes) }

// Forward implements engine.Network.
func (m *Net) Forward(x []float32, n int) ([]float32, error) {
	return m.forward(context.Background(), x, n, false, false)
}

// forward runs x forward; keep holds the graph for a backward pass
// (input: with the input's gradient), which otherwise recomputes it.
func (m *Net) forward(ctx context.Context, x []float32, n int, keep, input bool) ([]float32, error) {
	if err := engine.CheckInput(x, n, m.shape); err != nil {
		return nil, fmt.Errorf("%s forward: %w", m.arch, err)
	}
	m.n = 0
	f, err := m.request(ctx, "forward", map[string]any{"n": n, "keep": keep, "input_grad": input},
		[]array{f32("x", x, append([]int{n}, m.shape...)...)}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s forward: %w", m.arch, err)
	}
	if err := m.receive(f, "buf:"); err != nil {
		return nil, err
	}
	y := f.get("y")
	if len(y) != n*m.classes {
		return nil, fmt.Errorf("%s forward: the worker sent %d logits for %d×%d", m.arch, len(y), n, m.classes)
	}
	m.n = n
	return y, nil
}

// Backward implements engine.Network.
func (m *Net) Backward(dLogits []float32, want engine.Want) ([]float32, error) {
	return m.backward(context.Background(), dLogits, want)
}

func (m *Net) backward(ctx context.Context, dLogits []float32, want engine.Want) ([]float32, error) {
	if m.n == 0 {
		return nil, fmt.Errorf("%s backward: no forward pass to differentiate", m.arch)
	}
	if len(dLogits) != m.n*m.classes {
		return nil, fmt.Errorf("%s backward: got %d output gradients, want %d×%d", m.arch, len(dLogits), m.n, m.classes)
	}
	n := m.n
	m.n = 0
	f, err := m.request(ctx, "backward", map[string]any{"input": want&engine.InputGrad != 0, "params": want&engine.ParamGrad != 0},
		[]array{f32("dy", dLogits, n, m.classes)}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s backward: %w", m.arch, err)
	}
	if want&engine.ParamGrad != 0 {
		if err := m.addGrads(f); err != nil {
			return nil, err
		}
	}
	if want&engine.InputGrad == 0 {
		return nil, nil
	}
	dx := f.get("dx")
	if len(dx) != n*engine.Size(m.shape) {
		return nil, fmt.Errorf("%s backward: the worker sent %d input gradients for %d inputs of %v", m.arch, len(dx), n, m.shape)
	}
	return dx, nil
}

// Gradient implements engine.Gradienter: one forward pass that keeps its
// graph, outGrad on the whole batch, one backward pass; ctx cancels the
// request under way within a layer (built-in architectures) or after it.
func (m *Net) Gradient(ctx context.Context, x []float32, n int, want engine.Want, outGrad engine.OutputGrad) ([]float32, error) {
	logits, err := m.forward(ctx, x, n, true, want&engine.InputGrad != 0)
	if err != nil {
		return nil, err
	}
	dl := make([]float32, len(logits))
	outGrad(0, logits, dl)
	return m.backward(ctx, dl, want)
}

// Activation implements engine.Network.
func (m *Net) Activation(name string) (engine.Activation, error) {
	if !slices.Contains(m.layers, name) {
		return engine.Activation{}, fmt.Errorf("%s has no layer %q (layers: %v)", m.arch, name, m.layers)
	}
	f, err := m.request(context.Background(), "activation", map[string]any{"layer": name}, nil, nil)
	if err != nil {
		return engine.Activation{}, fmt.Errorf("%s activation %s: %w", m.arch, name, err)
	}
	v := f.byName["values"]
	a := engine.Activation{Shape: v.Shape, Values: v.F, Grad: f.get("grad")}
	if len(a.Shape) == 4 && a.Shape[2] == 1 && a.Shape[3] == 1 {
		a.Shape = a.Shape[:2] // n×C, as native gives a 1×1 map
	}
	return a, nil
}

// SetRule implements engine.Network. The rescale rule replaces the
// built-in architectures' ReLU layers (native's: resnet18's blocks keep
// the chain rule inside); a TorchScript module refuses it.
func (m *Net) SetRule(r engine.Rule, reference []float32, n int) error {
	ctx := context.Background()
	switch r {
	case engine.Gradient:
		_, err := m.request(ctx, "set_rule", map[string]any{"rule": "gradient"}, nil, nil)
		return err
	case engine.Rescale:
		if err := engine.CheckInput(reference, n, m.shape); err != nil {
			return fmt.Errorf("rescale rule reference: %w", err)
		}
		m.n = 0
		_, err := m.request(ctx, "set_rule", map[string]any{"rule": "rescale", "n": n},
			[]array{f32("x", reference, append([]int{n}, m.shape...)...)}, nil)
		var re *RemoteError
		if errors.As(err, &re) {
			return fmt.Errorf("%s: %s", m.arch, re.Msg)
		}
		return err
	}
	return fmt.Errorf("%s: unknown backward rule %d", m.arch, r)
}

// Reset draws fresh parameters in the worker (a seeded torch generator)
// as each submodule's constructor does — the fresh copy that retraining
// protocols train — and refuses, saying why, for a module it cannot reset.
func (m *Net) Reset(ctx context.Context, seed uint64) error {
	f, err := m.request(ctx, "reset", map[string]any{"seed": seed}, nil, nil)
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) {
			return fmt.Errorf("%s: %s", m.arch, re.Msg)
		}
		return err
	}
	return m.receive(f, "param:")
}
