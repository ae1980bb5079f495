package diffusion

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"faithlab/core/data"
)

// testMixture is a 3-dimensional mixture with unequal weights, means and
// variances, its components more than five deviations apart.
func testMixture() Mixture {
	return Mixture{
		Weights: []float64{0.3, 0.7},
		Means:   [][]float64{{-2, 0.5, 1}, {1.5, -1, 0}},
		Vars:    [][]float64{{0.2, 0.5, 0.3}, {0.4, 0.1, 0.25}},
	}
}

func linear(t *testing.T) *Schedule {
	t.Helper()
	s, err := NewSchedule(Linear, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mixturePrior(t *testing.T, m Mixture) *MixturePrior {
	t.Helper()
	p, err := NewMixturePrior(m, linear(t), Identity())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// draw samples n points of m and returns them with their components.
func draw(m Mixture, n int, seed uint64) ([]float32, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	dim := len(m.Means[0])
	x, k := make([]float32, n*dim), make([]int, n)
	for i := range n {
		u := rng.Float64()
		for u > m.Weights[k[i]] && k[i] < len(m.Weights)-1 {
			u -= m.Weights[k[i]]
			k[i]++
		}
		for j := range dim {
			x[i*dim+j] = float32(m.Means[k[i]][j] + math.Sqrt(m.Vars[k[i]][j])*rng.NormFloat64())
		}
	}
	return x, k
}

// component is the most probable component of the clean mixture at x.
func component(p *MixturePrior, x []float32) int {
	lw := make([]float64, len(p.mix.Weights))
	p.components(x, -1, lw)
	best := 0
	for k := range lw {
		if lw[k] > lw[best] {
			best = k
		}
	}
	return best
}

func TestScheduleLinearMatchesPeer(t *testing.T) {
	s := linear(t)
	if s.Beta(0) != 1e-4 || math.Abs(s.Beta(999)-0.02) > 1e-15 {
		t.Errorf("β runs from %g to %g, want 1e-4 to 0.02", s.Beta(0), s.Beta(999))
	}
	// torch.cumprod(1 − torch.linspace(1e-4, 0.02, 1000), 0)[-1] in float64.
	if got := s.AlphaBar(999); math.Abs(got-4.035829e-5) > 1e-10 {
		t.Errorf("ᾱ_999 = %.7g, want 4.035829e-05", got)
	}
	if s.AlphaBar(-1) != 1 {
		t.Errorf("ᾱ_−1 = %g, want 1 (clean data)", s.AlphaBar(-1))
	}
	g, err := s.Grid(25)
	if err != nil {
		t.Fatal(err)
	}
	if g[0] != 960 || g[1] != 920 || g[24] != 0 || len(g) != 25 {
		t.Errorf("25-step grid %v: want 960, 920, …, 0 as GOAR's DDIM scheduler", g)
	}
	c, err := NewSchedule(Cosine, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 1000; i++ {
		if !(c.AlphaBar(i) < c.AlphaBar(i-1)) || c.Beta(i) > 0.999 {
			t.Fatalf("cosine schedule: ᾱ not decreasing or β > 0.999 at %d", i)
		}
	}
	if _, err := NewSchedule("quadratic", 1000); err == nil {
		t.Error("an unknown schedule was accepted")
	}
}

// TestMixtureEpsIsScaledScoreOfLogDensity checks the closed-form noise of the
// mixture prior against central differences of log q_t: ε = −√(1−ᾱ_t)∇log q_t.
func TestMixtureEpsIsScaledScoreOfLogDensity(t *testing.T) {
	p := mixturePrior(t, testMixture())
	x, _ := draw(testMixture(), 20, 3)
	for i := range x {
		x[i] *= 1.3 // also points between and beyond the components
	}
	eps := make([]float32, len(x))
	for _, step := range []int{0, 10, 250, 600, 999} {
		if err := p.Eps(context.Background(), x, 20, step, eps); err != nil {
			t.Fatal(err)
		}
		sd := math.Sqrt(1 - p.sched.AlphaBar(step))
		for i := range 20 {
			pt := slices.Clone(x[i*3 : i*3+3])
			for j := range 3 {
				old := pt[j]
				pt[j] = old + 1e-3
				up, hi := p.LogDensity(pt, step), float64(pt[j])
				pt[j] = old - 1e-3
				down, lo := p.LogDensity(pt, step), float64(pt[j])
				pt[j] = old
				want := -sd * (up - down) / (hi - lo)
				if got := float64(eps[i*3+j]); math.Abs(got-want) > 1e-3*max(1, math.Abs(want)) {
					t.Errorf("t=%d point %d coordinate %d: ε %g, −√(1−ᾱ)·∂log q/∂x %g", step, i, j, got, want)
				}
			}
		}
	}
}

// moments returns each component's share, mean and covariance among points
// assigned to components.
func moments(x []float32, k []int, dim, comps int) (share []float64, mean [][]float64, cov [][][]float64) {
	share = make([]float64, comps)
	mean = make([][]float64, comps)
	cov = make([][][]float64, comps)
	for c := range comps {
		mean[c] = make([]float64, dim)
		cov[c] = make([][]float64, dim)
		for a := range dim {
			cov[c][a] = make([]float64, dim)
		}
	}
	for i, c := range k {
		share[c]++
		for a := range dim {
			mean[c][a] += float64(x[i*dim+a])
		}
	}
	for c := range comps {
		for a := range dim {
			mean[c][a] /= share[c]
		}
	}
	for i, c := range k {
		for a := range dim {
			for b := range dim {
				cov[c][a][b] += (float64(x[i*dim+a]) - mean[c][a]) * (float64(x[i*dim+b]) - mean[c][b])
			}
		}
	}
	for c := range comps {
		for a := range dim {
			for b := range dim {
				cov[c][a][b] /= share[c] - 1
			}
		}
		share[c] /= float64(len(k))
	}
	return share, mean, cov
}

// TestDDIMWithExactScoreReproducesMixture samples the mixture from noise
// with its exact score and compares the samples' component weights, means
// and covariances with the mixture's, within five standard errors of the
// sample size and 2 % of a variance for the sampler's discretisation.
func TestDDIMWithExactScoreReproducesMixture(t *testing.T) {
	m := testMixture()
	p := mixturePrior(t, m)
	for _, tc := range []struct {
		o Options
		n int
	}{{Options{Steps: 100}, 20000}, {Options{Method: "ddpm"}, 8000}} {
		o, n := tc.o, tc.n
		o.Seed = 7
		res, err := Sample(context.Background(), p, n, o)
		if err != nil {
			t.Fatal(err)
		}
		k := make([]int, n)
		for i := range k {
			k[i] = component(p, res.X[i*3:i*3+3])
		}
		share, mean, cov := moments(res.X, k, 3, 2)
		for c, w := range m.Weights {
			if se := math.Sqrt(w * (1 - w) / float64(n)); math.Abs(share[c]-w) > 5*se {
				t.Errorf("%+v: component %d holds %.4f of the samples, want %.2f ± %.4f", o, c, share[c], w, 5*se)
			}
			nc := share[c] * float64(n)
			for a := range 3 {
				v := m.Vars[c][a]
				if se := math.Sqrt(v / nc); math.Abs(mean[c][a]-m.Means[c][a]) > 5*se+0.01 {
					t.Errorf("%+v: component %d mean[%d] %.4f, want %.2f", o, c, a, mean[c][a], m.Means[c][a])
				}
				for b := range 3 {
					want := 0.0
					if a == b {
						want = v
					}
					se := math.Sqrt(m.Vars[c][a]*m.Vars[c][b]*(1+b2f(a == b))/nc) + 0.02*v
					if math.Abs(cov[c][a][b]-want) > 5*se {
						t.Errorf("%+v: component %d covariance[%d][%d] %.4f, want %.3f ± %.4f", o, c, a, b, cov[c][a][b], want, 5*se)
					}
				}
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestProjectLeavesOnMixturePointsNearlyUnchanged projects points drawn from
// the mixture with a little noise (t = 20): every point keeps its component
// and moves by about the noise injected, a fraction of the components' spread.
func TestProjectLeavesOnMixturePointsNearlyUnchanged(t *testing.T) {
	m := testMixture()
	p := mixturePrior(t, m)
	const n = 500
	x, k := draw(m, n, 11)
	res, err := Project(context.Background(), p, x, n, 20, Options{Steps: 1000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var moved float64
	for i := range n {
		if c := component(p, res.X[i*3:i*3+3]); c != k[i] {
			t.Errorf("point %d moved from component %d to %d", i, k[i], c)
		}
		for j := range 3 {
			d := float64(res.X[i*3+j] - x[i*3+j])
			moved += d * d / m.Vars[k[i]][j]
		}
	}
	if rms := math.Sqrt(moved / (3 * n)); rms > 0.2 {
		t.Errorf("points moved by %.3f of their component's deviation (rms): want < 0.2", rms)
	}
}

// TestProjectMatchesGaussianTransport checks projection against its exact
// answer: within one Gaussian component N(μ, σ²) the probability-flow ODE
// takes x_t to μ + σ(x_t − √ᾱμ)/√(ᾱσ² + 1 − ᾱ), so the projection of x
// with noise z is μ + σ(√ᾱ(x − μ) + √(1−ᾱ)z)/√(ᾱσ² + 1 − ᾱ). At t = 100
// (ᾱ = 0.9) the components stay apart along the whole path; from t ≈ 200
// on, some points' paths cross to the other component, as they should.
func TestProjectMatchesGaussianTransport(t *testing.T) {
	m := testMixture()
	p := mixturePrior(t, m)
	const n, step = 200, 100
	x, k := draw(m, n, 13)
	res, err := Project(context.Background(), p, x, n, step, Options{Steps: 1000, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	ab := p.sched.AlphaBar(step)
	var worst float64
	for i := range n {
		z := rand.New(rand.NewPCG(5, uint64(i))) // sample i's noise stream
		for j := range 3 {
			mu, v := m.Means[k[i]][j], m.Vars[k[i]][j]
			want := mu + math.Sqrt(v)*(math.Sqrt(ab)*(float64(x[i*3+j])-mu)+math.Sqrt(1-ab)*z.NormFloat64())/math.Sqrt(ab*v+1-ab)
			worst = max(worst, math.Abs(float64(res.X[i*3+j])-want))
		}
	}
	if worst > 0.01 {
		t.Errorf("projection differs from the exact transport by up to %.4f", worst)
	}
}

// TestProjectPullsOffMixturePointsBack moves mixture points off the mixture
// (far out along one coordinate and between the components) and checks that
// projection brings them back to densities typical of the mixture.
func TestProjectPullsOffMixturePointsBack(t *testing.T) {
	m := testMixture()
	p := mixturePrior(t, m)
	const n = 300
	on, _ := draw(m, n, 17)
	var typical []float64
	for i := range n {
		typical = append(typical, p.LogDensity(on[i*3:i*3+3], -1))
	}
	slices.Sort(typical)
	floor := typical[n/20] // the 5th percentile of on-mixture points
	off := slices.Clone(on)
	for i := range n {
		if i%2 == 0 {
			off[i*3+2] += 4 // four units out along the last coordinate
		} else {
			for j := range 3 {
				off[i*3+j] = float32((m.Means[0][j] + m.Means[1][j]) / 2) // between the components
			}
		}
	}
	res, err := Project(context.Background(), p, off, n, 600, Options{Steps: 50, Seed: 19})
	if err != nil {
		t.Fatal(err)
	}
	low := 0
	for i := range n {
		before, after := p.LogDensity(off[i*3:i*3+3], -1), p.LogDensity(res.X[i*3:i*3+3], -1)
		if before > floor {
			t.Fatalf("test set-up: off-mixture point %d has log density %.2f above the on-mixture 5th percentile %.2f", i, before, floor)
		}
		if after < floor {
			low++
		}
	}
	// Like any draw from the mixture, about 5 % of projections may fall below.
	if low > n/10 {
		t.Errorf("%d of %d projected points lie below the mixture's 5th-percentile density", low, n)
	}
}

// TestInpaintKeepsKeptPixelsExactly in-paints with both variants and a
// classifier guide, and checks the kept values come back bit for bit and the
// filled ones come from the component the kept ones belong to.
func TestInpaintKeepsKeptPixelsExactly(t *testing.T) {
	g := data.GaussianMixture{Dim: 10, Samples: 2, Variance: 0.3}
	m := MixtureOf(g)
	p := mixturePrior(t, m)
	const n = 200
	x, k := draw(m, n, 23)
	mask := make([]float32, n*10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range mask {
		if rng.Float64() < 0.5 {
			mask[i] = 1
		}
	}
	calls := 0
	guide := func(_ context.Context, first int, x []float32, n int, grad []float32) error {
		calls++
		for i := range grad {
			grad[i] = 0.1 // a constant push; only its being added matters here
		}
		return nil
	}
	for _, tc := range []struct {
		in   Inpainting
		want int // samples of 200 whose filled values must follow the kept values' component
	}{
		{Inpainting{Mask: mask}, 190},
		// The noised originals tell the prior less about the kept values
		// than the originals do, and RePaint's resampling is not run.
		{Inpainting{Mask: mask, RePaint: true}, 160},
		{Inpainting{Mask: mask, Guide: guide, GuideFrac: 0.05}, 190},
	} {
		in := tc.in
		calls = 0
		res, err := Inpaint(context.Background(), p, x, n, in, Options{Steps: 50, Seed: 29, Batch: 64})
		if err != nil {
			t.Fatal(err)
		}
		same := 0
		for i := range n {
			var filled, count float64
			for j := range 10 {
				at := i*10 + j
				if mask[at] == 1 {
					if math.Float32bits(res.X[at]) != math.Float32bits(x[at]) {
						t.Fatalf("repaint=%v: kept value %d changed from %g to %g", in.RePaint, at, x[at], res.X[at])
					}
					continue
				}
				filled += float64(res.X[at])
				count++
			}
			if count == 0 || (filled > 0) == (k[i] == 1) {
				same++
			}
		}
		if same < tc.want {
			t.Errorf("repaint=%v guide=%v: the filled values follow the kept values' component in %d of %d samples", in.RePaint, in.Guide != nil, same, n)
		}
		// 50 steps on a grid of 20: the steps t < 50 are 40, 20 and 0, in 4 batches.
		if in.Guide != nil && calls != 3*4 {
			t.Errorf("the classifier guide ran %d times, want 3 steps × 4 batches", calls)
		}
	}
	if _, err := Inpaint(context.Background(), p, x, n, Inpainting{Mask: append(mask[:n*10-1:n*10-1], 0.5)}, Options{}); err == nil {
		t.Error("a mask value of 0.5 was accepted")
	}
}

// TestDDIMEtaZeroIsDeterministicAndInvertible checks that η = 0 gives the
// same samples whatever the seed once the starting points are fixed, and
// that decoding what Encode makes of mixture samples returns them.
func TestDDIMEtaZeroIsDeterministicAndInvertible(t *testing.T) {
	m := testMixture()
	p := mixturePrior(t, m)
	const n = 100
	x, _ := draw(m, n, 31)
	o := Options{Steps: 500}
	lat, err := Encode(context.Background(), p, x, n, o)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Decode(context.Background(), p, lat, n, Options{Steps: 500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Decode(context.Background(), p, lat, n, Options{Steps: 500, Seed: 2, Batch: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.X, b.X) {
		t.Error("η = 0: decoding the same points with other seeds and batches differs")
	}
	worst := func(steps int) float64 {
		o := Options{Steps: steps}
		lat, err := Encode(context.Background(), p, x, n, o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Decode(context.Background(), p, lat, n, o)
		if err != nil {
			t.Fatal(err)
		}
		var w float64
		for i := range x {
			w = max(w, math.Abs(float64(res.X[i]-x[i])))
		}
		return w
	}
	// The error is the discretisation's: first order in the step.
	if w250, w500 := worst(250), worst(500); w500 > 0.03 || w500 > 0.6*w250 {
		t.Errorf("Decode(Encode(x)) differs from x by up to %.4f with 250 steps, %.4f with 500: want below 0.03 and halving", w250, w500)
	}
	if _, err := Encode(context.Background(), p, x, n, Options{Eta: 0.5}); err == nil {
		t.Error("Encode accepted η = 0.5")
	}
}

// TestSamplesDependOnSeedNotBatching checks that a seed fixes the samples
// bit for bit whatever the batch size, and that another seed changes them.
func TestSamplesDependOnSeedNotBatching(t *testing.T) {
	p := mixturePrior(t, testMixture())
	run := func(seed uint64, batch int) []float32 {
		res, err := Sample(context.Background(), p, 10, Options{Steps: 20, Eta: 0.5, Seed: seed, Batch: batch, Record: 4})
		if err != nil {
			t.Fatal(err)
		}
		if tr := res.Trajectory; len(tr.T) != 20 || tr.T[0] != 950 || len(tr.X[0]) != 4*3 || len(tr.X0[19]) != 4*3 {
			t.Fatalf("trajectory: %d steps from %d, %d values per step", len(tr.T), tr.T[0], len(tr.X[0]))
		}
		return res.X
	}
	a, b, c := run(4, 3), run(4, 10), run(5, 10)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave different samples in batches of 3 and of 10")
	}
	if slices.Equal(a, c) {
		t.Error("another seed gave the same samples")
	}
}

// TestDDPMEqualsDDIMWithEtaOneOnEveryStep checks the two samplers against
// each other: DDIM with η = 1 on the full grid is DDPM's ancestral sampler
// with σ² = β̃ (Song et al. 2021, §4.1), so with the same noise they agree
// up to rounding.
func TestDDPMEqualsDDIMWithEtaOneOnEveryStep(t *testing.T) {
	p := mixturePrior(t, testMixture())
	a, err := Sample(context.Background(), p, 50, Options{Method: "ddpm", Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Sample(context.Background(), p, 50, Options{Steps: 1000, Eta: 1, Seed: 8, Start: 999})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.X {
		if math.Abs(float64(a.X[i]-b.X[i])) > 1e-3 {
			t.Fatalf("value %d: DDPM %g, DDIM η=1 %g", i, a.X[i], b.X[i])
		}
	}
}

// TestEmpiricalIsMixtureOfItsPoints checks the empirical denoiser against
// the mixture prior with a vanishing-variance component at every point.
func TestEmpiricalIsMixtureOfItsPoints(t *testing.T) {
	pts, _ := draw(testMixture(), 40, 37)
	ds := &data.Dataset{Name: "pts", Shape: []int{3, 1, 1}, X: pts, Y: make([]int, 40), Classes: []string{"a", "b"}}
	s := linear(t)
	e, err := NewEmpirical(ds, s, Identity(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var m Mixture
	for i := range 40 {
		m.Weights = append(m.Weights, 1.0/40)
		mu := []float64{float64(pts[i*3]), float64(pts[i*3+1]), float64(pts[i*3+2])}
		m.Means = append(m.Means, mu)
		m.Vars = append(m.Vars, []float64{1e-12, 1e-12, 1e-12})
	}
	mp, err := NewMixturePrior(m, s, Identity())
	if err != nil {
		t.Fatal(err)
	}
	x, _ := draw(testMixture(), 30, 41)
	got, want := make([]float32, len(x)), make([]float32, len(x))
	for _, step := range []int{5, 100, 500, 999} {
		if err := e.Eps(context.Background(), x, 30, step, got); err != nil {
			t.Fatal(err)
		}
		if err := mp.Eps(context.Background(), x, 30, step, want); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-3*max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("t=%d value %d: empirical ε %g, mixture of points %g", step, i, got[i], want[i])
			}
		}
	}
}

func TestScalingRoundTripsAndConvertsGradients(t *testing.T) {
	sc := Scaling{Lo: 0, Hi: 1}
	x := []float32{0, 0.25, 1}
	p := make([]float32, 3)
	sc.ToPrior(p, x)
	if !slices.Equal(p, []float32{-1, -0.5, 1}) {
		t.Errorf("[0,1] → [−1,1]: %v", p)
	}
	back := make([]float32, 3)
	sc.ToData(back, p)
	if !slices.Equal(back, x) {
		t.Errorf("back to data: %v, want %v", back, x)
	}
	if sc.DataPerPrior() != 0.5 {
		t.Errorf("d data/d prior %g, want 0.5", sc.DataPerPrior())
	}
	if ScalingFor(&data.Dataset{X: []float32{0, 0.5, 1}}) != sc || ScalingFor(&data.Dataset{X: []float32{-2, 1}}) != Identity() {
		t.Error("ScalingFor: images in [0, 1] map to [−1, 1], other data stays")
	}
}
