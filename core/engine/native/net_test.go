package native

import (
	"math"
	"math/rand/v2"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

func kernels(t testing.TB) []gemm.Kernel {
	ks := []gemm.Kernel{gemm.Gonum{}}
	if k, err := gemm.LoadOpenBLAS(); err == nil {
		ks = append(ks, k)
	}
	return ks
}

func randBatch(seed uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = rng.Float32()
	}
	return x
}

// loss is Σ logits·w for fixed w, so dLoss/dLogits = w.
func loss(t *testing.T, m engine.Network, x []float32, n int, w []float32) float64 {
	t.Helper()
	y, err := m.Forward(x, n)
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for i, v := range y {
		s += float64(v) * float64(w[i])
	}
	return s
}

// TestGradientsMatchFiniteDifferences checks input and parameter gradients of
// every architecture against central differences in float32.
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	for _, kern := range kernels(t) {
		for _, tc := range []struct {
			arch  string
			shape []int
			train bool // batch statistics in batch norm
		}{
			{"goar-cnn", []int{1, 28, 28}, false},
			{"goar-cnn", []int{3, 32, 32}, false},
			{"mlp", []int{4, 1, 1}, false},
		} {
			m, err := New(tc.arch, tc.shape, 10, kern)
			if err != nil {
				t.Fatal(err)
			}
			m.Init(3)
			m.SetTraining(tc.train)
			n := 3
			x := randBatch(7, n*engine.Size(tc.shape))
			w := randBatch(8, n*10)
			loss(t, m, x, n, w)
			for _, p := range m.Params() {
				clear(p.Grad)
			}
			gx, err := m.Backward(w, engine.InputGrad|engine.ParamGrad)
			if err != nil {
				t.Fatal(err)
			}
			gx = append([]float32(nil), gx...)
			check := func(what string, v []float32, i int, analytic float32) {
				const h = 1e-2
				old := v[i]
				v[i] = old + h
				up := loss(t, m, x, n, w)
				v[i] = old - h
				down := loss(t, m, x, n, w)
				v[i] = old
				mid := loss(t, m, x, n, w)
				num := (up - down) / (2 * h)
				if math.Abs((up-mid)-(mid-down)) > 0.1*h*math.Max(1, math.Abs(num)) {
					return // a ReLU or max-pool kink lies within ±h: the difference is not a derivative
				}
				if d := math.Abs(num - float64(analytic)); d > 2e-2*math.Max(1, math.Abs(num)) {
					t.Errorf("%s %v %s train=%v: %s[%d] analytic %g numeric %g", kern.Name(), tc.shape, tc.arch, tc.train, what, i, analytic, num)
				}
			}
			rng := rand.New(rand.NewPCG(9, 9))
			for range 10 {
				i := rng.IntN(len(x))
				check("input", x, i, gx[i])
			}
			for _, p := range m.Params() {
				if p.Grad == nil {
					continue // running statistics
				}
				for range 3 {
					i := rng.IntN(len(p.Data))
					check(p.Name, p.Data, i, p.Grad[i])
				}
			}
		}
	}
}

func TestBadInputs(t *testing.T) {
	m, err := New("goar-cnn", []int{1, 28, 28}, 10, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 784)
	x[5] = float32(math.NaN())
	for _, tc := range []struct {
		name string
		x    []float32
		n    int
	}{
		{"nan", x, 1},
		{"short", make([]float32, 700), 1},
		{"empty", nil, 0},
	} {
		if _, err := m.Forward(tc.x, tc.n); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := m.Backward(make([]float32, 10), engine.InputGrad); err == nil {
		t.Error("backward before forward: no error")
	}
	for _, tc := range []struct {
		arch  string
		shape []int
	}{{"goar-cnn", []int{1, 8, 8}}, {"nope", []int{1, 28, 28}}, {"mlp", []int{0, 1, 1}}} {
		if _, err := New(tc.arch, tc.shape, 10, gemm.Gonum{}); err == nil {
			t.Errorf("New(%s, %v): no error", tc.arch, tc.shape)
		}
	}
}

// TestRescaleRuleOnReLU checks DeepLift's rescale multiplier on an mlp with a
// single hidden unit path by comparing to the definition (f(x)−f(x̄))/(x−x̄):
// for a network that is linear between ReLUs, summing rescale gradients times
// (x − x̄) gives f(x) − f(x̄) exactly (summation-to-delta).
func TestRescaleRuleSumsToDelta(t *testing.T) {
	m, err := New("mlp", []int{6, 1, 1}, 3, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	m.Init(1)
	x := randBatch(1, 2*6)
	ref := make([]float32, 6)
	y0, _ := m.Forward(ref, 1)
	f0 := append([]float32(nil), y0...)
	if err := m.SetRule(engine.Rescale, ref, 1); err != nil {
		t.Fatal(err)
	}
	y, _ := m.Forward(x, 2)
	f := append([]float32(nil), y...)
	for cls := 0; cls < 3; cls++ {
		d := make([]float32, 6)
		d[cls], d[3+cls] = 1, 1
		g, err := m.Backward(d, engine.InputGrad)
		if err != nil {
			t.Fatal(err)
		}
		for s := 0; s < 2; s++ {
			var sum float64
			for j := 0; j < 6; j++ {
				sum += float64(g[s*6+j]) * float64(x[s*6+j])
			}
			want := float64(f[s*3+cls] - f0[cls])
			if math.Abs(sum-want) > 1e-4*math.Max(1, math.Abs(want)) {
				t.Errorf("sample %d class %d: Σ attributions %g, f(x)−f(x̄) %g", s, cls, sum, want)
			}
		}
	}
}

// Randomising a layer draws its parameters afresh, the same for the same
// seed, and leaves every other layer's alone.
func TestRandomiseRedrawsOneLayer(t *testing.T) {
	m, err := New("goar-cnn", []int{1, 28, 28}, 10, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	m.Init(1)
	if got := m.RandomLayers(); len(got) != 6 || got[0] != "c1" || got[5] != "f3" {
		t.Fatalf("random layers %v, want c1 c2 c3 f1 f2 f3", got)
	}
	before := m.Clone().Params()
	if err := m.Randomise("c2", 7); err != nil {
		t.Fatal(err)
	}
	again := m.Clone().(*Net)
	if err := again.Randomise("c2", 7); err != nil {
		t.Fatal(err)
	}
	for k, p := range m.Params() {
		changed := 0
		for i, v := range p.Data {
			if v != before[k].Data[i] {
				changed++
			}
			if v != again.Params()[k].Data[i] {
				t.Fatalf("%s: the same seed drew %g and %g", p.Name, v, again.Params()[k].Data[i])
			}
		}
		if on := p.Name == "c2.weight" || p.Name == "c2.bias"; on != (changed > len(p.Data)/2) {
			t.Errorf("%s: %d of %d values changed", p.Name, changed, len(p.Data))
		}
		if p.Name == "c2.weight" {
			bound := float32(1 / math.Sqrt(32*3*3))
			for _, v := range p.Data {
				if v < -bound || v > bound {
					t.Fatalf("c2 weight %g outside ±1/√fan_in = ±%g", v, bound)
				}
			}
		}
	}
	if err := m.Randomise("relu1", 1); err == nil {
		t.Error("a layer without parameters was randomised")
	}
}
