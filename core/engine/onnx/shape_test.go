package onnx

import (
	"strings"
	"testing"
)

// valueInfoOf is a graph input or output of the given dimensions, each a
// value or a symbolic name.
func valueInfoOf(name string, dims ...any) []byte {
	var shape []byte
	for _, d := range dims {
		var dm []byte
		switch d := d.(type) {
		case string:
			dm = str(dm, 2, d)
		case int:
			dm = varint(dm, 1, uint64(d))
		}
		shape = field(shape, 1, dm)
	}
	var tt []byte
	tt = varint(tt, 1, typeFloat)
	tt = field(tt, 2, shape)
	return field(str(nil, 1, name), 2, field(nil, 1, tt))
}

// An input of a rank Faithlab does not take is refused with its shape as
// a shape prints, not as Go's raw struct ("[{0 n false} {8  true} …]").
func TestAnInputOfAnotherRankIsNamedByItsShape(t *testing.T) {
	var g []byte
	g = field(g, 1, relu("x", "y").msg)
	g = field(g, 11, valueInfoOf("x", "n", 8, 8))
	g = field(g, 12, valueInfoOf("y", "n", 8, 8))
	m := field(varint(nil, 1, 8), 7, g)
	m = field(m, 8, varint(str(nil, 1, ""), 2, 13))
	_, err := Parse(m)
	if err == nil || !strings.Contains(err.Error(), `input "x" of shape [n 8 8]`) || strings.Contains(err.Error(), "{") {
		t.Errorf("%v, want the shape [n 8 8]", err)
	}
}
