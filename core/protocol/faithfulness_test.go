package protocol

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
)

// On a linear model with a zero baseline, Grad×Input's values are exactly
// the effects of removing each feature, so every correlation of values
// with effects is 1.
func TestFaithfulnessCorrelationLinearIsOne(t *testing.T) {
	env, _ := linearEnv(4)
	for _, size := range []int{1, 3} {
		p, err := New("FaithfulnessCorrelation", map[string]any{"samples": 4, "ns": []int{size}, "subsets": 20})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := res.Scalar("mean_correlation"); math.Abs(v-1) > 1e-5 {
			t.Errorf("|S| = %d: faithfulness correlation %g, want 1", size, v)
		}
		if res.Protocol != "FaithfulnessCorrelation" || len(res.Curves) != 0 {
			t.Errorf("result of %s with %d curves", res.Protocol, len(res.Curves))
		}
		checkDescribed(t, p, res)
	}
}

func TestFaithfulnessEstimateLinearIsOne(t *testing.T) {
	env, _ := linearEnv(4)
	res, err := FaithfulnessEstimate{Samples: 4, Output: "logit"}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.Units.Of("faithfulness_estimate") {
		if math.Abs(float64(v)-1) > 1e-5 {
			t.Errorf("input %d: faithfulness estimate %g, want 1", i, v)
		}
	}
	checkDescribed(t, FaithfulnessEstimate{}, res)
	// A map with its values reversed across the pixels is no longer the
	// effects: the correlation is what the two orders give, computed
	// by hand.
	maps, _ := env.Maps(context.Background(), "test")
	rev := slices.Clone(maps)
	for i := range 4 {
		slices.Reverse(rev[i*16 : (i+1)*16])
	}
	env.Maps = func(context.Context, string) ([]float32, error) { return rev, nil }
	res, err = FaithfulnessEstimate{Samples: 4, Output: "logit"}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.Units.Of("faithfulness_estimate") {
		want := Pearson(float64s(rev[i*16:(i+1)*16]), float64s(maps[i*16:(i+1)*16]))
		if math.Abs(float64(v)-want) > 1e-5 {
			t.Errorf("input %d, reversed map: %g, want %g", i, v, want)
		}
	}
}

// Adding a linear model's features back in ascending order of Grad×Input
// raises the logit by each feature's value: the path never falls exactly
// when no value is negative.
func TestMonotonicityLinearExact(t *testing.T) {
	env, _ := linearEnv(6)
	maps, _ := env.Maps(context.Background(), "test")
	res, err := Monotonicity{Samples: 6, Output: "logit"}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	mono, rising := res.Units.Of("monotonicity"), res.Units.Of("rising_steps")
	for i := range 6 {
		up := 0
		for _, v := range maps[i*16 : (i+1)*16] {
			if v >= 0 {
				up++
			}
		}
		if want := float32(up) / 16; math.Abs(float64(rising[i]-want)) > 1e-6 {
			t.Errorf("input %d: %g of the steps rise, want %g", i, rising[i], want)
		}
		if want := float32(map[bool]int{true: 1}[up == 16]); mono[i] != want {
			t.Errorf("input %d: monotonic %g, want %g", i, mono[i], want)
		}
	}
	checkDescribed(t, Monotonicity{}, res)
}

// rowJitter is a network whose logits move by a few float32 steps with
// the row's place in the batch, as a GEMM's summation order moves them:
// the same input scores differently at two places.
type rowJitter struct{ engine.Network }

func (j rowJitter) Forward(x []float32, n int) ([]float32, error) {
	out, err := j.Network.Forward(x, n)
	k := j.Classes()
	for r := range n {
		for c := range k {
			out[r*k+c] += 2e-7 * float32(r%3-1)
		}
	}
	return out, err
}

// Restoring a pixel whose value is the baseline's (0) leaves the input as
// it was: its score must not change, however the batch places the copy
// (on Fashion-MNIST 246–534 of 784 steps per image). Under a network that
// scores one input differently at different rows, Monotonicity counts
// exactly the linear model's rises, as on an exact network.
func TestMonotonicityUnchangedStepsTie(t *testing.T) {
	env, net := linearEnv(6)
	maps, _ := env.Maps(context.Background(), "test")
	for i := range env.Test.X {
		if i%3 == 0 { // a third of the pixels at the baseline
			env.Test.X[i], maps[i] = 0, 0
		}
	}
	env.Net = rowJitter{net}
	res, err := Monotonicity{Samples: 6, Output: "logit"}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	rising := res.Units.Of("rising_steps")
	for i := range 6 {
		up := 0
		for _, v := range maps[i*16 : (i+1)*16] {
			if v >= 0 {
				up++
			}
		}
		if want := float32(up) / 16; rising[i] != want {
			t.Errorf("input %d: %g of the steps rise, want %g (the unchanged steps tie)", i, rising[i], want)
		}
	}
}

