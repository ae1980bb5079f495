package protocol

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate"
	"gonum.org/v1/gonum/stat"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/enginetest"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/perturb"
	"faithlab/core/train"
)

// linearEnv is a linear model on 1×4×4 images with Grad×Input maps, whose
// removal effects are exactly the sums of the removed attributions.
func linearEnv(n int) (*Env, *enginetest.Linear) { return linearEnvShape(n, []int{1, 4, 4}) }

// linearEnvShape is linearEnv on samples of 16 values in the given shape:
// 1×4×4 images or 16×1×1 tabular rows.
func linearEnvShape(n int, shape []int) (*Env, *enginetest.Linear) {
	net := enginetest.NewLinear(1, shape, 2)
	rng := rand.New(rand.NewPCG(3, 3))
	ds := &data.Dataset{Name: "lin", Shape: shape, Classes: []string{"a", "b"}, X: make([]float32, n*16), Y: make([]int, n)}
	for i := range ds.X {
		ds.X[i] = rng.Float32()
	}
	maps := make([]float32, n*16)
	env := &Env{Net: net, Test: ds, Method: "GradXInput",
		Maps: func(context.Context, string) ([]float32, error) { return maps, nil }}
	target, _ := targets(context.Background(), net, ds.X, ds.Y, n, "predicted")
	for i := 0; i < n; i++ {
		for p := 0; p < 16; p++ {
			maps[i*16+p] = net.W[target[i]*16+p] * ds.X[i*16+p]
		}
	}
	return env, net
}

func TestDeletionLinearExact(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape []int
		grid  int
		rank  string
	}{
		{"image 4×4, pixels as a 4×4 grid", []int{1, 4, 4}, 4, Signed},
		{"tabular, 16 features (grid ignored)", []int{16, 1, 1}, 0, Signed},
		{"image 4×4 ranked by magnitude", []int{1, 4, 4}, 4, Magnitude},
	} {
		t.Run(tc.name, func(t *testing.T) { testDeletionLinearExact(t, tc.shape, tc.grid, tc.rank) })
	}
}

func testDeletionLinearExact(t *testing.T, shape []int, grid int, rank string) {
	env, net := linearEnvShape(5, shape)
	res, err := Deletion{Grid: grid, Output: "logit", Samples: 5, Rank: rank}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	// MoRF: the logit after removing k pixels is the full logit minus the k
	// largest contributions; check image by image through the mean curve.
	want := make([]float64, 17)
	target, _ := targets(context.Background(), net, env.Test.X, env.Test.Y, 5, "predicted")
	for i := 0; i < 5; i++ {
		c := make([]float64, 16)
		full := float64(net.B[target[i]])
		for p := range c {
			c[p] = float64(net.W[target[i]*16+p] * env.Test.X[i*16+p])
			full += c[p]
		}
		if rank == Magnitude {
			// The contributions removed first are the largest in size,
			// whatever their sign.
			slices.SortFunc(c, func(a, b float64) int { return cmpFloat(math.Abs(b), math.Abs(a)) })
		} else {
			slices.SortFunc(c, func(a, b float64) int { return cmpFloat(b, a) })
		}
		v := full
		for k := 0; k <= 16; k++ {
			want[k] += v / 5
			if k < 16 {
				v -= c[k]
			}
		}
	}
	// The samples: the inputs untouched, their maps, then the inputs as
	// each order left them at a quarter, half and three quarters removed.
	var names []string
	maps, _ := env.Maps(context.Background(), "test")
	fs := FeatureShape(shape)
	for _, sm := range res.Samples {
		names = append(names, sm.Name)
		want, values := append([]int{5}, shape...), []float32(nil)
		switch sm.Kind {
		case Original:
			values = env.Test.X[:5*16]
		case AttributionMap:
			want, values = []int{5, 1, fs[1], fs[2]}, maps[:5*16]
		}
		if !slices.Equal(sm.Shape, want) {
			t.Errorf("%s: shape %v, want %v", sm.Name, sm.Shape, want)
		}
		if values != nil && !slices.Equal(sm.Values, values) {
			t.Errorf("%s: values differ from the %s", sm.Name, sm.Kind)
		}
	}
	if got := strings.Join(names, ", "); got != "original test, map test, Deletion morf 25% test, Deletion morf 50% test, Deletion morf 75% test, "+
		"Deletion lerf 25% test, Deletion lerf 50% test, Deletion lerf 75% test" {
		t.Errorf("samples %s", got)
	}
	checkDescribed(t, Deletion{}, res)
	morf := res.Curves[0]
	if morf.Name != "morf" || len(morf.Y) != 17 {
		t.Fatalf("curve %s with %d points", morf.Name, len(morf.Y))
	}
	for k := range want {
		if math.Abs(morf.Y[k]-want[k]) > 1e-4 {
			t.Fatalf("MoRF step %d: %g, want %g", k, morf.Y[k], want[k])
		}
	}
	// Exact maps: the MoRF curve falls monotonically (τ = 1) while the
	// contributions are positive, and LeRF beats MoRF.
	if v, _ := res.Scalar("lerf_minus_morf"); v <= 0 && rank == Signed {
		t.Errorf("LeRF−MoRF %g ≤ 0 for exact maps", v)
	}
	if v, _ := res.Scalar("auc_morf"); math.Abs(v-AUC(morf.X, morf.Y)) > 0.05*math.Abs(v)+1e-9 {
		// The mean of per-image AUCs equals the AUC of the mean curve.
		t.Errorf("auc_morf %g, AUC of the mean curve %g", v, AUC(morf.X, morf.Y))
	}
}

