package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"faithlab/core/engine"
	"faithlab/core/engine/native"
)

// shape is an activation's shape: c channels of h×w, or a vector of c.
type shape struct {
	c, h, w int
	flat    bool
}

func (s shape) size() int { return s.c * s.h * s.w }

// act is an activation: the layer that makes it ("" for the graph's input).
type act struct {
	layer string
	s     shape
	t     *tshape // a tensor (tensors.go): s is then its size as a vector
}

// constant is a tensor known at import: stored in the file, or computed
// from shapes (ints, where batchSize stands for the batch size).
type constant struct {
	t    *tensor
	dims []int64
	ints []int64
	fl   []float32 // computed floats
}

// batchSize stands for the batch size in the shapes computed at import,
// and batched(k) for k times it (a transformer's batch merged with its
// heads or tokens): values no shape holds otherwise.
const batchSize = math.MinInt64 / 2

// maxBatchFactor bounds k in batched(k).
const maxBatchFactor = 1 << 40

// batched is k times the batch size (k ≥ 1) in a computed shape.
func batched(k int64) int64 { return batchSize + k - 1 }

// batchFactor is k where v stands for k times the batch size, else 0.
func batchFactor(v int64) int64 {
	if v >= batchSize && v < batchSize+maxBatchFactor {
		return v - batchSize + 1
	}
	return 0
}

func isBatch(v int64) bool { return batchFactor(v) > 0 }

// value is what a tensor of the graph is at import: an activation or a
// constant.
type value struct {
	a *act
	c *constant
}

// integers returns an integer constant's values.
func (c *constant) integers() ([]int64, error) {
	if c.fl != nil {
		return nil, errors.New("floats where integers are expected")
	}
	if c.ints == nil && c.t != nil {
		v, err := c.t.integers()
		if err != nil {
			return nil, err
		}
		c.ints = v
	}
	return c.ints, nil
}

// floats returns a constant's values as float32: a stored tensor's
// weights, or computed integers without the batchSize among them.
func (c *constant) floats() ([]float32, error) {
	if c.fl != nil {
		return c.fl, nil
	}
	if c.t != nil && (c.t.dataType == typeFloat || c.t.dataType == typeDouble) {
		return c.t.values()
	}
	v, err := c.integers()
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(v))
	for i, x := range v {
		if isBatch(x) {
			return nil, errors.New("the batch size where a value is needed")
		}
		out[i] = float32(x)
	}
	return out, nil
}

// count is the number of values the constant's dims declare.
func (c *constant) count() int {
	n := 1
	for _, d := range c.dims {
		n *= int(d)
	}
	return n
}

// importer reads a graph's nodes, in order, into native layers.
type importer struct {
	g       *Graph
	opset   int64
	vals    map[string]value
	readers map[string]int // how many of the nodes read each tensor
	taken   map[string]bool
	count   map[string]int
	index   map[string]int    // layers by name
	naming  map[string]naming // how to name each layer, by provisional name
	silu    map[*node]string  // Mul nodes that are x·σ(x), with x
	skip    map[*node]bool    // Sigmoid nodes folded into those
	out     string
	// Constant folding (consts.go): the file's bytes, the values folded so
	// far and the most a file of that size may fold, stored tensors' values
	// converted once.
	size, made, budget int
	cache              map[*constant]values
	chw                map[string]*act // maps permuted to tensors, by layer
}

// read reads the graph of a file of size bytes.
func (g *Graph) read(gr *graph, size int) error {
	im := &importer{g: g, opset: g.Opset, vals: map[string]value{}, readers: map[string]int{}, taken: map[string]bool{},
		count: map[string]int{}, index: map[string]int{}, naming: map[string]naming{}, silu: map[*node]string{}, skip: map[*node]bool{}, chw: map[string]*act{},
		size: size, budget: foldBudget(size)}
	for i := range gr.initializers {
		t := &gr.initializers[i]
		im.vals[t.name] = value{c: &constant{t: t, dims: t.dims}}
	}
	var inputs []valueInfo
	for _, in := range gr.inputs {
		if _, ok := im.vals[in.name]; !ok {
			inputs = append(inputs, in)
		}
	}
	if len(inputs) != 1 {
		return fmt.Errorf("the graph takes %d inputs besides its weights: a classifier takes one", len(inputs))
	}
	if len(gr.outputs) != 1 {
		return fmt.Errorf("the graph gives %d outputs: a classifier gives one, its logits", len(gr.outputs))
	}
	in := inputs[0]
	im.out = gr.outputs[0].name
	s, declared, err := inputShape(in)
	if err != nil {
		return err
	}
	im.vals[in.name] = value{a: &act{s: s}}

	nodes, err := im.order(gr, in.name)
	if err != nil {
		return err
	}
	im.fuseSiLU(nodes)
	for _, n := range nodes {
		if im.skip[n] {
			continue
		}
		if slices.Contains(Supported, n.op) && n.domain != "" && n.domain != "ai.onnx" {
			return fmt.Errorf("node %q: operator %s of domain %q is not supported (only the default ONNX domain)", n.name, n.op, n.domain)
		}
		layers := len(g.Layers)
		if err := im.node(n, in.name); err != nil {
			return err
		}
		if len(g.Layers) > layers {
			if a := im.vals[n.outputs[0]].a; a != nil && a.s.size() > maxActivation {
				return fmt.Errorf("node %q (%s) makes %d×%d×%d values for each input, more than Faithlab holds for one layer (%d)", n.name, n.op, a.s.c, a.s.h, a.s.w, maxActivation)
			}
		}
	}
	return im.finish(in.name, declared)
}

