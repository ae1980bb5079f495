package onnx

import (
	"slices"
	"testing"
)

// PyTorch's nn.GELU, exported as five nodes, reads as one "gelu" layer
// named for its module, and nothing of the five is left.
func TestGELUReadsAsOneLayerNamedForItsModule(t *testing.T) {
	g, err := Parse(fixture(t, "vit-tiny.op17.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	var gelus []string
	for _, l := range g.Layers {
		switch l.Op {
		case "gelu":
			gelus = append(gelus, l.Name)
		case "erf":
			t.Errorf("layer %s: an erf left beside the GELUs", l.Name)
		}
	}
	want := []string{"encoder.layers.encoder_layer_0.mlp.1", "encoder.layers.encoder_layer_1.mlp.1"}
	if len(gelus) != len(want) || gelus[0] != want[0] || gelus[1] != want[1] {
		t.Errorf("GELU layers %v, want %v", gelus, want)
	}
}

// nn.LayerNorm exported before opset 17 (nine nodes from ReduceMean to
// the bias's Add) reads as one "layernorm" layer named for its module,
// with the module's weight and bias under PyTorch's names.
func TestDecomposedLayerNormReadsAsOneLayerNamedForItsModule(t *testing.T) {
	g, err := Parse(fixture(t, "deit-tiny.op14.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	var norms []string
	for _, l := range g.Layers {
		switch l.Op {
		case "layernorm":
			norms = append(norms, l.Name)
			if len(g.Weights[l.Name+".weight"]) != 64 || len(g.Weights[l.Name+".bias"]) != 64 {
				t.Errorf("layer norm %s without its 64 weights and biases", l.Name)
			}
		case "sqrt", "reducemean":
			t.Errorf("layer %s (%s) left of a layer norm", l.Name, l.Op)
		}
	}
	want := []string{"blocks.0.norm1", "blocks.0.norm2", "blocks.1.norm1", "blocks.1.norm2", "norm"}
	if !slices.Equal(norms, want) {
		t.Errorf("layer norms %v, want %v", norms, want)
	}
}
