package model

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// onnxFixture copies the fixture goar-cnn.onnx into a folder, with the
// description given ("" for none).
func onnxFixture(t *testing.T, description string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "onnx", "goar-cnn.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if description != "" {
		if err := os.WriteFile(path+".json", []byte(description), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

const tenClasses = `["a","b","c","d","e","f","g","h","i","j"]`

// A description's mean and std become the network's first layer: the
// logits of x are the graph's logits of (x − mean)/std, and the input
// gradient is the graph's divided by std. cam_layer names Grad-CAM's layer.
func TestONNXDescriptionNormalisesAndNamesTheCAMLayer(t *testing.T) {
	plain, err := Load(onnxFixture(t, ""), gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := ONNXDigest(plain.ONNX.Path); err != nil || d != plain.ONNX.Digest {
		t.Errorf("ONNXDigest %s (%v), the loaded model's %s", d, err, plain.ONNX.Digest)
	}
	if plain.Arch != ONNXArch || len(plain.Classes) != 10 || plain.Classes[9] != "9" || plain.Source != nil {
		t.Fatalf("without a description: %s, classes %v, source %v", plain.Arch, plain.Classes, plain.Source)
	}
	norm, err := Load(onnxFixture(t, `{"input_shape": [1, 28, 28], "classes": `+tenClasses+`, "mean": [0.25], "std": [0.5], "cam_layer": "relu2"}`), gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	if norm.Net.CAMLayer() != "relu2" || norm.Net.Clone().(interface{ CAMLayer() string }).CAMLayer() != "relu2" {
		t.Errorf("Grad-CAM's layer %q", norm.Net.CAMLayer())
	}
	x := make([]float32, 2*784)
	z := make([]float32, len(x))
	for i := range x {
		x[i] = float32(i%29) / 29
		z[i] = (x[i] - 0.25) / 0.5
	}
	a, _ := norm.Net.Forward(x, 2)
	a = slices.Clone(a)
	b, _ := plain.Net.Forward(z, 2)
	for i := range a {
		if d := a[i] - b[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("logit %d: %g with the description, %g on normalised inputs", i, a[i], b[i])
		}
	}
	dl := make([]float32, 20)
	dl[3], dl[13] = 1, 1
	ga, _ := norm.Net.Backward(dl, engine.InputGrad)
	ga = slices.Clone(ga)
	gb, _ := plain.Net.Backward(dl, engine.InputGrad)
	for i := range ga {
		if d := ga[i] - gb[i]/0.5; d > 1e-6 || d < -1e-6 {
			t.Fatalf("input gradient %d: %g, want %g", i, ga[i], gb[i]/0.5)
		}
	}
}

// A description that disagrees with the graph is refused, naming both.
func TestONNXDescriptionMustAgreeWithTheGraph(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"input_shape": [3, 28, 28], "classes": ` + tenClasses + `}`, "input_shape [3 28 28], the graph takes [1 28 28]"},
		{`{"input_shape": [1, 28, 28], "classes": ["a", "b"]}`, "2 classes, the graph gives 10 logits"},
		{`{"input_shape": [1, 28, 28], "classes": ` + tenClasses + `, "cam_layer": "conv9"}`, `no layer "conv9"`},
		{`{"input_shape": [1, 28, 28], "classes": ` + tenClasses + `, "layout": "NHWC"}`, `unknown field "layout"`},
	} {
		_, err := Load(onnxFixture(t, tc.json), gemm.Gonum{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "m.onnx.json") {
			t.Errorf("%s: %v, want an error with %q naming the description", tc.json, err, tc.want)
		}
	}
}

// Retraining an ONNX model trains its own layers from the native engine's
// fresh initialisation, and a retrained copy stores and loads back
// without touching the imported model's weights.
func TestONNXModelRetrainsItsOwnGraph(t *testing.T) {
	m, err := Load(onnxFixture(t, ""), gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := NativeEngine(gemm.Gonum{})
	fresh, err := e.Fresh(ctx, m, &data.Dataset{Shape: []int{1, 28, 28}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := e.Fresh(ctx, m, nil, 5)
	if !slices.Equal(fresh.Layers(), m.Net.Layers()) {
		t.Fatalf("fresh layers %v, the model's %v", fresh.Layers(), m.Net.Layers())
	}
	orig := slices.Clone(m.Net.Params()[0].Data)
	if slices.Equal(fresh.Params()[0].Data, orig) || !slices.Equal(fresh.Params()[0].Data, again.Params()[0].Data) {
		t.Fatal("fresh weights: not redrawn, or not the same for the same seed")
	}
	b, err := m.EncodeRetrained(fresh)
	if err != nil || m.RetrainedExt() != ".npz" {
		t.Fatal(err, m.RetrainedExt())
	}
	back, err := e.DecodeRetrained(ctx, m, b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Params()[0].Data, fresh.Params()[0].Data) || !slices.Equal(m.Net.Params()[0].Data, orig) {
		t.Error("the retrained weights did not come back, or overwrote the imported model's")
	}
}
