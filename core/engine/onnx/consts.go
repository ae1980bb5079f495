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

// maxFolded bounds the values one folded node reads or makes (a weight
// transposed before a MatMul), and maxFilled those a ConstantOfShape
// makes (shapes and pads are a handful): a folded node never makes more
// than the file holds, or a little more.
const (
	maxFolded = 1 << 24
	maxFilled = 1 << 16
)

// foldable lists the operators folded when all their inputs are constants.
var foldable = map[string]bool{"Reshape": true, "Transpose": true, "Slice": true, "Concat": true, "Squeeze": true, "Unsqueeze": true,
	"Gather": true, "ConstantOfShape": true, "Cast": true, "Shape": true, "Add": true, "Sub": true, "Mul": true, "Div": true,
	"Identity": true}

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

// pick makes the constant of dims whose value i is v's value at[i].
func (v values) pick(dims []int64, at []int) *constant {
	c := &constant{dims: dims}
	if v.fl != nil {
		c.fl = make([]float32, len(at))
		for i, j := range at {
			c.fl[i] = v.fl[j]
		}
		return c
	}
	c.ints = make([]int64, len(at))
	for i, j := range at {
		c.ints[i] = v.ints[j]
	}
	return c
}

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

// eachIndex calls f with every multi-index of dims, row-major.
func eachIndex(dims []int64, f func(idx []int64)) {
	n, err := elements(dims)
	if err != nil || n == 0 {
		return
	}
	idx := make([]int64, len(dims))
	for range n {
		f(idx)
		for a := len(dims) - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < dims[a] {
				break
			}
			idx[a] = 0
		}
	}
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

// fold computes node n, all of whose inputs are constants.
func (im *importer) fold(n *node) error {
	c, err := im.folded(n)
	if err != nil {
		return fmt.Errorf("node %q (%s) of constants: %w", n.name, n.op, err)
	}
	if c.ints != nil || c.fl != nil {
		if k := max(len(c.ints), len(c.fl)); k > maxFolded {
			return fmt.Errorf("node %q (%s) of constants makes %d values: more than Faithlab computes at import", n.name, n.op, k)
		}
	}
	im.vals[n.outputs[0]] = value{c: c}
	return nil
}

