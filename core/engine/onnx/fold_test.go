package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// ---- a per-element reference of constant folding ----

// bits are a constant's values as comparable words: integers as they are,
// floats by their bits.
func bits(v values) []uint64 {
	if v.fl != nil {
		out := make([]uint64, len(v.fl))
		for i, x := range v.fl {
			out[i] = uint64(math.Float32bits(x))
		}
		return out
	}
	out := make([]uint64, len(v.ints))
	for i, x := range v.ints {
		out[i] = uint64(x)
	}
	return out
}

// unravel is the multi-index of row-major offset o in dims.
func unravel(o int, dims []int64) []int64 {
	idx := make([]int64, len(dims))
	for a := len(dims) - 1; a >= 0; a-- {
		idx[a] = int64(o) % dims[a]
		o /= int(dims[a])
	}
	return idx
}

// ravel is the row-major offset of multi-index idx in dims.
func ravel(idx, dims []int64) int {
	o := 0
	for a, i := range idx {
		o = o*int(dims[a]) + int(i)
	}
	return o
}

// refFold computes node n of constants value by value, from each output
// value's multi-index, as folding did before issue #52, for a node fold
// accepted (its inputs valid) and made got of: the dims and values it
// should have made, and whether they are floats.
func refFold(im *importer, n *node, got values) ([]int64, []uint64, bool) {
	in, _ := im.input(n, 0)
	src, float, r := bits(in), in.fl != nil, len(in.dims)
	walk := func(dims []int64, at func(idx []int64) int) []uint64 {
		out := make([]uint64, product(dims))
		for o := range out {
			out[o] = src[at(unravel(o, dims))]
		}
		return out
	}
	switch n.op {
	case "Identity", "Reshape", "Squeeze", "Unsqueeze":
		return got.dims, src, float
	case "Shape":
		return []int64{int64(r)}, bits(values{ints: in.dims}), false
	case "Transpose":
		perm := ints(n, "perm")
		if perm == nil {
			for a := r - 1; a >= 0; a-- {
				perm = append(perm, int64(a))
			}
		}
		dims := make([]int64, r)
		for i, p := range perm {
			dims[i] = in.dims[p]
		}
		return dims, walk(dims, func(idx []int64) int {
			s := make([]int64, r)
			for i, p := range perm {
				s[p] = idx[i]
			}
			return ravel(s, in.dims)
		}), float
	case "Slice":
		first, step, dims, _ := im.sliced(n, in.dims)
		return dims, walk(dims, func(idx []int64) int {
			s := make([]int64, r)
			for a := range s {
				s[a] = first[a] + idx[a]*step[a]
			}
			return ravel(s, in.dims)
		}), float
	case "Concat":
		a, _ := axis(integer(n, "axis", 0), r)
		var parts []values
		var pbits [][]uint64
		for k, x := range n.inputs {
			if x != "" {
				v, _ := im.input(n, k)
				parts, pbits = append(parts, v), append(pbits, bits(v))
			}
		}
		dims := slices.Clone(in.dims)
		dims[a] = 0
		for _, v := range parts {
			dims[a] += v.dims[a]
		}
		out := make([]uint64, product(dims))
		for o := range out {
			idx := unravel(o, dims)
			k := 0
			for idx[a] >= parts[k].dims[a] {
				idx[a] -= parts[k].dims[a]
				k++
			}
			out[o] = pbits[k][ravel(idx, parts[k].dims)]
		}
		return dims, out, float
	case "Gather":
		a, _ := axis(integer(n, "axis", 0), r)
		ix, _ := im.input(n, 1)
		q := len(ix.dims)
		dims := append(append(slices.Clone(in.dims[:a]), ix.dims...), in.dims[a+1:]...)
		return dims, walk(dims, func(m []int64) int {
			j := ix.ints[ravel(m[a:a+q], ix.dims)]
			if j < 0 {
				j += in.dims[a]
			}
			return ravel(append(append(slices.Clone(m[:a]), j), m[a+q:]...), in.dims)
		}), float
	case "Cast":
		to := integer(n, "to", 0)
		out := make([]uint64, len(src))
		for i := range out {
			switch {
			case (to == typeFloat || to == typeDouble) && !float:
				out[i] = uint64(math.Float32bits(float32(in.ints[i])))
			case to == typeFloat || to == typeDouble:
				out[i] = src[i]
			case float:
				out[i] = uint64(int64(in.fl[i]))
			default:
				out[i] = src[i]
			}
		}
		return in.dims, out, to == typeFloat || to == typeDouble
	case "ConstantOfShape":
		fill := values{fl: []float32{0}}
		if t := n.attrs["value"].t; t != nil {
			fill, _ = (&constant{t: t, dims: t.dims}).data()
		}
		return in.ints, slices.Repeat(bits(fill), int(product(in.ints))), fill.fl != nil
	default: // Add, Sub, Mul, Div (Pow: floats)
		b, _ := im.input(n, 1)
		k := max(in.len(), b.len())
		if in.len() == 0 || b.len() == 0 {
			k = 0
		}
		out := make([]uint64, k)
		if in.fl != nil || b.fl != nil || n.op == "Pow" {
			f := func(v values, i int) float64 {
				if v.fl != nil {
					return float64(v.fl[i%v.len()])
				}
				return float64(v.ints[i%v.len()])
			}
			for i := range out {
				p, q := f(in, i), f(b, i)
				r := map[string]float64{"Add": p + q, "Sub": p - q, "Mul": p * q, "Div": p / q, "Pow": math.Pow(p, q)}[n.op]
				out[i] = uint64(math.Float32bits(float32(r)))
			}
			return got.dims, out, true
		}
		for i := range out {
			p, q := in.ints[i%in.len()], b.ints[i%b.len()]
			switch n.op {
			case "Add":
				out[i] = uint64(p + q)
			case "Sub":
				out[i] = uint64(p - q)
			case "Mul":
				out[i] = uint64(p * q)
			case "Div":
				out[i] = uint64(p / q)
			}
		}
		return got.dims, out, false
	}
}

