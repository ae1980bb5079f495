package onnx

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"
)

// ---- hostile models of constants: builders ----

// attrInt is an integer attribute (AttributeProto of type INT).
func attrInt(name string, v int64) []byte {
	return varint(varint(str(nil, 1, name), 20, 2), 3, uint64(v))
}

// attrInts is an attribute of integers (type INTS).
func attrInts(name string, vs ...int64) []byte {
	a := varint(str(nil, 1, name), 20, 7)
	for _, v := range vs {
		a = varint(a, 8, uint64(v))
	}
	return a
}

// attrTensor is a tensor attribute (type TENSOR): a Constant's or a
// ConstantOfShape's value.
func attrTensor(name string, t []byte) []byte {
	return field(varint(str(nil, 1, name), 20, 4), 5, t)
}

// intTensor is a TensorProto of int64 values in raw bytes.
func intTensor(name string, dims []int64, vals []int64) []byte {
	var t []byte
	for _, d := range dims {
		t = varint(t, 1, uint64(d))
	}
	t = varint(t, 2, typeInt64)
	t = str(t, 8, name)
	raw := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return field(t, 9, raw)
}

// rawInts is an int64 initializer of dims holding vals.
func rawInts(name string, dims []int64, vals []int64) part {
	return part{5, intTensor(name, dims, vals)}
}

// nodeOf is a node of op reading ins, making out, with attributes.
func nodeOf(op string, ins []string, out string, attrs ...[]byte) part {
	var n []byte
	for _, x := range ins {
		n = str(n, 1, x)
	}
	n = str(n, 2, out)
	n = str(n, 3, op+"_"+out)
	n = str(n, 4, op)
	for _, a := range attrs {
		n = field(n, 5, a)
	}
	return part{1, n}
}

// zeros is ConstantOfShape: k int64 zeros as tensor out.
func zeros(k int64, out string) []part {
	return []part{intInit(out+"_shape", k),
		nodeOf("ConstantOfShape", []string{out + "_shape"}, out, attrTensor("value", intTensor("", []int64{1}, []int64{0})))}
}

// gatherBomb is the 39 KB file of issue #52: 65 536 zero indices made by
// ConstantOfShape gather the one row of a [1, 4096] constant, 2^28 values
// for a Reshape's shape.
func gatherBomb() []byte {
	parts := append(zeros(65536, "i"), rawInts("d", []int64{1, 4096}, make([]int64, 4096)),
		nodeOf("Gather", []string{"d", "i"}, "g", attrInt("axis", 0)),
		nodeOf("Reshape", []string{"x", "g"}, "y"))
	return protoModel(13, parts...)
}

// concatBomb is the 18.7 KB file of issue #52 (k = 4096): one constant of
// 65 536 values given to a Concat k times, for a Reshape's shape.
func concatBomb(k int) []byte {
	ins := make([]string, k)
	for i := range ins {
		ins[i] = "c"
	}
	parts := append(zeros(65536, "c"), nodeOf("Concat", ins, "g", attrInt("axis", 0)), nodeOf("Reshape", []string{"x", "g"}, "y"))
	return protoModel(13, parts...)
}

// chainBomb is a chain of k Adds of constants of 65 536 values, each far
// under the cap of one node, for a Reshape's shape.
func chainBomb(k int) []byte {
	parts := zeros(65536, "c")
	last := "c"
	for i := range k {
		t := fmt.Sprintf("t%d", i)
		parts = append(parts, nodeOf("Add", []string{last, "c"}, t))
		last = t
	}
	return protoModel(13, append(parts, nodeOf("Reshape", []string{"x", last}, "y"))...)
}

// Files of a few KB whose constant folding would make gigabytes (issue
// #52) are refused before anything is built: with an error naming the
// node, its operator and the values it would make, in well under a second,
// having allocated a few MB — the Gather of 65 536 indices over a
// [1, 4096] constant (2^28 values), a Concat of a 65 536-value constant
// 4 096 times (2^28) and 257 times (just over the cap of one node), 256
// times (the cap of one node, more than a file of 1 KB may fold), and a
// chain of Adds each far under the cap whose sum passes the model's budget.
func TestConstantFoldingBombsAreRefusedBeforeTheyAreBuilt(t *testing.T) {
	cases := []struct {
		what string
		b    []byte
		want string
	}{
		{"Gather of 65536 indices over [1, 4096]", gatherBomb(),
			`node "Gather_g" (Gather) of constants makes 268435456 values: more than Faithlab computes at import`},
		{"Concat of 4096 copies", concatBomb(4096),
			`node "Concat_g" (Concat) of constants makes 268435456 values: more than Faithlab computes at import`},
		{"Concat of 257 copies", concatBomb(257),
			`node "Concat_g" (Concat) of constants makes 16842752 values: more than Faithlab computes at import`},
		{"Concat of 256 copies", concatBomb(256),
			`node "Concat_g" (Concat) of constants makes 16777216 values, 16842752 with the constants folded before it: more than Faithlab computes at import for a file of`},
		{"a chain of 64 Adds", chainBomb(64),
			`(Add) of constants makes 65536 values, 1114112 with the constants folded before it: more than Faithlab computes at import for a file of`},
	}
	for _, tc := range cases {
		var err error
		start := time.Now()
		n := allocated(func() { _, err = Parse(tc.b) })
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.what, err, tc.want)
		}
		if took > time.Second || n > 100<<20 {
			t.Errorf("%s: refused in %v having allocated %d bytes, want under 1 s and 100 MB", tc.what, took, n)
		}
		t.Logf("%s, a file of %d bytes: refused in %v having allocated %d bytes: %v", tc.what, len(tc.b), took, n, err)
	}
}

