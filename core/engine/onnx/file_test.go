package onnx

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"faithlab/core/engine/gemm"
)

// A file read through its mapping gives the graph and weights its bytes
// give, and a network built from it holds those weights themselves:
// the graph keeps none, and a second build is refused.
func TestParseFileGivesParsesGraphAndBuildMovedHoldsTheWeightsOnce(t *testing.T) {
	path := filepath.Join("..", "..", "..", "testdata", "onnx", "resnet-basic.op17.onnx")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	g, err := ParseFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(fixture(t, "resnet-basic.op17.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, want) {
		t.Fatal("the mapped file's graph differs from its bytes'")
	}
	ws := map[string][]float32{}
	for k, v := range g.Weights {
		ws[k] = v
	}
	net, err := g.BuildMoved("onnx", gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Weights) != 0 {
		t.Errorf("the graph keeps %d weights after moving them", len(g.Weights))
	}
	for _, p := range net.Params() {
		if &p.Data[0] != &ws[p.Name][0] {
			t.Errorf("%s: the network holds a copy of the file's weights", p.Name)
		}
	}
	if _, err := g.BuildMoved("onnx", gemm.Gonum{}); err == nil {
		t.Error("a graph whose weights moved built again")
	}
	if _, err := ParseFile(f, MaxBytes+1); err == nil {
		t.Error("a file over MaxBytes read")
	}
}