// ---- graphs of foldable nodes from fuzz bytes ----

// stream hands out fuzz bytes, then zeros.
type stream []byte

func (s *stream) next() int {
	if len(*s) == 0 {
		return 0
	}
	b := (*s)[0]
	*s = (*s)[1:]
	return int(b)
}

// floatInit is a float32 initializer of dims holding vals, in raw bytes.
func floatInit(name string, dims []int64, vals []float32) part {
	var t []byte
	for _, d := range dims {
		t = varint(t, 1, uint64(d))
	}
	t = varint(t, 2, typeFloat)
	t = str(t, 8, name)
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return part{5, field(t, 9, raw)}
}

// foldOps are the operators foldGraph draws.
var foldOps = []string{"Transpose", "Slice", "Concat", "Gather", "Cast", "Reshape", "Squeeze", "Unsqueeze", "Shape", "Identity",
	"ConstantOfShape", "Add", "Sub", "Mul", "Div"}

// foldGraph builds from fuzz bytes an ONNX model of an integer and a float
// constant of distinct values (rank 0 to 3) and up to 8 foldable nodes
// over them and each other — shapes, indices, axes, perms, slices drawn
// from the bytes, Concats of many copies and ConstantOfShape of up to
// 65 535² values among them — whose outputs a last Concat gathers for a
// Reshape of the input: every node leads to the output.
func foldGraph(b []byte) []byte {
	s := stream(b)
	var parts []part
	var names, outs []string
	for _, float := range []bool{false, true} {
		dims := make([]int64, s.next()%4)
		for i := range dims {
			dims[i] = int64(s.next() % 5)
		}
		name := fmt.Sprintf("c%d", len(names))
		k := int(product(dims))
		if float {
			vals := make([]float32, k)
			for i := range vals {
				vals[i] = float32(i) + 0.5
			}
			parts = append(parts, floatInit(name, dims, vals))
		} else {
			vals := make([]int64, k)
			for i := range vals {
				vals[i] = int64(i) - 2
			}
			parts = append(parts, rawInts(name, dims, vals))
		}
		names = append(names, name)
	}
	small := func(k int) string { // a new vector of k integers in [-7, 7]
		name := fmt.Sprintf("v%d", len(parts))
		vals := make([]int64, k)
		for i := range vals {
			vals[i] = int64(int8(s.next())) % 8
		}
		parts = append(parts, rawInts(name, []int64{int64(k)}, vals))
		return name
	}
	pick := func() string { return names[s.next()%len(names)] }
	axisAttr := func() []byte { return attrInt("axis", int64(int8(s.next())%4)) }
	for i := range s.next()%8 + 1 {
		op, out := foldOps[s.next()%len(foldOps)], fmt.Sprintf("n%d", i)
		ins := []string{pick()}
		var attrs [][]byte
		switch op {
		case "Transpose":
			if r := s.next() % 5; r > 0 {
				perm := make([]int64, r)
				for a := range perm {
					perm[a] = int64(a)
				}
				for a := r - 1; a > 0; a-- {
					j := s.next() % (a + 1)
					perm[a], perm[j] = perm[j], perm[a]
				}
				attrs = append(attrs, attrInts("perm", perm...))
			}
		case "Slice":
			k := s.next()%3 + 1
			ins = append(ins, small(k), small(k), small(k), small(k))
		case "Concat":
			m := s.next()%4 + 1
			if s.next()%8 == 0 {
				m = s.next() * 16 // many copies of one: the caps
			}
			for range m - 1 {
				ins = append(ins, ins[0])
			}
			attrs = append(attrs, axisAttr())
		case "Gather":
			if s.next()%2 == 0 {
				ins = append(ins, small(s.next()%4))
			} else {
				ins = append(ins, pick())
			}
			attrs = append(attrs, axisAttr())
		case "Cast":
			attrs = append(attrs, attrInt("to", []int64{typeFloat, typeInt64, typeDouble}[s.next()%3]))
		case "Reshape", "Squeeze", "Unsqueeze":
			ins = append(ins, small(s.next()%4))
		case "ConstantOfShape":
			if s.next()%4 == 0 { // a large one
				ins[0] = fmt.Sprintf("v%d", len(parts))
				dims := []int64{int64(s.next()<<8 | s.next()), int64(s.next()<<8 | s.next())}[:s.next()%2+1]
				parts = append(parts, rawInts(ins[0], []int64{int64(len(dims))}, dims))
			}
			if s.next()%2 == 0 {
				attrs = append(attrs, attrTensor("value", intTensor("", []int64{1}, []int64{int64(s.next())})))
			}
		case "Add", "Sub", "Mul", "Div":
			ins = append(ins, pick())
		}
		parts = append(parts, nodeOf(op, ins, out, attrs...))
		names, outs = append(names, out), append(outs, out)
	}
	parts = append(parts, nodeOf("Concat", outs, "all", attrInt("axis", 0)), nodeOf("Reshape", []string{"x", "all"}, "y"))
	return protoModel(13, parts...)
}

