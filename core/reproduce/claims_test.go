package reproduce

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/spec"
	"faithlab/core/store"
	"faithlab/resources"
)

// roarRec is a hand-made ROAR record: per-input correctness (1 right, 0
// wrong) behind its mean accuracy, and its accuracy and mask-TV curves at
// the rates.
func roarRec(method, post string, correct []float64, rates, acc, tv []float64) store.Record {
	var sum float64
	vals := make([]float32, len(correct))
	for i, c := range correct {
		sum += c
		vals[i] = float32(c)
	}
	mean := sum / float64(len(correct))
	res := &protocol.Result{Protocol: "ROAR", Method: method,
		Config: map[string]any{"keep": false, "rank": "magnitude", "rates": rates, "reference": "zero"},
		Curves: []protocol.Curve{
			{Name: "accuracy", X: rates, Y: acc},
			{Name: "mask_tv", X: rates, Y: tv},
		},
		Scalars: []protocol.Scalar{{Name: "mean_accuracy", Better: protocol.Lower, Value: mean}},
		Units:   protocol.Units{N: len(correct), Names: []string{"mean_accuracy"}, Values: [][]float32{vals}},
	}
	return store.Record{Task: method + "+" + post, Dataset: "toy", Method: method, Post: post, Protocol: "ROAR", Seed: 1, Result: res}
}

// correct is n inputs of which the first k are classified right.
func correct(n, k int) []float64 {
	v := make([]float64, n)
	for i := range k {
		v[i] = 1
	}
	return v
}

// lambdaRun is a ROAR run of v_λ for λ = 0, 0.5, 1 whose accuracies (right
// of 200) are ks.
func lambdaRun(ks ...int) []store.Record {
	var recs []store.Record
	for i, l := range []string{"0", "0.5", "1"} {
		a := float64(ks[i]) / 200
		recs = append(recs, roarRec("vlambda{lambda="+l+"}", "", correct(200, ks[i]), []float64{0.5}, []float64{a}, []float64{10}))
	}
	return recs
}

func decide(t *testing.T, recs []store.Record, c Check) Verdict {
	t.Helper()
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	vs := Evaluate([]Claim{{ID: "c", Quote: "q", Source: "s", Check: c}}, recs, report.Diagnose(recs))
	return vs[0]
}

func TestOrderVerdicts(t *testing.T) {
	inc := Check{Kind: "order", Setting: map[string]any{"protocol": "roar"}, Param: "lambda", Expect: "increasing"}
	flat := inc
	flat.Expect, flat.Within = "flat", 0.02
	for _, tc := range []struct {
		name string
		ks   []int
		c    Check
		want Outcome
	}{
		// ROAR: lower accuracy is better, so a score rising with λ is an accuracy falling with it.
		{"clearly ordered", []int{180, 100, 20}, inc, Holds},
		{"ordered within the noise", []int{102, 101, 100}, inc, Inconclusive},
		{"rising, then falling beyond the noise", []int{180, 20, 100}, inc, DoesNotHold},
		{"ordered the other way", []int{20, 100, 180}, inc, DoesNotHold},
		{"all the same", []int{150, 150, 150}, flat, Holds},
		{"apart but not ordered", []int{100, 180, 100}, flat, DoesNotHold}, // λ 0 and 1 alike, the middle far from both: not flat
		{"ordered, so not flat", []int{180, 100, 20}, flat, DoesNotHold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := decide(t, lambdaRun(tc.ks...), tc.c)
			if v.Outcome != tc.want {
				t.Errorf("%v: %s, want %s (%s)", tc.ks, v.Outcome, tc.want, v.Result)
			}
		})
	}
}

func TestVersusVerdicts(t *testing.T) {
	run := func(grad, ig, random int) []store.Record {
		return []store.Record{
			roarRec("gradient", "", correct(200, grad), []float64{0.5}, []float64{0}, []float64{1}),
			roarRec("ig", "", correct(200, ig), []float64{0.5}, []float64{0}, []float64{1}),
			roarRec("random", "", correct(200, random), []float64{0.5}, []float64{0}, []float64{1}),
		}
	}
	below := Check{Kind: "versus", Setting: map[string]any{"protocol": "roar"}, A: []string{"*"}, B: []string{"random"}, Expect: "below"}
	for _, tc := range []struct {
		name          string
		grad, ig, rnd int
		want          Outcome
		wantPairs     string
	}{
		{"every method below random", 190, 185, 100, Holds, "2 of 2"},
		{"one of two", 190, 101, 100, InPart, "1 of 2"},
		{"every method above random", 20, 30, 100, DoesNotHold, "0 of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := decide(t, run(tc.grad, tc.ig, tc.rnd), below)
			if v.Outcome != tc.want || v.Ours["pairs"] != tc.wantPairs {
				t.Errorf("%s with %s pairs, want %s with %s (%s)", v.Outcome, v.Ours["pairs"], tc.want, tc.wantPairs, v.Result)
			}
		})
	}
}

