package protocol

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

// linearNet is a logistic regression on 1×side×side inputs with the given
// weights (classes × side²) and bias.
func linearNet(t *testing.T, side, classes int, weight, bias []float32) engine.Network {
	t.Helper()
	net, err := native.New("logreg", []int{1, side, side}, classes, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range net.Params() {
		switch p.Name {
		case "f1.weight":
			copy(p.Data, weight)
		case "f1.bias":
			copy(p.Data, bias)
		}
	}
	return net
}

// goldenEnv is a test set of the golden inputs (4×4 images) under net,
// with the golden maps.
func goldenEnv(net engine.Network, x, maps [][]float32) *Env {
	ds := &data.Dataset{Name: "golden", Shape: []int{1, 4, 4}, Classes: []string{"a", "b", "c"}, Y: make([]int, len(x))}
	var m []float32
	for i := range x {
		ds.X = append(ds.X, x[i]...)
		m = append(m, maps[i]...)
	}
	return &Env{Net: net, Test: ds, Method: "m", Maps: func(context.Context, string) ([]float32, error) { return m, nil }}
}

// Completeness and Non-Sensitivity equal reference.py's restatement on a
// linear model (float64 there, float32 here) input by input, to 1e-5
// (relative beyond 1): Completeness's gap and verdict on maps that are
// Gradient × (input − baseline), Gradient × Input and random; Non-
// Sensitivity's count on Gradient×Input, Gradient, random, blank and
// constant maps of a model that ignores five pixels.
func TestAxiomaticMatchesQuantusReference(t *testing.T) {
	g := readGoldens(t)
	c := g.Completeness
	net := linearNet(t, 4, c.Classes, c.Weight, c.Bias)
	res, err := Completeness{Samples: len(c.X)}.Run(context.Background(), goldenEnv(net, c.X, c.Maps))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range c.Expected {
		got, gap := res.Units.Of("completeness")[i], res.Units.Of("completeness_gap")[i]
		if float64(got) != want.Complete || !agree(float64(gap), &want.Gap) {
			t.Errorf("completeness input %d: %g (gap %g), reference %g (gap %g)", i, got, gap, want.Complete, want.Gap)
		}
	}
	checkDescribed(t, Completeness{}, res)

	s := g.NonSensitivity
	net = linearNet(t, 4, s.Classes, s.Weight, s.Bias)
	res, err = NonSensitivity{Samples: len(s.X)}.Run(context.Background(), goldenEnv(net, s.X, s.Maps))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range s.Expected {
		if got := res.Units.Of("non_sensitivity")[i]; got != float32(want) {
			t.Errorf("non-sensitivity input %d: %g, reference %d", i, got, want)
		}
	}
	checkDescribed(t, NonSensitivity{}, res)

	for i, c := range g.Invariance {
		same, rel := InvarianceScore(c.A, c.B, 1e-4)
		if same != c.Same || !agree(rel, &c.Error) {
			t.Errorf("invariance pair %d: %g (error %g), reference %g (%g)", i, same, rel, c.Same, c.Error)
		}
	}
}

// shiftableEnv is n random 1×side×side images in [0, 1), each with one pixel
// at 0 (so that the black baseline is zero), under a random linear model
// of three classes whose weights on the pixels in ignored are zero, and
// Explain computing the method's maps.
func shiftableEnv(t *testing.T, n, side int, ignored []int, method attr.Method) *Env {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	hw := side * side
	w, b := make([]float32, 3*hw), make([]float32, 3)
	for i := range w {
		if !slices.Contains(ignored, i%hw) {
			// Small enough that no probability saturates, large enough
			// that every pixel the model sees moves it.
			v := rng.NormFloat64()
			w[i] = float32(0.1 * math.Copysign(0.5+math.Abs(v), v))
		}
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64())
	}
	net := linearNet(t, side, 3, w, b)
	ds := &data.Dataset{Name: "lin", Shape: []int{1, side, side}, Classes: []string{"a", "b", "c"}, X: make([]float32, n*hw), Y: make([]int, n)}
	for i := range ds.X {
		ds.X[i] = 0.05 + 0.95*rng.Float32()
	}
	for i := range n {
		ds.X[i*hw+rng.IntN(hw)] = 0
	}
	explain := func(ctx context.Context, net engine.Network, x []float32, n int, target []int) ([]float32, error) {
		m, err := attr.Run(ctx, method, net, attr.Input{X: x, N: n, Shape: ds.Shape, Target: target})
		return m.Data, err
	}
	env := &Env{Net: net, Test: ds, Method: "m", Explain: explain, Seed: 1}
	env.Maps = func(ctx context.Context, _ string) ([]float32, error) {
		target, err := engine.Predicted(ctx, net, ds.X, n, 64)
		if err != nil {
			return nil, err
		}
		return explain(ctx, net, ds.X, n, target)
	}
	return env
}

