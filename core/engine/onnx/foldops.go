package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// The folded operators' computations, each one pass over its output, whose
// size room has checked before they allocate it (consts.go).

// filled is k copies of x.
func filled[T any](k int, x T) []T {
	out := make([]T, k)
	for i := range out {
		out[i] = x
	}
	return out
}

// cast computes Cast: to floats, to integers (from floats), or the same.
func (im *importer) cast(n *node, in values) (*constant, error) {
	to := integer(n, "to", 0)
	switch {
	case to == typeFloat || to == typeDouble:
		if in.fl != nil {
			return &constant{dims: in.dims, fl: in.fl}, nil
		}
		k, err := im.room(in.dims)
		if err != nil {
			return nil, err
		}
		out := make([]float32, k)
		for i, x := range in.ints {
			if isBatch(x) {
				return nil, errors.New("the batch size where a value is needed")
			}
			out[i] = float32(x)
		}
		return &constant{dims: in.dims, fl: out}, nil
	case in.fl != nil:
		k, err := im.room(in.dims)
		if err != nil {
			return nil, err
		}
		out := make([]int64, k)
		for i, v := range in.fl {
			if math.IsNaN(float64(v)) || math.Abs(float64(v)) > 1<<53 {
				return nil, fmt.Errorf("cast of %g to an integer", v)
			}
			out[i] = int64(v)
		}
		return &constant{dims: in.dims, ints: out}, nil
	}
	return &constant{dims: in.dims, ints: in.ints}, nil
}

// squeezed is the shape Squeeze or Unsqueeze makes of dims.
func (im *importer) squeezed(n *node, in []int64) ([]int64, error) {
	r := len(in)
	axes, err := im.list(n, "axes", 1, 13)
	if err != nil {
		return nil, err
	}
	var dims []int64
	if n.op == "Squeeze" {
		drop := map[int]bool{}
		for _, a := range axes {
			k, err := axis(a, r)
			if err != nil || in[k] != 1 {
				return nil, fmt.Errorf("squeeze of axis %d of shape %v", a, in)
			}
			drop[k] = true
		}
		for i, d := range in {
			if !drop[i] && !(len(axes) == 0 && d == 1) {
				dims = append(dims, d)
			}
		}
		return dims, nil
	}
	out := r + len(axes)
	add := map[int]bool{}
	for _, a := range axes {
		k, err := axis(a, out)
		if err != nil || add[k] {
			return nil, fmt.Errorf("unsqueeze of axes %v of rank %d", axes, r)
		}
		add[k] = true
	}
	rest := in
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
	return dims, nil
}