// inputShape reads the graph input's declared shape: (N, C, H, W) images or
// (N, D) tables, all but the batchSize fixed.
func inputShape(in valueInfo) (shape, []int, error) {
	if in.elemType != typeFloat {
		return shape{}, nil, fmt.Errorf("input %q of element type %d: want float32", in.name, in.elemType)
	}
	var declared []int
	for i, d := range in.dims {
		if i == 0 {
			continue // the batchSize
		}
		if !d.known || d.value <= 0 || d.value > 1<<16 {
			return shape{}, nil, fmt.Errorf("input %q: dimension %d is %q: Faithlab needs the input's shape (all but the batch size) fixed", in.name, i, d.param)
		}
		declared = append(declared, int(d.value))
	}
	var s shape
	switch len(declared) {
	case 3:
		s = shape{c: declared[0], h: declared[1], w: declared[2]}
	case 1:
		s = shape{c: declared[0], h: 1, w: 1, flat: true}
	default:
		return shape{}, nil, fmt.Errorf("input %q of shape %v: want (N, C, H, W) images or (N, D) tables", in.name, in.dims)
	}
	if engine.Size([]int{s.c, s.h, s.w}) > 1<<24 {
		return shape{}, nil, fmt.Errorf("input %q of shape %v: too large", in.name, declared)
	}
	return s, declared, nil
}

// order returns the nodes that lead to the output, in the file's order,
// after checking that the file lists every node after those that make
// its inputs (ONNX's rule) and that every node other than a constant
// leads to the output.
func (im *importer) order(gr *graph, input string) ([]*node, error) {
	maker := map[string]*node{}
	for i := range gr.nodes {
		n := &gr.nodes[i]
		if len(n.outputs) == 0 || n.outputs[0] == "" {
			return nil, fmt.Errorf("node %q (%s) has no output", n.name, n.op)
		}
		for _, o := range n.outputs {
			if o == "" {
				continue
			}
			if m, ok := maker[o]; ok || o == input || im.vals[o].c != nil {
				what := "the graph's input or a weight"
				if ok {
					what = fmt.Sprintf("node %q", m.name)
				}
				return nil, fmt.Errorf("node %q (%s) makes tensor %q, which %s makes too: the graph has a cycle or is malformed", n.name, n.op, o, what)
			}
			maker[o] = n
		}
	}
	made := map[string]bool{input: true}
	for i := range gr.nodes {
		n := &gr.nodes[i]
		for _, x := range n.inputs {
			if x == "" || made[x] || im.vals[x].c != nil {
				continue
			}
			if _, later := maker[x]; later {
				return nil, fmt.Errorf("node %q (%s) reads tensor %q before a node makes it: the graph has a cycle or its nodes are out of order", n.name, n.op, x)
			}
			return nil, fmt.Errorf("node %q (%s) reads tensor %q, which no node makes", n.name, n.op, x)
		}
		for _, o := range n.outputs {
			made[o] = true
		}
	}
	if _, ok := maker[im.out]; !ok {
		return nil, fmt.Errorf("no node makes the graph's output %q", im.out)
	}
	needed := map[string]bool{im.out: true}
	keep := make([]bool, len(gr.nodes))
	for i := len(gr.nodes) - 1; i >= 0; i-- {
		n := &gr.nodes[i]
		for _, o := range n.outputs {
			keep[i] = keep[i] || needed[o]
		}
		if !keep[i] {
			if n.op == "Constant" {
				continue
			}
			return nil, fmt.Errorf("node %q (%s) does not lead to the graph's output %q: Faithlab reads classifiers whose every node serves the logits", n.name, n.op, im.out)
		}
		for _, x := range n.inputs {
			needed[x] = true
		}
	}
	var nodes []*node
	for i := range gr.nodes {
		if keep[i] {
			n := &gr.nodes[i]
			nodes = append(nodes, n)
			for _, x := range n.inputs {
				im.readers[x]++
			}
		}
	}
	im.readers[im.out]++
	return nodes, nil
}