// Gradient×Input of a linear model with a zero baseline sums to the
// logit's change exactly (Σ wᵢxᵢ = f(x) − f(0), the bias cancelling):
// complete on every input, with a gap of float32 rounding; Gradient is
// not (Σ wᵢ ≠ Σ wᵢxᵢ).
func TestCompletenessLinearExact(t *testing.T) {
	ctx := context.Background()
	res, err := Completeness{Samples: 20}.Run(ctx, shiftableEnv(t, 20, 6, nil, attr.GradientXInput{}))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Scalar("completeness"); v != 1 {
		t.Errorf("Gradient×Input: completeness %g, want 1", v)
	}
	if v, _ := res.Scalar("completeness_gap"); v > 1e-5 {
		t.Errorf("Gradient×Input: gap %g, want float32 rounding", v)
	}
	res, err = Completeness{Samples: 20}.Run(ctx, shiftableEnv(t, 20, 6, nil, attr.Gradient{}))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Scalar("completeness"); v != 0 {
		t.Errorf("Gradient: completeness %g, want 0", v)
	}
}

// On a linear model that ignores five pixels, Gradient is zero exactly
// there; it is attributed elsewhere, where setting a pixel to the
// baseline moves the logit (by wᵢxᵢ, at least 0.05·0.05; the probability
// can stay put where the classes' weights on a pixel agree) — except at the one pixel per input
// already at the baseline (0): Non-Sensitivity counts that one. A map
// that attributes everything counts the five ignored pixels (and that
// one).
func TestNonSensitivityOfGradientOnAModelThatIgnoresPixels(t *testing.T) {
	ignored := []int{0, 7, 8, 20, 35}
	ctx := context.Background()
	res, err := NonSensitivity{Samples: 10, Output: "logit"}.Run(ctx, shiftableEnv(t, 10, 6, ignored, attr.Gradient{}))
	if err != nil {
		t.Fatal(err)
	}
	env := shiftableEnv(t, 10, 6, ignored, attr.Gradient{})
	for i, v := range res.Units.Of("non_sensitivity") {
		want := float32(1)
		if slices.Contains(ignored, slices.Index(env.Test.X[i*36:(i+1)*36], 0)) {
			want = 0 // the pixel at the baseline is one the model ignores
		}
		if v != want {
			t.Errorf("input %d: non-sensitivity %g, want %g", i, v, want)
		}
	}
	env.Maps = func(context.Context, string) ([]float32, error) {
		m := make([]float32, 10*36)
		for i := range m {
			m[i] = 1
		}
		return m, nil
	}
	res, err = NonSensitivity{Samples: 10, Output: "logit"}.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.Units.Of("non_sensitivity") {
		want := float32(6)
		if slices.Contains(ignored, slices.Index(env.Test.X[i*36:(i+1)*36], 0)) {
			want = 5
		}
		if v != want {
			t.Errorf("constant map, input %d: non-sensitivity %g, want %g", i, v, want)
		}
	}
}

