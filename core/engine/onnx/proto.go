package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The subset of onnx.proto (ModelProto and what it holds) a classifier
// needs, decoded field by field with protowire: no generated code, no
// reflection, and every length checked against the bytes that remain.

type model struct {
	irVersion int64
	opsets    []opset
	producer  string
	graph     graph
	hasGraph  bool
}

type opset struct {
	domain  string
	version int64
}

type graph struct {
	nodes        []node
	initializers []tensor
	inputs       []valueInfo
	outputs      []valueInfo
}

type node struct {
	inputs, outputs []string
	name, op        string
	domain          string
	attrs           map[string]attribute
}

type attribute struct {
	f    float32
	i    int64
	s    []byte
	t    *tensor
	ints []int64
	set  bool
}

type valueInfo struct {
	name     string
	elemType int32
	dims     []dim
	hasShape bool
}

type dim struct {
	value int64
	param string // a symbolic dimension (the batch), when value is unset
	known bool
}

// String is the dimension as a shape prints it: its value, or its
// symbolic name ("?" for neither).
func (d dim) String() string {
	switch {
	case d.known:
		return fmt.Sprint(d.value)
	case d.param != "":
		return d.param
	}
	return "?"
}

type tensor struct {
	name     string
	dims     []int64
	dataType int32
	raw      []byte
	floats   []float32
	doubles  []float64
	ints64   []int64
	ints32   []int64
	external bool
	// drop, where set, is told of raw bytes decoded, which the reader
	// may then give back (ParseFile: a mapped file's pages).
	drop func([]byte)
}

// Data types of TensorProto.
const (
	typeFloat  = 1
	typeInt32  = 6
	typeInt64  = 7
	typeDouble = 11
)

// maxValues bounds one tensor's declared values: a tensor's values are
// also bounded by the file's bytes, but a declared shape is checked
// against both before anything is converted.
const maxValues = 1 << 28

// each walks the fields of a message, handing each to f with its number,
// wire type and value (bytes for length-delimited fields, else v).
func each(b []byte, f func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("malformed protobuf: %w", protowire.ParseError(n))
		}
		b = b[n:]
		var bs []byte
		var v uint64
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			bs, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("malformed protobuf (field %d): %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, bs, v); err != nil {
			return err
		}
	}
	return nil
}

func parseModel(b []byte) (*model, error) {
	m := &model{}
	err := each(b, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			m.irVersion = int64(v)
		case num == 2 && typ == protowire.BytesType:
			m.producer = string(bs)
		case num == 7 && typ == protowire.BytesType:
			if m.hasGraph {
				return errors.New("two graphs")
			}
			g, err := parseGraph(bs)
			if err != nil {
				return fmt.Errorf("graph: %w", err)
			}
			m.graph, m.hasGraph = g, true
		case num == 8 && typ == protowire.BytesType:
			var o opset
			err := each(bs, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					o.domain = string(bs)
				case num == 2 && typ == protowire.VarintType:
					o.version = int64(v)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("opset_import: %w", err)
			}
			m.opsets = append(m.opsets, o)
		}
		return nil
	})
	return m, err
}

func parseGraph(b []byte) (graph, error) {
	var g graph
	err := each(b, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			n, err := parseNode(bs)
			if err != nil {
				return fmt.Errorf("node %d: %w", len(g.nodes), err)
			}
			g.nodes = append(g.nodes, n)
		case 5:
			t, err := parseTensor(bs)
			if err != nil {
				return fmt.Errorf("initializer %d: %w", len(g.initializers), err)
			}
			g.initializers = append(g.initializers, t)
		case 11, 12:
			vi, err := parseValueInfo(bs)
			if err != nil {
				return fmt.Errorf("graph input or output: %w", err)
			}
			if num == 11 {
				g.inputs = append(g.inputs, vi)
			} else {
				g.outputs = append(g.outputs, vi)
			}
		case 15:
			return errors.New("sparse initializers are not supported")
		}
		return nil
	})
	return g, err
}

func parseNode(b []byte) (node, error) {
	n := node{attrs: map[string]attribute{}}
	err := each(b, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			n.inputs = append(n.inputs, string(bs))
		case 2:
			n.outputs = append(n.outputs, string(bs))
		case 3:
			n.name = string(bs)
		case 4:
			n.op = string(bs)
		case 7:
			n.domain = string(bs)
		case 5:
			name, a, err := parseAttribute(bs)
			if err != nil {
				return fmt.Errorf("attribute %q: %w", name, err)
			}
			n.attrs[name] = a
		}
		return nil
	})
	return n, err
}

