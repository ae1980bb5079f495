package native

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// Net is a sequential network of native layers. It implements engine.Network.
type Net struct {
	arch    string
	shape   []int // C, H, W of one input
	classes int
	layers  []layer
	lays    []laidOut // the laidOut layers among them, in order
	kern    gemm.Kernel
	train   bool

	n     int
	xin   []float32   // the input batch, channels-last
	outs  [][]float32 // each layer's output for the last Forward
	grads [][]float32 // gradient of each layer's output after the last Backward
	// ungated marks the ReLU outputs whose gradient Backward skipped by
	// fusing the ReLU with the max-pool after it (see reluPool).
	ungated []bool
	dxin    []float32 // input gradient, NCHW
	logits  []float32

	// For Gradient: replicas sharing the weights, the pieces' parameter
	// gradients, their sum, and a replica's output gradient.
	replicas                []*Net
	slots, gradSum, dlogits []float32
	inferred                []float32 // Infer's logits
	cam                     string    // Grad-CAM's layer, when named (SetCAMLayer)
}

// SetCAMLayer names the layer CAMLayer gives, instead of the last spatial
// map: an imported model's description may name it.
func (m *Net) SetCAMLayer(name string) error {
	if !slices.Contains(m.Layers(), name) {
		return fmt.Errorf("%s has no layer %q (layers: %v)", m.arch, name, m.Layers())
	}
	m.cam = name
	return nil
}

var _ engine.Network = (*Net)(nil)

func newNet(arch string, shape []int, classes int, kern gemm.Kernel, layers []layer) (*Net, error) {
	in := dims{shape[1], shape[2], shape[0]}
	for _, l := range layers {
		if l.in() != in {
			return nil, fmt.Errorf("%s: layer %s expects %v, gets %v", arch, l.name(), l.in(), in)
		}
		in = l.out()
		if in.h <= 0 || in.w <= 0 {
			return nil, fmt.Errorf("%s: input %v is too small: layer %s has no output", arch, shape, l.name())
		}
	}
	if in.size() != classes {
		return nil, fmt.Errorf("%s: last layer gives %d outputs, want %d classes", arch, in.size(), classes)
	}
	return &Net{arch: arch, shape: append([]int(nil), shape...), classes: classes, layers: layers, lays: laidOutLayers(layers), kern: kern,
		outs: make([][]float32, len(layers)), grads: make([][]float32, len(layers)), ungated: make([]bool, len(layers))}, nil
}

// reluPool returns layer i as a max-pool when it pools the output of ReLU
// layer i−1 and the pair can be differentiated as one (the ReLU under the
// gradient rule, not DeepLift's rescale rule), or nil.
func (m *Net) reluPool(i int) *maxPool {
	if i < 1 || i >= len(m.layers) {
		return nil
	}
	p, ok := m.layers[i].(*maxPool)
	r, ok2 := m.layers[i-1].(*relu)
	if !ok || !ok2 || r.ref != nil {
		return nil
	}
	return p
}

// Arch implements engine.Network.
func (m *Net) Arch() string { return m.arch }

// InputShape implements engine.Network.
func (m *Net) InputShape() []int { return append([]int(nil), m.shape...) }

// Classes implements engine.Network.
func (m *Net) Classes() int { return m.classes }

// Kernel names the GEMM kernel the network runs on.
func (m *Net) Kernel() string { return m.kern.Name() }

// SetTraining implements engine.Network.
func (m *Net) SetTraining(on bool) { m.train = on }

func (m *Net) inDims() dims { return dims{m.shape[1], m.shape[2], m.shape[0]} }

// Forward implements engine.Network.
func (m *Net) Forward(x []float32, n int) ([]float32, error) {
	if err := engine.CheckInput(x, n, m.shape); err != nil {
		return nil, fmt.Errorf("%s forward: %w", m.arch, err)
	}
	return m.forward(context.Background(), x, n)
}