// A linear model absorbs a shift in its bias exactly: the Gradient (its
// weight row) is the same for x and x + shift, Gradient×Input moves by
// shift × the weights; Input Invariance is 1 for the first, 0 for the
// second, and the trained model is left alone.
func TestInputInvarianceOfLinearModel(t *testing.T) {
	ctx := context.Background()
	env := shiftableEnv(t, 8, 6, nil, attr.Gradient{})
	before := slices.Clone(env.Net.Params()[1].Data)
	res, err := InputInvariance{Samples: 8}.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Scalar("input_invariance"); v != 1 {
		t.Errorf("Gradient: input invariance %g, want 1", v)
	}
	if !slices.Equal(before, env.Net.Params()[1].Data) {
		t.Error("the model's bias changed")
	}
	checkDescribed(t, InputInvariance{}, res)
	res, err = InputInvariance{Samples: 8}.Run(ctx, shiftableEnv(t, 8, 6, nil, attr.GradientXInput{}))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Scalar("input_invariance"); v != 0 {
		t.Errorf("Gradient×Input: input invariance %g, want 0", v)
	}
	if v, _ := res.Scalar("invariance_error"); !(v > 0.1) {
		t.Errorf("Gradient×Input: invariance error %g, want the shift's effect", v)
	}
}

// A first convolution without a bias, or with zero padding (which sees a
// shift only partly at the border), cannot absorb a shift: the run is
// refused saying so (resnet18's stem is both; goar-cnn's is neither, and
// absorbs it).
func TestInputInvarianceRefusesAModelThatCannotAbsorbTheShift(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 3))
	x := make([]float32, 2*28*28)
	for i := range x {
		x[i] = rng.Float32()
	}
	shifted := make([]float32, len(x))
	for i, v := range x {
		shifted[i] = v - 1
	}
	for _, tc := range []struct {
		arch   string
		side   int
		refuse bool
	}{{"goar-cnn", 28, false}, {"resnet18", 8, true}} {
		net, err := native.New(tc.arch, []int{1, tc.side, tc.side}, 3, gemm.Gonum{})
		if err != nil {
			t.Fatal(err)
		}
		net.Init(2)
		n := len(x) / (tc.side * tc.side)
		if tc.side != 28 {
			n = 2
		}
		_, err = AbsorbShift(ctx, net, x[:n*tc.side*tc.side], shifted[:n*tc.side*tc.side], n, -1)
		if tc.refuse != (err != nil) || err != nil && !strings.Contains(err.Error(), "absorb") {
			t.Errorf("%s: %v, want refused %v", tc.arch, err, tc.refuse)
		}
	}
}

// Every axiomatic and localisation metric describes itself: family,
// headline, parameters with docs; only the mask metrics read masks.
func TestLocalisationAndAxiomaticDescribeThemselves(t *testing.T) {
	fams := map[Family][]string{}
	for _, p := range All() {
		info := p.Info()
		if info.Family == FamilyLocalisation || info.Family == FamilyAxiomatic {
			fams[info.Family] = append(fams[info.Family], info.Name)
			if _, ok := info.Headline(); !ok {
				t.Errorf("%s has no headline", info.Name)
			}
			if info.Masks != (info.Family == FamilyLocalisation && info.Name != "Focus") {
				t.Errorf("%s: masks %v", info.Name, info.Masks)
			}
		}
	}
	if len(fams[FamilyLocalisation]) != 7 || len(fams[FamilyAxiomatic]) != 3 {
		t.Errorf("families %v, want 7 localisation and 3 axiomatic metrics", fams)
	}
	if !FamilyLocalisation.ControlScoresWorst() || FamilyAxiomatic.ControlScoresWorst() {
		t.Error("a random control should score worst on localisation, not necessarily on axiomatic metrics")
	}
}