// A claim's pairs are the family its verdict is corrected over: one pair
// that its paired test tells apart (10 of 200 inputs differ, all one way:
// the exact sign-flip p is 2/2¹⁰ = 0.002) stays told apart beside eight
// other methods, whose 45 pairs Holm over the whole setting would
// multiply its p by 45.
func TestVersusCorrectsOverTheClaimsPairs(t *testing.T) {
	recs := []store.Record{roarRec("gradient", "", correct(200, 90), []float64{0.5}, []float64{0}, []float64{1})}
	for i := range 9 {
		recs = append(recs, roarRec(fmt.Sprintf("other%d", i), "", correct(200, 100), []float64{0.5}, []float64{0}, []float64{1}))
	}
	v := decide(t, recs, Check{Kind: "versus", Setting: map[string]any{"protocol": "roar"}, A: []string{"gradient"}, B: []string{"other0"}, Expect: "above"})
	if v.Outcome != Holds || !strings.Contains(v.Result, "(told apart as claimed)") {
		t.Errorf("%s: %s", v.Outcome, v.Result)
	}
}

// Expect near: A within ±Within of B, an equivalence: holds when the
// interval lies inside the margin, does not hold when it lies beyond it,
// inconclusive when it reaches across (gradient's accuracy less ig's, each
// right on its first k of 200 inputs).
func TestVersusNearVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		grad, ig int
		within   float64
		want     Outcome
	}{
		{"a difference of 0.01 within 0.05", 190, 188, 0.05, Holds},
		{"0.05 within 0.06, its interval not", 190, 180, 0.06, Inconclusive},
		{"0.2 beyond 0.05", 190, 150, 0.05, DoesNotHold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := []store.Record{
				roarRec("gradient", "", correct(200, tc.grad), []float64{0.5}, []float64{0}, []float64{1}),
				roarRec("ig", "", correct(200, tc.ig), []float64{0.5}, []float64{0}, []float64{1}),
			}
			c := Check{Kind: "versus", Setting: map[string]any{"protocol": "roar"}, A: []string{"gradient"}, B: []string{"ig"}, Expect: "near", Within: tc.within}
			if v := decide(t, recs, c); v.Outcome != tc.want {
				t.Errorf("%s, want %s (%s)", v.Outcome, tc.want, v.Result)
			}
		})
	}
	if err := (Check{Kind: "versus", Setting: map[string]any{"protocol": "roar"}, A: []string{"a"}, B: []string{"b"}, Expect: "near"}).validate(); err == nil {
		t.Error("near without within accepted")
	}
}

// TestPostCountsAndTVFit checks Table 2's count and Table 3's R² on
// curves solved by hand: three methods at two rates, the filtered maps'
// accuracy lower (better) at wins of the six points; for the fit, five
// attribution methods whose accuracy is exactly linear in TV at 0.1 and
// unrelated to it at 0.3, beside a control whose point would pull both
// fits if it entered them.
func TestPostCountsAndTVFit(t *testing.T) {
	rates := []float64{0.1, 0.3}
	type pt struct{ acc, tv []float64 }
	mk := func(methods map[string]pt, wins int) []store.Record {
		var recs []store.Record
		k := 0
		for _, m := range slices.Sorted(maps.Keys(methods)) {
			p := methods[m]
			recs = append(recs, roarRec(m, "square", correct(10, 5), rates, p.acc, p.tv))
			f := make([]float64, 2)
			for j := range f {
				f[j] = p.acc[j] + 0.05
				if k < wins {
					f[j] = p.acc[j] - 0.05
				}
				k++
			}
			recs = append(recs, roarRec(m, "square,gaussian:1", correct(10, 5), rates, f, []float64{5, 5}))
		}
		return recs
	}
	three := map[string]pt{"a": {[]float64{0.9, 0.8}, []float64{30, 10}}, "b": {[]float64{0.7, 0.6}, []float64{20, 20}}, "c": {[]float64{0.5, 0.7}, []float64{10, 30}}}
	post := Check{Kind: "post", Setting: map[string]any{"protocol": "roar"}, Plain: "square", Posts: []string{"square,gaussian:1"}, Curve: "accuracy"}
	// 6 of 6: Wilson [0.61, 1], a majority; 4 and 2 of 6 cannot tell one.
	for wins, want := range map[int]Outcome{6: Holds, 4: Inconclusive, 2: Inconclusive} {
		v := decide(t, mk(three, wins), post)
		if v.Outcome != want || v.Ours["count"] != fmt.Sprintf("%d/6", wins) {
			t.Errorf("%d wins: %s, %s; want %s", wins, v.Outcome, v.Ours["count"], want)
		}
	}
	// At 0.1 the accuracies 0.5 … 0.9 lie on a line in TV 10 … 50: R² 1.
	// At 0.3 (0.8, 0.6, 0.7, 0.6, 0.8 against 10 … 50) the covariance is
	// 0: R² 0. PixelRandom's speckle (TV 200, accuracy 0.1) is a control.
	five := map[string]pt{}
	for i, m := range []string{"a", "b", "c", "d", "e"} {
		five[m] = pt{[]float64{0.5 + 0.1*float64(i), []float64{0.8, 0.6, 0.7, 0.6, 0.8}[i]}, []float64{10 + 10*float64(i), 10 + 10*float64(i)}}
	}
	five["pixelrandom"] = pt{[]float64{0.1, 0.1}, []float64{200, 200}}
	tv1 := Check{Kind: "tv", Setting: map[string]any{"protocol": "roar"}, Plain: "square", Curve: "accuracy", MinR2: 0.5}
	v := decide(t, mk(five, 0), tv1)
	if !strings.HasPrefix(v.Ours["r2:0.1"], "1.00, slope +") || !strings.HasPrefix(v.Ours["r2:0.3"], "0.00, ") || v.Outcome != InPart || !strings.Contains(v.Result, "controls left out of the fit: pixelrandom") {
		t.Errorf("R² %q and %q, %s; want 1.00, 0.00, holds in part, pixelrandom left out (%s)", v.Ours["r2:0.1"], v.Ours["r2:0.3"], v.Outcome, v.Result)
	}
	// The same fit the other way round (smoother masks, worse accuracy)
	// is not the paper's association.
	for i, m := range []string{"a", "b", "c", "d", "e"} {
		five[m] = pt{five[m].acc, []float64{50 - 10*float64(i), 50 - 10*float64(i)}}
	}
	if v := decide(t, mk(five, 0), tv1); !strings.HasPrefix(v.Ours["r2:0.1"], "1.00, slope − (signed by the paper's direction: -1.00") || v.Outcome != DoesNotHold {
		t.Errorf("falling with TV: R² %q, %s; want 1.00 with a negative slope, does not hold", v.Ours["r2:0.1"], v.Outcome)
	}
}

