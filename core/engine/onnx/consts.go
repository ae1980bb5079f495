package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Constant folding: the nodes whose inputs are all known at import —
// the shape arithmetic exporters write around a Reshape or a Pad (Shape,
// Gather, Unsqueeze, Concat, ConstantOfShape, Slice, Transpose, Cast…) —
// are computed here, on integers (where batchSize stands for the batch
// size) or floats, and become constants themselves.
//
// Every folded node's output size is computed from its inputs' shapes and
// checked (room) before anything is allocated, and each op is one pass
// over its output: a file of a few KB cannot make the import build what it
// then refuses, nor take more than milliseconds to be refused.

// maxFolded bounds the values one folded node reads or makes (a weight
// transposed before a MatMul), and maxFilled those a ConstantOfShape
// makes (shapes and pads are a handful). foldSlack plus one value per
// byte of the file bounds the values folded over the whole model (at most
// 8 bytes each: 8 MB and eight times the file), so that many nodes each
// under maxFolded cannot add up to gigabytes: a folded node never makes
// more than the file holds, or a little more.
// maxRank bounds the dimensions of a tensor folded or read by a folded
// node (NumPy's 32; exporters' shapes have a handful).
const (
	maxFolded = 1 << 24
	maxFilled = 1 << 16
	foldSlack = 1 << 20
	maxRank   = 32
)

// foldBudget is the values a file of size bytes may fold in all.
func foldBudget(size int) int { return foldSlack + size }

// foldable lists the operators folded when all their inputs are constants.
var foldable = map[string]bool{"Reshape": true, "Transpose": true, "Slice": true, "Concat": true, "Squeeze": true, "Unsqueeze": true,
	"Gather": true, "ConstantOfShape": true, "Cast": true, "Shape": true, "Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true,
	"Identity": true, "Equal": true, "Where": true, "Expand": true}

// allConstant says whether every input of n is a constant.
func (im *importer) allConstant(n *node) bool {
	some := false
	for _, x := range n.inputs {
		if x == "" {
			continue
		}
		if im.vals[x].c == nil {
			return false
		}
		some = true
	}
	return some
}

// values is a constant's data: integers or floats, row-major over dims.
// Folding never writes into one: a Reshape's output shares its input's.
type values struct {
	dims []int64
	ints []int64
	fl   []float32
}

func (v values) len() int {
	if v.fl != nil {
		return len(v.fl)
	}
	return len(v.ints)
}

// as is the constant of v's values under other dims (of as many values).
func (v values) as(dims []int64) *constant { return &constant{dims: dims, ints: v.ints, fl: v.fl} }

// data returns a constant's values, checked against its dims.
func (c *constant) data() (values, error) {
	v := values{dims: c.dims}
	var err error
	switch {
	case c.fl != nil:
		v.fl = c.fl
	case c.ints != nil:
		v.ints = c.ints
	case c.t != nil && (c.t.dataType == typeFloat || c.t.dataType == typeDouble):
		v.fl, err = c.t.values()
	default:
		v.ints, err = c.integers()
	}
	if err != nil {
		return v, err
	}
	if v.fl == nil && v.ints == nil {
		v.ints = []int64{}
	}
	if n, err := elements(c.dims); err != nil || n != v.len() {
		return v, fmt.Errorf("a constant of shape %v holds %d values", c.dims, v.len())
	}
	return v, nil
}

// elements is the count of values dims declare.
func elements(dims []int64) (int, error) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 || d > maxValues || n*d > maxValues {
			return 0, fmt.Errorf("shape %v", dims)
		}
		n *= d
	}
	return int(n), nil
}

// product is the count of values dims declare, math.MaxInt64 where that
// overflows, -1 for a negative dimension.
func product(dims []int64) int64 {
	if slices.ContainsFunc(dims, func(d int64) bool { return d < 0 }) {
		return -1
	}
	if slices.Contains(dims, 0) {
		return 0
	}
	n := int64(1)
	for _, d := range dims {
		if n > math.MaxInt64/d {
			return math.MaxInt64
		}
		n *= d
	}
	return n
}

// strides are row-major strides of dims.
func strides(dims []int64) []int {
	s := make([]int, len(dims))
	k := 1
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = k
		k *= int(dims[i])
	}
	return s
}

// axis normalises a possibly negative axis of a tensor of rank r.
func axis(a int64, r int) (int, error) {
	if a < 0 {
		a += int64(r)
	}
	if a < 0 || a >= int64(r) {
		return 0, fmt.Errorf("axis %d of a tensor of rank %d", a, r)
	}
	return int(a), nil
}

