package torch

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
)

// The tests share one worker on this machine (starting one imports torch,
// seconds on a loaded machine); the fault tests start their own.
var shared struct {
	once sync.Once
	e    *Engine
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.e != nil {
		shared.e.Close()
	}
	os.Exit(code)
}

// requireTorch skips the test when Debian's interpreter cannot import
// torch (make deps installs python3-torch, so in CI it can).
func requireTorch(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import torch and numpy (%v): apt-get install python3-torch", err)
	}
}

// testEngine is the shared worker.
func testEngine(t *testing.T) *Engine {
	t.Helper()
	requireTorch(t)
	shared.once.Do(func() {
		shared.e, shared.err = Open(context.Background(), "torch?python=/usr/bin/python3", Options{})
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.e
}

// uniform returns n values uniform on [lo, hi), seeded.
func uniform(seed uint64, n int, lo, hi float32) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, n)
	for i := range x {
		x[i] = lo + (hi-lo)*rng.Float32()
	}
	return x
}

// diff is how far a is from the reference b: the largest absolute
// difference and the relative 2-norm error ‖a−b‖/‖b‖.
func diff(a, b []float32) (maxAbs, rel float64) {
	var d2, n2 float64
	for i := range a {
		d := float64(a[i] - b[i])
		maxAbs = math.Max(maxAbs, math.Abs(d))
		d2 += d * d
		n2 += float64(b[i]) * float64(b[i])
	}
	return maxAbs, math.Sqrt(d2 / math.Max(n2, 1e-30))
}

// near checks that a is within rel (relative 2-norm) of the reference b
// and logs both measures.
func near(t *testing.T, what string, a, b []float32, rel float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, reference %d", what, len(a), len(b))
	}
	mx, r := diff(a, b)
	t.Logf("%-40s max |Δ| %.3g  rel %.3g", what, mx, r)
	if !slices.ContainsFunc(b, func(v float32) bool { return v != 0 }) {
		t.Errorf("%s: the reference is all zero, so the comparison says nothing", what)
	}
	if !(r <= rel) {
		t.Errorf("%s: relative error %.3g > %.3g (max |Δ| %.3g)", what, r, rel, mx)
	}
}