func parseAttribute(b []byte) (string, attribute, error) {
	var name string
	a := attribute{set: true}
	err := each(b, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			name = string(bs)
		case num == 2 && typ == protowire.Fixed32Type:
			a.f = math.Float32frombits(uint32(v))
		case num == 3 && typ == protowire.VarintType:
			a.i = int64(v)
		case num == 4 && typ == protowire.BytesType:
			a.s = bs
		case num == 5 && typ == protowire.BytesType:
			t, err := parseTensor(bs)
			if err != nil {
				return err
			}
			a.t = &t
		case num == 8:
			ints, err := varints(typ, bs, v)
			if err != nil {
				return err
			}
			a.ints = append(a.ints, ints...)
		}
		return nil
	})
	return name, a, err
}

// varints reads a repeated int64 field's occurrence: packed (bytes) or one
// value.
func varints(typ protowire.Type, bs []byte, v uint64) ([]int64, error) {
	if typ == protowire.VarintType {
		return []int64{int64(v)}, nil
	}
	if typ != protowire.BytesType {
		return nil, fmt.Errorf("integers of wire type %d", typ)
	}
	var out []int64
	for len(bs) > 0 {
		x, n := protowire.ConsumeVarint(bs)
		if n < 0 {
			return nil, fmt.Errorf("malformed packed integers: %w", protowire.ParseError(n))
		}
		out = append(out, int64(x))
		bs = bs[n:]
	}
	return out, nil
}

func parseValueInfo(b []byte) (valueInfo, error) {
	var vi valueInfo
	err := each(b, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			vi.name = string(bs)
		case 2: // TypeProto
			return each(bs, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
				if num != 1 || typ != protowire.BytesType { // tensor_type
					return nil
				}
				return each(bs, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
					switch {
					case num == 1 && typ == protowire.VarintType:
						vi.elemType = int32(v)
					case num == 2 && typ == protowire.BytesType:
						vi.hasShape = true
						return each(bs, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
							if num != 1 || typ != protowire.BytesType {
								return nil
							}
							var d dim
							err := each(bs, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
								switch {
								case num == 1 && typ == protowire.VarintType:
									d.value, d.known = int64(v), true
								case num == 2 && typ == protowire.BytesType:
									d.param = string(bs)
								}
								return nil
							})
							vi.dims = append(vi.dims, d)
							return err
						})
					}
					return nil
				})
			})
		}
		return nil
	})
	return vi, err
}

func parseTensor(b []byte) (tensor, error) {
	var t tensor
	err := each(b, func(num protowire.Number, typ protowire.Type, bs []byte, v uint64) error {
		switch num {
		case 1:
			d, err := varints(typ, bs, v)
			if err != nil {
				return fmt.Errorf("dims: %w", err)
			}
			t.dims = append(t.dims, d...)
		case 2:
			t.dataType = int32(v)
		case 4:
			switch typ {
			case protowire.Fixed32Type:
				t.floats = append(t.floats, math.Float32frombits(uint32(v)))
			case protowire.BytesType:
				if len(bs)%4 != 0 {
					return fmt.Errorf("float_data of %d bytes", len(bs))
				}
				for i := 0; i < len(bs); i += 4 {
					t.floats = append(t.floats, math.Float32frombits(binary.LittleEndian.Uint32(bs[i:])))
				}
			}
		case 5, 7:
			d, err := varints(typ, bs, v)
			if err != nil {
				return err
			}
			if num == 5 {
				t.ints32 = append(t.ints32, d...)
			} else {
				t.ints64 = append(t.ints64, d...)
			}
		case 8:
			t.name = string(bs)
		case 9:
			t.raw = bs
		case 10:
			switch typ {
			case protowire.Fixed64Type:
				t.doubles = append(t.doubles, math.Float64frombits(v))
			case protowire.BytesType:
				if len(bs)%8 != 0 {
					return fmt.Errorf("double_data of %d bytes", len(bs))
				}
				for i := 0; i < len(bs); i += 8 {
					t.doubles = append(t.doubles, math.Float64frombits(binary.LittleEndian.Uint64(bs[i:])))
				}
			}
		case 13:
			t.external = true
		case 14:
			t.external = t.external || v == 1
		}
		return nil
	})
	return t, err
}

