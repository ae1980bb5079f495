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

// Net is a network of native layers: a chain (the built-in architectures)
// or a directed acyclic graph (an imported one), its nodes in topological
// order, the last giving the logits. It implements engine.Network.
//
// A node reads the outputs of earlier nodes (from) and owns its output
// buffer; a node's output gradient is the sum over the nodes that read it,
// added in the order of those nodes (so the same bits on any core count),
// and where only one node reads it, that node's input-gradient buffer
// itself. No layer writes to its input or its output gradient.
type Net struct {
	arch    string
	shape   []int // C, H, W of one input
	classes int
	nodes   []node
	// from[i] lists the nodes whose outputs node i reads, −1 for the
	// network's input; readers[i+1] counts the reads of node i's output
	// (readers[0]: of the input).
	from    [][]int
	readers []int
	lays    []laidOut // the laidOut layers among them, in order
	kern    gemm.Kernel
	train   bool

	n     int
	xin   []float32   // the input batch, channels-last
	outs  [][]float32 // each node's output for the last Forward
	grads [][]float32 // gradient of each node's output after the last Backward
	sums  [][]float32 // where the gradient of a node read more than once is added up (index as readers)
	dhwc  []float32   // the input gradient, channels-last, after the last Backward
	xs    [][]float32 // a junction's inputs, scratch
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

// newNet checks and assembles a network of layers in a chain: each reads
// the one before it.
func newNet(arch string, shape []int, classes int, kern gemm.Kernel, layers []layer) (*Net, error) {
	nodes := make([]node, len(layers))
	from := make([][]int, len(layers))
	for i, l := range layers {
		nodes[i], from[i] = l, []int{i - 1}
	}
	return newGraph(arch, shape, classes, kern, nodes, from)
}

// newGraph checks and assembles a network of nodes in topological order:
// node i reads the outputs of from[i] (earlier nodes, −1 the input), and
// every node's output is read, the last's (the logits) by the caller.
func newGraph(arch string, shape []int, classes int, kern gemm.Kernel, nodes []node, from [][]int) (*Net, error) {
	input := dims{shape[1], shape[2], shape[0]}
	readers := make([]int, len(nodes)+1)
	outOf := func(f int) dims {
		if f < 0 {
			return input
		}
		return nodes[f].out()
	}
	for i, nd := range nodes {
		if len(from[i]) == 0 {
			return nil, fmt.Errorf("%s: node %s reads nothing", arch, nd.name())
		}
		for _, f := range from[i] {
			if f < -1 || f >= i {
				return nil, fmt.Errorf("%s: node %s reads node %d, not an earlier one", arch, nd.name(), f)
			}
			readers[f+1]++
		}
		var want []dims
		switch nd := nd.(type) {
		case layer:
			if len(from[i]) != 1 {
				return nil, fmt.Errorf("%s: layer %s reads %d inputs, takes one", arch, nd.name(), len(from[i]))
			}
			want = []dims{nd.in()}
		case junction:
			want = nd.ins()
		}
		if len(want) != len(from[i]) {
			return nil, fmt.Errorf("%s: node %s reads %d inputs, takes %d", arch, nd.name(), len(from[i]), len(want))
		}
		for k, f := range from[i] {
			if got := outOf(f); got != want[k] {
				return nil, fmt.Errorf("%s: layer %s expects %v, gets %v", arch, nd.name(), want[k], got)
			}
		}
		if o := nd.out(); o.h <= 0 || o.w <= 0 || o.c <= 0 {
			return nil, fmt.Errorf("%s: input %v is too small: layer %s has no output", arch, shape, nd.name())
		}
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: no layers", arch)
	}
	for i, r := range readers[:len(nodes)] {
		if r == 0 {
			what := "the input"
			if i > 0 {
				what = "layer " + nodes[i-1].name()
			}
			return nil, fmt.Errorf("%s: nothing reads %s", arch, what)
		}
	}
	if o := nodes[len(nodes)-1].out(); o.size() != classes {
		return nil, fmt.Errorf("%s: last layer gives %d outputs, want %d classes", arch, o.size(), classes)
	}
	markPooled(nodes, from)
	k := len(nodes)
	return &Net{arch: arch, shape: append([]int(nil), shape...), classes: classes, nodes: nodes, from: from, readers: readers,
		lays: laidOutLayers(nodes), kern: kern, outs: make([][]float32, k), grads: make([][]float32, k),
		sums: make([][]float32, k+1), ungated: make([]bool, k)}, nil
}

// reluPool returns node i as a max-pool when it pools the output of ReLU
// node i−1, which nothing else reads, and the pair can be differentiated
// as one (the ReLU under the gradient rule, not DeepLift's rescale rule),
// or nil.
func (m *Net) reluPool(i int) *maxPool {
	if i < 1 || i >= len(m.nodes) || m.from[i][0] != i-1 || m.readers[i] != 1 {
		return nil
	}
	p, ok := m.nodes[i].(*maxPool)
	r, ok2 := m.nodes[i-1].(*relu)
	if !ok || !ok2 || r.rescaling() {
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

// input is the k-th input of node i in the last forward pass.
func (m *Net) input(i, k int) []float32 {
	if f := m.from[i][k]; f >= 0 {
		return m.outs[f]
	}
	return m.xin
}

// forward is Forward on inputs already checked; it looks at ctx before
// every layer and stops with its error.
func (m *Net) forward(ctx context.Context, x []float32, n int) ([]float32, error) {
	m.n = n
	chwToHWC(grow(&m.xin, len(x)), x, n, m.inDims())
	var cur []float32
	for i := 0; i < len(m.nodes); i++ {
		if err := ctx.Err(); err != nil {
			m.n = 0 // nothing whole to differentiate
			return nil, err
		}
		m.grads[i] = nil
		m.ungated[i] = false
		if p := m.reluPool(i + 1); p != nil {
			// The pool takes the ReLU's input and applies it as it goes;
			// the ReLU's own output is made only if Activation asks.
			r := m.nodes[i].(*relu)
			r.x = m.input(i, 0)
			m.outs[i] = nil
			cur = p.pool(r.x, n, true)
			i++
			m.grads[i], m.ungated[i] = nil, false
		} else {
			switch nd := m.nodes[i].(type) {
			case layer:
				cur = nd.forward(m.input(i, 0), n, m.train)
			case junction:
				m.xs = m.xs[:0]
				for k := range m.from[i] {
					m.xs = append(m.xs, m.input(i, k))
				}
				cur = nd.join(m.xs, n)
			}
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
	clear(m.grads)
	clear(m.ungated)
	m.dhwc = nil
	last := len(m.nodes) - 1
	m.grads[last] = dLogits
	inputGrad, paramGrad := want&engine.InputGrad != 0, want&engine.ParamGrad != 0
	need := func(f int) bool { return f >= 0 || inputGrad }
	for i := last; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dy := m.grads[i]
		if p := m.reluPool(i); p != nil {
			// ReLU then max-pool: the pool routes each gradient to its
			// window's argmax, where ReLU's derivative is 1 unless the
			// window's maximum is 0, so one gated scatter does both layers'
			// work. The gradient between them is computed on request.
			m.ungated[i-1] = true
			i--
			if f := m.from[i][0]; need(f) {
				m.deposit(f, p.scatter(grow(&p.dx, m.n*p.i.size()), dy, m.n, true))
			}
			continue
		}
		switch nd := m.nodes[i].(type) {
		case layer:
			f := m.from[i][0]
			if dx := nd.backward(dy, m.n, need(f), paramGrad); need(f) {
				m.deposit(f, dx)
			}
		case junction:
			needs := make([]bool, len(m.from[i]))
			for k, f := range m.from[i] {
				needs[k] = need(f)
			}
			for k, dx := range nd.split(dy, m.n, needs) {
				if needs[k] {
					m.deposit(m.from[i][k], dx)
				}
			}
		}
	}
	if !inputGrad {
		return nil, nil
	}
	dx := grow(&m.dxin, len(m.dhwc))
	hwcToCHW(dx, m.dhwc, m.n, m.inDims())
	return dx, nil
}

// deposit adds g to the gradient of node f's output (f = −1: the input's):
// it becomes that gradient where nothing else reads the output, and is
// added into sums where something does.
func (m *Net) deposit(f int, g []float32) {
	dst := &m.dhwc
	if f >= 0 {
		dst = &m.grads[f]
	}
	switch {
	case m.readers[f+1] == 1:
		*dst = g
	case *dst == nil:
		*dst = grow(&m.sums[f+1], len(g))
		copy(*dst, g)
	default:
		addTo(*dst, g)
	}
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
	names := make([]string, len(m.nodes))
	for i, l := range m.nodes {
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
	for _, l := range m.nodes {
		if o := l.out(); o.h*o.w > 1 {
			name = l.name()
		}
	}
	return name
}

// Activation implements engine.Network.
func (m *Net) Activation(name string) (engine.Activation, error) {
	for i, l := range m.nodes {
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
		if ts, ok := l.(tensorShaped); ok { // row-major already: hwcToCHW copies
			a.Shape = append([]int{m.n}, ts.tensorShape()...)
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
			p := m.nodes[i+1].(*maxPool)
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

// rescaler is a nonlinearity of one input that DeepLift's rescale rule
// applies to: under it, the layer keeps the reference batch's input (ref,
// refN samples) and passes back (f(x) − f(x̄))/(x − x̄), or f′(x) where
// x = x̄.
type rescaler interface {
	layer
	setRef(ref []float32, n int)
	rescaling() bool
	input() []float32
}

// reference is a rescaler's reference input: nil under the gradient rule.
type reference struct {
	ref  []float32
	refN int
}

func (r *reference) setRef(ref []float32, n int) { r.ref, r.refN = ref, n }
func (r *reference) rescaling() bool             { return r.ref != nil }

// SetRule implements engine.Network. Under Rescale it runs the reference
// batch forward once and keeps every nonlinearity's reference input; the
// other layers (linear ones, and the products and max-pools, for which the
// rule is not defined) keep the gradient, as do the layers inside a
// residual block.
func (m *Net) SetRule(r engine.Rule, reference []float32, n int) error {
	switch r {
	case engine.Gradient:
		for _, l := range m.nodes {
			if rl, ok := l.(rescaler); ok {
				rl.setRef(nil, 0)
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
		for _, l := range m.nodes {
			if rl, ok := l.(rescaler); ok {
				rl.setRef(append([]float32(nil), rl.input()...), n)
			}
		}
		m.n = 0
		return nil
	}
	return fmt.Errorf("%s: unknown backward rule %d", m.arch, r)
}

// Clone implements engine.Network.
func (m *Net) Clone() engine.Network {
	c, _ := newGraph(m.arch, m.shape, m.classes, m.kern, cloneNodes(m.nodes, m.kern), m.from) // same shapes as m: cannot fail
	// The layers' clones share m's values and gradient buffers: c gets its own.
	for _, q := range c.paramPtrs() {
		q.Data = slices.Clone(q.Data)
		if q.Grad != nil {
			q.Grad = make([]float32, len(q.Grad))
		}
	}
	c.train, c.cam = m.train, m.cam
	return c
}

// TakeWeights makes the parameters named in ws those slices themselves,
// not copies (an importer's weights, decoded once): the network owns them
// afterwards, and the caller must not write to them. Every parameter must
// be named, with its number of values.
func (m *Net) TakeWeights(ws map[string][]float32) error {
	ps := m.paramPtrs()
	for _, q := range ps {
		if w, ok := ws[q.Name]; !ok || len(w) != len(q.Data) {
			return fmt.Errorf("%s: no weights for %s of shape %v", m.arch, q.Name, q.Shape)
		}
	}
	for _, q := range ps {
		q.Data = ws[q.Name]
	}
	return nil
}

// cloneNodes clones every node onto kern; their parameters share the
// nodes' values and gradient buffers (Clone makes its own; a replica reads
// the values and gets its gradients' slots from Gradient).
func cloneNodes(ns []node, kern gemm.Kernel) []node {
	out := make([]node, len(ns))
	for i, nd := range ns {
		switch nd := nd.(type) {
		case layer:
			out[i] = nd.clone(kern)
		case kernelled:
			out[i] = nd.onKernel(kern)
		case junction:
			out[i] = nd.copy()
		}
	}
	return out
}

// Init draws every parameter as PyTorch's default initialisation does:
// Conv2d and Linear weights and biases uniform on ±1/√fan_in; batch norm
// with unit scale, zero shift and fresh running statistics.
func (m *Net) Init(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for _, l := range m.nodes {
		initLayer(l, rng)
	}
}

var _ engine.Randomiser = (*Net)(nil)

// RandomLayers implements engine.Randomiser: the modules with parameters
// (goar-cnn: c1 c2 c3 f1 f2 f3; a residual block is one).
func (m *Net) RandomLayers() []string {
	var names []string
	for _, l := range m.nodes {
		if len(l.params()) > 0 {
			names = append(names, l.name())
		}
	}
	return names
}

// Randomise implements engine.Randomiser, drawing the layer as Init does
// (batch norm back to unit scale and zero shift).
func (m *Net) Randomise(layer string, seed uint64) error {
	for _, l := range m.nodes {
		if l.name() == layer && len(l.params()) > 0 {
			initLayer(l, rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)))
			return nil
		}
	}
	return fmt.Errorf("%s has no layer %q with parameters (layers: %v)", m.arch, layer, m.RandomLayers())
}

func initLayer(l node, rng *rand.Rand) {
	uniform := func(w engine.Param, ps ...*engine.Param) {
		bound := 1 / math.Sqrt(float64(engine.Size(w.Shape[1:])))
		for _, p := range ps {
			for i := range p.Data {
				p.Data[i] = float32((2*rng.Float64() - 1) * bound)
			}
		}
	}
	switch l := l.(type) {
	case *batchNorm:
		for i := range l.w.Data {
			l.w.Data[i], l.b.Data[i], l.rmean.Data[i], l.rvar.Data[i] = 1, 0, 0, 1
		}
	case *layerNorm: // PyTorch's LayerNorm: unit scale, zero shift
		for i := range l.w.Data {
			l.w.Data[i], l.b.Data[i] = 1, 0
		}
	case *rowLinear:
		initLayer(l.linear, rng)
	case *residual:
		for _, s := range append(append([]layer(nil), l.main...), l.shortcut...) {
			initLayer(s, rng)
		}
	default: // convolutions and linear layers: a weight, maybe a bias
		if ps := l.params(); len(ps) > 0 {
			uniform(*ps[0], ps...)
		}
	}
}
