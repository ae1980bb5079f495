package trace

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"faithlab/core/attr"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/perturb"
)

// synthetic is a sigmoid of patch weights plus pairwise interactions: a
// non-additive black box whose optimum only enumeration knows.
func synthetic(t int, seed uint64, pairs float64) Scorer {
	rng := rand.New(rand.NewPCG(seed, 3))
	w := make([]float64, t)
	c := make([]float64, t*t)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	for i := range c {
		c[i] = pairs * rng.NormFloat64()
	}
	return func(_ context.Context, keep [][]bool) ([]float64, error) {
		out := make([]float64, len(keep))
		for n, k := range keep {
			s := 0.0
			for p := 0; p < t; p++ {
				if !k[p] {
					continue
				}
				s += w[p]
				for q := p + 1; q < t; q++ {
					if k[q] {
						s += c[p*t+q]
					}
				}
			}
			out[n] = 1 / (1 + math.Exp(-s))
		}
		return out, nil
	}
}

func TestEvaluateMatchesSubsetCurves(t *testing.T) {
	f := synthetic(6, 1, 0.5)
	val, _ := allSubsets(context.Background(), f, 6)
	tau := []int{3, 0, 5, 1, 4, 2}
	c, err := Evaluate(context.Background(), f, tau)
	if err != nil {
		t.Fatal(err)
	}
	want := curvesFromSubsets(val, tau)
	for k := range c.MoRF {
		if c.MoRF[k] != want.MoRF[k] || c.LeRF[k] != want.LeRF[k] {
			t.Fatalf("k=%d: MoRF %g/%g LeRF %g/%g", k, c.MoRF[k], want.MoRF[k], c.LeRF[k], want.LeRF[k])
		}
	}
	if c.MoRF[0] != c.LeRF[6] || c.MoRF[6] != c.LeRF[0] {
		t.Error("the empty and full sets differ between the curves")
	}
}

// For an additive f the greedy scheme is optimal for Le and Mo (§4).
func TestGreedyOptimalWhenAdditive(t *testing.T) {
	const T = 7
	rng := rand.New(rand.NewPCG(2, 2))
	w := make([]float64, T)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	f := func(_ context.Context, keep [][]bool) ([]float64, error) {
		out := make([]float64, len(keep))
		for n, k := range keep {
			for p, in := range k {
				if in {
					out[n] += w[p]
				}
			}
		}
		return out, nil
	}
	for _, o := range []Objective{Le, Mo} {
		g, err := Greedy(context.Background(), f, T, o)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := Exact(context.Background(), f, T, o)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(g.Value-ex.Value) > 1e-9 {
			t.Errorf("%s: greedy %g, optimum %g", o, g.Value, ex.Value)
		}
	}
}

// Exact's dynamic programme finds the same optimum as enumerating all t!
// trajectories, for each objective, and its trajectory scores that value;
// the CS bound it returns lies above it.
func TestExactMatchesEnumeration(t *testing.T) {
	ctx := context.Background()
	const T = 7
	for seed := uint64(0); seed < 4; seed++ {
		f := synthetic(T, seed, 0.8)
		for _, o := range []Objective{Le, Mo, LeMo} {
			ex, err := Exact(ctx, f, T, o)
			if err != nil {
				t.Fatal(err)
			}
			best := math.Inf(-1)
			perm := []int{0, 1, 2, 3, 4, 5, 6}
			var rec func(k int)
			rec = func(k int) {
				if k == T {
					c, _ := Evaluate(ctx, f, perm)
					best = math.Max(best, c.Value(o))
					return
				}
				for i := k; i < T; i++ {
					perm[k], perm[i] = perm[i], perm[k]
					rec(k + 1)
					perm[k], perm[i] = perm[i], perm[k]
				}
			}
			rec(0)
			if math.Abs(ex.Value-best) > 1e-9 {
				t.Errorf("seed %d, %s: dynamic programme %g, enumeration %g", seed, o, ex.Value, best)
			}
			if c, _ := Evaluate(ctx, f, ex.Trajectory); math.Abs(c.Value(o)-ex.Value) > 1e-9 {
				t.Errorf("seed %d, %s: reports %g, its trajectory scores %g", seed, o, ex.Value, c.Value(o))
			}
			if cs, _ := CompleteSearch(ctx, f, T, o); ex.Bound != cs || cs < ex.Value-1e-12 {
				t.Errorf("seed %d, %s: bound %g, CompleteSearch %g, optimum %g", seed, o, ex.Bound, cs, ex.Value)
			}
		}
	}
}