// TestControlsNeverEnterAFit: three attribution methods and two
// controls make five points at a rate, but a fit over the methods has
// three: not evaluated, saying how many it needs.
func TestControlsNeverEnterAFit(t *testing.T) {
	rates := []float64{0.1}
	var recs []store.Record
	for i, m := range []string{"gradient", "gradxinput", "smoothgrad", "pixelrandom", "blockrandom{drop_rate=0.3}"} {
		recs = append(recs, roarRec(m, "square", correct(10, 5), rates, []float64{0.5 + 0.1*float64(i)}, []float64{10 + 10*float64(i)}))
	}
	v := decide(t, recs, Check{Kind: "tv", Setting: map[string]any{"protocol": "roar"}, Plain: "square", Curve: "accuracy", MinR2: 0.5})
	if v.Outcome != NotEvaluated || !strings.Contains(v.Result, "3 attribution methods") || !strings.Contains(v.Result, fmt.Sprintf("at least %d", MinFitMethods)) ||
		!strings.Contains(v.Result, "pixelrandom") || !strings.Contains(v.Result, "blockrandom") {
		t.Errorf("%s: %s", v.Outcome, v.Result)
	}
}

func TestMissingSettingIsNotEvaluated(t *testing.T) {
	v := decide(t, lambdaRun(1, 2, 3), Check{Kind: "order", Setting: map[string]any{"protocol": "goar"}, Param: "lambda", Expect: "increasing"})
	if v.Outcome != NotEvaluated || !strings.Contains(v.Result, "no results of goar") {
		t.Errorf("%s: %s", v.Outcome, v.Result)
	}
}

// TestEveryReproductionParses reads every embedded reproduction and parses
// each size's spec as the campaign runner would, beside the shipped model.
func TestEveryReproductionParses(t *testing.T) {
	all, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 3 {
		t.Fatalf("%d reproductions", len(all))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, resources.ModelName), resources.Model(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		for _, size := range Sizes {
			if _, err := spec.Parse(filepath.Join(dir, r.Name+"-"+size+".yaml"), []byte(r.Sizes[size].Spec)); err != nil {
				t.Errorf("%s %s: %v", r.Name, size, err)
			}
		}
	}
	if _, err := Get("no-such-paper"); err == nil || !strings.Contains(err.Error(), "goar-synthetic") {
		t.Errorf("unknown name: %v", err)
	}
}

// unitRec is a hand-made record of one scalar kept per input.
func unitRec(proto, method, metric string, better protocol.Better, vals []float64) store.Record {
	var sum float64
	v32 := make([]float32, len(vals))
	for i, x := range vals {
		sum += x
		v32[i] = float32(x)
	}
	res := &protocol.Result{Protocol: proto, Method: method, Config: map[string]any{},
		Scalars: []protocol.Scalar{{Name: metric, Better: better, Value: sum / float64(len(vals))}},
		Units:   protocol.Units{N: len(vals), Names: []string{metric}, Values: [][]float32{v32}}}
	return store.Record{Task: proto + method, Dataset: "toy", Method: method, Protocol: proto, Seed: 1, Result: res}
}

