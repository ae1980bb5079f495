// Package graph is Faithlab's second engine: the built-in architectures
// expressed as gorgonia expression graphs and differentiated by gorgonia's
// symbolic autodiff. It is slower than package native and exists for two
// reasons: as an independent implementation to check the native engine
// against (two engines agreeing to 1e-4 is the strongest test we have), and
// as the carrier of general graphs (ONNX imports) later.
//
// This is the only package that imports gorgonia; it takes and returns
// plain slices like every engine.Network. Graphs have a fixed batch size, so
// a graph is built (and cached) per batch size.
package graph

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"faithlab/core/engine"
)

// Net is a gorgonia implementation of a built-in architecture.
type Net struct {
	arch    string
	shape   []int
	classes int
	params  []engine.Param

	built map[int]*compiled
	cur   *compiled
	x     []float32
	n     int
}

var _ engine.Network = (*Net)(nil)

// compiled is one batch size's graph.
type compiled struct {
	g      *G.ExprGraph
	x, dl  *G.Node
	logits *G.Node
	params []*G.Node
	named  []namedNode
	grads  G.Nodes // d(Σ logits·dl)/d(x, params…)
	vm     G.VM
}

type namedNode struct {
	name string
	node *G.Node
	// overwritten: gorgonia's ReLU runs in place on this node's value, so
	// after a forward pass it holds the ReLU's output, not the layer's.
	overwritten bool
}

// New builds a gorgonia network for a built-in architecture; parameters are
// zero until set through Params (e.g. copied from a native network).
func New(arch string, shape []int, classes int) (*Net, error) {
	m := &Net{arch: arch, shape: slices.Clone(shape), classes: classes, built: map[int]*compiled{}}
	c, err := m.build(1)
	if err != nil {
		return nil, err
	}
	for _, p := range c.params {
		shp := []int(p.Shape())
		m.params = append(m.params, engine.Param{Name: p.Name(), Shape: shp,
			Data: make([]float32, engine.Size(shp)), Grad: make([]float32, engine.Size(shp))})
	}
	return m, nil
}

func (m *Net) build(n int) (c *compiled, err error) {
	defer func() {
		if r := recover(); r != nil { // gorgonia panics on shape errors
			err = fmt.Errorf("%s graph for %v: %v", m.arch, m.shape, r)
		}
	}()
	c = &compiled{g: G.NewGraph()}
	g := c.g
	f32 := tensor.Float32
	c.x = G.NewTensor(g, f32, 4, G.WithShape(n, m.shape[0], m.shape[1], m.shape[2]), G.WithName("x"))
	param := func(name string, shape ...int) *G.Node {
		var p *G.Node
		if len(shape) == 1 {
			p = G.NewVector(g, f32, G.WithShape(shape...), G.WithName(name))
		} else {
			p = G.NewTensor(g, f32, len(shape), G.WithShape(shape...), G.WithName(name))
		}
		c.params = append(c.params, p)
		return p
	}
	name := func(s string, nd *G.Node) *G.Node {
		c.named = append(c.named, namedNode{name: s, node: nd})
		return nd
	}
	conv := func(mod string, in *G.Node, cout, k int) *G.Node {
		cin := in.Shape()[1]
		w := param(mod+".weight", cout, cin, k, k)
		b := param(mod+".bias", cout)
		y := G.Must(G.Conv2d(in, w, tensor.Shape{k, k}, []int{0, 0}, []int{1, 1}, []int{1, 1}))
		b4 := G.Must(G.Reshape(b, tensor.Shape{1, cout, 1, 1}))
		return name(mod, G.Must(G.BroadcastAdd(y, b4, nil, []byte{0, 2, 3})))
	}
	linear := func(mod string, in *G.Node, out int) *G.Node {
		w := param(mod+".weight", out, in.Shape()[1])
		b := param(mod+".bias", out)
		y := G.Must(G.Mul(in, G.Must(G.Transpose(w))))
		b2 := G.Must(G.Reshape(b, tensor.Shape{1, out}))
		return name(mod, G.Must(G.BroadcastAdd(y, b2, nil, []byte{0})))
	}
	relu := func(s string, in *G.Node) *G.Node {
		for i := range c.named {
			if c.named[i].node == in {
				c.named[i].overwritten = true
			}
		}
		return name(s, G.Must(G.Rectify(in)))
	}
	pool := func(s string, in *G.Node) *G.Node {
		return name(s, G.Must(G.MaxPool2D(in, tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2})))
	}
	flat := func(in *G.Node) *G.Node {
		return name("flatten", G.Must(G.Reshape(in, tensor.Shape{n, engine.Size(in.Shape()[1:])})))
	}
	var h *G.Node
	switch m.arch {
	case "goar-cnn":
		h = pool("pool1", relu("relu1", conv("c1", c.x, 32, 5)))
		h = pool("pool2", relu("relu2", conv("c2", h, 64, 3)))
		h = flat(relu("relu3", conv("c3", h, 64, 3)))
		h = relu("relu5", linear("f2", relu("relu4", linear("f1", h, 64)), 32))
		h = linear("f3", h, m.classes)
	case "mlp":
		h = flat(c.x)
		for i, mod := range []string{"f1", "f2", "f3"} {
			h = relu(fmt.Sprintf("relu%d", i+1), linear(mod, h, 128))
		}
		h = linear("f4", h, m.classes)
	default:
		return nil, fmt.Errorf("graph engine: unknown architecture %q", m.arch)
	}
	c.logits = h
	c.dl = G.NewMatrix(g, f32, G.WithShape(n, m.classes), G.WithName("dlogits"))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(c.logits, c.dl))))
	if c.grads, err = G.Grad(cost, append(G.Nodes{c.x}, c.params...)...); err != nil {
		return nil, fmt.Errorf("%s: symbolic gradient: %w", m.arch, err)
	}
	var named G.Nodes
	for _, nn := range c.named {
		named = append(named, nn.node)
	}
	// Dual values keep each named node's derivative for Activation.
	c.vm = G.NewTapeMachine(g, G.BindDualValues(named...))
	return c, nil
}

