package onnx

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"faithlab/core/attr"
	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

// On an imported residual graph (a ResNet of torchvision's BasicBlocks),
// Gradient, Gradient × Input and Integrated Gradients (8 steps, right
// Riemann sum, zero baseline) give what PyTorch computes for them on the
// same weights.
func TestGradientMethodsOnAResidualGraphMatchPyTorch(t *testing.T) {
	want, err := data.ParseNPZ(fixture(t, "resnet-basic.expected.npz"))
	if err != nil {
		t.Fatal(err)
	}
	_, net := load(t, "resnet-basic.op17.onnx")
	x, n := want["x"].Data, want["x"].Shape[0]
	in := attr.Input{X: x, N: n, Shape: net.InputShape(), Target: make([]int, n)}
	for i := range in.Target {
		in.Target[i] = 3
	}
	gxi := make([]float32, len(x))
	for i, g := range want["grads"].Data {
		gxi[i] = g * x[i]
	}
	for _, tc := range []struct {
		m    attr.Method
		want []float32
	}{
		{attr.Gradient{}, want["grads"].Data},
		{attr.GradientXInput{}, gxi},
		{attr.IntegratedGradients{Steps: 8}, want["ig8"].Data},
	} {
		maps, err := tc.m.Attribute(context.Background(), net, in)
		if err != nil {
			t.Fatalf("%s: %v", tc.m.Name(), err)
		}
		e := relErr(maps.Data, tc.want)
		t.Logf("%s: within %.2g of PyTorch's (relative to the largest value)", tc.m.Name(), e)
		if e > 2e-6 {
			t.Errorf("%s: differs from PyTorch's by %.3g of the largest value", tc.m.Name(), e)
		}
	}
}

// DeepLIFT's rescale rule through a graph of sums, concatenations,
// batch norm, pools and every elementwise nonlinearity the importer reads
// gives attributions that add up to f(x) − f(x̄) (summation to delta,
// Shrikumar et al. 2017, Eq. 1), with and without the graph cut into
// pieces, where the gradient's do not.
func TestDeepLIFTIsCompleteThroughSumsAndConcatenations(t *testing.T) {
	layers := []native.Layer{
		{Op: "conv", Name: "stem", Out: 6, Kernel: [2]int{3, 3}, Pad: [4]int{1, 1, 1, 1}},
		{Op: "relu", Name: "r0"},
		{Op: "conv", Name: "a1", In: []string{"r0"}, Out: 6, Kernel: [2]int{3, 3}, Pad: [4]int{1, 1, 1, 1}},
		{Op: "silu", Name: "a2"},
		{Op: "conv", Name: "a3", Out: 6, Kernel: [2]int{1, 3}, Pad: [4]int{0, 1, 0, 1}, Groups: 2},
		{Op: "batchnorm", Name: "bn"},
		{Op: "add", Name: "sum", In: []string{"bn", "r0"}},
		{Op: "clip", Name: "relu6", Alpha: 0, Beta: 6},
		{Op: "conv", Name: "b1", In: []string{"r0"}, Out: 4, Kernel: [2]int{3, 3}, Pad: [4]int{1, 1, 1, 1}, Groups: 1},
		{Op: "sigmoid", Name: "b2"},
		{Op: "conv", Name: "dw", In: []string{"sum"}, Out: 6, Kernel: [2]int{3, 3}, Pad: [4]int{1, 1, 1, 1}, Groups: 6},
		{Op: "leakyrelu", Name: "leaky", Alpha: 0.1},
		{Op: "concat", Name: "cat", In: []string{"relu6", "b2", "leaky"}},
		{Op: "hardswish", Name: "hs"},
		{Op: "avgpool", Name: "pool", Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}},
		{Op: "globalavgpool", Name: "gap"},
		{Op: "linear", Name: "fc", Out: 3},
	}
	net, err := native.Compose("deeplift", []int{2, 8, 8}, 3, gemm.Gonum{}, layers)
	if err != nil {
		t.Fatal(err)
	}
	net.Init(5)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, p := range net.Params() {
		if p.Grad == nil { // running statistics a trained model would have
			for i := range p.Data {
				p.Data[i] = 0.5 + rng.Float32()
			}
		}
	}
	n, dim := 3, 2*8*8
	x, ref := make([]float32, n*dim), make([]float32, dim)
	for i := range x {
		x[i] = 4 * (rng.Float32() - 0.5)
	}
	f0, err := net.Forward(ref, 1)
	if err != nil {
		t.Fatal(err)
	}
	f0 = append([]float32(nil), f0...)
	f, _ := net.Forward(x, n)
	f = append([]float32(nil), f...)
	sums := func(g []float32, s int) float64 {
		v := 0.0
		for j := range dim {
			v += float64(g[s*dim+j]) * float64(x[s*dim+j]-ref[j])
		}
		return v
	}
	gap := 0.0
	for _, rule := range []engine.Rule{engine.Gradient, engine.Rescale} {
		if err := net.SetRule(rule, ref, 1); err != nil {
			t.Fatal(err)
		}
		for _, pieces := range []bool{false, true} {
			for cls := range 3 {
				run := engine.WholeBatch
				if pieces {
					run = engine.Differentiate
				}
				g, err := run(context.Background(), net, x, n, engine.InputGrad, classGrad(3, cls))
				if err != nil {
					t.Fatal(err)
				}
				for s := range n {
					want := float64(f[s*3+cls] - f0[cls])
					d := math.Abs(sums(g, s) - want)
					if rule == engine.Gradient {
						gap = math.Max(gap, d)
						continue
					}
					if d > 1e-4*math.Max(1, math.Abs(want)) {
						t.Errorf("pieces %v, sample %d, class %d: Σ attributions %g, f(x) − f(x̄) %g", pieces, s, cls, sums(g, s), want)
					}
				}
			}
		}
	}
	if gap < 1e-2 {
		t.Errorf("the gradient's attributions add up to f(x) − f(x̄) within %g too: the test does not tell the rules apart", gap)
	}
}