// TestTruthVerdicts: four methods whose agreement with the truth falls
// a, b, c, d; GOAR's area and Eval-X's accuracy (lower is better) follow
// it, ignore it or run against it, each input's value spread around the
// method's mean by draws of its own.
func TestTruthVerdicts(t *testing.T) {
	agree := map[string]float64{"a": 0.9, "b": 0.6, "c": 0.4, "d": 0.1}
	noisy := func(base float64, seed uint64) []float64 { // 60 inputs of mean base, spread ±0.5
		rng := rand.New(rand.NewPCG(seed, 1))
		v := make([]float64, 60)
		for i := 0; i < 60; i += 2 {
			d := 0.5 * rng.Float64()
			v[i], v[i+1] = base+d, base-d
		}
		return v
	}
	run := func(goar, evalx map[string]float64) []store.Record {
		var recs []store.Record
		for k, m := range []string{"a", "b", "c", "d"} {
			recs = append(recs,
				unitRec("GroundTruth", m, "fa", protocol.Higher, noisy(agree[m], uint64(k))),
				unitRec("GOAR", m, "area", protocol.Higher, noisy(goar[m], uint64(10+k))),
				unitRec("EvalX", m, "mean_accuracy", protocol.Lower, noisy(evalx[m], uint64(20+k))))
		}
		return recs
	}
	follows := agree                                                           // r = +1
	loosely := map[string]float64{"a": 0.9, "b": 0.4, "c": 0.6, "d": 0.1}      // r ≈ +0.8
	evalxFollows := map[string]float64{"a": 0.1, "b": 0.4, "c": 0.6, "d": 0.9} // low accuracy where agreement is high
	evalxNearly := map[string]float64{"a": 0.1, "b": 0.45, "c": 0.55, "d": 0.9}
	c := Check{Kind: "truth", Setting: map[string]any{"protocol": "goar"}, Others: []map[string]any{{"protocol": "evalx"}}, Truths: []string{"fa"}}
	for _, tc := range []struct {
		name        string
		goar, evalx map[string]float64
		want        Outcome
	}{
		{"GOAR follows, Eval-X runs against", follows, agree, Holds}, // high accuracy where agreement is high: r = −1
		{"GOAR follows, Eval-X nearly", follows, evalxNearly, Inconclusive},
		{"GOAR loosely, Eval-X follows", loosely, evalxFollows, DoesNotHold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := decide(t, run(tc.goar, tc.evalx), c)
			if v.Outcome != tc.want {
				t.Errorf("%s, want %s: %s", v.Outcome, tc.want, v.Result)
			}
		})
	}
}

// A claim that does not hold under a retraining protocol whose retrained
// models all learned says it checked them — where its records know
// chance, so that they could be checked; whether the protocol retrains is
// its kind, not whether its records carry the explained model's accuracy
// (every protocol's do).
func TestDoesNotHoldSaysTheRetrainedModelsWereChecked(t *testing.T) {
	inc := Check{Kind: "order", Setting: map[string]any{"protocol": "roar"}, Param: "lambda", Expect: "increasing"}
	recs := lambdaRun(40, 100, 180) // accuracies 0.2, 0.5, 0.9: above chance's 0.05 by more than the margin
	if v := decide(t, recs, inc); v.Outcome != DoesNotHold || strings.Contains(v.Result, "Checked:") {
		t.Errorf("chance unknown: %s: %s", v.Outcome, v.Result)
	}
	for _, r := range recs {
		r.Result.Chance = 0.05
	}
	if v := decide(t, recs, inc); v.Outcome != DoesNotHold || !strings.Contains(v.Result, "Checked: the setting's retrained models learned") {
		t.Errorf("chance known: %s: %s", v.Outcome, v.Result)
	}
}

// A claim about methods the ranking does not rank (no method's retrained
// models learned) says so instead of losing its pairs without a word.
func TestVersusNamesTheMethodsLeftOut(t *testing.T) {
	recs := []store.Record{
		roarRec("gradient", "", correct(200, 30), []float64{0.5}, []float64{0.14}, []float64{1}),
		roarRec("ig", "", correct(200, 28), []float64{0.5}, []float64{0.13}, []float64{1}),
		roarRec("random", "", correct(200, 24), []float64{0.5}, []float64{0.12}, []float64{1}),
	}
	for _, r := range recs {
		r.Result.Chance, r.Result.Base = 0.1, 0.95 // the best retrained model scored 0.14: none learned
	}
	below := Check{Kind: "versus", Setting: map[string]any{"protocol": "roar"}, A: []string{"*"}, B: []string{"random"}, Expect: "below"}
	v := decide(t, recs, below)
	if v.Outcome != NotEvaluated || !strings.Contains(v.Result, "Left out, as the ranking does not rank them") || !strings.Contains(v.Result, "random") {
		t.Errorf("%s: %s", v.Outcome, v.Result)
	}
}

