package onnx

import (
	"context"
	"fmt"
	"math"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
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
var graphModels = []string{"resnet-basic", "resnet-bottleneck", "cifar-resnet", "vgg-bn", "mobilenet-v2", "efficientnet", "densenet", "zoo"}

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
	for _, name := range graphModels {
		want, err := data.ParseNPZ(fixture(t, name+".expected.npz"))
		if err != nil {
			t.Fatal(err)
		}
		x, n := want["x"].Data, want["x"].Shape[0]
		for _, opset := range []int{11, 17} {
			file := fmt.Sprintf("%s.op%d.onnx", name, opset)
			_, net := load(t, file)
			logits, err := net.Forward(x, n)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			el := relErr(logits, want["logits"].Data)
			grads := inputGrads(t, net, x, n, 3)
			eg := relErr(grads, want["grads"].Data)
			whole, err := engine.WholeBatch(context.Background(), net, x, n, engine.InputGrad, classGrad(net.Classes(), 3))
			if err != nil {
				t.Fatal(err)
			}
			if e := relErr(whole, grads); e > 1e-6 {
				t.Errorf("%s: input gradients in pieces differ from the whole batch's by %.3g", file, e)
			}
			t.Logf("%s: %d layers, logits within %.2g, input gradients within %.2g (relative to the largest)", file, len(net.Layers()), el, eg)
			if el > 2e-6 || eg > 2e-6 {
				t.Errorf("%s: logits differ by %.3g, input gradients by %.3g of their largest", file, el, eg)
			}
		}
	}
}
