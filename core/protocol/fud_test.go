package protocol

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/enginetest"
	"faithlab/core/perturb"
)

// countingNet counts the backward passes of a network: the classifier
// corrections of an in-painting.
type countingNet struct {
	*enginetest.Linear
	backward int
}

func (c *countingNet) Backward(d []float32, w engine.Want) ([]float32, error) {
	c.backward++
	return c.Linear.Backward(d, w)
}

// The correction's gradient is ∇ₓ log softmax_y: for logits Wx + b,
// W_y − Σ_k p_k W_k.
func TestClassifierGradIsTheLogSoftmaxGradient(t *testing.T) {
	net := enginetest.NewLinear(2, []int{5, 1, 1}, 3)
	x := []float32{0.3, -1, 2, 0.5, -0.2, 1, 1, -1, 0, 0.4}
	target := []int{2, 0}
	grad := make([]float32, 10)
	if err := classifierGrad(net, target)(context.Background(), 0, x, 2, grad); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		logits := make([]float64, 3)
		for k := range 3 {
			logits[k] = float64(net.B[k])
			for j := range 5 {
				logits[k] += float64(net.W[k*5+j] * x[i*5+j])
			}
		}
		var z float64
		for _, l := range logits {
			z += math.Exp(l)
		}
		for j := range 5 {
			want := float64(net.W[target[i]*5+j])
			for k := range 3 {
				want -= math.Exp(logits[k]) / z * float64(net.W[k*5+j])
			}
			if got := float64(grad[i*5+j]); math.Abs(got-want) > 1e-5 {
				t.Errorf("input %d value %d: %g, want %g", i, j, got, want)
			}
		}
	}
}

// fudEnv is a classifier that is unsure (a random linear model) on a
// Gaussian mixture, with random maps.
func fudEnv(t *testing.T, dim int) (*Env, *countingNet) {
	t.Helper()
	all, err := data.GaussianMixture{Dim: dim, Samples: 400, Seed: 2}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	trainSet, test := all.Split(0.25, 2)
	net := &countingNet{Linear: enginetest.NewLinear(3, []int{dim, 1, 1}, 2)}
	maps := make([]float32, test.Len()*dim)
	for i := range maps {
		maps[i] = float32((i*7919)%97) / 97
	}
	env := &Env{Net: net, Train: trainSet, Test: test, Method: "m", Seed: 4,
		Maps: func(context.Context, string) ([]float32, error) { return maps, nil }}
	return env, net
}

// The correction acts on the diffusion steps t < 0.05·T only, as FUD's
// Appendix D and §3.3.2 say (Algorithm 1's printed condition would put it
// on the first steps): 50 DDIM steps over 1000 correct t = 40, 20 and 0,
// 25 steps t = 40 and 0. The kept values come back exactly.
func TestFUDCorrectsOnlyTheLastStepsAndKeepsTheKeptValues(t *testing.T) {
	env, net := fudEnv(t, 8)
	prior, _, err := openPrior(context.Background(), env, PriorMixture)
	if err != nil {
		t.Fatal(err)
	}
	x := env.Test.X[:4*8]
	keep := make([]float32, 4*8)
	for i := range keep {
		keep[i] = float32(i % 2)
	}
	for _, tc := range []struct{ steps, corrected int }{{50, 3}, {25, 2}, {20, 1}} {
		net.backward = 0
		r, err := Inpainting{Prior: prior, Net: net, Steps: tc.steps}.Inpaint(context.Background(), x, 4, keep, []int{0, 1, 0, 1})
		if err != nil {
			t.Fatal(err)
		}
		if net.backward != tc.corrected {
			t.Errorf("%d steps: %d corrected, want %d", tc.steps, net.backward, tc.corrected)
		}
		for i, k := range keep {
			if k == 1 && r.X[i] != x[i] {
				t.Errorf("kept value %d: %g, originally %g", i, r.X[i], x[i])
			}
		}
	}
}