// arithmetic computes a elementwise op b on integer constants, one of them
// a single value or both of one shape, into k values of dims.
func arithmetic(op string, a, b values, dims []int64, k int) (*constant, error) {
	out := make([]int64, k)
	for i := range out {
		p, q := a.ints[i%a.len()], b.ints[i%b.len()]
		if isBatch(p) || isBatch(q) {
			v, err := batchArithmetic(op, p, q)
			if err != nil {
				return nil, err
			}
			out[i] = v
			continue
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

// walk is the k values of dims read from v at offset start, then stepping
// by step[a] along each axis a of dims: a Transpose or a Slice in one pass
// over its output, an odometer for index.
func (v values) walk(dims []int64, k, start int, step []int) *constant {
	if v.fl != nil {
		return &constant{dims: dims, fl: walk(v.fl, dims, k, start, step)}
	}
	return &constant{dims: dims, ints: walk(v.ints, dims, k, start, step)}
}

func walk[T any](src []T, dims []int64, k, start int, step []int) []T {
	out := make([]T, k)
	if k == 0 {
		return out
	}
	// Axes of one value move nothing: left out, so that the odometer
	// carries through axes of two values or more, twice per value at most.
	var d []int64
	var by []int
	for a, n := range dims {
		if n != 1 {
			d, by = append(d, n), append(by, step[a])
		}
	}
	dims, step = d, by
	idx, off := make([]int64, len(dims)), start
	for o := range out {
		out[o] = src[off]
		for a := len(dims) - 1; a >= 0; a-- {
			idx[a]++
			off += step[a]
			if idx[a] < dims[a] {
				break
			}
			off -= step[a] * int(dims[a])
			idx[a] = 0
		}
	}
	return out
}

// sliced is the first index, step and count along each axis of a Slice of
// a tensor of dims: starts, ends (clamped), axes and steps as attributes
// before opset 10, as inputs from it on.
func (im *importer) sliced(n *node, in []int64) (first, step, dims []int64, err error) {
	r := len(in)
	starts, err1 := im.list(n, "starts", 1, 10)
	ends, err2 := im.list(n, "ends", 2, 10)
	axes, err3 := im.list(n, "axes", 3, 10)
	steps, err4 := im.list(n, "steps", 4, 10)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, nil, nil, err
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
		return nil, nil, nil, fmt.Errorf("starts %s, ends %s, axes %s, steps %s", shapeText(starts), shapeText(ends), shapeText(axes), shapeText(steps))
	}
	first, step, dims = make([]int64, r), slices.Repeat([]int64{1}, r), slices.Clone(in)
	for i, a := range axes {
		k, err := axis(a, r)
		if err != nil || steps[i] == 0 {
			return nil, nil, nil, fmt.Errorf("axis %d, step %d", a, steps[i])
		}
		d, s, e, st := in[k], starts[i], ends[i], steps[i]
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
			count = (e-s-1)/st + 1
		} else if st < 0 && s > e {
			count = (s-e-1)/-st + 1
		}
		first[k], step[k], dims[k] = s, st, count
	}
	return first, step, dims, nil
}

// slice computes Slice.
func (im *importer) slice(n *node, in values) (*constant, error) {
	first, step, dims, err := im.sliced(n, in.dims)
	if err != nil {
		return nil, err
	}
	k, err := im.room(dims)
	if err != nil {
		return nil, err
	}
	st, start := strides(in.dims), 0
	by := make([]int, len(dims))
	for a := range dims {
		start += int(first[a]) * st[a]
		by[a] = int(step[a]) * st[a]
	}
	return in.walk(dims, k, start, by), nil
}

// concatConstants computes Concat along its axis: for each of the blocks
// outside the axis, each input's block copied whole.
func (im *importer) concatConstants(n *node, first values) (*constant, error) {
	vs := []values{first}
	for k, x := range n.inputs[1:] {
		if x == "" {
			continue
		}
		v, err := im.input(n, k+1)
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
		dims[a] = min(dims[a]+v.dims[a], math.MaxInt64/2) // each at most maxFolded: no overflow before that
	}
	k, err := im.room(dims)
	if err != nil {
		return nil, err
	}
	outer, inner := int(product(dims[:a])), int(product(dims[a+1:]))
	var fl [][]float32
	var is [][]int64
	var size []int
	for _, v := range vs {
		if v.dims[a] == 0 {
			continue // nothing to copy, however many times
		}
		fl, is, size = append(fl, v.fl), append(is, v.ints), append(size, int(v.dims[a])*inner)
	}
	if first.fl != nil && k > 0 {
		return &constant{dims: dims, fl: concat(fl, size, outer, k)}, nil
	}
	if k == 0 {
		return &constant{dims: dims, ints: []int64{}}, nil
	}
	return &constant{dims: dims, ints: concat(is, size, outer, k)}, nil
}

// concat is the k values of each of outer blocks of every part in turn,
// part i's blocks of size[i] values.
func concat[T any](parts [][]T, size []int, outer, k int) []T {
	out := make([]T, k)
	pos := 0
	for o := range outer {
		for i, p := range parts {
			pos += copy(out[pos:], p[o*size[i]:(o+1)*size[i]])
		}
	}
	return out
}

// gather computes Gather: for each of the blocks outside the axis, the
// indexed slices of the axis copied whole.
func (im *importer) gather(n *node, in values) (*constant, error) {
	r := len(in.dims)
	a, err := axis(integer(n, "axis", 0), r)
	if err != nil {
		return nil, err
	}
	if len(n.inputs) < 2 || n.inputs[1] == "" {
		return nil, errors.New("no indices")
	}
	idx, err := im.input(n, 1)
	if tm := (*tooMany)(nil); errors.As(err, &tm) {
		return nil, err
	}
	if err != nil || idx.ints == nil {
		return nil, errors.New("its indices: want integers")
	}
	d := in.dims[a]
	for _, j := range idx.ints {
		if j < -d || j >= d {
			return nil, fmt.Errorf("index %d of %d", j, d)
		}
	}
	dims := append(append(slices.Clone(in.dims[:a]), idx.dims...), in.dims[a+1:]...)
	k, err := im.room(dims)
	if err != nil {
		return nil, err
	}
	outer, inner := int(product(in.dims[:a])), int(product(in.dims[a+1:]))
	if in.fl != nil {
		return &constant{dims: dims, fl: gather(in.fl, idx.ints, outer, int(d), inner, k)}, nil
	}
	return &constant{dims: dims, ints: gather(in.ints, idx.ints, outer, int(d), inner, k)}, nil
}

// gather is the k values of src's rows idx (of inner values each, along an
// axis of d) for each of its outer blocks.
func gather[T any](src []T, idx []int64, outer, d, inner, k int) []T {
	out := make([]T, k)
	if k == 0 {
		return out
	}
	pos := 0
	for o := range outer {
		for _, j := range idx {
			if j < 0 {
				j += int64(d)
			}
			b := (o*d + int(j)) * inner
			pos += copy(out[pos:], src[b:b+inner])
		}
	}
	return out
}

// batchArithmetic is p op q where one of them stands for a multiple of
// the batch size: multiplied by a positive integer, or divided by one that
// divides its factor (a transformer's batch × heads and back).
func batchArithmetic(op string, p, q int64) (int64, error) {
	fp, fq := batchFactor(p), batchFactor(q)
	switch {
	case op == "Mul" && fp > 0 && fq == 0 && q > 0 && q < maxBatchFactor/fp:
		return batched(fp * q), nil
	case op == "Mul" && fq > 0 && fp == 0 && p > 0 && p < maxBatchFactor/fq:
		return batched(fq * p), nil
	case op == "Div" && fp > 0 && fq == 0 && q > 0 && fp%q == 0:
		return batched(fp / q), nil
	}
	return 0, fmt.Errorf("%s of %s and %s: only multiples of the batch size by a positive integer are computed", op, shapeText([]int64{p}), shapeText([]int64{q}))
}

// foldLogic computes Equal, Where and Expand of constants, broadcasting
// one value against many or two of one length (shapes and masks of
// shapes), Expand to a shape without the batch size.
func (im *importer) foldLogic(n *node, first values) (*constant, error) {
	vs := []values{first}
	for k := 1; k < len(n.inputs); k++ {
		v, err := im.input(n, k)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	want := map[string]int{"Equal": 2, "Where": 3, "Expand": 2}[n.op]
	if len(vs) != want {
		return nil, fmt.Errorf("%d inputs, where it takes %d", len(vs), want)
	}
	if n.op == "Expand" {
		target := vs[1].ints
		if target == nil || len(vs[1].dims) != 1 || slices.ContainsFunc(target, func(d int64) bool { return d < 0 || isBatch(d) }) {
			return nil, fmt.Errorf("to shape %s: want a shape without the batch size", shapeText(target))
		}
		dims, err := broadcastDims(first.dims, target)
		if err != nil {
			return nil, err
		}
		k, err := im.room(dims)
		if err != nil {
			return nil, err
		}
		return expandValues(first, dims, k), nil
	}
	dims := vs[0].dims
	for _, v := range vs {
		if v.len() != 1 && v.len() != vs[0].len() && vs[0].len() != 1 {
			return nil, errors.New("of shapes that are not one value or of one length")
		}
		if int64(v.len()) > product(dims) {
			dims = v.dims
		}
	}
	k, err := im.room(dims)
	if err != nil {
		return nil, err
	}
	at := func(v values, i int) (int64, float32) {
		if v.fl != nil {
			return 0, v.fl[i%v.len()]
		}
		return v.ints[i%v.len()], 0
	}
	if n.op == "Equal" {
		if (vs[0].fl == nil) != (vs[1].fl == nil) {
			return nil, errors.New("of an integer and a float")
		}
		out := make([]int64, k)
		for i := range out {
			p, pf := at(vs[0], i)
			q, qf := at(vs[1], i)
			if p == q && pf == qf {
				out[i] = 1
			}
		}
		return &constant{dims: dims, ints: out}, nil
	}
	if vs[0].ints == nil || (vs[1].fl == nil) != (vs[2].fl == nil) {
		return nil, errors.New("a condition of booleans and two values of one type")
	}
	if vs[1].fl != nil {
		out := make([]float32, k)
		for i := range out {
			c, _ := at(vs[0], i)
			_, out[i] = at(vs[2], i)
			if c != 0 {
				_, out[i] = at(vs[1], i)
			}
		}
		return &constant{dims: dims, fl: out}, nil
	}
	out := make([]int64, k)
	for i := range out {
		c, _ := at(vs[0], i)
		out[i], _ = at(vs[2], i)
		if c != 0 {
			out[i], _ = at(vs[1], i)
		}
	}
	return &constant{dims: dims, ints: out}, nil
}

// broadcastDims is the shape a and b broadcast to (NumPy's rule).
func broadcastDims(a, b []int64) ([]int64, error) {
	r := max(len(a), len(b))
	out := make([]int64, r)
	for i := range r {
		p, q := int64(1), int64(1)
		if j := i - (r - len(a)); j >= 0 {
			p = a[j]
		}
		if j := i - (r - len(b)); j >= 0 {
			q = b[j]
		}
		switch {
		case p == q || q == 1:
			out[i] = p
		case p == 1:
			out[i] = q
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
		}
	}
	return out, nil
}

// expandValues is v broadcast to dims (k values).
func expandValues(v values, dims []int64, k int) *constant {
	r := len(dims)
	src := append(slices.Repeat([]int64{1}, r-len(v.dims)), v.dims...)
	st, step := strides(src), make([]int, r)
	for a := range r {
		if src[a] != 1 {
			step[a] = st[a]
		}
	}
	return v.walk(dims, k, 0, step)
}

// floatArithmetic computes a elementwise op b where either is a float (a
// scale such as head_dim ** -0.5 computed from a shape), one of them a
// single value or both of one shape, into k floats of dims.
func floatArithmetic(op string, a, b values, dims []int64, k int) (*constant, error) {
	at := func(v values, i int) (float64, error) {
		if v.fl != nil {
			return float64(v.fl[i%v.len()]), nil
		}
		x := v.ints[i%v.len()]
		if isBatch(x) {
			return 0, errors.New("the batch size where a value is needed")
		}
		return float64(x), nil
	}
	out := make([]float32, k)
	for i := range out {
		p, err1 := at(a, i)
		q, err2 := at(b, i)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		var v float64
		switch op {
		case "Add":
			v = p + q
		case "Sub":
			v = p - q
		case "Mul":
			v = p * q
		case "Div":
			v = p / q
		case "Pow":
			v = math.Pow(p, q)
		}
		out[i] = float32(v)
	}
	return &constant{dims: dims, fl: out}, nil
}
