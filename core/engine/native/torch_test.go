package native

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// TestAgainstPyTorch compares logits, input gradients, parameter gradients
// and batch-norm running statistics with PyTorch in float64 on the same
// weights and batch, in evaluation and training mode. It runs where Debian's
// python3-torch is installed (make deps installs it).
func TestAgainstPyTorch(t *testing.T) {
	peer := requireTorch(t)
	kern, _ := gemm.Best()
	for _, tc := range []struct {
		arch  string
		shape []int
		n     int
		train bool
		tol   float64 // relative 2-norm error
	}{
		{"goar-cnn", []int{1, 28, 28}, 3, false, 1e-4},
		{"resnet18", []int{3, 32, 32}, 4, false, 1e-4},
		// Batch statistics put about half of every post-norm activation
		// near a ReLU kink and subtract means over thousands of terms, so
		// float32 rounding that flips a kink moves whole gradient elements:
		// observed up to 1e-3. A wrong rule errs by O(1), and TestBatchNormGradients
		// checks the layer itself exactly.
		{"resnet18", []int{3, 32, 32}, 4, true, 5e-3},
	} {
		m, err := New(tc.arch, tc.shape, 10, kern)
		if err != nil {
			t.Fatal(err)
		}
		m.Init(2)
		// Non-trivial batch-norm statistics, so that evaluation mode is tested.
		for _, p := range m.Params() {
			if strings.HasSuffix(p.Name, "running_mean") || strings.HasSuffix(p.Name, "running_var") || strings.Contains(p.Name, "bn") && strings.HasSuffix(p.Name, ".bias") {
				for i := range p.Data {
					p.Data[i] = 0.5 + 0.25*float32(math.Sin(float64(i)))
				}
			}
		}
		dir := t.TempDir()
		var ws []data.NamedArray
		for _, p := range m.Params() {
			ws = append(ws, data.NamedArray{Name: p.Name, Shape: p.Shape, Data: p.Data})
		}
		x := randBatch(5, tc.n*engine.Size(tc.shape))
		dl := randBatch(6, tc.n*10)
		for i := range dl {
			dl[i] -= 0.5
		}
		must(t, data.SaveNPZ(filepath.Join(dir, "w.npz"), ws))
		must(t, data.SaveNPY(filepath.Join(dir, "x.npy"), append([]int{tc.n}, tc.shape...), x))
		must(t, data.SaveNPY(filepath.Join(dir, "dl.npy"), []int{tc.n, 10}, dl))
		mode := "0"
		if tc.train {
			mode = "1"
		}
		pytorchReference(t, peer, tc.arch, mode,
			filepath.Join(dir, "w.npz"), filepath.Join(dir, "x.npy"), filepath.Join(dir, "dl.npy"), filepath.Join(dir, "ref.npz"))
		ref, err := loadNPZ(filepath.Join(dir, "ref.npz"))
		must(t, err)
		m.SetTraining(tc.train)
		name := tc.arch
		if tc.train {
			name += " (train)"
		}
		logits, err := m.Forward(x, tc.n)
		must(t, err)
		close(t, name+" logits", logits, ref["logits"].Data, tc.tol)
		dx, err := m.Backward(dl, engine.InputGrad|engine.ParamGrad)
		must(t, err)
		close(t, name+" input gradient", dx, ref["dx"].Data, tc.tol)
		for _, p := range m.Params() {
			key, got := "grad."+p.Name, p.Grad
			if p.Grad == nil {
				key, got = "buffer."+p.Name, p.Data
			}
			r, ok := ref[key]
			if !ok {
				t.Errorf("%s: PyTorch has no %s", name, key)
				continue
			}
			close(t, name+" "+key, got, r.Data, tc.tol)
		}
	}
}

// requireTorch skips the test unless Debian's python3-torch and the peer
// script (shared/bench beside the repository) are there; it returns the
// peer's folder.
func requireTorch(t *testing.T) string {
	t.Helper()
	peer, _ := filepath.Abs(filepath.Join("..", "..", "..", "..", "shared", "bench"))
	if _, err := os.Stat(filepath.Join(peer, "torch_peer.py")); err != nil {
		t.Skip("shared/bench/torch_peer.py not beside the repository")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import torch").Run(); err != nil {
		t.Skip("Debian's python3-torch is not installed")
	}
	return peer
}

// pytorchReference runs testdata/torch/grads.py with args after the peer folder.
func pytorchReference(t *testing.T, peer string, args ...string) {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", append([]string{filepath.Join("..", "..", "..", "testdata", "torch", "grads.py"), peer}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("grads.py: %v\n%s", err, out)
	}
}

// loadNPZ reads every array of a .npz file.
func loadNPZ(path string) (map[string]*data.Array, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return data.ParseNPZ(b)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// close checks the relative error ‖a−b‖₂/‖b‖₂ ≤ tol. The 2-norm, not the
// largest element, because our float32 forward pass and PyTorch's float64 one
// may put a pre-activation lying within ~1e-6 of a ReLU's kink on different
// sides, which moves single gradient elements by their whole size; with
// hundreds of thousands of activations that happens in most runs.
func close(t *testing.T, what string, a, b []float32, tol float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, reference %d", what, len(a), len(b))
	}
	var diff, norm float64
	for i := range a {
		d := float64(a[i] - b[i])
		diff += d * d
		norm += float64(b[i]) * float64(b[i])
	}
	if rel := math.Sqrt(diff / math.Max(norm, 1e-12)); rel > tol {
		t.Errorf("%s: relative error %.3g (‖b‖ = %.3g)", what, rel, math.Sqrt(norm))
	}
}