// finish checks the output and makes the first layer the input's only
// reader.
func (im *importer) finish(input string, declared []int) error {
	g := im.g
	out := im.vals[im.out]
	if out.a == nil {
		return fmt.Errorf("the graph's output %q is a constant: a classifier computes its logits from its input", im.out)
	}
	s := out.a.s
	if t := out.a.t; t != nil {
		return fmt.Errorf("the output is a tensor of shape %s: a classifier gives one logit per class", shapeText(t.logical()))
	}
	if !s.flat && (s.h != 1 || s.w != 1) {
		return fmt.Errorf("the output is a %d×%d×%d map: a classifier gives one logit per class", s.c, s.h, s.w)
	}
	if s.c < 2 {
		return fmt.Errorf("the output holds %d value: a classifier gives a logit per class, at least 2", s.c)
	}
	if len(g.Layers) == 0 || out.a.layer == "" {
		return errors.New("the graph holds no layer")
	}
	if last := g.Layers[len(g.Layers)-1].Name; out.a.layer != last {
		return fmt.Errorf("the output %q is layer %s's, not the last layer's (%s)", im.out, out.a.layer, last)
	}
	g.Classes = s.c
	im.markAttention()
	im.rename()
	fuseGELU(g)
	fuseLayerNorm(g)
	switch {
	case g.NHWC:
		g.InputShape = []int{declared[2], declared[0], declared[1]}
	case len(declared) == 3:
		g.InputShape = declared
	default:
		g.InputShape = []int{declared[0], 1, 1}
	}
	readers := 0
	for _, l := range g.Layers {
		for _, x := range l.In {
			if x == "" {
				readers++
			}
		}
	}
	if readers == 1 && len(g.Layers[0].In) == 1 && g.Layers[0].In[0] == "" {
		g.Layers[0].In = nil
		return nil
	}
	name := im.unique("input")
	for i := range g.Layers {
		for k, x := range g.Layers[i].In {
			if x == "" {
				g.Layers[i].In[k] = name
			}
		}
	}
	g.Layers = append([]native.Layer{{Op: "identity", Name: name}}, g.Layers...)
	return nil
}

// unique returns base, or base_2, base_3, … where base is taken.
func (im *importer) unique(base string) string {
	name := base
	for k := 2; im.taken[name]; k++ {
		name = fmt.Sprintf("%s_%d", base, k)
	}
	im.taken[name] = true
	return name
}

// naming is what a layer's name is made from: its node, its kind and its
// weight's name.
type naming struct {
	n            *node
	kind, weight string
}

// name returns a provisional name for node n's layer: the final ones
// (see rename) depend on all the layers.
func (im *importer) name(n *node, kind, weight string) string {
	name := fmt.Sprintf("#%d", len(im.naming))
	im.naming[name] = naming{n, kind, weight}
	return name
}

// scope splits a node name that PyTorch's exporter scoped in modules
// ("/layer4/layer4.1/relu_1/Relu") into the module's name, as PyTorch
// names it ("layer4.1.relu_1"), and the operator's part ("Relu"); "" for
// other names and nodes outside any module ("/Flatten").
func scope(name string) (module, op string) {
	s, ok := strings.CutPrefix(name, "/")
	parts := strings.Split(s, "/")
	if !ok || len(parts) < 2 {
		return "", ""
	}
	path, base, last := "", "", ""
	join := func(a, b string) string {
		if a == "" {
			return b
		}
		return a + "." + b
	}
	for _, p := range parts[:len(parts)-1] {
		// A module's segment repeats its parent's where the parent is a
		// container: /features/features.1/features.1.0/block/block.1.
		if last != "" && strings.HasPrefix(p, last+".") {
			path = join(base, p)
		} else {
			base, path = path, join(path, p)
		}
		last = p
	}
	return path, parts[len(parts)-1]
}

