package onnx

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "onnx", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func load(t testing.TB, name string) (*Graph, *native.Net) {
	t.Helper()
	g, err := Parse(fixture(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	net, err := g.Build("onnx", gemm.Gonum{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return g, net
}

// inputGrads is the gradient of every input's logit of class target.
func inputGrads(t *testing.T, net engine.Network, x []float32, n, target int) []float32 {
	t.Helper()
	k := net.Classes()
	g, err := engine.Differentiate(context.Background(), net, x, n, engine.InputGrad, func(first int, _, d []float32) {
		clear(d)
		for r := range len(d) / k {
			d[r*k+target] = 1
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(g)
}

func closeTo(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	worst := 0.0
	for i := range got {
		worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
	}
	t.Logf("%s: largest difference %.3g (largest value %.3g)", what, worst, scale)
	if worst > tol*math.Max(scale, 1e-3) {
		t.Errorf("%s: differs by up to %g (scale %g)", what, worst, scale)
	}
}

// GOAR's CNN exported by PyTorch at opsets 9, 11 and 13 reads into the
// native goar-cnn's layers: its logits and input gradients are PyTorch's
// (float64) to float32 rounding, and bit for bit those of the built-in
// goar-cnn holding the same weights.
func TestGoarCNNFromONNXMatchesPyTorchAndTheBuiltIn(t *testing.T) {
	want, err := data.ParseNPZ(fixture(t, "goar-cnn.expected.npz"))
	if err != nil {
		t.Fatal(err)
	}
	x, n := want["x"].Data, want["x"].Shape[0]
	for _, file := range []string{"goar-cnn.onnx", "goar-cnn-op11.onnx", "goar-cnn-op9.onnx"} {
		g, net := load(t, file)
		if !slices.Equal(g.InputShape, []int{1, 28, 28}) || g.Classes != 10 || g.NHWC || g.DroppedSoftmax != "" {
			t.Fatalf("%s: input %v, %d classes, NHWC %v, softmax %q", file, g.InputShape, g.Classes, g.NHWC, g.DroppedSoftmax)
		}
		logits, err := net.Forward(x, n)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, file+" logits", logits, want["logits"].Data, 1e-5)
		grads := inputGrads(t, net, x, n, 3)
		closeTo(t, file+" input gradients", grads, want["grads"].Data, 1e-4)

		builtin, err := native.New("goar-cnn", []int{1, 28, 28}, 10, gemm.Gonum{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range builtin.Params() {
			w, ok := g.Weights[p.Name]
			if !ok {
				t.Fatalf("%s: no weights named %s (have the layers %v)", file, p.Name, g.Layers)
			}
			copy(p.Data, w)
		}
		bl, err := builtin.Forward(x, n)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(bl, logits) {
			t.Errorf("%s: logits differ from the built-in goar-cnn's", file)
		}
		if !slices.Equal(inputGrads(t, builtin, x, n, 3), grads) {
			t.Errorf("%s: input gradients differ from the built-in goar-cnn's", file)
		}
		if !slices.Equal(net.Layers(), builtin.Layers()) || net.CAMLayer() != "relu3" {
			t.Errorf("%s: layers %v (Grad-CAM's %s), the built-in's %v", file, net.Layers(), net.CAMLayer(), builtin.Layers())
		}
	}
}

// What other exporters write — channels-last input behind a Transpose, a
// strided, padded convolution without bias, batch norm, global average
// pooling, MatMul + Add, a final Softmax — reads into native layers whose
// logits (before the dropped softmax) and input gradients are PyTorch's.
func TestExportersIdiomsReadIntoNativeLayers(t *testing.T) {
	want, err := data.ParseNPZ(fixture(t, "small.expected.npz"))
	if err != nil {
		t.Fatal(err)
	}
	g, net := load(t, "small.onnx")
	if !g.NHWC || g.DroppedSoftmax != "Softmax" || !slices.Equal(g.InputShape, []int{3, 12, 12}) || g.Classes != 5 {
		t.Fatalf("NHWC %v, softmax %q, input %v, %d classes", g.NHWC, g.DroppedSoftmax, g.InputShape, g.Classes)
	}
	x, n := want["x"].Data, want["x"].Shape[0]
	logits, err := net.Forward(x, n)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "logits", logits, want["logits"].Data, 1e-5)
	closeTo(t, "input gradients", inputGrads(t, net, x, n, 3), want["grads"].Data, 1e-4)
}

// Hostile and unsupported files are refused with what is wrong, never a
// panic: a cut file, a wrong opset, a cyclic graph, a tensor declaring
// more values than it holds or than any model needs, an unknown operator,
// shape arithmetic or padding that would make more than a model needs.
func TestHostileONNXFilesAreRefusedWithTheProblem(t *testing.T) {
	whole := fixture(t, "goar-cnn.onnx")
	var cases = []struct {
		what string
		b    []byte
		want string
	}{
		{"empty", nil, "no graph"},
		{"truncated", whole[:len(whole)/2], "not a readable ONNX model"},
		{"a PNG", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "not a readable ONNX model"},
		{"opset 3", protoModel(3, relu("x", "y"), tensorInit("w", []int64{2}, 2)), "opset 3: Faithlab reads ONNX opsets 7 to 21"},
		{"opset 99", protoModel(99, relu("x", "y")), "opset 99"},
		{"cyclic", protoModel(13, relu("x", "a"), relu("a", "b"), relu("b", "a")), "cycle"},
		{"unknown operator", protoModel(13, opNode("Sin", "x", "y")), "operator Sin is not supported"},
		{"huge declared tensor", protoModel(13, conv("x", "y", "w"), tensorInit("w", []int64{1 << 20, 1 << 20, 3, 3}, 4)), "declares more than"},
		{"declared shape not held", protoModel(13, conv("x", "y", "w"), tensorInit("w", []int64{4, 1, 3, 3}, 7)), "declares 36 values, the file holds 7"},
		{"dead branch", protoModel(13, relu("x", "a"), relu("a", "y"), relu("a", "z")), `node "Relu_z" (Relu) does not lead to the graph's output`},
		{"tensor nobody makes", protoModel(13, opNode("Add", "x", "y", "ghost")), `reads tensor "ghost", which no node makes`},
		{"constant of 2^40 values", protoModel(13, opNode("ConstantOfShape", "s", "c"), opNode("Add", "x", "y", "c"), intInit("s", 1<<20, 1<<20)), "too large"},
		{"padding to 2^34 values", protoModel(13, opNode("Pad", "x", "y", "p"), intInit("p", 0, 0, 65536, 65536, 0, 0, 65536, 65536)), "more than Faithlab holds for one layer"},
		{"reshape to a tensor output", protoModel(13, opNode("Reshape", "x", "y", "s"), intInit("s", -1, 4, 16)), "the output is a tensor of shape [N 4 16]"},
		{"reshape that mixes samples", protoModel(13, opNode("Reshape", "x", "y", "s"), intInit("s", 4, -1)), "the batch would move among the values"},
		{"gather out of range", protoModel(13, opNode("Shape", "x", "s"), opNode("Gather", "s", "g", "i"), opNode("Reshape", "x", "y", "g"), intInit("i", 9)), "index 9 of 4"},
	}
	for _, tc := range cases {
		_, err := Parse(tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.what, err, tc.want)
		}
	}
}

// FuzzParse: no bytes make Parse panic, and a graph it accepts builds and
// runs forward. The seeds hold residual sums, concatenations, gates, the
// shape arithmetic folded at import and batch norm.
func FuzzParse(f *testing.F) {
	f.Add(fixture(f, "small.onnx"))
	for _, name := range []string{"resnet-basic.op11.onnx", "densenet.op17.onnx", "efficientnet.op11.onnx", "zoo.op11.onnx", "zoo.op17.onnx", "cifar-resnet.op11.onnx", "tabular.op17.onnx"} {
		f.Add(fixture(f, name))
	}
	f.Add(protoModel(13, relu("x", "a"), relu("a", "y")))
	f.Add(protoModel(13, conv("x", "y", "w"), tensorInit("w", []int64{4, 1, 3, 3}, 36)))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Parse(b)
		if err != nil {
			return
		}
		if engine.Size(g.InputShape) > 1<<16 {
			return // a valid but large graph: building it is not the parser's business
		}
		net, err := g.Build("fuzz", gemm.Gonum{})
		if err == nil {
			_, _ = net.Forward(make([]float32, engine.Size(g.InputShape)), 1)
		}
	})
}

// ---- hand-made ModelProtos ----

func field(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func str(b []byte, num protowire.Number, s string) []byte { return field(b, num, []byte(s)) }

func varint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

type part struct {
	num protowire.Number
	msg []byte
}

func opNode(op, in, out string, extra ...string) part {
	var n []byte
	n = str(n, 1, in)
	for _, e := range extra {
		n = str(n, 1, e)
	}
	n = str(n, 2, out)
	n = str(n, 3, op+"_"+out)
	n = str(n, 4, op)
	return part{1, n}
}

func relu(in, out string) part    { return opNode("Relu", in, out) }
func conv(in, out, w string) part { return opNode("Conv", in, out, w) }

// intInit is an int64 initializer holding vals, of one dimension.
func intInit(name string, vals ...int64) part {
	var t []byte
	t = varint(t, 1, uint64(len(vals)))
	t = varint(t, 2, typeInt64)
	t = str(t, 8, name)
	for _, v := range vals {
		t = varint(t, 7, uint64(v))
	}
	return part{5, t}
}

// tensorInit is an initializer declaring dims and holding held floats.
func tensorInit(name string, dims []int64, held int) part {
	var t []byte
	for _, d := range dims {
		t = varint(t, 1, uint64(d))
	}
	t = varint(t, 2, typeFloat)
	t = str(t, 8, name)
	t = field(t, 9, make([]byte, 4*held))
	return part{5, t}
}

func valueInfo4(name string) []byte {
	var shape []byte
	for i, d := range []uint64{0, 1, 8, 8} {
		var dm []byte
		if i == 0 {
			dm = str(dm, 2, "n")
		} else {
			dm = varint(dm, 1, d)
		}
		shape = field(shape, 1, dm)
	}
	var tt []byte
	tt = varint(tt, 1, typeFloat)
	tt = field(tt, 2, shape)
	var vi []byte
	vi = str(vi, 1, name)
	return field(vi, 2, field(nil, 1, tt))
}

// protoModel is a ModelProto of opset, with graph input x (N, 1, 8, 8) and
// output y.
func protoModel(opset uint64, parts ...part) []byte {
	var g []byte
	for _, p := range parts {
		g = field(g, p.num, p.msg)
	}
	g = field(g, 11, valueInfo4("x"))
	g = field(g, 12, valueInfo4("y"))
	var m []byte
	m = varint(m, 1, 8)
	m = field(m, 7, g)
	var o []byte
	o = str(o, 1, "")
	o = varint(o, 2, opset)
	return field(m, 8, o)
}

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A file declaring a tensor of 2^42 values is refused having allocated a
// few KB, and reading the whole goar-cnn file (384 KB) allocates a small
// multiple of it: memory follows the bytes a file holds, never what it
// declares.
func TestMemoryFollowsTheFileNotItsDeclarations(t *testing.T) {
	huge := protoModel(13, conv("x", "y", "w"), tensorInit("w", []int64{1 << 20, 1 << 20, 2, 2}, 4))
	if n := allocated(func() { Parse(huge) }); n > 64<<10 {
		t.Errorf("refusing a tensor of 2^42 declared values allocated %d bytes", n)
	} else {
		t.Logf("a file of %d bytes declaring 2^42 values: refused after allocating %d bytes", len(huge), n)
	}
	whole := fixture(t, "goar-cnn.onnx")
	if n := allocated(func() { Parse(whole) }); n > 4*uint64(len(whole)) {
		t.Errorf("reading %d bytes allocated %d", len(whole), n)
	} else {
		t.Logf("goar-cnn.onnx, %d bytes: read with %d bytes allocated", len(whole), n)
	}
	graph := fixture(t, "cifar-resnet.op11.onnx") // shape arithmetic to fold, batch norm kept
	if n := allocated(func() { Parse(graph) }); n > 4*uint64(len(graph)) {
		t.Errorf("reading cifar-resnet.op11.onnx, %d bytes, allocated %d", len(graph), n)
	} else {
		t.Logf("cifar-resnet.op11.onnx, %d bytes: read with %d bytes allocated", len(graph), n)
	}
	cut := whole[:len(whole)-1000]
	if n := allocated(func() { Parse(cut) }); n > 4*uint64(len(whole)) {
		t.Errorf("refusing a truncated file of %d bytes allocated %d", len(cut), n)
	} else {
		t.Logf("goar-cnn.onnx cut short: refused after allocating %d bytes", n)
	}
}

// A graph that reads its input twice gets an identity layer as its first,
// which alone reads the input, so that a layer put before the graph (a
// description's normalisation) comes before both readers.
func TestInputReadTwiceGetsOneReader(t *testing.T) {
	b := protoModel(13, relu("x", "a"), opNode("Sigmoid", "x", "b"), opNode("Concat", "a", "c", "b"),
		opNode("GlobalAveragePool", "c", "d"), opNode("Flatten", "d", "y"))
	g, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if l := g.Layers[0]; l.Op != "identity" || l.In != nil {
		t.Fatalf("first layer %+v, want an identity reading the input", l)
	}
	for _, l := range g.Layers[1:] {
		if slices.Contains(l.In, "") {
			t.Errorf("layer %s reads the graph's input itself", l.Name)
		}
	}
	net, err := g.Build("twice", gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 64)
	var r, s float64
	for i := range x {
		x[i] = float32(i-32) / 16
		r += math.Max(float64(x[i]), 0) / 64
		s += 1 / (1 + math.Exp(-float64(x[i]))) / 64
	}
	y, err := net.Forward(x, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(y[0])-r) > 1e-6 || math.Abs(float64(y[1])-s) > 1e-6 {
		t.Errorf("logits %v, want [%g %g]", y, r, s)
	}
}