func TestMonotonicityCorrelationLinearIsOne(t *testing.T) {
	env, _ := linearEnv(4)
	res, err := MonotonicityCorrelation{Samples: 4, Grid: pixelGrid, Draws: 1, Reference: "zero", Output: "logit"}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Scalar("monotonicity_correlation"); math.Abs(v-1) > 1e-9 {
		t.Errorf("monotonicity correlation %g, want 1: |φ| and φ² rank alike", v)
	}
	checkDescribed(t, MonotonicityCorrelation{}, res)
	// With noise the draws differ run to run only by the seed.
	a, _ := MonotonicityCorrelation{Samples: 4, Grid: 2, Draws: 3}.Run(context.Background(), env)
	b, _ := MonotonicityCorrelation{Samples: 4, Grid: 2, Draws: 3}.Run(context.Background(), env)
	if x, _ := a.Scalar("monotonicity_correlation"); x != must(b.Scalar("monotonicity_correlation")) {
		t.Error("same seed, different numbers")
	}
}

func must(v float64, _ bool) float64 { return v }

// Maps that name the predicted class are sufficient when every class has
// more members than neighbours are counted (five); with one map for all, every
// map is as near as any other and the ten nearest are the first ten other
// inputs: input i's score is the share of them of its class.
func TestSufficiencyHandSolved(t *testing.T) {
	env, net := linearEnv(40)
	pred, _ := engine.Predicted(context.Background(), net, env.Test.X, 40, 0)
	byClass := make([]float32, 40*16)
	count := map[int]int{}
	for i, c := range pred {
		byClass[i*16+c] = 1
		count[c]++
	}
	if count[0] <= 5 || count[1] <= 5 {
		t.Fatalf("classes of %v inputs: the test needs more than five of each", count)
	}
	env.Maps = func(context.Context, string) ([]float32, error) { return byClass, nil }
	res, err := Sufficiency{Samples: 40, Neighbours: 5}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Scalar("sufficiency"); v != 1 {
		t.Errorf("class-naming maps: sufficiency %g, want 1", v)
	}
	checkDescribed(t, Sufficiency{}, res)
	same := slices.Repeat([]float32{0.5, -1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 40)
	env.Maps = func(context.Context, string) ([]float32, error) { return same, nil }
	res, _ = Sufficiency{Samples: 40}.Run(context.Background(), env)
	for i, v := range res.Units.Of("sufficiency") {
		k := 0
		for j, seen := 0, 0; seen < 10; j++ {
			if j != i {
				seen++
				if pred[j] == pred[i] {
					k++
				}
			}
		}
		if want := float32(k) / 10; v != want {
			t.Errorf("one map for all, input %d: sufficiency %g, want %g", i, v, want)
		}
	}
	if _, err := (Sufficiency{Samples: 5}).Run(context.Background(), env); err == nil || !strings.Contains(err.Error(), "neighbours") {
		t.Errorf("5 inputs for 10 neighbours: %v", err)
	}
}

// The named settings of Deletion are Deletion: the same numbers under
// their own name and headline; AOPC is the mean drop along the curve.
func TestDeletionSettingsAreDeletion(t *testing.T) {
	env, _ := linearEnv(5)
	for _, tc := range []struct {
		p        Deletion
		headline string
	}{{PixelFlipping(), "auc_morf"}, {RegionPerturbation(), "aopc_morf"}, {Selectivity(), "auc_morf"}} {
		name := tc.p.Info().Name
		p, err := New(name, map[string]any{"samples": 5, "output": "logit", "reference": "zero"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		plain := p.(Deletion)
		plain.as = named{}
		want, err := plain.Run(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if res.Protocol != name || want.Protocol != "Deletion" {
			t.Errorf("%s recorded as %s", name, res.Protocol)
		}
		if h, _ := p.Info().Headline(); h.Name != tc.headline {
			t.Errorf("%s: headline %s, want %s", name, h.Name, tc.headline)
		}
		for _, s := range want.Scalars {
			if v, _ := res.Scalar(s.Name); v != s.Value && !(math.IsNaN(v) && math.IsNaN(s.Value)) {
				t.Errorf("%s: %s %g, Deletion's %g", name, s.Name, v, s.Value)
			}
		}
		for _, c := range res.Curves {
			if c.Name == "morf" {
				// Linear and logit: the mean curve's AOPC is the mean AOPC.
				if v, _ := res.Scalar("aopc_morf"); math.Abs(v-(c.Y[0]-mean(c.Y))) > 1e-5 {
					t.Errorf("%s: AOPC %g, the mean curve gives %g", name, v, c.Y[0]-mean(c.Y))
				}
			}
		}
		checkDescribed(t, p, res)
	}
}

// Inputs a metric cannot score are refused with the reason.
func TestNewMetricsRefuseBadInputs(t *testing.T) {
	tab, _ := linearEnvShape(3, []int{16, 1, 1})
	env, _ := linearEnv(3)
	empty := *env
	empty.Test = &data.Dataset{Shape: []int{1, 4, 4}, Classes: []string{"a", "b"}}
	for _, tc := range []struct {
		name string
		p    Protocol
		env  *Env
		want string
	}{
		{"IROF of tabular rows", IROF{}, tab, "superpixels need images"},
		{"Faithfulness Correlation subsets larger than the rows", FaithfulnessCorrelation(), tab, "is not below the 16 features"},
		{"Sufficiency of no inputs", Sufficiency{}, &empty, "no test images"},
		{"Faithfulness Estimate of one feature", FaithfulnessEstimate{Grid: 1}, env, "a correlation needs two"},
		{"Monotonicity of an unknown reference", Monotonicity{Reference: "purple"}, env, "unknown reference"},
	} {
		_, err := tc.p.Run(context.Background(), tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}