// The correction steers the filled values away from the explained class:
// the model's confidence in it falls.
func TestFUDCorrectionLowersTheExplainedClassConfidence(t *testing.T) {
	env, net := fudEnv(t, 8)
	prior, _, err := openPrior(context.Background(), env, PriorMixture)
	if err != nil {
		t.Fatal(err)
	}
	n := 40
	x := env.Test.X[:n*8]
	keep := make([]float32, 8)
	keep[0] = 1
	target, _ := engine.Predicted(context.Background(), net, x, n, 0)
	mean := func(in Inpainting) float64 {
		r, err := in.Inpaint(context.Background(), x, n, keep, target)
		if err != nil {
			t.Fatal(err)
		}
		p, err := probabilities(context.Background(), net, r.X, n, target)
		if err != nil {
			t.Fatal(err)
		}
		var s float64
		for _, v := range p {
			s += v / float64(n)
		}
		return s
	}
	plain := mean(Inpainting{Prior: prior, Steps: 50})
	steered := mean(Inpainting{Prior: prior, Net: net, Steps: 50, GuideScale: 20})
	harder := mean(Inpainting{Prior: prior, Net: net, Steps: 50, GuideScale: 100})
	if !(harder < steered && steered < plain) {
		t.Errorf("mean confidence %g without the correction, %g with it at scale 20, %g at 100: want falling", plain, steered, harder)
	}
}

// An image's keep-mask keeps a pixel in every channel, and the retained
// ratio keeps the last features of the removal order.
func TestFUDKeepMasksSpanTheChannels(t *testing.T) {
	feats, _ := perturb.NewFeatures(2, 2, 0)
	m, err := KeepMasks(feats, [][]int{{3, 1, 0, 2}}, 0.5, []int{2, 2, 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{1, 0, 1, 0, 1, 0, 1, 0}; !slices.Equal(m, want) {
		t.Errorf("keep-mask %v, want %v", m, want)
	}
}

// FUD runs end to end on the mixture: described, deterministic, its
// confidences probabilities, the L2 distance along the trajectory falling
// from the noisy start, the in-painted inputs and trajectories kept.
func TestFUDRunsDescribedAndDeterministic(t *testing.T) {
	env, _ := fudEnv(t, 8)
	f := FUD{Ratios: []float64{0.25, 0.5, 0.75}, Samples: 20, Steps: 20, Prior: PriorMixture, Trajectories: 2}
	res, err := f.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	checkDescribed(t, f, res)
	for _, c := range res.Curves {
		switch c.Name {
		case "confidence":
			for _, v := range c.Y {
				if !(v >= 0 && v <= 1) {
					t.Errorf("confidence %g", v)
				}
			}
		case "l2_trajectory":
			if len(c.Y) != 21 || !(c.Y[0] > c.Y[len(c.Y)-1]) {
				t.Errorf("L2 along the trajectory %v: want 21 points falling from the start", c.Y)
			}
		}
	}
	var names []string
	for _, sm := range res.Samples {
		names = append(names, sm.Name)
		if sm.Kind == Trajectory && !slices.Equal(sm.Shape, []int{20, 2, 2, 8, 1, 1}) {
			t.Errorf("%s: shape %v", sm.Name, sm.Shape)
		}
	}
	if got := strings.Join(names, ", "); got != "original test, map test, FUD 25% kept test, FUD 25% kept trajectory, "+
		"FUD 50% kept test, FUD 50% kept trajectory, FUD 75% kept test, FUD 75% kept trajectory" {
		t.Errorf("samples %s", got)
	}
	again, err := f.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := res.Scalar("auc")
	b, _ := again.Scalar("auc")
	if a != b {
		t.Errorf("FUD not deterministic: AUC %g then %g", a, b)
	}
	none, err := FUD{Ratios: []float64{0.5}, Samples: 4, Steps: 10, Trajectories: -1}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	for _, sm := range none.Samples {
		if sm.Kind == Trajectory {
			t.Errorf("trajectories: -1 kept %s", sm.Name)
		}
	}
	if _, err := (FUD{Ratios: []float64{1}}).Run(context.Background(), env); err == nil {
		t.Error("a retained ratio of 1 accepted")
	}
}