// Exact ≥ SA ≥ Greedy on Le−Mo, SA within 2% of the optimum, and the CS
// bound above the optimum, on non-additive black boxes with t = 8.
func TestOptimaOrdering(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(0); seed < 5; seed++ {
		f := synthetic(8, seed, 0.7)
		ex, err := Exact(ctx, f, 8, LeMo)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Greedy(ctx, f, 8, Le)
		if err != nil {
			t.Fatal(err)
		}
		gc, _ := Evaluate(ctx, f, g.Trajectory)
		greedy := gc.Value(LeMo)
		sa, err := Anneal(ctx, f, 8, LeMo, Annealing{Iterations: 5000, T0: 0.1, Cooling: 0.999, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := CompleteSearch(ctx, f, 8, LeMo)
		if err != nil {
			t.Fatal(err)
		}
		if !(ex.Value >= sa.Value-1e-12 && sa.Value >= greedy-1e-12) {
			t.Errorf("seed %d: optimum %g, SA %g, greedy %g: want optimum ≥ SA ≥ greedy", seed, ex.Value, sa.Value, greedy)
		}
		if ex.Value-sa.Value > 0.02*math.Abs(ex.Value) {
			t.Errorf("seed %d: SA %g is more than 2%% below the optimum %g", seed, sa.Value, ex.Value)
		}
		if cs < ex.Value-1e-12 {
			t.Errorf("seed %d: CS bound %g below the optimum %g", seed, cs, ex.Value)
		}
		if c, _ := Evaluate(ctx, f, sa.Trajectory); math.Abs(c.Value(LeMo)-sa.Value) > 1e-9 {
			t.Errorf("seed %d: SA reports %g, its trajectory scores %g", seed, sa.Value, c.Value(LeMo))
		}
	}
}

func TestAnnealDeterministicAndValidated(t *testing.T) {
	f := synthetic(10, 4, 0.5)
	a := Annealing{Iterations: 300, T0: 0.1, Cooling: 0.99, Seed: 7}
	r1, err := Anneal(context.Background(), f, 10, LeMo, a)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := Anneal(context.Background(), f, 10, LeMo, a)
	if !slices.Equal(r1.Trajectory, r2.Trajectory) || r1.Value != r2.Value {
		t.Error("same seed, different trajectories")
	}
	for _, bad := range []Annealing{{}, {Iterations: 5, T0: 0.1, Cooling: 2}, {Iterations: 5, T0: 0.1, Cooling: 0.9, Init: []int{0, 0, 1}}} {
		if _, err := Anneal(context.Background(), f, 10, LeMo, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := Greedy(context.Background(), f, 10, LeMo); err == nil {
		t.Error("greedy Le−Mo accepted")
	}
	if _, err := Exact(context.Background(), synthetic(17, 1, 0), 17, Le); err == nil {
		t.Error("exact search over 2^17 subsets accepted")
	}
}

func TestHeatmapRanks(t *testing.T) {
	got := Heatmap([]int{2, 0, 3, 1}, 1)
	if !slices.Equal(got, []float32{0.5, 1, 0.25, 0.75}) {
		t.Errorf("heatmap %v", got)
	}
}

func TestNetScorerEnds(t *testing.T) {
	k, _ := gemm.Best()
	net, _ := native.New("goar-cnn", []int{1, 28, 28}, 10, k)
	net.Init(3)
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, 784)
	for i := range x {
		x[i] = rng.Float32()
	}
	ref := make([]float32, 784)
	f, err := NetScorer(net, x, ref, []int{1, 28, 28}, 7, 4, false, 16)
	if err != nil {
		t.Fatal(err)
	}
	all, none := make([]bool, 49), make([]bool, 49)
	for i := range all {
		all[i] = true
	}
	v, err := f(context.Background(), [][]bool{all, none})
	if err != nil {
		t.Fatal(err)
	}
	fx, _ := net.Forward(x, 1)
	want := float64(fx[4])
	f0, _ := net.Forward(ref, 1)
	if math.Abs(v[0]-want) > 1e-5 || math.Abs(v[1]-float64(f0[4])) > 1e-5 {
		t.Errorf("keep all %g (want %g), keep none %g (want %g)", v[0], want, v[1], f0[4])
	}
	if _, err := NetScorer(net, x, ref, []int{1, 28, 28}, 30, 4, false, 16); err == nil {
		t.Error("a 30×30 grid on 28×28 images accepted")
	}
}

func TestTrajectoryOfMaps(t *testing.T) {
	// The paper's example: ψ = [0.1, 0.5, 0.3, 0.2] gives σ(ψ) = [1, 4, 3, 2] (1-based).
	if got := TrajectoryOf([]float32{0.1, 0.5, 0.3, 0.2}); !slices.Equal(got, []int{0, 3, 2, 1}) {
		t.Errorf("σ = %v", got)
	}
	if got := TrajectoryOf([]float32{1, 0, 1, 0}); !slices.Equal(got, []int{1, 3, 0, 2}) {
		t.Errorf("ties: σ = %v, want lower indices first", got)
	}
	m := make([]float32, 16)
	m[0], m[15] = 1, 2
	f, err := perturb.NewFeatures(4, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := PatchScores(m, f); !slices.Equal(got, []float32{1, 0, 0, 2}) {
		t.Errorf("patch scores %v", got)
	}
}

// TRACE-GO on a network: patch-wise maps rank the patches in the optimal
// trajectory's order (so a deletion metric on the same grid scores the
// optimum), no annealed trajectory beats it, and its bound lies above it.
func TestExactMethodMapsKeepTheOptimalOrder(t *testing.T) {
	k, _ := gemm.Best()
	net, _ := native.New("goar-cnn", []int{1, 28, 28}, 10, k)
	net.Init(5)
	rng := rand.New(rand.NewPCG(4, 4))
	x := make([]float32, 2*784)
	for i := range x {
		x[i] = rng.Float32()
	}
	in := attr.Input{X: x, N: 2, Shape: []int{1, 28, 28}, Target: []int{1, 6}}
	ctx := context.Background()
	feats, _ := perturb.NewFeatures(28, 28, 2) // equal patches: patch sums rank as ψ
	for _, o := range []Objective{Le, Mo} {
		maps, res, err := TRACE{Algorithm: "exact", Objective: o, Grid: 2, Upsample: "patch"}.Explain(ctx, net, in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if got := TrajectoryOf(PatchScores(maps.Map(i), feats)); !slices.Equal(got, res[i].Trajectory) {
				t.Errorf("%s, image %d: the map orders %v, the trajectory is %v", o, i, got, res[i].Trajectory)
			}
			f, _ := NetScorer(net, in.Sample(i), make([]float32, 784), in.Shape, 2, in.Target[i], true, 0)
			sa, _ := Anneal(ctx, f, 4, o, Annealing{Iterations: 500, T0: 0.1, Cooling: 0.99, Seed: uint64(i)})
			if sa.Value > res[i].Value+1e-6 || res[i].Bound < res[i].Value-1e-6 { // float32 batches differ in the last bits
				t.Errorf("%s, image %d: SA %g, optimum %g, bound %g", o, i, sa.Value, res[i].Value, res[i].Bound)
			}
		}
	}
	if err := (TRACE{Algorithm: "exact", Grid: 5}).Check(); err == nil {
		t.Error("exact search over 5×5 patches accepted")
	}
}

// Restarts of simulated annealing draw from seeds of their own, so that a
// verdict can rest on several runs of the optimiser: restart 0 is the
// run's own seed (the maps of before restarts were), another restart
// anneals to another trajectory; greedy and exact search refuse restarts.
func TestAnnealingRestartsDrawTheirOwnTrajectories(t *testing.T) {
	k, _ := gemm.Best()
	net, _ := native.New("goar-cnn", []int{1, 28, 28}, 10, k)
	net.Init(5)
	rng := rand.New(rand.NewPCG(4, 4))
	x := make([]float32, 784)
	for i := range x {
		x[i] = rng.Float32()
	}
	in := attr.Input{X: x, N: 1, Shape: []int{1, 28, 28}, Target: []int{3}}
	trajectory := func(restart int) []int {
		_, res, err := TRACE{Algorithm: "sa", Objective: Le, Grid: 4, Iterations: 200, Restart: restart, Seed: 9}.Explain(context.Background(), net, in)
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Trajectory
	}
	if a, b := trajectory(0), trajectory(0); !slices.Equal(a, b) {
		t.Error("one restart, two trajectories")
	}
	if a, b := trajectory(0), trajectory(1); slices.Equal(a, b) {
		t.Errorf("restarts 0 and 1 annealed to the same trajectory %v", a)
	}
	if err := (TRACE{Algorithm: "greedy", Objective: Le, Restart: 1}).Check(); err == nil {
		t.Error("a greedy restart accepted")
	}
}