// forward is Forward on inputs already checked; it looks at ctx before
// every layer and stops with its error.
func (m *Net) forward(ctx context.Context, x []float32, n int) ([]float32, error) {
	m.n = n
	cur := grow(&m.xin, len(x))
	chwToHWC(cur, x, n, m.inDims())
	for i := 0; i < len(m.layers); i++ {
		if err := ctx.Err(); err != nil {
			m.n = 0 // nothing whole to differentiate
			return nil, err
		}
		m.grads[i] = nil
		m.ungated[i] = false
		if p := m.reluPool(i + 1); p != nil {
			// The pool takes the ReLU's input and applies it as it goes;
			// the ReLU's own output is made only if Activation asks.
			m.layers[i].(*relu).x = cur
			m.outs[i] = nil
			cur = p.pool(cur, n, true)
			i++
			m.grads[i], m.ungated[i] = nil, false
		} else {
			cur = m.layers[i].forward(cur, n, m.train)
		}
		m.outs[i] = cur
	}
	// The last layer is flat, so its output is already n×classes.
	for _, v := range cur {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("%s forward: non-finite logit %g (diverged weights?)", m.arch, v)
		}
	}
	return cur, nil
}

// Backward implements engine.Network.
func (m *Net) Backward(dLogits []float32, want engine.Want) ([]float32, error) {
	return m.backward(context.Background(), dLogits, want)
}

// backward is Backward looking at ctx before every layer.
func (m *Net) backward(ctx context.Context, dLogits []float32, want engine.Want) ([]float32, error) {
	if m.n == 0 {
		return nil, fmt.Errorf("%s backward: no forward pass to differentiate", m.arch)
	}
	if len(dLogits) != m.n*m.classes {
		return nil, fmt.Errorf("%s backward: got %d output gradients, want %d×%d", m.arch, len(dLogits), m.n, m.classes)
	}
	dy := dLogits
	for i := len(m.layers) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m.grads[i] = dy
		if p := m.reluPool(i); p != nil {
			// ReLU then max-pool: the pool routes each gradient to its
			// window's argmax, where ReLU's derivative is 1 unless the
			// window's maximum is 0, so one gated scatter does both layers'
			// work. The gradient between them is computed on request.
			dy = p.scatter(grow(&p.dx, m.n*p.i.size()), dy, m.n, true)
			m.grads[i-1] = nil
			m.ungated[i-1] = true
			i--
			continue
		}
		dy = m.layers[i].backward(dy, m.n, i > 0 || want&engine.InputGrad != 0, want&engine.ParamGrad != 0)
	}
	if want&engine.InputGrad == 0 {
		return nil, nil
	}
	dx := grow(&m.dxin, len(dy))
	hwcToCHW(dx, dy, m.n, m.inDims())
	return dx, nil
}

// Params implements engine.Network. The returned values share storage with
// the network: writing Data changes the weights.
func (m *Net) Params() []engine.Param {
	var ps []engine.Param
	for _, p := range m.paramPtrs() {
		ps = append(ps, *p)
	}
	return ps
}

// Layers implements engine.Network.
func (m *Net) Layers() []string {
	names := make([]string, len(m.layers))
	for i, l := range m.layers {
		names[i] = l.name()
	}
	return names
}

// CAMLayer implements engine.CAMLayerer: the last layer whose output is
// still a spatial map of more than one pixel ("relu3" in goar-cnn,
// "layer4.1" in resnet18); "" for networks without one (mlp, logreg).
func (m *Net) CAMLayer() string {
	if m.cam != "" {
		return m.cam
	}
	name := ""
	for _, l := range m.layers {
		if o := l.out(); o.h*o.w > 1 {
			name = l.name()
		}
	}
	return name
}