// Arch implements engine.Network.
func (m *Net) Arch() string { return m.arch }

// InputShape implements engine.Network.
func (m *Net) InputShape() []int { return slices.Clone(m.shape) }

// Classes implements engine.Network.
func (m *Net) Classes() int { return m.classes }

// Params implements engine.Network; Data and Grad are shared with the net.
func (m *Net) Params() []engine.Param { return m.params }

// SetTraining implements engine.Network; these architectures have no
// training-only behaviour.
func (m *Net) SetTraining(bool) {}

// Layers implements engine.Network.
func (m *Net) Layers() []string {
	c, _ := m.graph(1)
	var s []string
	for _, nn := range c.named {
		s = append(s, nn.name)
	}
	return s
}

func (m *Net) graph(n int) (*compiled, error) {
	if c, ok := m.built[n]; ok {
		return c, nil
	}
	c, err := m.build(n)
	if err != nil {
		return nil, err
	}
	m.built[n] = c
	return c, nil
}

// run binds the input, the parameters and dLogits and runs the tape.
func (m *Net) run(dl []float32) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s graph: %v", m.arch, r)
		}
	}()
	c := m.cur
	c.vm.Reset()
	if err := G.Let(c.x, tensor.New(tensor.WithShape(c.x.Shape()...), tensor.WithBacking(slices.Clone(m.x)))); err != nil {
		return err
	}
	for i, p := range c.params {
		if err := G.Let(p, tensor.New(tensor.WithShape(p.Shape()...), tensor.WithBacking(slices.Clone(m.params[i].Data)))); err != nil {
			return err
		}
	}
	if err := G.Let(c.dl, tensor.New(tensor.WithShape(m.n, m.classes), tensor.WithBacking(dl))); err != nil {
		return err
	}
	return c.vm.RunAll()
}

func values(n *G.Node) []float32 { return n.Value().Data().([]float32) }

// Forward implements engine.Network.
func (m *Net) Forward(x []float32, n int) ([]float32, error) {
	if err := engine.CheckInput(x, n, m.shape); err != nil {
		return nil, fmt.Errorf("%s forward: %w", m.arch, err)
	}
	c, err := m.graph(n)
	if err != nil {
		return nil, err
	}
	m.cur, m.x, m.n = c, slices.Clone(x), n
	if err := m.run(make([]float32, n*m.classes)); err != nil {
		return nil, err
	}
	return slices.Clone(values(c.logits)), nil
}

// Backward implements engine.Network; it reruns the graph with dLogits bound.
func (m *Net) Backward(dLogits []float32, want engine.Want) ([]float32, error) {
	if m.cur == nil {
		return nil, fmt.Errorf("%s backward: no forward pass to differentiate", m.arch)
	}
	if len(dLogits) != m.n*m.classes {
		return nil, fmt.Errorf("%s backward: got %d output gradients, want %d×%d", m.arch, len(dLogits), m.n, m.classes)
	}
	if err := m.run(slices.Clone(dLogits)); err != nil {
		return nil, err
	}
	c := m.cur
	if want&engine.ParamGrad != 0 {
		for i := range c.params {
			for j, v := range values(c.grads[1+i]) {
				m.params[i].Grad[j] += v
			}
		}
	}
	if want&engine.InputGrad == 0 {
		return nil, nil
	}
	return slices.Clone(values(c.grads[0])), nil
}

// Activation implements engine.Network.
func (m *Net) Activation(name string) (engine.Activation, error) {
	if m.cur == nil {
		return engine.Activation{}, fmt.Errorf("%s: no forward pass yet", m.arch)
	}
	c := m.cur
	for _, nn := range c.named {
		if nn.name == name {
			if nn.overwritten {
				return engine.Activation{}, fmt.Errorf("%s: the gorgonia engine overwrites layer %s's output with the ReLU after it; use the native engine for pre-activation values", m.arch, name)
			}
			a := engine.Activation{Shape: []int(nn.node.Shape().Clone()), Values: slices.Clone(values(nn.node))}
			if g, err := nn.node.Grad(); err == nil && g != nil {
				a.Grad = slices.Clone(g.Data().([]float32))
			}
			return a, nil
		}
	}
	return engine.Activation{}, fmt.Errorf("%s has no layer %q (layers: %v)", m.arch, name, m.Layers())
}

// SetRule implements engine.Network. The gorgonia engine differentiates with
// the ordinary chain rule only.
func (m *Net) SetRule(r engine.Rule, _ []float32, _ int) error {
	if r != engine.Gradient {
		return fmt.Errorf("%s: the gorgonia engine supports only the gradient rule; use the native engine for DeepLift", m.arch)
	}
	return nil
}

// Clone implements engine.Network.
func (m *Net) Clone() engine.Network {
	c, _ := New(m.arch, m.shape, m.classes) // same arguments as m: cannot fail
	for i, p := range m.params {
		copy(c.params[i].Data, p.Data)
	}
	return c
}