// A paper's number for one method stands beside ours for that method —
// in the claim's setting, or in the setting the number names — and the
// check's pooled figure stands only beside a pooled number of the paper.
func TestPaperNumbersOfOneMethodShowThatMethod(t *testing.T) {
	var recs []store.Record
	for _, m := range []struct {
		name        string
		fud, delTau float64
	}{{"ig", 0.42, 0.36}, {"gradient", 0.29, 0.64}} {
		recs = append(recs, unitRec("FUD", m.name, "tau", protocol.Higher, []float64{m.fud - 0.01, m.fud + 0.01}),
			unitRec("Deletion", m.name, "tau_morf", protocol.Higher, []float64{m.delTau - 0.01, m.delTau + 0.01}))
	}
	c := Claim{ID: "c", Quote: "q", Source: "s",
		Check: Check{Kind: "scores", Setting: map[string]any{"protocol": "fud"}, Metric: "tau", Others: []map[string]any{{"protocol": "deletion"}}, MetricB: "tau_morf", Expect: "above"},
		Paper: []Number{{What: "FUD, mean", Value: "0.8", Key: "a"}, {What: "INS/DEL, mean", Value: "0.5", Key: "b"},
			{What: "FUD, IG", Value: "0.69", Method: "ig", Metric: "tau"},
			{What: "INS/DEL, IG", Value: "0.22", Method: "ig", Metric: "tau_morf", Setting: map[string]any{"protocol": "deletion"}}}}
	v := Evaluate([]Claim{c}, recs, report.Diagnose(recs))[0]
	for n, want := range map[int]string{0: "0.355", 1: "0.500", 2: "0.4200", 3: "0.3600"} {
		if got := v.Ours[numberKey(c.Paper[n])]; !strings.HasPrefix(got, want) {
			t.Errorf("%s: ours %q, want %s", c.Paper[n].What, got, want)
		}
	}
}

// Where every method scores the same, the order check says ρ is
// undefined (not "+0.00 [+0.00, +0.00]"), and a verdict in a setting the
// run's report card finds tells no two methods apart carries its words.
func TestFlatOnTiedScoresSaysRhoUndefinedAndTheCardsCaveat(t *testing.T) {
	c := Check{Kind: "order", Setting: map[string]any{"protocol": "roar"}, Param: "lambda", Expect: "flat", Within: 0.02}
	v := decide(t, lambdaRun(150, 150, 150), c)
	if v.Outcome != Holds || v.Ours["rho"] != "undefined: every lambda scores the same" || strings.Contains(v.Result, "+0.00 [+0.00, +0.00]") {
		t.Errorf("%s, ρ %q: %s", v.Outcome, v.Ours["rho"], v.Result)
	}
	if !strings.Contains(v.Result, "The run's report card finds every method scores 0.750, so it cannot tell them apart: the flatness claimed is here that setting's inability to tell any methods apart") {
		t.Errorf("no word from the card: %s", v.Result)
	}
	inc := c
	inc.Expect, inc.Within = "increasing", 0
	if v := decide(t, lambdaRun(150, 150, 150), inc); v.Outcome != Inconclusive || !strings.Contains(v.Result, "Caveat: the run's report card finds every method scores 0.750") {
		t.Errorf("an order claimed of a setting that cannot rank: %s, %s", v.Outcome, v.Result)
	}
	if v := decide(t, lambdaRun(180, 100, 20), c); strings.Contains(v.Result, "report card") || strings.Contains(v.Ours["rho"], "undefined") {
		t.Errorf("a setting that ranks: ρ %q, %s", v.Ours["rho"], v.Result)
	}
}

// A claim whose paper ran another variant of the protocol (ROAR with a
// mean fill, say) is not evaluated on a run of this one — never "does
// not hold" — and keeps what the run found for information.
func TestVariantDiffersIsNotEvaluated(t *testing.T) {
	recs := lambdaRun(20, 100, 180) // "reference": "zero"
	c := Claim{ID: "c", Quote: "q", Source: "s",
		Check:    Check{Kind: "order", Setting: map[string]any{"protocol": "roar"}, Param: "lambda", Expect: "increasing"},
		Variants: []Variant{{Params: map[string]any{"reference": "mean"}, Why: "§9: a mean fill"}}}
	v := Evaluate([]Claim{c}, recs, report.Diagnose(recs))[0]
	if v.Outcome != NotEvaluated || !strings.HasPrefix(v.Result, "variant differs: the paper's setting has reference=mean (§9: a mean fill)") ||
		!strings.Contains(v.Result, "for information only: Spearman") {
		t.Errorf("%s: %s", v.Outcome, v.Result)
	}
	c.Variants[0].Params = map[string]any{"reference": "zero"}
	if v := Evaluate([]Claim{c}, recs, report.Diagnose(recs))[0]; v.Outcome != DoesNotHold {
		t.Errorf("the paper's variant: %s, want does not hold: %s", v.Outcome, v.Result)
	}
}