// Activation implements engine.Network.
func (m *Net) Activation(name string) (engine.Activation, error) {
	for i, l := range m.layers {
		if l.name() != name {
			continue
		}
		if m.n == 0 {
			return engine.Activation{}, fmt.Errorf("%s: layer %s has no activation before a forward pass", m.arch, name)
		}
		d := l.out()
		a := engine.Activation{Shape: []int{m.n, d.c, d.h, d.w}, Values: make([]float32, m.n*d.size())}
		if d.h == 1 && d.w == 1 {
			a.Shape = []int{m.n, d.c}
		}
		out := m.outs[i]
		if r, ok := l.(*relu); ok && out == nil {
			// Fused into the pool after it: apply it now.
			out = make([]float32, len(r.x))
			for j, v := range r.x {
				out[j] = max(v, 0)
			}
		}
		hwcToCHW(a.Values, out, m.n, d)
		g := m.grads[i]
		if m.ungated[i] {
			p := m.layers[i+1].(*maxPool)
			g = p.scatter(make([]float32, m.n*d.size()), m.grads[i+1], m.n, false)
		}
		if g != nil {
			a.Grad = make([]float32, len(a.Values))
			hwcToCHW(a.Grad, g, m.n, d)
		}
		return a, nil
	}
	return engine.Activation{}, fmt.Errorf("%s has no layer %q (layers: %v)", m.arch, name, m.Layers())
}

// SetRule implements engine.Network. Under Rescale it runs the reference
// batch forward once and keeps every ReLU's reference input.
func (m *Net) SetRule(r engine.Rule, reference []float32, n int) error {
	switch r {
	case engine.Gradient:
		for _, l := range m.layers {
			if rl, ok := l.(*relu); ok {
				rl.ref, rl.refN = nil, 0
			}
		}
		return nil
	case engine.Rescale:
		if err := m.SetRule(engine.Gradient, nil, 0); err != nil {
			return err
		}
		if _, err := m.Forward(reference, n); err != nil {
			return fmt.Errorf("rescale rule reference: %w", err)
		}
		for _, l := range m.layers {
			if rl, ok := l.(*relu); ok {
				rl.ref, rl.refN = append([]float32(nil), rl.x...), n
			}
		}
		m.n = 0
		return nil
	}
	return fmt.Errorf("%s: unknown backward rule %d", m.arch, r)
}

// Clone implements engine.Network.
func (m *Net) Clone() engine.Network {
	ls := make([]layer, len(m.layers))
	for i, l := range m.layers {
		ls[i] = l.clone(m.kern)
	}
	c, _ := newNet(m.arch, m.shape, m.classes, m.kern, ls) // same shapes as m: cannot fail
	c.train, c.cam = m.train, m.cam
	return c
}

// Init draws every parameter as PyTorch's default initialisation does:
// Conv2d and Linear weights and biases uniform on ±1/√fan_in; batch norm
// with unit scale, zero shift and fresh running statistics.
func (m *Net) Init(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for _, l := range m.layers {
		initLayer(l, rng)
	}
}

var _ engine.Randomiser = (*Net)(nil)

// RandomLayers implements engine.Randomiser: the modules with parameters
// (goar-cnn: c1 c2 c3 f1 f2 f3; a residual block is one).
func (m *Net) RandomLayers() []string {
	var names []string
	for _, l := range m.layers {
		if len(l.params()) > 0 {
			names = append(names, l.name())
		}
	}
	return names
}

// Randomise implements engine.Randomiser, drawing the layer as Init does
// (batch norm back to unit scale and zero shift).
func (m *Net) Randomise(layer string, seed uint64) error {
	for _, l := range m.layers {
		if l.name() == layer && len(l.params()) > 0 {
			initLayer(l, rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)))
			return nil
		}
	}
	return fmt.Errorf("%s has no layer %q with parameters (layers: %v)", m.arch, layer, m.RandomLayers())
}

func initLayer(l layer, rng *rand.Rand) {
	uniform := func(w engine.Param, ps ...*engine.Param) {
		bound := 1 / math.Sqrt(float64(engine.Size(w.Shape[1:])))
		for _, p := range ps {
			for i := range p.Data {
				p.Data[i] = float32((2*rng.Float64() - 1) * bound)
			}
		}
	}
	switch l := l.(type) {
	case *conv2d, *winoLayer, *linear:
		ps := l.params()
		uniform(*ps[0], ps...)
	case *batchNorm:
		for i := range l.w.Data {
			l.w.Data[i], l.b.Data[i], l.rmean.Data[i], l.rvar.Data[i] = 1, 0, 0, 1
		}
	case *residual:
		for _, s := range append(append([]layer(nil), l.main...), l.shortcut...) {
			initLayer(s, rng)
		}
	}
}
