package native

import (
	"context"
	"math"
	"runtime"
	"slices"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// outGrad is the output gradient of the loss Σ logits·w for fixed w.
func outGrad(w []float32, k int) engine.OutputGrad {
	return func(first int, logits, dl []float32) {
		copy(dl, w[first*k:first*k+len(logits)])
	}
}

// TestGradientMatchesForwardBackward checks Gradient, which runs pieces of
// the batch on replicas, against one Forward and Backward of the whole batch:
// batches that are and are not a multiple of the piece size, and the
// networks that must not be cut (batch statistics, the rescale rule).
func TestGradientMatchesForwardBackward(t *testing.T) {
	k, err := gemm.Best()
	if err != nil {
		t.Log(err)
	}
	for _, tc := range []struct {
		name    string
		arch    string
		shape   []int
		n       int
		train   bool
		rescale bool
	}{
		{"goar-cnn 37", "goar-cnn", []int{1, 28, 28}, 37, false, false},
		{"goar-cnn 64 colour", "goar-cnn", []int{3, 32, 32}, 64, false, false},
		{"goar-cnn 5", "goar-cnn", []int{1, 28, 28}, 5, false, false},
		{"mlp 40", "mlp", []int{6, 1, 1}, 40, false, false},
		{"resnet18 eval", "resnet18", []int{3, 8, 8}, 20, false, false},
		{"resnet18 train", "resnet18", []int{3, 8, 8}, 20, true, false},
		{"goar-cnn rescale", "goar-cnn", []int{1, 28, 28}, 20, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := New(tc.arch, tc.shape, 10, k)
			if err != nil {
				t.Fatal(err)
			}
			ref.Init(7)
			ref.SetTraining(tc.train)
			dim := engine.Size(tc.shape)
			x := randBatch(2, tc.n*dim)
			w := randBatch(3, tc.n*10)
			if tc.rescale {
				if err := ref.SetRule(engine.Rescale, make([]float32, dim), 1); err != nil {
					t.Fatal(err)
				}
			}
			got := ref.Clone().(*Net)
			if tc.rescale {
				if err := got.SetRule(engine.Rescale, make([]float32, dim), 1); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := ref.Forward(x, tc.n); err != nil {
				t.Fatal(err)
			}
			wantDX, err := ref.Backward(w, engine.InputGrad|engine.ParamGrad)
			if err != nil {
				t.Fatal(err)
			}
			// Twice: the second call reuses the replicas and must add to
			// the gradients, not replace them.
			for range 2 {
				dx, err := got.Gradient(context.Background(), x, tc.n, engine.InputGrad|engine.ParamGrad, outGrad(w, 10))
				if err != nil {
					t.Fatal(err)
				}
				close(t, "input gradient", dx, wantDX, 1e-5)
			}
			for i, p := range ref.Params() {
				q := got.Params()[i]
				if p.Grad == nil {
					continue
				}
				twice := make([]float32, len(p.Grad))
				for j, g := range p.Grad {
					twice[j] = 2 * g
				}
				close(t, p.Name, q.Grad, twice, 1e-5)
			}
			if _, err := got.Backward(w, engine.InputGrad); tc.train || tc.rescale {
				// Uncut networks keep their forward pass.
				if err != nil {
					t.Error(err)
				}
			} else if err == nil {
				t.Error("Backward after Gradient differentiated a stale pass")
			}
		})
	}
}

// TestGradientIndependentOfCores checks that Gradient gives the same bits on
// one core as on all of them.
func TestGradientIndependentOfCores(t *testing.T) {
	k, _ := gemm.Best()
	run := func(procs int) ([]float32, []float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		m, err := New("goar-cnn", []int{1, 28, 28}, 10, k)
		if err != nil {
			t.Fatal(err)
		}
		m.Init(1)
		x := randBatch(4, 100*784)
		dx, err := m.Gradient(context.Background(), x, 100, engine.InputGrad|engine.ParamGrad, outGrad(randBatch(5, 1000), 10))
		if err != nil {
			t.Fatal(err)
		}
		var g []float32
		for _, p := range m.Params() {
			g = append(g, p.Grad...)
		}
		return slices.Clone(dx), g
	}
	dx1, g1 := run(1)
	dx4, g4 := run(4)
	if !slices.Equal(dx1, dx4) || !slices.Equal(g1, g4) {
		t.Error("gradients differ between 1 and 4 cores")
	}
}

// TestGradientSeesNewWeights checks that replicas made by one call see the
// weights as a later call finds them (an optimiser writes them in place).
func TestGradientSeesNewWeights(t *testing.T) {
	m, err := New("mlp", []int{3, 1, 1}, 2, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	m.Init(1)
	x := randBatch(1, 3*20)
	grab := func(int, []float32, []float32) {}
	logits := make([]float32, 20*2)
	keep := func(first int, l, _ []float32) { copy(logits[first*2:], l) } // its own rows only: pieces run at once
	if _, err := m.Gradient(context.Background(), x, 20, engine.ParamGrad, grab); err != nil {
		t.Fatal(err)
	}
	m.Init(2)
	if _, err := m.Gradient(context.Background(), x, 20, engine.ParamGrad, keep); err != nil {
		t.Fatal(err)
	}
	want, err := m.Forward(x, 20)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(float64(want[i]-logits[i])) > 1e-5 {
			t.Fatalf("logit %d: replicas %g, the network %g", i, logits[i], want[i])
		}
	}
}

// Infer gives Forward's logits (to float rounding) for every architecture
// that can be cut into pieces, on batches that do not fill the last piece.
func TestInferIsForward(t *testing.T) {
	k, _ := gemm.Best()
	for _, arch := range []string{"goar-cnn", "mlp", "resnet18"} {
		shape := []int{1, 28, 28}
		if arch == "resnet18" {
			shape = []int{3, 16, 16}
		}
		m, err := New(arch, shape, 10, k)
		if err != nil {
			t.Fatal(err)
		}
		m.Init(3)
		n := 37
		x := randBatch(5, n*engine.Size(shape))
		want, err := m.Forward(x, n)
		if err != nil {
			t.Fatal(err)
		}
		want = slices.Clone(want)
		got, err := m.Infer(context.Background(), x, n)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("%s logit %d: Infer %g, Forward %g", arch, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkInfer is a deletion curve's forward passes: 1024 images.
func BenchmarkInfer(b *testing.B) {
	m, _, _ := benchNet(b)
	x := randBatch(2, 1024*784)
	for b.Loop() {
		m.Infer(context.Background(), x, 1024)
	}
	b.ReportMetric(1024*float64(b.N)/b.Elapsed().Seconds(), "img/s")
}

// BenchmarkForward is the same through whole-batch layers.
func BenchmarkForward(b *testing.B) {
	m, _, _ := benchNet(b)
	x := randBatch(2, 1024*784)
	for b.Loop() {
		m.Forward(x, 1024)
	}
	b.ReportMetric(1024*float64(b.N)/b.Elapsed().Seconds(), "img/s")
}

// Inputs so large that a call carries fewer than a pass of them (300×300,
// engine.Batch 6; 224×224 RGB, engine.Batch 4) run on a replica per core —
// three 224×224 images ran on one core, and a call of four took input
// gradients in one piece on one — and a sample's logits and input gradient
// are the same bit for bit on one core or two, alone or in a call.
func TestLargeInputsRunOnEveryCore(t *testing.T) {
	k, _ := gemm.Best()
	for _, c := range []struct {
		shape []int
		n     int
	}{{[]int{1, 300, 300}, 3}, {[]int{3, 224, 224}, 4}} {
		shape, n := c.shape, c.n
		if engine.Batch(shape, 0) >= pass || engine.Batch(shape, 0) < n {
			t.Fatalf("%v is not a large input of %d a call: engine.Batch %d", shape, n, engine.Batch(shape, 0))
		}
		dim := engine.Size(shape)
		x := randBatch(6, n*dim)
		run := func(procs int) (logits, grads []float32, replicas, pieces int) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			m, err := New("mlp", shape, 10, k)
			if err != nil {
				t.Fatal(err)
			}
			m.Init(7)
			l, err := m.Infer(context.Background(), x, n)
			if err != nil {
				t.Fatal(err)
			}
			logits = slices.Clone(l)
			g, err := m.Gradient(context.Background(), x, n, engine.InputGrad, outGrad(randBatch(8, n*10), 10))
			if err != nil {
				t.Fatal(err)
			}
			grads = slices.Clone(g)
			for i := range n { // each alone
				l, err := m.Infer(context.Background(), x[i*dim:(i+1)*dim], 1)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(l, logits[i*10:(i+1)*10]) {
					t.Errorf("%v, %d cores: sample %d's logits differ alone and in a call of %d", shape, procs, i, n)
				}
			}
			p, _ := m.gradientCut(n, engine.InputGrad)
			return logits, grads, len(m.replicas), (n + p - 1) / p
		}
		l1, g1, _, _ := run(1)
		l2, g2, reps, pieces := run(2)
		if !slices.Equal(l1, l2) || !slices.Equal(g1, g2) {
			t.Errorf("%v: logits or input gradients differ between 1 and 2 cores", shape)
		}
		if reps < 2 || pieces < 2 {
			t.Errorf("%v: a call of %d ran on %d replicas, its input gradients in %d pieces: want 2 of each", shape, n, reps, pieces)
		}
	}
}
