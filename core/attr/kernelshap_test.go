package attr

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

func TestKernelSHAPLinearExact(t *testing.T) {
	net := newLinear(5)
	rng := rand.New(rand.NewPCG(6, 6))
	in := Input{N: 2, Shape: net.Shape, X: make([]float32, 12), Target: []int{1, 2}}
	for i := range in.X {
		in.X[i] = float32(rng.NormFloat64())
	}
	for _, samples := range []int{2048, 40} { // all 62 coalitions; 40 sampled
		got, err := Run(context.Background(), KernelSHAP{Samples: samples}, net, in)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			for j := 0; j < 6; j++ {
				want := float64(net.W[in.Target[i]*6+j] * in.X[i*6+j])
				if g := float64(got.Data[i*6+j]); !near(g, want, 1e-4) {
					t.Errorf("%d samples: sample %d feature %d = %g, want %g", samples, i, j, g, want)
				}
			}
		}
	}
}

// With every coalition KernelSHAP gives the exact Shapley values of a
// non-additive model: compare with the definition over all 4! orders.
func TestKernelSHAPMatchesBruteForceShapley(t *testing.T) {
	m, err := native.New("mlp", []int{4, 1, 1}, 3, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	m.Init(8)
	x := []float32{1.5, -2, 0.7, 3}
	in := Input{N: 1, Shape: []int{4, 1, 1}, X: x, Target: []int{2}}
	got, err := Run(context.Background(), KernelSHAP{}, m, in)
	if err != nil {
		t.Fatal(err)
	}
	f := func(mask int) float64 {
		v := make([]float32, 4)
		for p := range v {
			if mask&(1<<p) != 0 {
				v[p] = x[p]
			}
		}
		y, _ := m.Forward(v, 1)
		return float64(y[2])
	}
	phi := make([]float64, 4)
	perms := [][]int{}
	var rec func([]int, []int)
	rec = func(pre, rest []int) {
		if len(rest) == 0 {
			perms = append(perms, append([]int(nil), pre...))
			return
		}
		for i := range rest {
			r := append(append([]int(nil), rest[:i]...), rest[i+1:]...)
			rec(append(pre, rest[i]), r)
		}
	}
	rec(nil, []int{0, 1, 2, 3})
	for _, p := range perms {
		mask := 0
		for _, feat := range p {
			phi[feat] += (f(mask|1<<feat) - f(mask)) / float64(len(perms))
			mask |= 1 << feat
		}
	}
	for j := range phi {
		if g := float64(got.Data[j]); !near(g, phi[j], 1e-4) {
			t.Errorf("feature %d: KernelSHAP %g, Shapley %g", j, g, phi[j])
		}
	}
}

// Efficiency on goar-cnn with sampled patch coalitions: Σφ = f(x) − f(0).
func TestKernelSHAPEfficiencyOnPatches(t *testing.T) {
	k, _ := gemm.Best()
	net, _ := native.New("goar-cnn", []int{1, 28, 28}, 10, k)
	net.Init(2)
	rng := rand.New(rand.NewPCG(3, 3))
	in := Input{N: 1, Shape: []int{1, 28, 28}, X: make([]float32, 784), Target: []int{3}}
	for i := range in.X {
		in.X[i] = rng.Float32()
	}
	got, err := Run(context.Background(), KernelSHAP{Grid: 7, Samples: 512, Seed: 1}, net, in)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, v := range got.Data {
		sum += float64(v)
	}
	fx, _ := net.Forward(in.X, 1)
	want := float64(fx[3])
	f0, _ := net.Forward(make([]float32, 784), 1)
	want -= float64(f0[3])
	if math.Abs(sum-want) > 1e-3*math.Max(1, math.Abs(want)) {
		t.Errorf("Σφ = %g, f(x) − f(0) = %g", sum, want)
	}
	if got.Shape[1] != 1 {
		t.Errorf("patch maps have shape %v, want one channel", got.Shape)
	}
}
