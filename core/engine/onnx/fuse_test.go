package onnx

import "testing"

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