// checkFolds folds model m's nodes of constants, in order, as the import
// does, and checks every one folded against refFold (those of at most
// 2^16 values), and the caps: it returns how many of each operator it
// checked.
func checkFolds(t *testing.T, m []byte) map[string]int {
	mod, err := parseModel(m)
	if err != nil {
		t.Fatalf("a model foldGraph made: %v", err)
	}
	im := &importer{opset: 13, vals: map[string]value{}, size: len(m), budget: foldBudget(len(m))}
	for i := range mod.graph.initializers {
		c := &mod.graph.initializers[i]
		im.vals[c.name] = value{c: &constant{t: c, dims: c.dims}}
	}
	checked := map[string]int{}
	for i := range mod.graph.nodes {
		n := &mod.graph.nodes[i]
		if !foldable[n.op] || !im.allConstant(n) || im.fold(n) != nil {
			continue
		}
		got, err := im.vals[n.outputs[0]].c.data()
		if err != nil {
			t.Fatalf("node %s folded into a constant of %v that does not hold its values: %v", n.name, got.dims, err)
		}
		if got.len() > maxFolded || im.made > im.budget {
			t.Fatalf("node %s folded into %d values, %d in all, over the caps (%d, %d)", n.name, got.len(), im.made, maxFolded, im.budget)
		}
		if got.len() > 1<<16 {
			continue
		}
		dims, want, float := refFold(im, n, got)
		if !slices.Equal(got.dims, dims) || !slices.Equal(bits(got), want) || len(want) > 0 && (got.fl != nil) != float {
			t.Fatalf("node %s (%s) folded into %v %v (floats %v), want %v %v (floats %v)", n.name, n.op, got.dims, bits(got), got.fl != nil, dims, want, float)
		}
		checked[n.op]++
	}
	return checked
}

// Folding copies whole blocks (Concat, Gather) and walks an odometer
// (Transpose, Slice): on thousands of graphs of constants of every rank up
// to 4, axes, perms, slices with negative steps, indices and casts, every
// folded node holds the values the per-element reference gives, of its
// shape and type — every foldable operator among them.
func TestFoldedConstantsHoldThePerElementReferencesValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(52, 3))
	checked := map[string]int{}
	for range 4000 {
		b := make([]byte, 64)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		for op, k := range checkFolds(t, foldGraph(b)) {
			checked[op] += k
		}
	}
	for _, op := range foldOps {
		if checked[op] == 0 {
			t.Errorf("no %s folded and checked", op)
		}
	}
	t.Logf("checked: %v", checked)
}

// FuzzFold: no graph of foldable nodes makes the import panic or allocate
// more than 64 MB and a small multiple of its file, and every node folded
// holds the reference's values.
func FuzzFold(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 3, 4, 1, 2, 0, 4, 2, 1, 0, 3, 2, 1})
	f.Add([]byte{1, 4, 3, 3, 4, 0, 2, 0, 0, 3, 2, 1, 2, 0, 9}) // a Concat of many copies
	f.Add([]byte{2, 2, 3, 1, 2, 2, 5, 10, 0, 0, 1, 0, 0, 0, 255, 255, 255, 255, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		m := foldGraph(b)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = Parse(m)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20+32*uint64(len(m)) {
			t.Fatalf("importing a file of %d bytes allocated %d", len(m), n)
		}
		checkFolds(t, m)
	})
}
