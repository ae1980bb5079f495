package protocol

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"faithlab/core/attr"
	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

// A logistic regression's input gradient is its weight row: Gradient maps
// agree with LinearTruth perfectly on every metric, their negation has every
// sign wrong, and a random map falls short.
func TestGroundTruthLogreg(t *testing.T) {
	const n, d, k = 30, 8, 3
	net, err := native.New("logreg", []int{d, 1, 1}, k, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	net.Init(4)
	rng := rand.New(rand.NewPCG(5, 5))
	ds := &data.Dataset{Name: "tab", Shape: []int{d, 1, 1}, Classes: []string{"a", "b", "c"}, X: make([]float32, n*d), Y: make([]int, n)}
	for i := range ds.X {
		ds.X[i] = float32(rng.NormFloat64())
	}
	ctx := context.Background()
	target, err := engine.Predicted(ctx, net, ds.X, n, 64)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := attr.Run(ctx, attr.Gradient{}, net, attr.Input{X: ds.X, N: n, Shape: ds.Shape, Target: target})
	if err != nil {
		t.Fatal(err)
	}
	perClass, err := LinearTruth(net)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := ClassTruth(perClass, target)
	if err != nil {
		t.Fatal(err)
	}
	neg := make([]float32, len(grads.Data))
	random := make([]float32, len(grads.Data))
	for i, v := range grads.Data {
		neg[i], random[i] = -v, float32(rng.NormFloat64())
	}
	for _, tc := range []struct {
		name string
		maps []float32
		want map[string]float64 // NaN: only checked to be below 1
	}{
		{"gradient", grads.Data, map[string]float64{"fa": 1, "ra": 1, "sa": 1, "sra": 1, "rc": 1, "pra": 1, "cos": 1}},
		{"negated gradient", neg, map[string]float64{"fa": 1, "ra": 1, "sa": 0, "sra": 0, "rc": 1, "pra": 1, "cos": -1}},
		{"random", random, map[string]float64{"fa": math.NaN(), "rc": math.NaN(), "cos": math.NaN()}},
	} {
		env := &Env{Net: net, Test: ds, Method: tc.name,
			Maps:  func(context.Context, string) ([]float32, error) { return tc.maps, nil },
			Truth: func(context.Context, string) ([]float32, error) { return truth, nil }}
		res, err := GroundTruth{TopK: 0.5}.Run(ctx, env)
		if err != nil {
			t.Fatal(err)
		}
		checkDescribed(t, GroundTruth{}, res)
		for name, want := range tc.want {
			got, ok := res.Scalar(name)
			switch {
			case !ok:
				t.Errorf("%s: no %s", tc.name, name)
			case math.IsNaN(want) && !(got < 0.9):
				t.Errorf("%s: %s %g, want below 0.9", tc.name, name, got)
			case !math.IsNaN(want) && math.Abs(got-want) > 1e-5:
				t.Errorf("%s: %s %g, want %g", tc.name, name, got, want)
			}
		}
	}
	if _, err := (GroundTruth{}).Run(ctx, &Env{Net: net, Test: ds, Maps: func(context.Context, string) ([]float32, error) { return grads.Data, nil }}); err == nil || !strings.Contains(err.Error(), "no known ground truth") {
		t.Errorf("no truth: error %v", err)
	}
	mlp, err := native.New("mlp", []int{d, 1, 1}, k, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LinearTruth(mlp); err == nil {
		t.Error("an MLP's weights accepted as ground truth")
	}
}

// A truth that weighs every feature alike (the Gaussian mixture's) has no
// unique top k: the top-k metrics are undefined, the cosine is not.
func TestAgreementTiedTruth(t *testing.T) {
	g := []float32{0.5, 0.5, 0.5, 0.5}
	r, err := Agree([]float32{1, 2, 3, 4}, g, 2)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{"fa": r.FA, "ra": r.RA, "sa": r.SA, "sra": r.SRA, "rc": r.RC} {
		if !math.IsNaN(v) {
			t.Errorf("%s %g with a tied truth, want NaN", name, v)
		}
	}
	if want := 10 / math.Sqrt(30*4); math.Abs(r.Cos-want) > 1e-7 {
		t.Errorf("cos %g, want %g", r.Cos, want)
	}
}

// An undefined score survives the results file: null in JSON, NaN again
// when read back.
func TestResultJSONKeepsNaN(t *testing.T) {
	in := Result{Protocol: "P", Scalars: []Scalar{{"tau", math.NaN(), Higher}, {"auc", 0.25, Lower}},
		Curves: []Curve{{Name: "c", X: Values{0, 1}, Y: Values{math.NaN(), 2}}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"value":null`) || !strings.Contains(string(b), `"y":[null,2]`) {
		t.Errorf("JSON %s", b)
	}
	var out Result
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(out.Scalars[0].Value) || out.Scalars[1].Value != 0.25 || out.Scalars[1].Better != Lower ||
		!math.IsNaN(out.Curves[0].Y[0]) || out.Curves[0].Y[1] != 2 {
		t.Errorf("read back %+v", out)
	}
}

func TestCorrelateWithTruth(t *testing.T) {
	var rs []Result
	for i, m := range []string{"a", "b", "c", "d"} {
		x := float64(i)
		rs = append(rs,
			Result{Protocol: "GroundTruth", Method: m, Scalars: []Scalar{{"fa", x / 4, Higher}}},
			Result{Protocol: "ROAR", Method: m, Scalars: []Scalar{{"mean_accuracy", 1 - x/8, Lower}, {"flat", 1, Lower}}})
	}
	rs = append(rs, Result{Protocol: "ROAR", Method: "no truth", Scalars: []Scalar{{"mean_accuracy", 5, Lower}}})
	got := CorrelateWithTruth(rs)
	if len(got) != 2 || got[0].Score != "mean_accuracy" || got[0].Methods != 4 || math.Abs(got[0].R+1) > 1e-12 {
		t.Fatalf("correlations %+v, want mean_accuracy r = −1 over 4 methods first", got)
	}
	if !math.IsNaN(got[1].R) {
		t.Errorf("a constant score correlates %g, want NaN", got[1].R)
	}
}