// folded computes node n of constants.
func (im *importer) folded(n *node) (*constant, error) {
	in, err := im.vals[n.inputs[0]].c.data()
	if err != nil {
		return nil, err
	}
	if in.len() > maxFolded {
		return nil, fmt.Errorf("%d values: more than Faithlab computes at import", in.len())
	}
	r := len(in.dims)
	all := make([]int, in.len())
	for i := range all {
		all[i] = i
	}
	switch n.op {
	case "Identity":
		return im.vals[n.inputs[0]].c, nil
	case "Shape":
		return &constant{dims: []int64{int64(r)}, ints: slices.Clone(in.dims)}, nil
	case "Cast":
		to := integer(n, "to", 0)
		out := &constant{dims: in.dims}
		switch {
		case to == typeFloat || to == typeDouble:
			f, err := (&constant{dims: in.dims, ints: in.ints, fl: in.fl}).floats()
			out.fl = f
			return out, err
		case in.fl != nil:
			out.ints = make([]int64, len(in.fl))
			for i, v := range in.fl {
				if math.IsNaN(float64(v)) || math.Abs(float64(v)) > 1<<53 {
					return nil, fmt.Errorf("cast of %g to an integer", v)
				}
				out.ints[i] = int64(v)
			}
			return out, nil
		}
		out.ints = in.ints
		return out, nil
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
		return in.pick(dims, all), nil
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
		dims := make([]int64, r)
		seen := map[int64]bool{}
		for i, p := range perm {
			if p < 0 || p >= int64(r) || seen[p] {
				return nil, fmt.Errorf("perm %v", perm)
			}
			seen[p] = true
			dims[i] = in.dims[p]
		}
		st := strides(in.dims)
		var at []int
		eachIndex(dims, func(idx []int64) {
			o := 0
			for i, p := range perm {
				o += int(idx[i]) * st[p]
			}
			at = append(at, o)
		})
		return in.pick(dims, at), nil
	case "Slice":
		return im.slice(n, in)
	case "Concat":
		return im.concatConstants(n, in)
	case "Squeeze", "Unsqueeze":
		axes, err := im.list(n, "axes", 1, 13)
		if err != nil {
			return nil, err
		}
		var dims []int64
		if n.op == "Squeeze" {
			drop := map[int]bool{}
			for _, a := range axes {
				k, err := axis(a, r)
				if err != nil || in.dims[k] != 1 {
					return nil, fmt.Errorf("squeeze of axis %d of shape %v", a, in.dims)
				}
				drop[k] = true
			}
			for i, d := range in.dims {
				if !drop[i] && !(len(axes) == 0 && d == 1) {
					dims = append(dims, d)
				}
			}
		} else {
			out := r + len(axes)
			add := map[int]bool{}
			for _, a := range axes {
				k, err := axis(a, out)
				if err != nil || add[k] {
					return nil, fmt.Errorf("unsqueeze of axes %v of rank %d", axes, r)
				}
				add[k] = true
			}
			rest := in.dims
			for i := range out {
				if add[i] {
					dims = append(dims, 1)
				} else if len(rest) > 0 {
					dims, rest = append(dims, rest[0]), rest[1:]
				}
			}
			if len(rest) > 0 {
				return nil, fmt.Errorf("unsqueeze of axes %v of rank %d", axes, r)
			}
		}
		return in.pick(dims, all), nil
	case "Gather":
		a, err := axis(integer(n, "axis", 0), r)
		if err != nil {
			return nil, err
		}
		ic, err := im.constant(n, 1, "indices")
		if err != nil || ic == nil {
			return nil, errors.New("no indices")
		}
		idx, err := ic.data()
		if err != nil || idx.ints == nil {
			return nil, errors.New("its indices: want integers")
		}
		dims := append(append(slices.Clone(in.dims[:a]), idx.dims...), in.dims[a+1:]...)
		st, ist := strides(in.dims), strides(idx.dims)
		var at []int
		var bad error
		eachIndex(dims, func(o []int64) {
			q := 0
			for i := range idx.dims {
				q += int(o[a+i]) * ist[i]
			}
			j := idx.ints[q]
			if j < 0 {
				j += in.dims[a]
			}
			if j < 0 || j >= in.dims[a] {
				bad = fmt.Errorf("index %d of %d", idx.ints[q], in.dims[a])
				return
			}
			off := int(j) * st[a]
			for i := range a {
				off += int(o[i]) * st[i]
			}
			for i := a + 1; i < r; i++ {
				off += int(o[i-1+len(idx.dims)]) * st[i]
			}
			at = append(at, off)
		})
		if bad != nil {
			return nil, bad
		}
		return in.pick(dims, at), nil
	case "ConstantOfShape":
		if in.ints == nil || r != 1 {
			return nil, errors.New("its shape: want a vector of integers")
		}
		k, err := elements(in.ints)
		if err != nil || slices.Contains(in.ints, batchSize) || k > maxFilled {
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
		return f.pick(slices.Clone(in.ints), make([]int, k)), nil
	case "Add", "Sub", "Mul", "Div":
		b, err := im.vals[n.inputs[1]].c.data()
		if err != nil {
			return nil, err
		}
		return arithmetic(n.op, in, b)
	}
	return nil, fmt.Errorf("operator %s is not folded", n.op)
}

// arithmetic computes a elementwise op b on integer constants, one of them
// a single value or both of one shape.
func arithmetic(op string, a, b values) (*constant, error) {
	if a.ints == nil || b.ints == nil || a.len() != b.len() && a.len() != 1 && b.len() != 1 {
		return nil, errors.New("only integer shapes are computed at import (export with constant folding)")
	}
	dims, m := a.dims, max(a.len(), b.len())
	if b.len() > a.len() || b.len() == a.len() && len(b.dims) > len(a.dims) {
		dims = b.dims // the broadcast shape: the larger, or the higher rank of one value
	}
	out := make([]int64, m)
	for i := range out {
		p, q := a.ints[i%a.len()], b.ints[i%b.len()]
		if p == batchSize || q == batchSize {
			return nil, errors.New("arithmetic on the batch size is not supported")
		}
		switch op {
		case "Add":
			out[i] = p + q
		case "Sub":
			out[i] = p - q
		case "Mul":
			out[i] = p * q
		case "Div":
			if q == 0 {
				return nil, errors.New("division by zero")
			}
			out[i] = p / q
		}
	}
	return &constant{dims: dims, ints: out}, nil
}

// slice computes Slice: starts, ends (clamped), axes and steps as attributes
// before opset 10, as inputs from it on.
func (im *importer) slice(n *node, in values) (*constant, error) {
	r := len(in.dims)
	starts, err1 := im.list(n, "starts", 1, 10)
	ends, err2 := im.list(n, "ends", 2, 10)
	axes, err3 := im.list(n, "axes", 3, 10)
	steps, err4 := im.list(n, "steps", 4, 10)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, err
	}
	if axes == nil {
		for a := range starts {
			axes = append(axes, int64(a))
		}
	}
	if steps == nil {
		steps = slices.Repeat([]int64{1}, len(starts))
	}
	if len(ends) != len(starts) || len(axes) != len(starts) || len(steps) != len(starts) {
		return nil, fmt.Errorf("starts %v, ends %v, axes %v, steps %v", starts, ends, axes, steps)
	}
	first, step := make([]int64, r), slices.Repeat([]int64{1}, r)
	dims := slices.Clone(in.dims)
	for i, a := range axes {
		k, err := axis(a, r)
		if err != nil || steps[i] == 0 {
			return nil, fmt.Errorf("axis %d, step %d", a, steps[i])
		}
		d, s, e, st := in.dims[k], starts[i], ends[i], steps[i]
		if s < 0 {
			s += d
		}
		if e < 0 {
			e += d
		}
		if st > 0 {
			s, e = min(max(s, 0), d), min(max(e, 0), d)
		} else {
			s, e = min(max(s, 0), d-1), min(max(e, -1), d-1)
		}
		count := int64(0)
		if st > 0 && e > s {
			count = (e - s + st - 1) / st
		} else if st < 0 && s > e {
			count = (s - e - st - 1) / -st
		}
		first[k], step[k], dims[k] = s, st, count
	}
	st := strides(in.dims)
	var at []int
	eachIndex(dims, func(idx []int64) {
		o := 0
		for a, i := range idx {
			o += int(first[a]+i*step[a]) * st[a]
		}
		at = append(at, o)
	})
	return in.pick(dims, at), nil
}