// list reads a node's integer list given as an attribute (before opset
// since) or as input k (from since on); nil where it has none.
func (im *importer) list(n *node, attr string, k int, since int64) ([]int64, error) {
	if im.opset < since {
		return ints(n, attr), nil
	}
	c, err := im.constant(n, k, attr)
	if err != nil || c == nil {
		return nil, err
	}
	return c.integers()
}

// tooMany is the error of a folded node that would read or make more
// values than Faithlab computes at import; fold words it.
type tooMany struct {
	reads  bool  // its input, not its output
	k      int64 // the values (math.MaxInt64: more than that)
	before int   // values folded before it, where it passes the model's budget
	budget int   // the model's budget, where it passes it; 0 otherwise
}

func (e *tooMany) Error() string {
	return fmt.Sprintf("%d values: more than Faithlab computes at import", e.k)
}

// words says what node n would do in the user's words.
func (e *tooMany) words(n *node, size int) error {
	if e.budget > 0 {
		with := ""
		if e.before > 0 {
			with = fmt.Sprintf(", %d with the constants folded before it", int64(e.before)+e.k)
		}
		return fmt.Errorf("node %q (%s) of constants makes %d values%s: more than Faithlab computes at import for a file of %d bytes (%d in all)",
			n.name, n.op, e.k, with, size, e.budget)
	}
	verb, k := "makes", fmt.Sprint(e.k)
	if e.reads {
		verb = "reads"
	}
	if e.k == math.MaxInt64 {
		k = "more than " + k
	}
	return fmt.Errorf("node %q (%s) of constants %s %s values: more than Faithlab computes at import (%d for one node)", n.name, n.op, verb, k, maxFolded)
}

// room checks a folded node's output of dims against the cap of one node
// and the model's budget, before anything is allocated, and counts it
// against the budget: every allocation of folding's values passes here.
func (im *importer) room(dims []int64) (int, error) {
	k := product(dims)
	switch {
	case len(dims) > maxRank:
		return 0, fmt.Errorf("a tensor of %d dimensions: Faithlab folds at most %d", len(dims), maxRank)
	case k < 0:
		return 0, fmt.Errorf("shape %v", dims)
	case k > maxFolded:
		return 0, &tooMany{k: k}
	case im.made+int(k) > im.budget:
		return 0, &tooMany{k: k, before: im.made, budget: im.budget}
	}
	im.made += int(k)
	return int(k), nil
}

// input returns node n's input k's values after checking the values its
// shape declares against the cap of one node; a stored tensor is converted
// once, however many nodes read it.
func (im *importer) input(n *node, k int) (values, error) {
	if k >= len(n.inputs) || n.inputs[k] == "" {
		return values{}, fmt.Errorf("no input %d (its name is empty)", k)
	}
	c := im.vals[n.inputs[k]].c
	if v, ok := im.cache[c]; ok {
		return v, nil
	}
	if k := product(c.dims); k > maxFolded {
		return values{}, &tooMany{reads: true, k: k}
	}
	if len(c.dims) > maxRank {
		return values{}, fmt.Errorf("a tensor of %d dimensions: Faithlab folds at most %d", len(c.dims), maxRank)
	}
	v, err := c.data()
	if err == nil && c.t != nil {
		if im.cache == nil {
			im.cache = map[*constant]values{}
		}
		im.cache[c] = v
	}
	return v, err
}

// fold computes node n, all of whose inputs are constants.
func (im *importer) fold(n *node) error {
	c, err := im.folded(n)
	if tm := (*tooMany)(nil); errors.As(err, &tm) {
		return tm.words(n, im.size)
	}
	if err == nil && len(c.dims) > maxRank {
		err = fmt.Errorf("a tensor of %d dimensions: Faithlab folds at most %d", len(c.dims), maxRank)
	}
	if err != nil {
		return fmt.Errorf("node %q (%s) of constants: %w", n.name, n.op, err)
	}
	im.vals[n.outputs[0]] = value{c: c}
	return nil
}