func TestSensitivityNLinearIsOne(t *testing.T) {
	env, _ := linearEnv(4)
	res, err := SensitivityN{Samples: 4, Ns: []int{1, 3, 8}, Subsets: 20}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	for j, v := range res.Curves[0].Y {
		if math.Abs(v-1) > 1e-4 {
			t.Errorf("N=%g: correlation %g, want 1 for Grad×Input on a linear model", res.Curves[0].X[j], v)
		}
	}
	checkDescribed(t, SensitivityN{}, res)
	// The occluded copies lie farther from the images the more pixels are
	// zeroed (FUD's Sen-N row): PSNR falls from N = 1 to N = 8.
	psnr := slices.IndexFunc(res.Curves, func(c Curve) bool { return c.Name == "psnr" })
	if psnr < 0 || !(res.Curves[psnr].Y[2] < res.Curves[psnr].Y[0]) {
		t.Errorf("PSNR curve over N = 1, 3, 8 (index %d): want lower at 8 than at 1", psnr)
	}
	if v, ok := res.Scalar("ood_auroc"); !ok || v < 0 || v > 1 {
		t.Errorf("ood_auroc %g (%v)", v, ok)
	}
}

func TestInfidelityLinearIsZero(t *testing.T) {
	env, net := linearEnv(4)
	// The gradient map: Iᵀw is exactly f(x) − f(x − I) for any I — noise,
	// a zeroed square, or the saliency-guided blur of FUD's INFID row.
	target, _ := targets(context.Background(), net, env.Test.X, env.Test.Y, 4, "predicted")
	grad := make([]float32, 4*16)
	for i := range 4 {
		copy(grad[i*16:], net.W[target[i]*16:(target[i]+1)*16])
	}
	env.Maps = func(context.Context, string) ([]float32, error) { return grad, nil }
	for _, p := range []string{"gaussian", "square", "blur"} {
		res, err := Infidelity{Samples: 4, Perturbation: p, Patch: 2, Blur: 1, Draws: 30}.Run(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := res.Scalar("infidelity"); v > 1e-8 {
			t.Errorf("%s: infidelity %g, want 0", p, v)
		}
		checkDescribed(t, Infidelity{}, res)
		if v, ok := res.Scalar("psnr"); !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("%s: PSNR of the perturbed copies %g (%v)", p, v, ok)
		}
	}
	// A wrong map is unfaithful; normalising removes only a scale error.
	scaled := slices.Clone(grad)
	for i := range scaled {
		scaled[i] *= 3
	}
	env.Maps = func(context.Context, string) ([]float32, error) { return scaled, nil }
	raw, _ := Infidelity{Samples: 4, Draws: 30}.Run(context.Background(), env)
	norm, _ := Infidelity{Samples: 4, Draws: 30, Normalize: true}.Run(context.Background(), env)
	if r, _ := raw.Scalar("infidelity"); r < 1e-3 {
		t.Errorf("3× gradient: infidelity %g, want > 0", r)
	}
	if v, _ := norm.Scalar("infidelity"); v > 1e-8 {
		t.Errorf("3× gradient normalised: infidelity %g, want 0", v)
	}
}