// rename gives every layer its final name — PyTorch's module name where
// the node's weight is stored under it ("layer1.0.conv1.weight"), or where
// PyTorch's exporter scoped the node in a module that holds no other layer
// and no module that does ("layer4.1.relu_1"), the module's name and the
// operator otherwise ("layer4.1.add"), kind and count for the rest
// ("relu3", "flatten") — and renames the layers' inputs and weights.
func (im *importer) rename() {
	g := im.g
	layers, leaf := map[string]int{}, map[string]bool{}
	for _, nm := range im.naming {
		if m, _ := scope(nm.n.name); m != "" {
			layers[m]++
			leaf[m] = true
		}
	}
	for m := range leaf {
		for p := m; strings.Contains(p, "."); {
			p = p[:strings.LastIndex(p, ".")]
			if _, ok := leaf[p]; ok {
				leaf[p] = false
			}
		}
	}
	final := map[string]string{}
	for i := range g.Layers {
		l := &g.Layers[i]
		nm := im.naming[l.Name]
		name := ""
		if p, ok := strings.CutSuffix(nm.weight, ".weight"); ok && p != "" && !strings.ContainsAny(p, " \t\n") {
			name = p
		} else if m, op := scope(nm.n.name); m != "" && layers[m] == 1 && leaf[m] {
			name = m
		} else if m != "" {
			name = m + "." + strings.ToLower(op)
		}
		if name == "" || im.taken[name] {
			name = im.counted(nm.kind)
		}
		name = im.unique(name)
		final[l.Name] = name
		for _, suffix := range []string{".weight", ".bias", ".running_mean", ".running_var"} {
			if w, ok := g.Weights[l.Name+suffix]; ok {
				delete(g.Weights, l.Name+suffix)
				g.Weights[name+suffix] = w
			}
		}
		l.Name = name
	}
	for i := range g.Layers {
		for k, x := range g.Layers[i].In {
			if x != "" {
				g.Layers[i].In[k] = final[x]
			}
		}
	}
}

// counted is kind and the next count of that kind not taken ("relu3"; the
// first flatten is "flatten").
func (im *importer) counted(kind string) string {
	for {
		im.count[kind]++
		name := fmt.Sprintf("%s%d", kind, im.count[kind])
		if kind == "flatten" && im.count[kind] == 1 {
			name = kind
		}
		if !im.taken[name] {
			return name
		}
	}
}

// maxActivation bounds one layer's output for one input (in values):
// 16 M, twenty times VGG's largest at 224×224. A file cannot make
// Faithlab hold more for it than its layers honestly need.
const maxActivation = 1 << 24

// emit appends layer l reading the activations ins and makes it the
// value of tensor out.
func (im *importer) emit(l native.Layer, out string, s shape, ins ...*act) {
	for _, a := range ins {
		l.In = append(l.In, a.layer)
	}
	im.index[l.Name] = len(im.g.Layers)
	im.g.Layers = append(im.g.Layers, l)
	im.vals[out] = value{a: &act{layer: l.Name, s: s}}
}

// act returns node n's input k as an activation.
func (im *importer) act(n *node, k int) (*act, error) {
	if k >= len(n.inputs) || n.inputs[k] == "" {
		return nil, fmt.Errorf("node %q (%s): no input %d", n.name, n.op, k)
	}
	v := im.vals[n.inputs[k]]
	if v.a == nil {
		return nil, fmt.Errorf("node %q (%s): its input %q is a constant, where Faithlab supports only an activation", n.name, n.op, n.inputs[k])
	}
	return v.a, nil
}

// image returns node n's input k as a map (not a vector).
func (im *importer) image(n *node, k int) (*act, error) {
	a, err := im.act(n, k)
	if err == nil && a.s.flat {
		err = fmt.Errorf("node %q: %s of a vector of %d values, where it takes maps", n.name, n.op, a.s.c)
	}
	return a, err
}

// constant returns node n's input k as a constant (nil, nil where the
// input is absent).
func (im *importer) constant(n *node, k int, what string) (*constant, error) {
	if k >= len(n.inputs) || n.inputs[k] == "" {
		return nil, nil
	}
	v := im.vals[n.inputs[k]]
	if v.c == nil {
		return nil, fmt.Errorf("node %q (%s): its %s %q is computed, not stored: only weights stored in the file are supported", n.name, n.op, what, n.inputs[k])
	}
	return v.c, nil
}

// weight returns node n's input k as stored, finite float values.
func (im *importer) weight(n *node, k int, what string) (*constant, []float32, error) {
	c, err := im.constant(n, k, what)
	if err == nil && c == nil {
		err = fmt.Errorf("node %q (%s): no %s", n.name, n.op, what)
	}
	if err != nil {
		return nil, nil, err
	}
	v, err := c.floats()
	if err != nil {
		return nil, nil, fmt.Errorf("node %q (%s): %s: %w", n.name, n.op, what, err)
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, nil, fmt.Errorf("node %q (%s): %s %q holds %g", n.name, n.op, what, n.inputs[k], x)
		}
	}
	return c, v, nil
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

func float(n *node, attr string, def float32) float32 {
	if a, ok := n.attrs[attr]; ok {
		return a.f
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