// A verdict on a retraining protocol rests on its seeds: with fewer than
// MinSeeds it is provisional, and says so in its line; with MinSeeds it
// is not.
func TestOneRetrainingSeedIsProvisional(t *testing.T) {
	c := Check{Kind: "order", Setting: map[string]any{"protocol": "roar"}, Param: "lambda", Expect: "increasing"}
	v := decide(t, lambdaRun(180, 100, 20), c)
	if v.Outcome != Holds || !strings.Contains(v.Provisional, "1 retraining seed") || v.Line() != "c: holds (provisional)" {
		t.Errorf("one seed: %q, %q", v.Line(), v.Provisional)
	}
	var recs []store.Record
	for seed := uint64(1); seed <= MinSeeds; seed++ {
		for _, r := range lambdaRun(180, 100, 20) {
			r.Seed = seed
			recs = append(recs, r)
		}
	}
	if v := decide(t, recs, c); v.Outcome != Holds || v.Provisional != "" || v.Line() != "c: holds" {
		t.Errorf("%d seeds: %q, %q", MinSeeds, v.Line(), v.Provisional)
	}
}

// A flat verdict is an equivalence at the claim's margin: a setting where
// every input scores the same under every method (ROAR at 1.00
// everywhere) is inconclusive — it could separate nothing —, and so is one
// whose pairs' intervals reach past the margin (200 inputs), saying what
// would decide it; many inputs with no difference hold.
func TestFlatIsAnEquivalenceAtTheMargin(t *testing.T) {
	flat := Check{Kind: "order", Setting: map[string]any{"protocol": "roar"}, Param: "lambda", Expect: "flat", Within: 0.02}
	v := decide(t, lambdaRun(200, 200, 200), flat)
	if v.Outcome != Inconclusive || !strings.Contains(v.Result, "Inconclusive: every input scores 1 under every method") || v.Line() != "c: inconclusive (provisional)" {
		t.Errorf("saturated: %q: %s", v.Line(), v.Result)
	}
	// 200 inputs, accuracies 0.500, 0.510, 0.505: the pairs' intervals
	// are some 0.01–0.03 wide, across the margin of 0.02.
	v = decide(t, lambdaRun(100, 102, 101), flat)
	if v.Outcome != Inconclusive || !strings.Contains(v.Result, "Cannot tell at this size: this run could have found a departure from no difference of") || !strings.Contains(v.Result, "inputs would decide it") {
		t.Errorf("200 inputs: %q: %s", v.Line(), v.Result)
	}
	// The same accuracies on inputs whose correctness varies, but the
	// same under every λ, on 20 000 inputs: each pair's difference is 0
	// on every input, inside any margin.
	var recs []store.Record
	for _, l := range []string{"0", "0.5", "1"} {
		recs = append(recs, roarRec("vlambda{lambda="+l+"}", "", correct(20000, 10000), []float64{0.5}, []float64{0.5}, []float64{10}))
	}
	if v := decide(t, recs, flat); v.Outcome != Holds || !strings.Contains(v.Result, "3 of 3 pairs within ±0.02") {
		t.Errorf("identical maps: %q: %s", v.Line(), v.Result)
	}
	if err := (Check{Kind: "order", Setting: map[string]any{"protocol": "roar"}, Param: "lambda", Expect: "flat"}).validate(); err == nil {
		t.Error("flat without within accepted")
	}
}

// Versus flat: every pair of A's methods, none told apart.
func TestVersusFlatComparesTheMethodsWithEachOther(t *testing.T) {
	var recs []store.Record
	for i, m := range []string{"gradient", "ig", "smoothgrad", "random"} {
		recs = append(recs, roarRec(m, "", correct(400, []int{200, 201, 320, 200}[i]), []float64{0.5}, []float64{0.5}, []float64{10}))
	}
	c := Check{Kind: "versus", Setting: map[string]any{"protocol": "roar"}, A: []string{"*"}, Expect: "flat", Within: 0.02}
	v := decide(t, recs, c)
	// gradient, ig and smoothgrad (random is a control): smoothgrad lies
	// 0.3 from both others, beyond the margin (excluded); gradient and ig,
	// apart on 1 of 400 inputs, lie within it.
	if v.Outcome != DoesNotHold || v.Ours["pairs"] != "1 of 3" || !strings.Contains(v.Result, "2 excluded") {
		t.Errorf("%s, %s within: %s", v.Outcome, v.Ours["pairs"], v.Result)
	}
}

// REPORT.md counts the paper's claims apart from our extensions.
func TestExtensionsAreCountedApartFromThePapersClaims(t *testing.T) {
	recs := lambdaRun(20, 100, 180)
	claims := []Claim{
		{ID: "paper-claim", Quote: "q", Source: "s", Check: Check{Kind: "order", Setting: map[string]any{"protocol": "roar"}, Param: "lambda", Expect: "increasing"}},
		{ID: "our-claim", Quote: "q", Source: "s", Extension: "asked of the mixture; the paper shows it on images", Check: Check{Kind: "order", Setting: map[string]any{"protocol": "roar"}, Param: "lambda", Expect: "flat", Within: 0.02}},
	}
	vs := Evaluate(claims, recs, report.Diagnose(recs))
	md := Markdown(&Reproduction{Name: "x", Title: "t", Paper: "p", Sizes: map[string]Size{"quick": {Scaled: "s"}}}, RunInfo{Size: "quick"}, vs)
	for _, want := range []string{
		"The paper's claims: 1, of which 1 does not hold; 1 provisional",
		"Our extensions — the paper's words asked of a setting the paper did not run them on, kept out of the count above: 1, of which 1 does not hold",
		"Our extension, not the paper's claim: asked of the mixture",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("REPORT.md lacks %q:\n%s", want, md)
		}
	}
	if vs[1].Line() != "our-claim: does not hold (provisional) [our extension]" {
		t.Errorf("line %q", vs[1].Line())
	}
}