func TestBadInputs(t *testing.T) {
	env, _ := linearEnv(3)
	nan := make([]float32, 3*16)
	nan[7] = float32(math.NaN())
	bad := *env
	bad.Maps = func(context.Context, string) ([]float32, error) { return nan, nil }
	empty := *env
	empty.Test = &data.Dataset{Shape: []int{1, 4, 4}, Classes: []string{"a", "b"}}
	short := *env
	short.Maps = func(context.Context, string) ([]float32, error) { return make([]float32, 10), nil }
	for _, tc := range []struct {
		name string
		p    Protocol
		env  *Env
		want string
	}{
		{"NaN map", Deletion{}, &bad, "NaN"},
		{"empty test set", Deletion{}, &empty, "no test images"},
		{"maps of the wrong size", Deletion{}, &short, "10 values"},
		{"drop rate 1.5", ROAD{Rates: []float64{0.5, 1.5}}, env, "outside (0, 1)"},
		{"drop rate 0", ROAR{Rates: []float64{0}}, env, "outside (0, 1)"},
		{"unknown reference", Deletion{Grid: 4, Reference: "purple"}, env, "unknown reference"},
		{"subset too large", SensitivityN{Ns: []int{16}}, env, "is not below the 16 features"},
	} {
		_, err := tc.p.Run(context.Background(), tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestConfigureAndInfo(t *testing.T) {
	p, err := New("deletion", map[string]any{"grid": 4, "reference": "road"})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.(Deletion); d.Grid != 4 || d.Reference != "road" || d.Output != "probability" {
		t.Errorf("configured %+v", d)
	}
	if _, err := New("deletion", map[string]any{"gird": 4}); err == nil || !strings.Contains(err.Error(), "gird") {
		t.Errorf("misspelt parameter: %v", err)
	}
	if _, err := New("deletion", map[string]any{"grid": "seven"}); err == nil {
		t.Error("string grid accepted")
	}
	if _, err := New("roar2", nil); err == nil {
		t.Error("unknown protocol accepted")
	}
	for _, p := range All() {
		info := p.Info()
		if info.Name == "" || len(info.Params) == 0 || len(info.Metrics) == 0 || info.Category == "" {
			t.Errorf("%T describes itself incompletely: %+v", p, info)
		}
		if !slices.Contains([]Family{FamilyFaithfulness, FamilyGroundTruth, FamilyRandomisation, FamilyRobustness, FamilyComplexity, FamilyLocalisation, FamilyAxiomatic}, info.Family) {
			t.Errorf("%s: family %q", info.Name, info.Family)
		}
		for _, q := range info.Params {
			if q.Doc == "" {
				t.Errorf("%s parameter %s has no doc", info.Name, q.Name)
			}
		}
	}
}

// TestRetrainProtocols runs ROAR, KAR, ROAD (with retraining) and Eval-X on
// a dataset whose class is written in one pixel: an oracle map that ranks
// that pixel first must bring ROAR's accuracy to chance at once, while
// ranking it last keeps KAR perfect; the runs are deterministic.
func TestRetrainProtocols(t *testing.T) {
	mk := func(n int, seed uint64) *data.Dataset {
		rng := rand.New(rand.NewPCG(seed, 9))
		ds := &data.Dataset{Name: "pixel", Shape: []int{1, 4, 4}, Classes: []string{"a", "b"}, X: make([]float32, n*16), Y: make([]int, n)}
		for i := 0; i < n; i++ {
			ds.Y[i] = i % 2
			for p := 0; p < 16; p++ {
				ds.X[i*16+p] = 0.5 * rng.Float32()
			}
			ds.X[i*16+5] = float32(ds.Y[i]) // the class pixel
		}
		return ds
	}
	oracle := func(n int) []float32 {
		m := make([]float32, n*16)
		for i := 0; i < n; i++ {
			m[i*16+5] = 1
		}
		return m
	}
	trainSet, test := mk(400, 1), mk(200, 2)
	env := &Env{Train: trainSet, Test: test, Method: "oracle",
		Maps: func(_ context.Context, split string) ([]float32, error) {
			if split == "train" {
				return oracle(trainSet.Len()), nil
			}
			return oracle(test.Len()), nil
		},
		Recipe: train.Config{Epochs: 30, BatchSize: 32, LR: 1e-2, Seed: 1, ValFraction: -1},
		NewNet: func() (engine.Network, error) {
			n, err := native.New("mlp", []int{1, 4, 4}, 2, gemm.Gonum{})
			if err == nil {
				n.Init(1)
			}
			return n, err
		},
	}
	var err error
	if env.Net, err = env.NewNet(); err != nil {
		t.Fatal(err)
	}
	if _, err := train.Train(context.Background(), env.Net, trainSet, env.Recipe, nil); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	roar, err := ROAR{Rates: []float64{0.1, 0.5}}.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	kar, err := ROAR{Rates: []float64{0.1, 0.5}, Keep: true}.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	// The kept samples are the first test images untouched, their maps,
	// and the images as the model saw them: the oracle's pixel (ranked
	// first) and k−1 more zeroed at each rate.
	if len(roar.Samples) != 4 || roar.Samples[0].Kind != Original || roar.Samples[1].Kind != AttributionMap ||
		roar.Samples[3].Name != "ROAR 50% test" {
		t.Fatalf("ROAR samples %+v", roar.Samples)
	}
	if !slices.Equal(roar.Samples[0].Values, test.X[:8*16]) || !slices.Equal(roar.Samples[1].Values, oracle(8)) {
		t.Error("ROAR's original and map samples are not the first test images and their maps")
	}
	for j, sm := range roar.Samples[2:] {
		k, _ := perturb.Count(roar.Curves[0].X[j], 16)
		if !slices.Equal(sm.Shape, []int{8, 1, 4, 4}) || len(sm.Values) != 8*16 {
			t.Fatalf("%s: shape %v, %d values", sm.Name, sm.Shape, len(sm.Values))
		}
		for i := range 8 {
			img := sm.Values[i*16 : (i+1)*16]
			zeros := 0
			for p, v := range img {
				if v == 0 {
					zeros++
				} else if v != test.X[i*16+p] {
					t.Fatalf("%s image %d pixel %d: %g, originally %g", sm.Name, i, p, v, test.X[i*16+p])
				}
			}
			if img[5] != 0 || zeros != k {
				t.Errorf("%s image %d: class pixel %g, %d zeros, want 0 and %d", sm.Name, i, img[5], zeros, k)
			}
		}
	}
	// Zero-filling is seen: removing the class pixel (and more) moves
	// the images off the data, more at 50 % than at 10 %.
	for _, name := range []string{"ood_auroc", "psnr", "ssim"} {
		v, ok := roar.Scalar(name)
		if !ok || math.IsNaN(v) {
			t.Errorf("ROAR %s %g (%v)", name, v, ok)
		}
	}
	var psnr []float64
	for _, c := range roar.Curves {
		if c.Name == "psnr" {
			psnr = c.Y
		}
	}
	if len(psnr) != 2 || !(psnr[0] > psnr[1]) {
		t.Errorf("PSNR at 10%% and 50%% removed: %v", psnr)
	}
	for j, a := range roar.Curves[0].Y {
		if a > 0.65 {
			t.Errorf("ROAR %g%%: accuracy %g with the class pixel removed", 100*roar.Curves[0].X[j], a)
		}
	}
	for j, a := range kar.Curves[0].Y {
		if a < 0.95 {
			t.Errorf("KAR %g%%: accuracy %g with the class pixel kept", 100*kar.Curves[0].X[j], a)
		}
	}
	road, err := ROAD{Rates: []float64{0.1}, Retrain: true}.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(road.Samples) != 4 { // original, map, MoRF and LeRF at 10 %
		t.Errorf("ROAD keeps %d samples", len(road.Samples))
	}
	if m, _ := road.Scalar("lerf_minus_morf"); m < 0.3 {
		t.Errorf("ROAD LeRF−MoRF %g for the oracle", m)
	}
	ex, err := EvalX{Rates: []float64{0.1}}.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if a := ex.Curves[0].Y[0]; a > 0.65 {
		t.Errorf("Eval-X accuracy %g with the class pixel removed", a)
	}
	checkDescribed(t, ROAR{}, roar)
	checkDescribed(t, ROAR{Keep: true}, kar)
	checkDescribed(t, ROAD{Retrain: true}, road)
	checkDescribed(t, EvalX{}, ex)
	again, _ := ROAR{Rates: []float64{0.1, 0.5}}.Run(ctx, env)
	if !slices.Equal(again.Curves[0].Y, roar.Curves[0].Y) {
		t.Errorf("ROAR not deterministic: %v then %v", roar.Curves[0].Y, again.Curves[0].Y)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (ROAR{Rates: []float64{0.1}}).Run(cancelled, env); err == nil {
		t.Error("cancelled ROAR returned no error")
	}
	// The DPI diagnostics read the curves back.
	pts := TVPoints([]Result{roar}, "accuracy", "mask_tv")
	if len(pts) != 2 || pts[0].TV <= 0 {
		t.Errorf("TV points %+v", pts)
	}
}

func TestStats(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"tau increasing", KendallTau(x, []float64{2, 4, 6, 8, 10}), 1},
		{"tau decreasing", KendallTau(x, []float64{5, 4, 3, 2, 1}), -1},
		{"tau one swap", KendallTau(x, []float64{1, 3, 2, 4, 5}), 0.8},
		{"pearson", Pearson(x, []float64{2, 4, 6, 8, 10}), 1},
		{"spearman monotone", Spearman(x, []float64{1, 8, 27, 64, 125}), 1},
		{"auc", AUC([]float64{0, 0.5, 1}, []float64{1, 1, 0}), 0.75},
	} {
		if math.Abs(tc.got-tc.want) > 1e-12 {
			t.Errorf("%s: %g, want %g", tc.name, tc.got, tc.want)
		}
	}
	if !math.IsNaN(Pearson(x, []float64{0.1, 0.1, 0.1, 0.1, 0.1})) || !math.IsNaN(Spearman([]float64{2, 2, 2}, x[:3])) {
		t.Error("correlation with a constant is not NaN")
	}
	f, err := LinearFit(x, []float64{3, 5, 7, 9, 11})
	if err != nil || math.Abs(f.Slope-2) > 1e-12 || math.Abs(f.Intercept-1) > 1e-12 || math.Abs(f.R2-1) > 1e-12 {
		t.Errorf("fit %+v, %v", f, err)
	}
	// y = x + (0, 1, −1, 1, −1)/2: Sxy 9, Sxx 10, Syy 9, so slope 0.9 and
	// R² = Sxy²/(Sxx·Syy) = 0.9.
	if f, err := LinearFit(x, []float64{1, 2.5, 2.5, 4.5, 4.5}); err != nil || math.Abs(f.Slope-0.9) > 1e-12 || math.Abs(f.R2-0.9) > 1e-12 {
		t.Errorf("noisy fit %+v, %v", f, err)
	}
	// R² needs a y that varies and more points than the line's two
	// coefficients.
	for _, tc := range []struct {
		name string
		x, y []float64
		want string
	}{
		{"constant x", []float64{1, 1, 1}, []float64{1, 2, 3}, "all x equal"},
		{"constant y", x, []float64{0.1, 0.1, 0.1, 0.1, 0.1}, "all y equal 0.1"},
		{"two points", []float64{1, 2}, []float64{1, 2}, "at least three"},
	} {
		if _, err := LinearFit(tc.x, tc.y); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
	plain := []TVPoint{{Method: "G", Rate: 0.1, Accuracy: 0.8}, {Method: "G", Rate: 0.5, Accuracy: 0.6}}
	processed := []TVPoint{{Method: "G", Rate: 0.1, Accuracy: 0.7}, {Method: "G", Rate: 0.5, Accuracy: 0.65}, {Method: "IG", Rate: 0.1}}
	for _, tc := range []struct {
		better Better
		wins   int
	}{{Lower, 1}, {Higher, 1}} {
		if wins, total := PostCount(plain, processed, tc.better); wins != tc.wins || total != 2 {
			t.Errorf("%s better: post count %d of %d, want %d of 2", tc.better, wins, total, tc.wins)
		}
	}
	if wins, _ := PostCount(plain, processed[:1], Higher); wins != 0 {
		t.Error("a lower accuracy counted as a win where higher is better")
	}
}

// checkDescribed checks that the protocol's Info describes every curve
// and scalar of its result, and the result has every metric described,
// with the same directions; that references between metrics resolve; and
// that there is one headline score.
func checkDescribed(t *testing.T, p Protocol, res Result) {
	t.Helper()
	info := p.Info()
	for _, c := range res.Curves {
		if _, ok := info.Curve(c.Name); !ok {
			t.Errorf("%s: curve %s is not described", info.Name, c.Name)
		}
	}
	for _, s := range res.Scalars {
		m, ok := info.Scalar(s.Name)
		if !ok || m.Better != s.Better {
			t.Errorf("%s: scalar %s (better %q) described as %+v (%v)", info.Name, s.Name, s.Better, m, ok)
		}
	}
	headlines := 0
	for _, m := range slices.Concat(info.Metrics, info.Curves) {
		if m.Headline {
			headlines++
		}
		if m.Doc == "" || m.Value.Title == "" {
			t.Errorf("%s: metric %s has no doc or axis title", info.Name, m.Name)
		}
		found := slices.ContainsFunc(res.Curves, func(c Curve) bool { return c.Name == m.Name })
		if m.Over == nil {
			_, found = res.Scalar(m.Name)
		}
		if !found && !m.Images { // image-only metrics: checked by TestDeletionWritesImageQualityForImagesOnly
			t.Errorf("%s: described metric %s (curve %v) is not in the result", info.Name, m.Name, m.Over != nil)
		}
		for _, ref := range []string{m.Of, m.MaskTV} {
			if _, ok := info.Curve(ref); ref != "" && !ok {
				t.Errorf("%s: metric %s refers to curve %s, which is not described", info.Name, m.Name, ref)
			}
		}
	}
	if headlines != 1 {
		t.Errorf("%s: %d headline scores, want 1", info.Name, headlines)
	}
	checkUnits(t, info, res)
}

// checkUnits checks that the headline has per-input values, that each
// kept series averages to its scalar, and that they survive JSON.
func checkUnits(t *testing.T, info Info, res Result) {
	t.Helper()
	if h, ok := info.Headline(); ok && res.Units.Of(h.Name) == nil {
		t.Errorf("%s: no per-input values for the headline %s", info.Name, h.Name)
	}
	for k, name := range res.Units.Names {
		var sum float64
		var n int
		for _, v := range res.Units.Values[k] {
			if !math.IsNaN(float64(v)) {
				sum, n = sum+float64(v), n+1
			}
		}
		got, _ := res.Scalar(name)
		if n > 0 && math.Abs(sum/float64(n)-got) > 1e-5*math.Max(1, math.Abs(got)) {
			t.Errorf("%s: %s's %d per-input values average %g, the scalar is %g", info.Name, name, n, sum/float64(n), got)
		}
	}
	b, err := json.Marshal(res.Units)
	if err != nil {
		t.Fatal(err)
	}
	var back Units
	if err := json.Unmarshal(b, &back); err != nil || back.N != res.Units.N || !slices.Equal(back.Names, res.Units.Names) {
		t.Fatalf("%s: units after JSON: %+v, %v", info.Name, back, err)
	}
	for k := range back.Values {
		for i, v := range back.Values[k] {
			if w := res.Units.Values[k][i]; v != w && !(v != v && w != w) {
				t.Fatalf("%s: %s input %d: %g after JSON, %g before", info.Name, back.Names[k], i, v, w)
			}
		}
		// On a grid, the values are its multiples: counts read back whole.
		num, den := back.Exact(back.Names[k])
		for i, c := range num {
			if v := float64(back.Values[k][i]); den > 1 && !math.IsNaN(c) && (c != math.Round(c) || math.Abs(c/den-v) > 1e-6) {
				t.Fatalf("%s: %s input %d: %g is not a multiple of 1/%g", info.Name, back.Names[k], i, v, den)
			}
		}
	}
}

// AUROC agrees with gonum's ROC curve integrated by the trapezoidal rule
// (which counts ties half as well) on scores with many ties.
func TestAUROCAgreesWithROC(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		pos, neg := make([]float64, 1+rng.IntN(300)), make([]float64, 1+rng.IntN(300))
		for i := range pos {
			pos[i] = math.Round(rng.NormFloat64()*4 + 2)
		}
		for i := range neg {
			neg[i] = math.Round(rng.NormFloat64() * 4)
		}
		y := append(slices.Clone(pos), neg...)
		classes := make([]bool, len(y))
		for i := range pos {
			classes[i] = true
		}
		stat.SortWeightedLabeled(y, classes, nil)
		tpr, fpr, _ := stat.ROC(nil, y, classes, nil)
		if got, want := AUROC(pos, neg), integrate.Trapezoidal(fpr, tpr); math.Abs(got-want) > 1e-12 {
			t.Errorf("%d positives, %d negatives: AUROC %g, ROC area %g", len(pos), len(neg), got, want)
		}
	}
}

func TestAgreementHandSolved(t *testing.T) {
	g := []float32{4, -3, 2, 1, 0}
	a := []float32{3, 4, -2, 0, 1} // by magnitude: features 1, 0, 2, 4, 3
	r, err := Agree(a, g, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Truth's top 2: {0, 1}; a's: {1, 0}. Both found (FA 1); feature 1's
	// sign differs (SA 1/2); no rank matches (RA 0, SRA 0); the one pair
	// is ordered oppositely (PRA 0).
	want := Agreement{K: 2, FA: 1, SA: 0.5, RA: 0, SRA: 0, PRA: 0}
	// a·g = 12 − 12 − 4 = −4 and |a|² = |g|² = 30.
	if math.Abs(r.Cos+4.0/30) > 1e-12 {
		t.Errorf("cos %g, want −4/30", r.Cos)
	}
	r.RC, r.Cos = 0, 0
	if r != want {
		t.Errorf("agreement %+v, want %+v", r, want)
	}
	same, _ := Agree(g, g, 3)
	if same.FA != 1 || same.RA != 1 || same.SA != 1 || same.SRA != 1 || same.PRA != 1 || math.Abs(same.RC-1) > 1e-12 {
		t.Errorf("self-agreement %+v", same)
	}
	if _, err := Agree(a, g[:3], 2); err == nil {
		t.Error("length mismatch accepted")
	}
}

func TestRetrainingsCountWhatTheProtocolsTrain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]any
		want   int
	}{
		{"roar", nil, 9},
		{"kar", map[string]any{"rates": []any{0.1, 0.5}}, 2},
		{"road", nil, 0},
		{"road", map[string]any{"retrain": true, "rates": []any{0.2, 0.4, 0.6}}, 6},
		{"evalx", nil, 1},
		{"deletion", nil, 0},
	} {
		p, err := New(tc.name, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		if got := RetrainingsOf(p); got != tc.want {
			t.Errorf("%s %v: %d retrainings, want %d", tc.name, tc.params, got, tc.want)
		}
	}
}

func TestChanceIsTheMostCommonClassShare(t *testing.T) {
	ds := &data.Dataset{Shape: []int{1, 1, 1}, X: make([]float32, 5), Y: []int{0, 2, 2, 1, 2}, Classes: []string{"a", "b", "c"}}
	if got := Chance(ds); got != 0.6 {
		t.Errorf("chance %g, want 3/5", got)
	}
	if got := Chance(nil); got != 0 {
		t.Errorf("chance of no set %g", got)
	}
}

// A table's columns are features: ROAR's and ROAD's removal axes say
// "pixels" on images and "features" on tables, IROF keeps its
// superpixels, and the description For rewords is left alone.
func TestInfoForTablesCountsFeatures(t *testing.T) {
	over := func(info Info, curve string) string {
		m, ok := info.Curve(curve)
		if !ok {
			t.Fatalf("%s has no curve %s", info.Name, curve)
		}
		return m.Over.Title
	}
	for _, tc := range []struct {
		p           Protocol
		curve, kind string
		want        string
	}{
		{ROAR{}, "accuracy", "image", "fraction of pixels removed"},
		{ROAR{}, "accuracy", "", "fraction of pixels removed"},
		{ROAR{}, "accuracy", "tabular", "fraction of features removed"},
		{ROAD{}, "accuracy_morf", "tabular", "fraction of features removed"},
		{ROAD{}, "mask_tv_lerf", "tabular", "fraction of features removed"},
		{IROF{}, "relative_probability", "tabular", "fraction of superpixels removed"},
	} {
		info := tc.p.Info()
		if got := over(info.For(tc.kind), tc.curve); got != tc.want {
			t.Errorf("%s %s on %q data: x axis %q, want %q", info.Name, tc.curve, tc.kind, got, tc.want)
		}
		if got, was := over(info, tc.curve), over(tc.p.Info(), tc.curve); got != was {
			t.Errorf("%s: For changed the description it was given (%q, was %q)", info.Name, got, was)
		}
	}
}