// count is the number of values t's dims declare, or an error for a
// negative dimension or more than maxValues.
func (t *tensor) count() (int, error) {
	n := 1
	for _, d := range t.dims {
		if d < 0 {
			return 0, fmt.Errorf("tensor %q: dimension %d", t.name, d)
		}
		if d > 0 && int64(n) > maxValues/d {
			return 0, fmt.Errorf("tensor %q: shape %v declares more than %d values", t.name, t.dims, maxValues)
		}
		n *= int(d)
	}
	return n, nil
}

// dropChunk is how many values values() decodes before it tells drop:
// 4 MiB of a file's bytes held at a time.
const dropChunk = 1 << 20

// floats32 returns t's values as float32, after checking that the data it
// holds is what its shape declares.
func (t *tensor) values() ([]float32, error) {
	if t.external {
		return nil, fmt.Errorf("tensor %q: its data is in an external file, which Faithlab does not read (save the model with its weights inside)", t.name)
	}
	n, err := t.count()
	if err != nil {
		return nil, err
	}
	held := func(k int) error {
		if k != n {
			return fmt.Errorf("tensor %q: shape %v declares %d values, the file holds %d", t.name, t.dims, n, k)
		}
		return nil
	}
	switch t.dataType {
	case typeFloat:
		if t.raw != nil {
			if err := held(len(t.raw) / 4); err != nil || len(t.raw)%4 != 0 {
				return nil, cmpErr(err, fmt.Errorf("tensor %q: %d raw bytes of float32", t.name, len(t.raw)))
			}
			out := make([]float32, n)
			for lo := 0; lo < n; lo += dropChunk {
				hi := min(lo+dropChunk, n)
				for i := lo; i < hi; i++ {
					out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.raw[4*i:]))
				}
				if t.drop != nil {
					t.drop(t.raw[4*lo : 4*hi])
				}
			}
			return out, nil
		}
		return t.floats, held(len(t.floats))
	case typeDouble:
		if t.raw != nil {
			if err := held(len(t.raw) / 8); err != nil || len(t.raw)%8 != 0 {
				return nil, cmpErr(err, fmt.Errorf("tensor %q: %d raw bytes of float64", t.name, len(t.raw)))
			}
			out := make([]float32, n)
			for i := range out {
				out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(t.raw[8*i:])))
			}
			return out, nil
		}
		if err := held(len(t.doubles)); err != nil {
			return nil, err
		}
		out := make([]float32, n)
		for i, v := range t.doubles {
			out[i] = float32(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("tensor %q: data type %d where weights (float32 or float64) are expected", t.name, t.dataType)
}

// integers returns an integer tensor's values (a Reshape's shape).
func (t *tensor) integers() ([]int64, error) {
	n, err := t.count()
	if err != nil {
		return nil, err
	}
	var out []int64
	switch {
	case t.dataType == typeInt64 && t.raw != nil:
		if len(t.raw) != 8*n {
			return nil, fmt.Errorf("tensor %q: %d raw bytes for %d int64 values", t.name, len(t.raw), n)
		}
		for i := range n {
			out = append(out, int64(binary.LittleEndian.Uint64(t.raw[8*i:])))
		}
	case t.dataType == typeInt64:
		out = t.ints64
	case t.dataType == typeInt32 && t.raw != nil:
		if len(t.raw) != 4*n {
			return nil, fmt.Errorf("tensor %q: %d raw bytes for %d int32 values", t.name, len(t.raw), n)
		}
		for i := range n {
			out = append(out, int64(int32(binary.LittleEndian.Uint32(t.raw[4*i:]))))
		}
	case t.dataType == typeInt32:
		for _, v := range t.ints32 {
			out = append(out, int64(int32(v)))
		}
	default:
		return nil, fmt.Errorf("tensor %q: data type %d where integers are expected", t.name, t.dataType)
	}
	if len(out) != n {
		return nil, fmt.Errorf("tensor %q: shape %v declares %d values, the file holds %d", t.name, t.dims, n, len(out))
	}
	return out, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