// A stored tensor read by many nodes, or many times by one, is converted
// once: a Concat of a 4 096-value float weight 4 096 times is refused
// without converting it 4 096 times (64 MB).
func TestAStoredConstantReadManyTimesIsConvertedOnce(t *testing.T) {
	ins := make([]string, 4096)
	for i := range ins {
		ins[i] = "w"
	}
	b := protoModel(13, tensorInit("w", []int64{4096}, 4096), nodeOf("Concat", ins, "g", attrInt("axis", 0)), nodeOf("Reshape", []string{"x", "g"}, "y"))
	var err error
	n := allocated(func() { _, err = Parse(b) })
	if err == nil || !strings.Contains(err.Error(), `node "Concat_g" (Concat) of constants makes 16777216 values`) {
		t.Errorf("%v, want the Concat refused", err)
	}
	if n > 16<<20 {
		t.Errorf("refused having allocated %d bytes, want a few MB", n)
	}
	t.Logf("refused having allocated %d bytes: %v", n, err)
}

// A constant unsqueezed to 100 001 dimensions is refused at once (every
// later node would walk them all), and a Reshape to a "shape" of 65 536
// values is refused in a line naming its first values and their count,
// not in a megabyte.
func TestHighRanksAndLongShapesAreRefusedBriefly(t *testing.T) {
	axes := make([]int64, 100000)
	for i := range axes {
		axes[i] = int64(i)
	}
	b := protoModel(13, append(zeros(65536, "c"), rawInts("a", []int64{100000}, axes),
		nodeOf("Unsqueeze", []string{"c", "a"}, "u"), nodeOf("Reshape", []string{"x", "u"}, "y"))...)
	start := time.Now()
	_, err := Parse(b)
	if err == nil || !strings.Contains(err.Error(), `node "Unsqueeze_u" (Unsqueeze) of constants: a tensor of 100001 dimensions: Faithlab folds at most 32`) || time.Since(start) > time.Second {
		t.Errorf("%v in %v, want the Unsqueeze refused for its rank in under 1 s", err, time.Since(start))
	}
	_, err = Parse(protoModel(13, append(zeros(65536, "s"), nodeOf("Reshape", []string{"x", "s"}, "y"))...))
	if err == nil || !strings.Contains(err.Error(), "Reshape to [0 0 0 0 0 0 0 0 … (65536 values)]: only flattening") || len(err.Error()) > 300 {
		t.Errorf("%.400v, want the shape's first values and count", err)
	}
}

// Nodes of constants missing an input, or adding an empty constant to
// one value, are refused with what is wrong: folding used to panic on
// them (a nil constant, an index out of range, a division by zero).
func TestFoldsMissingInputsAreRefusedNotPanics(t *testing.T) {
	cases := []struct {
		what string
		b    []byte
		want string
	}{
		{"an Add of an empty name", protoModel(13, intInit("c", 3), nodeOf("Add", []string{"", "c"}, "g"), nodeOf("Reshape", []string{"x", "g"}, "y")),
			`node "Add_g" (Add) of constants: no input 0`},
		{"an Add of one input", protoModel(13, intInit("c", 3), nodeOf("Add", []string{"c"}, "g"), nodeOf("Reshape", []string{"x", "g"}, "y")),
			`node "Add_g" (Add) of constants: 1 inputs, where it takes 2`},
		{"an Add of no values and one", protoModel(13, intInit("c", 3), rawInts("e", []int64{0}, nil), nodeOf("Add", []string{"e", "c"}, "g"), nodeOf("Reshape", []string{"x", "g"}, "y")),
			`node "Reshape_y": Reshape to []`},
	}
	for _, tc := range cases {
		_, err := Parse(tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.what, err, tc.want)
		}
	}
}