// folded computes node n of constants.
func (im *importer) folded(n *node) (*constant, error) {
	in, err := im.input(n, 0)
	if err != nil {
		return nil, err
	}
	r := len(in.dims)
	switch n.op {
	case "Identity":
		return im.vals[n.inputs[0]].c, nil
	case "Shape":
		if _, err := im.room([]int64{int64(r)}); err != nil {
			return nil, err
		}
		return &constant{dims: []int64{int64(r)}, ints: slices.Clone(in.dims)}, nil
	case "Cast":
		return im.cast(n, in)
	case "Reshape":
		target, err := im.list(n, "shape", 1, 5)
		if err != nil || len(target) > 8 {
			return nil, errors.New("its shape: want a few integers")
		}
		dims := slices.Clone(target)
		infer, known := -1, int64(1)
		for i, d := range dims {
			switch {
			case d == 0 && integer(n, "allowzero", 0) == 0 && i < r:
				dims[i] = in.dims[i]
			case d == -1 && infer < 0:
				infer = i
				continue
			case d < 0:
				return nil, fmt.Errorf("shape %v", target)
			}
			known *= max(dims[i], 1)
		}
		if infer >= 0 {
			if known == 0 || int64(in.len())%known != 0 {
				return nil, fmt.Errorf("%d values into shape %v", in.len(), target)
			}
			dims[infer] = int64(in.len()) / known
		}
		if k, err := elements(dims); err != nil || k != in.len() {
			return nil, fmt.Errorf("%d values into shape %v", in.len(), target)
		}
		return in.as(dims), nil
	case "Transpose":
		perm := ints(n, "perm")
		if perm == nil {
			for a := r - 1; a >= 0; a-- {
				perm = append(perm, int64(a))
			}
		}
		if len(perm) != r {
			return nil, fmt.Errorf("perm %v of a tensor of rank %d", perm, r)
		}
		dims, seen := make([]int64, r), make([]bool, r)
		for i, p := range perm {
			if p < 0 || p >= int64(r) || seen[p] {
				return nil, fmt.Errorf("perm %v", perm)
			}
			seen[p] = true
			dims[i] = in.dims[p]
		}
		k, err := im.room(dims)
		if err != nil {
			return nil, err
		}
		st, step := strides(in.dims), make([]int, r)
		for i, p := range perm {
			step[i] = st[p]
		}
		return in.walk(dims, k, 0, step), nil
	case "Slice":
		return im.slice(n, in)
	case "Concat":
		return im.concatConstants(n, in)
	case "Squeeze", "Unsqueeze":
		dims, err := im.squeezed(n, in.dims)
		if err != nil {
			return nil, err
		}
		return in.as(dims), nil
	case "Gather":
		return im.gather(n, in)
	case "ConstantOfShape":
		if in.ints == nil || r != 1 {
			return nil, errors.New("its shape: want a vector of integers")
		}
		k, err := elements(in.ints)
		if err != nil || slices.ContainsFunc(in.ints, isBatch) || k > maxFilled {
			return nil, fmt.Errorf("a constant of shape %s: too large or of the batch's size", shapeText(in.ints))
		}
		fill := &constant{dims: []int64{1}, fl: []float32{0}}
		if t := n.attrs["value"].t; t != nil {
			fill = &constant{t: t, dims: t.dims}
		}
		f, err := fill.data()
		if err != nil || f.len() != 1 {
			return nil, errors.New("its value: want one value")
		}
		dims := slices.Clone(in.ints)
		if _, err := im.room(dims); err != nil {
			return nil, err
		}
		if f.fl != nil {
			return &constant{dims: dims, fl: filled(k, f.fl[0])}, nil
		}
		return &constant{dims: dims, ints: filled(k, f.ints[0])}, nil
	case "Equal", "Where", "Expand":
		return im.foldLogic(n, in)
	case "Add", "Sub", "Mul", "Div", "Pow":
		if len(n.inputs) != 2 {
			return nil, fmt.Errorf("%d inputs, where it takes 2", len(n.inputs))
		}
		b, err := im.input(n, 1)
		if err != nil {
			return nil, err
		}
		if in.len() != b.len() && in.len() != 1 && b.len() != 1 {
			return nil, errors.New("only values of one shape, or one value and many, are computed at import (export with constant folding)")
		}
		dims := in.dims // the broadcast shape: the empty, the larger, or the higher rank of one value
		if in.len() > 0 && (b.len() == 0 || b.len() > in.len() || b.len() == in.len() && len(b.dims) > len(in.dims)) {
			dims = b.dims
		}
		k, err := im.room(dims)
		if err != nil {
			return nil, err
		}
		if in.ints == nil || b.ints == nil || n.op == "Pow" {
			return floatArithmetic(n.op, in, b, dims, k)
		}
		return arithmetic(n.op, in, b, dims, k)
	}
	return nil, fmt.Errorf("operator %s is not folded", n.op)
}