// An imported graph with batch norm retrains from fresh weights, as the
// retraining protocols do: Init draws new weights (batch norm back to the
// identity), and gradient descent in training mode (batch statistics)
// fits a batch of random labels.
func TestImportedGraphRetrainsFromFreshWeights(t *testing.T) {
	g, net := load(t, "resnet-basic.op11.onnx") // exported with batch norm kept
	if !slices.ContainsFunc(g.Layers, func(l native.Layer) bool { return l.Op == "batchnorm" }) {
		t.Fatal("resnet-basic.op11.onnx holds no batch norm")
	}
	before := net.Clone().Params()
	net.Init(9)
	for i, p := range net.Params() {
		if slices.Equal(p.Data, before[i].Data) && strings.HasSuffix(p.Name, ".weight") {
			t.Errorf("Init left %s as the file has it", p.Name)
		}
	}
	net.SetTraining(true)
	rng := rand.New(rand.NewPCG(3, 3))
	n, dim, k := 8, engine.Size(net.InputShape()), net.Classes()
	x, y := make([]float32, n*dim), make([]int, n)
	for i := range x {
		x[i] = rng.Float32()
	}
	for i := range y {
		y[i] = rng.IntN(k)
	}
	var first, last float64
	for step := range 60 {
		loss := 0.0
		for _, p := range net.Params() {
			clear(p.Grad)
		}
		_, err := engine.Differentiate(context.Background(), net, x, n, engine.ParamGrad, func(_ int, logits, d []float32) {
			p := engine.Softmax(nil, logits, k)
			for r := range len(logits) / k {
				loss -= math.Log(float64(p[r*k+y[r]])) / float64(n)
				for j := range k {
					d[r*k+j] = p[r*k+j] / float32(n)
				}
				d[r*k+y[r]] -= 1 / float32(n)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range net.Params() {
			for i := range p.Grad {
				p.Data[i] -= 0.1 * p.Grad[i]
			}
		}
		if step == 0 {
			first = loss
		}
		last = loss
	}
	t.Logf("cross-entropy on 8 random labels: %.3f at the first step, %.3f at the 60th", first, last)
	if !(last < first/4) {
		t.Errorf("training from fresh weights took the loss from %.3f to %.3f only", first, last)
	}
}