// concatConstants computes Concat along its axis.
func (im *importer) concatConstants(n *node, first values) (*constant, error) {
	vs := []values{first}
	for _, x := range n.inputs[1:] {
		if x == "" {
			continue
		}
		v, err := im.vals[x].c.data()
		if err != nil {
			return nil, err
		}
		if (v.fl == nil) != (first.fl == nil) || len(v.dims) != len(first.dims) {
			return nil, errors.New("of constants of other types or ranks")
		}
		vs = append(vs, v)
	}
	r := len(first.dims)
	a, err := axis(integer(n, "axis", 0), r)
	if err != nil {
		return nil, err
	}
	dims := slices.Clone(first.dims)
	dims[a] = 0
	for _, v := range vs {
		for i, d := range v.dims {
			if i != a && d != first.dims[i] {
				return nil, fmt.Errorf("of shapes %v and %v", first.dims, v.dims)
			}
		}
		dims[a] += v.dims[a]
	}
	out := &constant{dims: dims}
	eachIndex(dims, func(idx []int64) {
		k, pos := 0, idx[a]
		for pos >= vs[k].dims[a] {
			pos -= vs[k].dims[a]
			k++
		}
		st, o := strides(vs[k].dims), 0
		for i, x := range idx {
			if i == a {
				x = pos
			}
			o += int(x) * st[i]
		}
		if first.fl != nil {
			out.fl = append(out.fl, vs[k].fl[o])
		} else {
			out.ints = append(out.ints, vs[k].ints[o])
		}
	})
	if out.fl == nil && out.ints == nil {
		out.ints = []int64{}
	}
	return out, nil
}