// truthRun is TestTruthVerdicts' run: per method, its agreement with the
// truth and GOAR's and Eval-X's scores, each input spread around them.
func truthRun(agree, goar, evalx map[string]float64) []store.Record {
	noisy := func(base float64, seed uint64) []float64 {
		rng := rand.New(rand.NewPCG(seed, 1))
		v := make([]float64, 60)
		for i := 0; i < 60; i += 2 {
			d := 0.5 * rng.Float64()
			v[i], v[i+1] = base+d, base-d
		}
		return v
	}
	var recs []store.Record
	for k, m := range slices.Sorted(maps.Keys(agree)) {
		k := uint64(k)
		if strings.HasSuffix(m, "-twin") { // the same attribution as its namesake: the same values everywhere
			k = uint64(slices.Index(slices.Sorted(maps.Keys(agree)), strings.TrimSuffix(m, "-twin")))
		}
		recs = append(recs,
			unitRec("GroundTruth", m, "fa", protocol.Higher, noisy(agree[m], k)),
			unitRec("GOAR", m, "area", protocol.Higher, noisy(goar[m], 10+k)),
			unitRec("EvalX", m, "mean_accuracy", protocol.Lower, noisy(evalx[m], 20+k)))
	}
	return recs
}

// Two methods with the same values in every setting and truth measure
// are one attribution: a correlation across methods counts it once, and
// the verdict names them.
func TestTruthCountsEachAttributionOnce(t *testing.T) {
	agree := map[string]float64{"a": 0.9, "a-twin": 0.9, "b": 0.6, "c": 0.4, "d": 0.1}
	recs := truthRun(agree, agree, map[string]float64{"a": 0.9, "a-twin": 0.9, "b": 0.6, "c": 0.4, "d": 0.1})
	v := decide(t, recs, Check{Kind: "truth", Setting: map[string]any{"protocol": "goar"}, Others: []map[string]any{{"protocol": "evalx"}}, Truths: []string{"fa"}})
	if v.Ours["distinct"] != "4" || !strings.Contains(v.Result, "across 4 distinct attributions (the same attribution: a = a-twin)") {
		t.Errorf("distinct %q: %s", v.Ours["distinct"], v.Result)
	}
	// Three distinct attributions among four methods, two of them one.
	delete(agree, "c")
	recs = truthRun(agree, agree, agree)
	v = decide(t, recs, Check{Kind: "truth", Setting: map[string]any{"protocol": "goar"}, Others: []map[string]any{{"protocol": "evalx"}}, Truths: []string{"fa"}})
	if v.Ours["distinct"] != "3" {
		t.Errorf("distinct %q: %s", v.Ours["distinct"], v.Result)
	}
}

// GOAR Table 1's other half: the pixel-perturbation benchmarks' weak or
// negative correlations with the truth.
func TestTruthLowCorrelation(t *testing.T) {
	agree := map[string]float64{"a": 0.9, "b": 0.6, "c": 0.4, "d": 0.1}
	low := Check{Kind: "truth", Setting: map[string]any{"protocol": "evalx"}, Truths: []string{"fa"}, Expect: "low", Within: 0.5}
	// Eval-X's accuracy, lower is better, high where agreement is high:
	// its "performance drop" runs against the truth, r = −1.
	v := decide(t, truthRun(agree, agree, agree), low)
	if v.Outcome != Holds || v.Ours["negative"] != "1" || v.Ours["r:evalx:fa"] != "-1.00" {
		t.Errorf("against the truth: %s (%v): %s", v.Outcome, v.Ours, v.Result)
	}
	if h := headline(v); h != "r below 0.5 in 1 of 1 measures beyond the noise; 1 negative" {
		t.Errorf("the verdict table's figure: %q", h)
	}
	// Eval-X following the truth: not low.
	v = decide(t, truthRun(agree, agree, map[string]float64{"a": 0.1, "b": 0.4, "c": 0.6, "d": 0.9}), low)
	if v.Outcome != DoesNotHold {
		t.Errorf("following the truth: %s: %s", v.Outcome, v.Result)
	}
}

// settingRec is roarRec under another fill: another setting of ROAR.
func settingRec(method, reference string, correctOf []float64) store.Record {
	r := roarRec(method, "", correctOf, []float64{0.5}, []float64{0.5}, []float64{10})
	r.Result.Config["reference"] = reference
	r.Task += reference
	return r
}

