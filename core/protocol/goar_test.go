package protocol

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/train"
)

// gaussianPrior is the exact prior of N(μ, σ²I) in dimension dim, μ = mu
// on every coordinate, on the linear 1000-step schedule.
func gaussianPrior(t *testing.T, dim int, mu, variance float64, sc diffusion.Scaling) *diffusion.MixturePrior {
	t.Helper()
	m := diffusion.Mixture{Weights: []float64{1}, Means: [][]float64{make([]float64, dim)}, Vars: [][]float64{make([]float64, dim)}}
	for j := range dim {
		m.Means[0][j], m.Vars[0][j] = mu, variance
	}
	s, err := diffusion.NewSchedule(diffusion.Linear, 1000)
	if err != nil {
		t.Fatal(err)
	}
	p, err := diffusion.NewMixturePrior(m, s, sc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The projection's start follows the paper's text (Appendix A, D): the
// step whose noise-to-signal ratio matches the shift, snapped to the
// 25-step grid, then 0.16·T = 4 grid steps higher — not lower, as Listing
// 1's index arithmetic would make it — with noise that brings the ratio
// r to the start step's, √(ρ_start² − r²).
func TestProjectionStartFollowsTheText(t *testing.T) {
	const dim = 64
	for _, tc := range []struct {
		name  string
		sc    diffusion.Scaling
		t     int // the step whose ratio the shift is made to match
		match int
		start int
	}{
		{"tabular, ratio of step 200", diffusion.Identity(), 200, 200, 360},
		{"images in [0, 1], ratio of step 200", diffusion.Scaling{Lo: 0, Hi: 1}, 200, 200, 360},
		{"ratio of step 210: grid step 200", diffusion.Identity(), 210, 200, 360},
		{"no shift", diffusion.Identity(), 0, 0, 160},
		{"ratio of step 900, halfway: the higher grid step, then the top", diffusion.Identity(), 900, 920, 960},
	} {
		p := Projection{Prior: gaussianPrior(t, dim, 0, 1, tc.sc)}
		sched := p.Prior.Schedule()
		r := noiseToSignal(sched, tc.t)
		if tc.t == 0 {
			r = 0
		}
		// r = s/(DataPerPrior·√D): data units to the prior's, per value.
		s := r * tc.sc.DataPerPrior() * math.Sqrt(dim)
		m, err := p.Match(s)
		if err != nil {
			t.Fatal(err)
		}
		rho := noiseToSignal(sched, tc.start)
		if m.Matched != tc.match || m.Start != tc.start || math.Abs(m.Ratio-r) > 1e-12 ||
			math.Abs(m.Noise-math.Sqrt(max(rho*rho-r*r, 0))) > 1e-12 {
			t.Errorf("%s: %+v, want matched %d, start %d, ratio %g, noise √(%g² − r²)", tc.name, m, tc.match, tc.start, r, rho)
		}
		if m.Start <= m.Matched {
			t.Errorf("%s: the start %d is not above the matched step %d (Listing 1's misreading)", tc.name, m.Start, m.Matched)
		}
	}
	if _, err := (Projection{}).Match(1); err == nil {
		t.Error("a projection without a prior matched")
	}
}

// Projected through the exact prior of one Gaussian N(μ, σ²), DDIM (η = 0)
// keeps x_t − √ᾱ_t μ on the line of the starting offset u, scaled at each
// step from t to t' by (√ᾱ_t'√ᾱ_t σ² + √(1−ᾱ_t')√(1−ᾱ_t))/(ᾱ_t σ² + 1 −
// ᾱ_t): the whole projection — matching, added noise, scaling, sampler —
// checked against that recursion.
func TestProjectionOfAGaussianIsTheDDIMRecursion(t *testing.T) {
	const dim, n, mu, variance = 16, 3, 0.5, 0.3
	for _, sc := range []diffusion.Scaling{diffusion.Identity(), {Lo: -3, Hi: 5}} {
		prior := gaussianPrior(t, dim, mu, variance, sc)
		rng := rand.New(rand.NewPCG(4, 4))
		shifted := make([]float32, n*dim)
		for i := range shifted {
			shifted[i] = float32(rng.NormFloat64())
		}
		p := Projection{Prior: prior, Steps: 25, Seed: 7}
		const s = 2.5
		got, err := p.Project(context.Background(), shifted, n, s)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := p.Match(s)
		sched := prior.Schedule()
		grid, _ := sched.Grid(25)
		grid = grid[slices.Index(grid, m.Start):]
		a := math.Sqrt(sched.AlphaBar(m.Start))
		for k, t0 := range grid {
			t1 := -1
			if k+1 < len(grid) {
				t1 = grid[k+1]
			}
			ab, abp := sched.AlphaBar(t0), sched.AlphaBar(t1)
			a *= (math.Sqrt(abp*ab)*variance + math.Sqrt((1-abp)*(1-ab))) / (ab*variance + 1 - ab)
		}
		xp := make([]float32, len(shifted))
		sc.ToPrior(xp, shifted)
		for i := range n {
			z := rand.New(rand.NewPCG(7, uint64(i)))
			for j := i * dim; j < (i+1)*dim; j++ {
				u := float64(xp[j]) + m.Noise*z.NormFloat64() - mu
				var w [1]float32
				sc.ToData(w[:], []float32{float32(mu + a*u)})
				if math.Abs(float64(got.X[j]-w[0])) > 2e-5*max(1, math.Abs(float64(w[0]))) {
					t.Fatalf("scaling %+v: value %d: %g, the recursion gives %g", sc, j, got.X[j], w[0])
				}
			}
		}
	}
}

// Every input moves by exactly s along its map (the map repeated over an
// image's channels); a zero map leaves its input where it is.
func TestGOARShiftsByTheStrengthAlongTheMap(t *testing.T) {
	ds := &data.Dataset{Shape: []int{2, 1, 3}, X: []float32{1, 2, 3, 4, 5, 6, 1, 1, 1, 1, 1, 1}, Y: []int{0, 1}}
	maps := []float32{3, 0, -4, 0, 0, 0}
	dirs := Directions(maps, ds)
	got := shift(ds, dirs, 2)
	// ‖(3, 0, −4, 3, 0, −4)‖ = √50: the first input moves by 2/√50·(3, 0, −4) in each channel.
	k := 2 / math.Sqrt(50)
	want := []float64{1 - 3*k, 2, 3 + 4*k, 4 - 3*k, 5, 6 + 4*k, 1, 1, 1, 1, 1, 1}
	var moved float64
	for i, v := range got.X {
		if math.Abs(float64(v)-want[i]) > 1e-6 {
			t.Errorf("value %d: %g, want %g", i, v, want[i])
		}
		if i < 6 {
			moved += (float64(v) - float64(ds.X[i])) * (float64(v) - float64(ds.X[i]))
		}
	}
	if math.Abs(math.Sqrt(moved)-2) > 1e-6 {
		t.Errorf("moved by %g, want the strength 2", math.Sqrt(moved))
	}
}

// mixtureEnv is GOAR's synthetic problem at a small size: a Gaussian
// mixture in dim dimensions, an MLP trained on it, and v_λ maps.
func mixtureEnv(t *testing.T, dim int, lambda float64) *Env {
	t.Helper()
	all, err := data.GaussianMixture{Dim: dim, Samples: 1200, Seed: 3}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	trainSet, test := all.Split(0.25, 3)
	newNet := func() (engine.Network, error) {
		n, err := native.New("mlp", []int{dim, 1, 1}, 2, gemm.Gonum{})
		if err == nil {
			n.Init(1)
		}
		return n, err
	}
	env := &Env{Train: trainSet, Test: test, Method: "vlambda", Seed: 1, NewNet: newNet,
		Recipe: train.Config{Epochs: 4, BatchSize: 64, LR: 3e-3, Seed: 1, ValFraction: -1}}
	if env.Net, err = newNet(); err != nil {
		t.Fatal(err)
	}
	if _, err := train.Train(context.Background(), env.Net, trainSet, env.Recipe, nil); err != nil {
		t.Fatal(err)
	}
	// v_λ = λ·v + (1−λ)·w, v the unit truth toward the sample's class.
	env.Maps = func(_ context.Context, split string) ([]float32, error) {
		ds := map[string]*data.Dataset{"train": trainSet, "test": test}[split]
		out := make([]float32, ds.Len()*dim)
		for i := range ds.Len() {
			rng := rand.New(rand.NewPCG(9, uint64(i)))
			w := make([]float64, dim)
			var ss float64
			for j := range w {
				w[j] = rng.NormFloat64()
				ss += w[j] * w[j]
			}
			for j := range w {
				out[i*dim+j] = float32(lambda*float64(all.Truth[ds.Y[i]][j]) + (1-lambda)*w[j]/math.Sqrt(ss))
			}
		}
		return out, nil
	}
	return env
}

// GOAR on the mixture with its exact prior (§6.1, Fig. 5 in small): the
// truth direction removes the class where a random one does not, so it
// reaches a larger area; strength 0 is the same for both; the run is
// described, deterministic, keeps the shifted and projected test inputs,
// and the ablation without projection runs without a prior.
func TestGOARTellsTheTruthFromARandomDirection(t *testing.T) {
	if testing.Short() {
		t.Skip("retrains 8 models")
	}
	ctx := context.Background()
	g := GOAR{Strengths: []float64{0, 4, 8}, Prior: PriorMixture, Steps: 10}
	truth, err := g.Run(ctx, mixtureEnv(t, 16, 1))
	if err != nil {
		t.Fatal(err)
	}
	random, err := g.Run(ctx, mixtureEnv(t, 16, 0))
	if err != nil {
		t.Fatal(err)
	}
	at, _ := truth.Scalar("area")
	ar, _ := random.Scalar("area")
	if !(at > ar+0.1) {
		t.Errorf("area: truth %g, random %g; want the truth's clearly larger", at, ar)
	}
	if truth.Curves[0].Y[0] != random.Curves[0].Y[0] {
		t.Errorf("at strength 0 the methods differ: %g and %g", truth.Curves[0].Y[0], random.Curves[0].Y[0])
	}
	for i := 1; i < 3; i++ {
		if truth.Curves[0].Y[i] < truth.Curves[0].Y[i-1] {
			t.Errorf("the cumulative count fell: %v", truth.Curves[0].Y)
		}
	}
	checkDescribed(t, g, truth)
	var names []string
	for _, sm := range truth.Samples {
		names = append(names, sm.Name)
	}
	if got := strings.Join(names, ", "); got != "original test, map test, GOAR s=0 shifted test, GOAR s=0 projected test, "+
		"GOAR s=4 shifted test, GOAR s=4 projected test, GOAR s=8 shifted test, GOAR s=8 projected test" {
		t.Errorf("samples %s", got)
	}
	again, err := g.Run(ctx, mixtureEnv(t, 16, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Curves[0].Y, truth.Curves[0].Y) {
		t.Errorf("GOAR not deterministic: %v then %v", truth.Curves[0].Y, again.Curves[0].Y)
	}
	plain := GOAR{Strengths: []float64{4}, NoProjection: true}
	res, err := plain.Run(ctx, mixtureEnv(t, 16, 1))
	if err != nil {
		t.Fatal(err)
	}
	if l2, _ := res.Scalar("l2"); math.Abs(l2-4) > 1e-4 {
		t.Errorf("without projection the test inputs lie %g from the originals, want the strength 4", l2)
	}
	checkDescribed(t, plain, res)
	if _, err := (GOAR{Strengths: []float64{4, 2}}).Run(ctx, mixtureEnv(t, 16, 1)); err == nil {
		t.Error("decreasing strengths accepted")
	}
}

// The fitted mixture of a gmm training set is its generator up to sampling
// error: weights ½, means ∓1, variance 0.3.
func TestFitMixtureRecoversTheGenerator(t *testing.T) {
	ds, err := data.GaussianMixture{Dim: 4, Samples: 20000, Seed: 5}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	m, err := FitMixture(ds)
	if err != nil {
		t.Fatal(err)
	}
	for k, mu := range []float64{-1, 1} {
		if math.Abs(m.Weights[k]-0.5) > 1e-12 {
			t.Errorf("weight %d: %g", k, m.Weights[k])
		}
		for j := range 4 {
			if math.Abs(m.Means[k][j]-mu) > 0.02 || math.Abs(m.Vars[k][j]-0.3) > 0.02 {
				t.Errorf("component %d coordinate %d: mean %g variance %g", k, j, m.Means[k][j], m.Vars[k][j])
			}
		}
	}
}

func TestGOARRetrainsOncePerStrength(t *testing.T) {
	for _, tc := range []struct {
		params map[string]any
		want   int
	}{{nil, 5}, {map[string]any{"strengths": []any{0, 2, 4}, "no_projection": true}, 3}} {
		p, err := New("goar", tc.params)
		if err != nil {
			t.Fatal(err)
		}
		if got := RetrainingsOf(p); got != tc.want {
			t.Errorf("GOAR %v: %d retrainings, want %d", tc.params, got, tc.want)
		}
	}
	if p, _ := New("fud", nil); RetrainingsOf(p) != 0 {
		t.Error("FUD retrains")
	}
	// Strength 0 shifts nothing: its model is every method's.
	for _, tc := range []struct {
		strengths []any
		want      int
	}{{nil, 1}, {[]any{2, 4}, 0}, {[]any{0, 0.5}, 1}} {
		p, err := New("goar", map[string]any{"strengths": tc.strengths})
		if err != nil {
			t.Fatal(err)
		}
		if got := SharedRetrainingsOf(p); got != tc.want {
			t.Errorf("GOAR at strengths %v: %d models shared by every method, want %d", tc.strengths, got, tc.want)
		}
	}
}

// ROAR runs on tabular rows, a feature at a time (GOAR's Table 1 sets it
// beside GOAR and Eval-X): on the mixture, whose class any few of its
// coordinates still carry, removing half of them by the truth leaves the
// retrained model's accuracy high (GOAR's pitfall 2), with one
// correctness per test row behind the mean.
func TestROARRemovesTabularFeatures(t *testing.T) {
	if testing.Short() {
		t.Skip("retrains a model")
	}
	env := mixtureEnv(t, 16, 1)
	res, err := ROAR{Rates: []float64{0.5}}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	acc, _ := res.Scalar("mean_accuracy")
	if acc < 0.9 || acc > 1 {
		t.Errorf("ROAR at 50 %% of the mixture's coordinates: accuracy %g, want above 0.9", acc)
	}
	if u := res.Units.Of("mean_accuracy"); len(u) != env.Test.Len() {
		t.Errorf("%d per-row values for %d test rows", len(u), env.Test.Len())
	}
	if !slices.Contains(ROAR{}.Info().Data, "tabular") {
		t.Error("ROAR does not list tabular data")
	}
}
