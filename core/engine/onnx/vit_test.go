package onnx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"faithlab/core/attr"
	"faithlab/core/data"
	"faithlab/core/engine/gemm"
)

// vitModels are the transformers testdata/onnx/make_vit.py exports.
var vitModels = []string{"vit-tiny", "deit-tiny"}

// A torchvision VisionTransformer (vit_b_16's code: MultiheadAttention's
// transposes that put the batch on another axis and share it with the
// heads, LayerNormalization) and a timm-style DeiT (one qkv Linear,
// permute(2, 0, 3, 1, 4), LayerNorm decomposed at opset 14) read into
// native graphs whose logits and input gradients are PyTorch's to float32
// rounding, the batch whole or in pieces.
func TestVisionTransformersMatchPyTorch(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "onnx")
	matchPyTorch(t, dir, "vit-tiny", []int{17}, 1e-5, 0)
	matchPyTorch(t, dir, "deit-tiny", []int{14}, 1e-5, 0)
}

// The same transformers at every opset from 13 to 17, exported at test time.
func TestVisionTransformersAtEveryOpsetMatchPyTorch(t *testing.T) {
	dir := generateWith(t, "make_vit.py", "--opsets")
	for _, name := range vitModels {
		matchPyTorch(t, dir, name, []int{13, 14, 15, 16, 17}, 1e-5, 0)
	}
}

// torchvision's vit_b_16 (random weights) at 224×224, opset 14: generated
// on demand, 330 MB, never committed. Make it with
//
//	/usr/bin/python3 testdata/onnx/make_vit.py --full DIR
//
// and run with FAITHLAB_VIT_B_16=DIR.
func TestViTB16MatchesPyTorch(t *testing.T) {
	dir := os.Getenv("FAITHLAB_VIT_B_16")
	if dir == "" {
		t.Skip("set FAITHLAB_VIT_B_16 to a folder made by /usr/bin/python3 testdata/onnx/make_vit.py --full DIR")
	}
	matchPyTorch(t, dir, "vit_b_16", []int{14}, 1e-4, 0)
	b, err := os.ReadFile(filepath.Join(dir, "vit_b_16.op14.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	kern, _ := gemm.Best()
	net, err := g.Build("vit_b_16", kern)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 3*224*224)
	net.Forward(x, 1)
	start := time.Now()
	for range 3 {
		if _, err := net.Forward(x, 1); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("vit_b_16 forward at batch 1: %v on %s", time.Since(start)/3, net.Kernel())
	checkMethods(t, dir, "vit_b_16", "vit_b_16.op14.onnx", 1e-4)
}

// generateWith runs script in mode into a temporary folder, as generate.
func generateWith(t *testing.T, script, mode string) string {
	t.Helper()
	if testing.Short() || raceEnabled {
		t.Skip("exports models with PyTorch (not in -short mode or under the race detector)")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, torchvision").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import torch and torchvision (%v): apt-get install python3-torch python3-torchvision", err)
	}
	dir := t.TempDir()
	out, err := exec.Command("/usr/bin/python3", filepath.Join("..", "..", "..", "testdata", "onnx", script), mode, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", script, mode, err, out)
	}
	return dir
}

// Attention Rollout, the gradient-weighted rollout and the last block's raw
// attention, read from the native graph's attention probabilities, give
// the maps make_vit.py's PyTorch reference computes on the same weights
// (patch grid upsampled bilinearly), to 1e-4 of their largest value.
func TestTransformerMethodsMatchPyTorchReference(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "onnx")
	checkMethods(t, dir, "vit-tiny", "vit-tiny.op17.onnx", 1e-4)
	checkMethods(t, dir, "deit-tiny", "deit-tiny.op14.onnx", 1e-4)
}

func checkMethods(t *testing.T, dir, name, file string, tol float64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".expected.npz"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := data.ParseNPZ(b)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(filepath.Join(dir, file)); err != nil {
		t.Fatal(err)
	}
	g, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	kern, _ := gemm.Best()
	net, err := g.Build(name, kern)
	if err != nil {
		t.Fatal(err)
	}
	x, n := want["x"].Data, want["x"].Shape[0]
	in := attr.Input{X: x, N: n, Shape: net.InputShape(), Target: slices.Repeat([]int{3}, n)}
	for _, tc := range []struct {
		m   attr.Method
		key string
	}{{attr.AttentionRollout{}, "rollout"}, {attr.GradientRollout{}, "gradrollout"}, {attr.RawAttention{}, "rawattn"}} {
		got, err := attr.Run(context.Background(), tc.m, net, in)
		if err != nil {
			t.Fatalf("%s %s: %v", name, tc.m.Name(), err)
		}
		e := relErr(got.Data, want[tc.key].Data)
		t.Logf("%s %s: within %.2g of the largest value", name, tc.m.Name(), e)
		if e > tol {
			t.Errorf("%s %s differs from PyTorch's by %.3g of its largest value", name, tc.m.Name(), e)
		}
	}
}

// The attention probabilities are found where they are — each block's
// softmax between the query–key and value products, in order — and a
// model without them is refused by the transformer methods, naming it.
func TestAttentionProbabilitiesAreFoundAndTheirAbsenceRefused(t *testing.T) {
	_, net := load(t, "vit-tiny.op17.onnx")
	want := []string{"encoder.layers.encoder_layer_0.self_attention.softmax", "encoder.layers.encoder_layer_1.self_attention.softmax"}
	if got := net.AttentionLayers(); !slices.Equal(got, want) {
		t.Errorf("attention layers %v, want %v", got, want)
	}
	if a, err := net.Activation(want[0]); err == nil {
		t.Errorf("an activation before any forward pass: %v", a.Shape)
	}
	_, cnn := load(t, "resnet-basic.op17.onnx")
	if got := cnn.AttentionLayers(); len(got) != 0 {
		t.Errorf("a ResNet has attention layers %v", got)
	}
	in := attr.Input{X: make([]float32, 3*32*32), N: 1, Shape: cnn.InputShape(), Target: []int{0}}
	for _, m := range []attr.Method{attr.AttentionRollout{}, attr.GradientRollout{}, attr.RawAttention{}} {
		_, err := attr.Run(context.Background(), m, cnn, in)
		if err == nil || !strings.Contains(err.Error(), "onnx has no attention probabilities") {
			t.Errorf("%s on a ResNet: %v, want a refusal naming the model", m.Name(), err)
		}
	}
}
