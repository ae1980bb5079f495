package onnx

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// classGrad is the output gradient of every input's logit of class c.
func classGrad(k, c int) engine.OutputGrad {
	return func(_ int, _, d []float32) {
		clear(d)
		for r := range len(d) / k {
			d[r*k+c] = 1
		}
	}
}

// graphModels are the width-reduced architectures testdata/onnx/make_graphs.py
// exports.
var graphModels = []string{"resnet-basic", "resnet-bottleneck", "cifar-resnet", "vgg-bn", "mobilenet-v2", "efficientnet", "densenet", "zoo", "tabular"}

// l2Err is ‖got − want‖/‖want‖.
func l2Err(got, want []float32) float64 {
	var d, w float64
	for i := range want {
		e := float64(got[i]) - float64(want[i])
		d += e * e
		w += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(d / w)
}

// relErr is the largest difference between got and want relative to
// want's largest magnitude.
func relErr(got, want []float32) float64 {
	scale, worst := 0.0, 0.0
	for i := range want {
		scale = math.Max(scale, math.Abs(float64(want[i])))
		worst = math.Max(worst, math.Abs(float64(got[i])-float64(want[i])))
	}
	return worst / scale
}

// The field's architectures, width-reduced, exported by PyTorch at opsets
// 11 and 17 (batch norm folded into the convolutions in one, kept in the
// other) read into native graphs whose logits and input gradients are
// PyTorch's (float64, the same weights) to float32 rounding, whether the
// batch runs whole or in pieces on replicas.
func TestArchitecturesMatchPyTorch(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "onnx")
	for _, name := range graphModels {
		matchPyTorch(t, dir, name, []int{11, 17}, 2e-6, 0)
	}
}

// The same architectures exported at the opsets between, by Debian's
// PyTorch at test time.
func TestArchitecturesAtEveryOpsetMatchPyTorch(t *testing.T) {
	dir := generate(t, "--opsets")
	for _, name := range graphModels {
		matchPyTorch(t, dir, name, []int{12, 13, 14, 15, 16}, 2e-6, 0)
	}
}

// torchvision's resnet18, resnet50, vgg16_bn, mobilenet_v2, densenet121
// and efficientnet_b0 at 224×224 and pytorch-cifar's ResNet-18 at 32×32,
// whole and with random weights, exported at opsets 11 to 17 by Debian's
// PyTorch at test time (never committed), match PyTorch: logits to 1e-5
// of the largest, input gradients to 1e-5 where no ReLU or max-pool lies
// on its kink. Among the millions of a 224×224 model, float32 rounding
// puts a few on the kink — a ReLU input of exactly 0, a tie in a max-pool
// window — that float64 does not, and the maps then differ there (by up to
// 3 % of the largest value, 0.6 % in L2 norm, measured; one ulp off x
// vgg16_bn's agree again to 1.4e-6): the gradients are held to 1 % in L2
// norm, the smaller models above to 2e-6 of the largest value.
func TestTorchvisionModelsMatchPyTorch(t *testing.T) {
	dir := generate(t, "--full")
	for i, name := range []string{"resnet18", "resnet50", "vgg16_bn", "mobilenet_v2", "densenet121", "efficientnet_b0", "cifar-resnet18"} {
		matchPyTorch(t, dir, name, []int{11 + i}, 1e-5, 1e-2)
		runtime.GC() // vgg16_bn's weights are 528 MB
	}
}

// generate runs make_graphs.py in mode into a temporary folder and returns
// it; it skips the test in -short mode, under the race detector or where
// /usr/bin/python3 lacks torch and torchvision.
func generate(t *testing.T, mode string) string {
	t.Helper()
	if testing.Short() || raceEnabled {
		t.Skip("exports models with PyTorch (not in -short mode or under the race detector)")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, torchvision").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import torch and torchvision (%v): apt-get install python3-torch python3-torchvision", err)
	}
	dir := t.TempDir()
	out, err := exec.Command("/usr/bin/python3", filepath.Join("..", "..", "..", "testdata", "onnx", "make_graphs.py"), mode, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("make_graphs.py %s: %v\n%s", mode, err, out)
	}
	return dir
}

// matchPyTorch checks the model name exported at opsets in dir against
// its expectations there: logits to tol of the largest, input gradients
// too where gradL2 is 0, else to gradL2 in L2 norm.
func matchPyTorch(t *testing.T, dir, name string, opsets []int, tol, gradL2 float64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".expected.npz"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := data.ParseNPZ(b)
	if err != nil {
		t.Fatal(err)
	}
	x, n := want["x"].Data, want["x"].Shape[0]
	for _, opset := range opsets {
		file := fmt.Sprintf("%s.op%d.onnx", name, opset)
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		g, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		kern, _ := gemm.Best() // OpenBLAS where it loads: the full models at 224×224 take billions of multiplications
		net, err := g.Build("onnx", kern)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		logits, err := net.Forward(x, n)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		el := relErr(logits, want["logits"].Data)
		class := min(3, net.Classes()-1) // make_graphs.py's
		grads := inputGrads(t, net, x, n, class)
		whole, err := engine.WholeBatch(context.Background(), net, x, n, engine.InputGrad, classGrad(net.Classes(), class))
		if err != nil {
			t.Fatal(err)
		}
		eg := max(relErr(grads, want["grads"].Data), relErr(whole, want["grads"].Data))
		e2 := max(l2Err(grads, want["grads"].Data), l2Err(whole, want["grads"].Data))
		t.Logf("%s: %d layers, logits within %.2g, input gradients (in pieces and whole) within %.2g of the largest, %.2g in L2 norm", file, len(net.Layers()), el, eg, e2)
		if el > tol || gradL2 == 0 && eg > tol || gradL2 > 0 && e2 > gradL2 {
			t.Errorf("%s: logits differ by %.3g, input gradients by %.3g of their largest, %.3g in L2 norm", file, el, eg, e2)
		}
	}
}

// Layers are named as PyTorch names the modules that make them, from the
// weights' names or the exporter's scopes, so that Grad-CAM's layer and
// MPRT's randomised layers read as in PyTorch.
func TestLayersAreNamedAsPyTorchNamesTheirModules(t *testing.T) {
	_, net := load(t, "resnet-basic.op17.onnx")
	want := []string{"conv1", "relu", "maxpool", "layer1.0.conv1", "layer1.0.relu", "layer1.0.conv2", "layer1.0.add", "layer1.0.relu_1",
		"layer2.0.conv1", "layer2.0.relu", "layer2.0.conv2", "layer2.0.downsample.0", "layer2.0.add", "layer2.0.relu_1", "avgpool", "fc"}
	if got := net.Layers(); !slices.Equal(got, want) {
		t.Errorf("layers %v, want %v", got, want)
	}
	if got := net.CAMLayer(); got != "layer2.0.relu_1" {
		t.Errorf("Grad-CAM's layer %s, want the last block's output layer2.0.relu_1", got)
	}
	_, net = load(t, "efficientnet.op11.onnx")
	for _, name := range []string{"features.0.2", "features.1.0.block.1.fc1", "features.1.0.block.1.mul", "features.2.1.add", "classifier.1"} {
		if !slices.Contains(net.Layers(), name) {
			t.Errorf("efficientnet has no layer %s (layers: %v)", name, net.Layers())
		}
	}
}