// across compares a method with itself (or another) in two settings
// input by input: Random under the zero fill loses accuracy that the
// mean fill keeps.
func TestAcrossComparesSettingsInputByInput(t *testing.T) {
	recs := []store.Record{
		settingRec("random", "zero", correct(300, 90)), settingRec("random", "mean", correct(300, 210)),
		settingRec("gradient", "zero", correct(300, 150)), settingRec("gradient", "mean", correct(300, 152)),
	}
	c := Check{Kind: "across", Setting: map[string]any{"protocol": "roar", "reference": "zero"}, Others: []map[string]any{{"protocol": "roar", "reference": "mean"}},
		Metric: "mean_accuracy", A: []string{"random"}, Expect: "below"}
	if v := decide(t, recs, c); v.Outcome != Holds || v.Ours["pairs"] != "1 of 1" || !strings.Contains(v.Result, "random under ROAR − random under ROAR (reference=mean): -0.400") {
		t.Errorf("%s: %s", v.Outcome, v.Result)
	}
	c.A = []string{"random", "gradient"}
	if v := decide(t, recs, c); v.Outcome != InPart {
		t.Errorf("one pair of two: %s: %s", v.Outcome, v.Result)
	}
	c.A, c.Expect, c.Within = []string{"gradient"}, "near", 0.05
	if v := decide(t, recs, c); v.Outcome != Holds {
		t.Errorf("near: %s: %s", v.Outcome, v.Result)
	}
}

// reorders: two settings rank two methods in opposite orders, each beyond
// its noise — or only within it, or alike.
func TestReordersNamesPairsInOppositeOrders(t *testing.T) {
	run := func(zeroA, zeroB, meanA, meanB int) []store.Record {
		return []store.Record{
			settingRec("a", "zero", correct(400, zeroA)), settingRec("b", "zero", correct(400, zeroB)),
			settingRec("a", "mean", correct(400, meanA)), settingRec("b", "mean", correct(400, meanB)),
		}
	}
	c := Check{Kind: "reorders", Setting: map[string]any{"protocol": "roar", "reference": "zero"}, Others: []map[string]any{{"protocol": "roar", "reference": "mean"}}}
	for _, tc := range []struct {
		name string
		recs []store.Record
		want Outcome
	}{
		{"flipped beyond the noise", run(100, 300, 300, 100), Holds},
		{"flipped within the noise", run(100, 300, 201, 200), Inconclusive},
		{"alike", run(100, 300, 100, 300), DoesNotHold},
	} {
		if v := decide(t, tc.recs, c); v.Outcome != tc.want {
			t.Errorf("%s: %s, want %s: %s", tc.name, v.Outcome, tc.want, v.Result)
		}
	}
}

// DPI Fig. 6: the filtered maps' masks are smoother — lower total
// variation — than the plain ones'.
func TestPostLowerCountsTheMasksTotalVariation(t *testing.T) {
	rates := []float64{0.1, 0.3}
	var recs []store.Record
	for _, m := range []string{"a", "b"} {
		recs = append(recs,
			roarRec(m, "square", correct(10, 5), rates, []float64{0.5, 0.5}, []float64{30, 30}),
			roarRec(m, "square,gaussian:1", correct(10, 5), rates, []float64{0.6, 0.6}, []float64{10, 40}))
	}
	c := Check{Kind: "post", Setting: map[string]any{"protocol": "roar"}, Plain: "square", Posts: []string{"square,gaussian:1"}, Curve: "accuracy", Expect: "lower"}
	v := decide(t, recs, c)
	if v.Ours["count"] != "2/4" || v.Outcome != Inconclusive || !strings.Contains(v.Result, "lower total variation than the plain ones' in 2 of 4") {
		t.Errorf("%s %s: %s", v.Outcome, v.Ours["count"], v.Result)
	}
}

// The positive control of a flat verdict: a setting whose removals never
// moved its models' accuracy from the explained model's is inconclusive,
// however finely its paired tests resolve; one that moved it is decided.
func TestFlatWithoutResponseToRemovalIsInconclusive(t *testing.T) {
	flat := Check{Kind: "order", Setting: map[string]any{"protocol": "roar"}, Param: "lambda", Expect: "flat", Within: 0.02}
	var recs []store.Record
	for _, l := range []string{"0", "0.5", "1"} {
		r := roarRec("vlambda{lambda="+l+"}", "", correct(20000, 19990), []float64{0.5, 0.9}, []float64{0.9995, 0.9995}, []float64{10, 10})
		r.Result.Base = 1
		recs = append(recs, r)
	}
	v := decide(t, recs, flat)
	if v.Outcome != Inconclusive || !strings.Contains(v.Result, "Inconclusive: removing up to the largest rate of the features moved no retrained model's accuracy further than 0.0005 from the explained model's 1.000") {
		t.Errorf("no response: %q: %s", v.Line(), v.Result)
	}
	for _, r := range recs {
		r.Result.Base = 0.9
	}
	if v := decide(t, recs, flat); v.Outcome != Holds {
		t.Errorf("a response of 0.1: %q: %s", v.Line(), v.Result)
	}
}
