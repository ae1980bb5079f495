package reproduce

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"faithlab/core/attr"
	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// Outcome is a claim's verdict.
type Outcome string

// The verdicts: holds, does not hold (only where the evidence excludes
// the claim), inconclusive (it neither confirms nor excludes it), not
// evaluated (the run has no results for it); holds in part only for a
// claim made of parts, some of which hold (decide).
const (
	Holds        Outcome = "holds"
	InPart       Outcome = "holds in part"
	DoesNotHold  Outcome = "does not hold"
	Inconclusive Outcome = "inconclusive"
	NotEvaluated Outcome = "not evaluated"
)

// Check says how a claim is decided on a run: the run's statistics for
// the claim's parts, each judged (decide) as directional — the claim says
// it lies above a bound — or as equivalence — within ±Within of zero, the
// margin the claim states —, and combined as the claim's words say. Kind
// is one of:
//
//   - order: Spearman's ρ between the methods' parameter Param (v_λ's
//     lambda) and the setting's headline score oriented so that higher is
//     better, with a bootstrap interval over the test inputs (all methods
//     resampled on the same inputs). Expect increasing: holds when ρ's
//     interval lies above 0 and no two methods the paired test tells apart
//     score against their parameters' order; does not hold when the
//     interval lies below 0 or some pair is told apart against the order
//     (a peak in the middle is no order); inconclusive otherwise. Expect
//     flat ("blind to λ"): every pair of the methods equivalent within
//     ±Within.
//   - versus: every method of A against every method of B under the
//     setting's headline score (or Metric), by the run's paired tests
//     (Holm over the claim's pairs, 5 %). Expect above (A better) or
//     below (A worse): each pair holds when told apart as claimed and is
//     excluded when told apart the other way; every pair must hold. "*" in
//     A stands for every method that is not a random control. Expect near
//     (A within Within of B: TRACE Fig. 2(a)'s "almost negligible") and
//     flat (A's methods against each other: GOAR §6.2's "minimal
//     differences"): every pair equivalent within ±Within — its interval
//     inside the margin; excluded when wholly beyond it.
//   - post: the DPI paper's Table 2 — for each of Posts, over the (method,
//     rate) points of its maps and of the Plain maps, the share of
//     comparisons in which the post-processed maps reach the better Curve
//     value, with its 95 % Wilson interval, above one half, every post.
//   - tv: the DPI paper's Table 3 — R² of Curve on the masks' total
//     variation over the Plain maps at each rate, signed by the slope (the
//     paper's direction: smoother masks, better score), with a bootstrap
//     interval over the methods, reaching MinR2 at every rate.
//   - truth: GOAR's Table 1 — Pearson's r across the methods between each
//     setting's headline score, oriented so that higher is better, and
//     each ground-truth agreement measure of Truths (the GroundTruth
//     protocol's FA … RC); the Setting's r less each of Others' r, with a
//     bootstrap interval over the inputs, above 0 in "almost all cases"
//     (almostAll of the comparisons). Expect low: the Setting's r below
//     Within for almostAll of the measures.
//   - scores: the Setting's Metric against the MetricB of Others[0], a
//     method at a time (their mean over seeds), for measures of a
//     protocol rather than of a method (FUD's Tables 2 to 4): the mean
//     difference over the methods both ran, with a bootstrap interval over
//     the methods, below or above 0.
//   - across: method A[i] under the Setting against B[i] (A[i] itself
//     where B is empty) under Others[0] — the same method in two
//     settings, say pixels against patches (TRACE §5.2) — by Metric in
//     the setting and MetricB (default Metric) in the other, paired over
//     the inputs both evaluated: as versus, above, below or near.
//   - reorders: whether the Setting ranks the methods it shares with
//     Others[0] in another order (FUD Table 7): holds when some pair is
//     told apart by both rankings in opposite orders; does not hold when
//     every pair both rankings tell apart is in the same order and no pair
//     is left undecided.
//
// An equivalence verdict also needs a setting that responds at all: where
// removing up to its largest rate of the features moved no model's
// accuracy further than Within from the explained model's, or every method
// scores the same on every input, it could have separated nothing, and
// the verdict is inconclusive, saying so (the positive control).
//
// Each claim's PaperValues are its rule's test: the rule applied to the
// paper's own numbers must find that the claim holds
// (TestEveryRuleHoldsOnThePapersOwnNumbers).
type Check struct {
	Kind    string           `yaml:"kind"`
	Setting map[string]any   `yaml:"setting"` // protocol: NAME, and the parameters its configuration must have
	Param   string           `yaml:"param"`
	Expect  string           `yaml:"expect"`
	A       []string         `yaml:"a"`
	B       []string         `yaml:"b"`
	Plain   string           `yaml:"plain"` // the post-processing methods are named under ("": none)
	Posts   []string         `yaml:"posts"`
	Curve   string           `yaml:"curve"`
	MinR2   float64          `yaml:"min_r2"`
	Metric  string           `yaml:"metric"`   // versus: a score other than the headline
	Others  []map[string]any `yaml:"others"`   // truth: the settings the Setting is set against
	Truths  []string         `yaml:"truths"`   // truth: the ground-truth agreement measures
	MetricB string           `yaml:"metric_b"` // scores: the score of Others[0] set against Metric
	Within  float64          `yaml:"within"`   // near, flat: the largest difference that counts as none
}

func (c Check) validate() error {
	if _, ok := c.Setting["protocol"].(string); !ok {
		return fmt.Errorf("check needs setting: {protocol: NAME, …}")
	}
	want := map[string][]string{"order": {"increasing", "flat"}, "versus": {"above", "below", "near", "flat"}, "post": {"", "lower"}, "tv": {""}, "truth": {"", "low"},
		"scores": {"above", "below"}, "across": {"above", "below", "near"}, "reorders": {""}}
	exp, ok := want[c.Kind]
	switch {
	case !ok:
		return fmt.Errorf("unknown check %q (order, versus, post, tv, truth, scores, across, reorders)", c.Kind)
	case !slices.Contains(exp, c.Expect):
		return fmt.Errorf("check %s: expect %q: want one of %q", c.Kind, c.Expect, exp)
	case c.Kind == "order" && c.Param == "":
		return fmt.Errorf("check order needs param")
	case c.Kind == "versus" && (len(c.A) == 0 || (len(c.B) == 0) != (c.Expect == "flat")):
		return fmt.Errorf("check versus needs a and b (expect flat: a alone, its methods against each other)")
	case (c.Expect == "near" || c.Expect == "flat" || c.Expect == "low") != (c.Within > 0):
		return fmt.Errorf("check %s: within (> 0) goes with expect near, flat or low, and only with them", c.Kind)
	case c.Kind == "post" && (len(c.Posts) == 0 || c.Curve == ""):
		return fmt.Errorf("check post needs posts and curve")
	case c.Kind == "tv" && (c.Curve == "" || !(c.MinR2 > 0 && c.MinR2 < 1)):
		return fmt.Errorf("check tv needs curve and min_r2 in (0, 1)")
	case c.Kind == "scores" && (len(c.Others) != 1 || c.Metric == "" || c.MetricB == ""):
		return fmt.Errorf("check scores needs metric, one of others and metric_b")
	case c.Kind == "truth" && (len(c.Truths) == 0 || (len(c.Others) == 0) != (c.Expect == "low")):
		return fmt.Errorf("check truth needs truths, and others unless it expects low")
	case c.Kind == "truth" && c.Expect == "low" && !(c.Within > 0 && c.Within < 1):
		return fmt.Errorf("check truth expect low needs within in (0, 1): the correlation that counts as low")
	case c.Kind == "across" && (len(c.Others) != 1 || c.Metric == "" || len(c.A) == 0 || (len(c.B) != 0 && len(c.B) != len(c.A))):
		return fmt.Errorf("check across needs one of others, metric and a (and b as long as a, or none)")
	case c.Kind == "reorders" && len(c.Others) != 1:
		return fmt.Errorf("check reorders needs one of others")
	}
	return nil
}

// Verdict is a claim decided on a run.
type Verdict struct {
	Claim   Claim
	Outcome Outcome
	Setting string            // the protocol setting, as the run's report names it
	Result  string            // our result in words, with the interval behind the verdict
	Rule    string            // the rule that decided it
	Ours    map[string]string // the check's figures by key, for the paper's numbers
	// Provisional says why the verdict may not survive another run (one
	// retraining seed: a retrained model's accuracy moves with its seed
	// by about what these claims turn on); "" for none.
	Provisional string
	Seeds       int // the setting's seeds, for a retraining protocol's
}

// MinSeeds is how many retraining seeds a verdict on a retraining
// protocol's setting rests on before it is more than provisional.
const MinSeeds = 3

// Line is the verdict as one line: the claim, its outcome, and whether it
// is provisional or our extension (what `reproduce` prints and the
// recorded verdict files hold).
func (v Verdict) Line() string {
	s := v.Claim.ID + ": " + string(v.Outcome)
	if v.Provisional != "" {
		s += " (provisional)"
	}
	if v.Claim.Extension != "" {
		s += " [our extension]"
	}
	return s
}

// Evaluate decides each claim on a run's finished records and their
// diagnostics.
func Evaluate(claims []Claim, recs []store.Record, d report.Diagnostics) []Verdict {
	e := evaluator{recs: recs, conf: d.Confidence, setting: report.SettingOf(recs)}
	out := make([]Verdict, len(claims))
	for i, c := range claims {
		v := Verdict{Claim: c, Ours: map[string]string{}}
		sel, err := e.selectSetting(c.Check.Setting)
		if err != nil {
			v.Outcome, v.Result = NotEvaluated, err.Error()
		} else {
			v.Setting = sel.title
			switch c.Check.Kind {
			case "order":
				e.order(c.Check, sel, &v)
			case "versus":
				e.versus(c.Check, sel, &v)
			case "post":
				e.post(c.Check, sel, &v)
			case "tv":
				e.tv(c.Check, sel, &v)
			case "truth":
				e.truth(c.Check, sel, &v)
			case "scores":
				e.scores(c.Check, sel, &v)
			case "across":
				e.across(c.Check, sel, &v)
			case "reorders":
				e.reorders(c.Check, sel, &v)
			}
		}
		e.numbers(c, sel, &v)
		if err == nil && v.Outcome != NotEvaluated {
			e.variant(c, sel, &v)
		}
		if err == nil && v.Outcome != NotEvaluated {
			v.Provisional, v.Seeds = provisional(sel)
		}
		n := weakRuns(d.Weak, sel)
		switch {
		case n > 0 && v.Outcome != NotEvaluated:
			v.Result += fmt.Sprintf(" Warning: no method's retrained models learned in this setting (%s, each nearer chance than the explained model): its scores, and this verdict, say little.", report.Count(n, "run"))
		case v.Outcome == DoesNotHold && retrains(sel):
			v.Result += " Checked: the setting's retrained models learned (not all stayed nearer chance than the explained model), so the verdict is not one of models that learned nothing."
		}
		if row, ok := cardRow(d.Confidence.Card, sel); ok && n == 0 && v.Outcome != NotEvaluated && ranksBy(c.Check) && row.Separation.Value == 0 {
			// The setting tells no two methods apart (the card's separation,
			// not its other checks: a claim may be that a protocol fails those).
			if c.Check.Expect == "flat" {
				v.Result += " The run's report card finds " + row.Separation.Short + ": the flatness claimed is here that setting's inability to tell any methods apart."
			} else {
				v.Result += " Caveat: the run's report card finds " + row.Separation.Short + ", so this verdict rests on scores that setting cannot tell apart."
			}
		}
		out[i] = v
	}
	return out
}

// variant makes a verdict on a setting that lacks one of the paper's
// protocol variants not evaluated, keeping what the run found for
// information.
func (e evaluator) variant(c Claim, s selected, v *Verdict) {
	for _, va := range c.Variants {
		in := s
		if va.Setting != nil {
			sel := maps.Clone(va.Setting)
			if _, ok := sel["dataset"]; !ok {
				sel["dataset"] = s.dataset
			}
			var err error
			if in, err = e.selectSetting(sel); err != nil {
				v.Outcome, v.Result = NotEvaluated, err.Error()
				return
			}
		}
		for _, r := range in.recs {
			if !configHas(r.Result.Config, va.Params) {
				v.Outcome = NotEvaluated
				v.Result = fmt.Sprintf("variant differs: the paper's setting has %s (%s); this run's is %s, so it tests something the paper did not. What it found, for information only: %s",
					describeParams(va.Params), oneLine(va.Why), in.title, v.Result)
				v.Rule = "a verdict needs the paper's own protocol variant"
				return
			}
		}
	}
}

// provisional says why a verdict on a retraining protocol's setting with
// fewer than MinSeeds seeds is provisional ("" where it is not).
func provisional(s selected) (string, int) {
	if !retrainsAny(s) {
		return "", 0
	}
	seeds := map[uint64]bool{}
	for _, r := range s.recs {
		seeds[r.Seed] = true
	}
	if len(seeds) >= MinSeeds {
		return "", len(seeds)
	}
	return fmt.Sprintf("%s retrains models, and this verdict rests on %s: a retrained model's accuracy moves with its seed, so another seed may move it (%d seeds make it firm)",
		s.title, report.Count(len(seeds), "retraining seed"), MinSeeds), len(seeds)
}

// retrainsAny says whether the setting's protocol trains models of its
// own (ROAR, GOAR; ROAD only with retrain).
func retrainsAny(s selected) bool {
	for _, r := range s.recs {
		if p, err := protocol.New(r.Protocol, r.Result.Config); err == nil && protocol.RetrainingsOf(p) > 0 {
			return true
		}
	}
	return false
}

// ranksBy says whether a check decides on its setting's ranking of the
// methods by the headline score — what the report card judges — rather
// than on other scores (a check of scores, post-processing or mask TV).
func ranksBy(c Check) bool {
	return c.Kind == "order" || c.Kind == "versus" && c.Metric == ""
}

// cardRow is the report card's row of the setting.
func cardRow(card []report.CardRow, s selected) (report.CardRow, bool) {
	for _, row := range card {
		if row.Dataset == s.dataset && row.Protocol == s.title {
			return row, true
		}
	}
	return report.CardRow{}, false
}

// weakRuns counts the setting's (method, curve) runs whose retrained
// models learned little (report.Weak).
func weakRuns(ws []report.Weak, s selected) int {
	n := 0
	for _, w := range ws {
		if w.Dataset == s.dataset && w.Protocol == s.title {
			n++
		}
	}
	return n
}

// retrains says whether the setting's protocol retrains models and its
// records let report.Weak check them (they know chance).
func retrains(s selected) bool {
	for _, r := range s.recs {
		if p, err := protocol.New(r.Protocol, r.Result.Config); err == nil && p.Info().Category == "retrain" && r.Result.Chance > 0 {
			return true
		}
	}
	return false
}

type evaluator struct {
	recs    []store.Record
	conf    report.Confidence
	setting func(store.Record) string
}

// selected is one protocol setting's records on one dataset.
type selected struct {
	dataset, title string
	recs           []store.Record
}

// selectSetting finds the one setting whose records match sel: the
// protocol's name and each parameter's value in the records' configuration.
func (e evaluator) selectSetting(sel map[string]any) (selected, error) {
	name, _ := sel["protocol"].(string)
	var s selected
	for _, r := range e.recs {
		if ds, ok := sel["dataset"].(string); ok && r.Dataset != ds {
			continue
		}
		if r.Result == nil || !strings.EqualFold(r.Protocol, name) || !configHas(r.Result.Config, sel) {
			continue
		}
		key := r.Dataset + "\x00" + e.setting(r)
		if s.recs != nil && key != s.dataset+"\x00"+s.title {
			return s, fmt.Errorf("the run has more than one setting matching %v (%s and %s): the claim must say which", sel, s.title, e.setting(r))
		}
		s.dataset, s.title = r.Dataset, e.setting(r)
		s.recs = append(s.recs, r)
	}
	if s.recs == nil {
		return s, fmt.Errorf("the run has no results of %s", describeSel(sel))
	}
	return s, nil
}

func configHas(cfg map[string]any, sel map[string]any) bool {
	for k, want := range sel {
		if k == "protocol" || k == "dataset" {
			continue
		}
		got, ok := cfg[k]
		if !ok {
			if want == false {
				continue
			}
			return false
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return false
		}
	}
	return true
}

func describeSel(sel map[string]any) string {
	name := fmt.Sprint(sel["protocol"])
	rest := maps.Clone(sel)
	delete(rest, "protocol")
	if len(rest) == 0 {
		return name
	}
	return name + " (" + describeParams(rest) + ")"
}

// describeParams words parameters as k=v, by key.
func describeParams(ps map[string]any) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ps)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, ps[k]))
	}
	return strings.Join(parts, ", ")
}

// ranking is the setting's ranking, or a verdict of not evaluated.
func (e evaluator) ranking(s selected, v *Verdict) (report.Ranking, bool) {
	r, ok := e.conf.Ranking(s.dataset, s.title)
	if !ok {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s keeps no per-input values of a headline score to rank by", s.title)
	}
	return r, ok
}

// labelParts splits a method label ("vlambda{lambda=0.5}+square") into
// its name, parameters and post-processing.
func labelParts(label string) (name string, params map[string]string, post string) {
	rest := label
	params = map[string]string{}
	if i := strings.Index(label, "{"); i >= 0 {
		if j := strings.LastIndex(label, "}"); j > i {
			for _, kv := range strings.Split(label[i+1:j], ",") {
				k, val, _ := strings.Cut(kv, "=")
				params[k] = val
			}
			rest = label[:i] + label[j+1:]
		}
	}
	name, post, _ = strings.Cut(rest, "+")
	return name, params, post
}

// matches says whether the claim's method name names the label: NAME, or
// NAME{K=V,…} for a label with those parameters among its own, either with
// +POST; without it the label's post-processing must be plain.
func matches(claimName, label, plain string) bool {
	name, params, post := labelParts(label)
	want, wantParams, wantPost := labelParts(claimName)
	if !strings.Contains(claimName, "+") {
		wantPost = plain
	}
	for k, v := range wantParams { // the parameters the claim names, whatever others the label has
		if params[k] != v {
			return false
		}
	}
	return name == want && post == wantPost
}

// isControl says whether a label's method is a control — attr's category
// of baselines that ignore the model (Random, PixelRandom, BlockRandom,
// Sobel, v_λ) — rather than an attribution method.
func isControl(label string) bool {
	name, _, _ := labelParts(label)
	for _, e := range attr.Entries() {
		if e.Info.Name == name {
			return e.Info.Category == attr.CategoryControl
		}
	}
	return strings.Contains(name, "random")
}

func oriented(x float64, b protocol.Better) float64 {
	if b == protocol.Lower {
		return -x
	}
	return x
}

// bootSeed seeds a check's own bootstrap from what it measures, as the
// report's intervals are seeded.
func bootSeed(parts ...string) uint64 {
	var h uint64 = 14695981039346656037
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h = (h ^ uint64(p[i])) * 1099511628211
		}
		h = (h ^ 0) * 1099511628211
	}
	return h
}

// spearman0 is Spearman's ρ, 0 where a side is constant (no order at all).
func spearman0(x, y []float64) float64 {
	r := stats.Spearman(x, y)
	if math.IsNaN(r) {
		return 0
	}
	return r
}

// percentileCI is the 95 % percentile interval of replicates.
func percentileCI(reps []float64) (lo, hi float64) {
	reps = slices.DeleteFunc(slices.Clone(reps), math.IsNaN)
	if len(reps) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(reps)
	at := func(p float64) float64 { return reps[min(len(reps)-1, int(math.Floor(p*float64(len(reps)-1)+0.5)))] }
	return at(0.025), at(0.975)
}

// ciText writes an interval as the report does, flagged where its inputs
// are too few for it (report.FewInputs).
func ciText(iv stats.Interval) string {
	if math.IsNaN(iv.Lo) {
		return fmt.Sprintf("%.3f", iv.Estimate)
	}
	if iv.Few {
		return fmt.Sprintf("%.3f [%.3f, %.3f] (%s)", iv.Estimate, iv.Lo, iv.Hi, report.FewInputs)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", iv.Estimate, iv.Lo, iv.Hi)
}

func betterWord(b protocol.Better) string {
	if b == protocol.Lower {
		return "lower"
	}
	return "higher"
}

// pText words a p-value ("< 0.001" below its resolution).
func pText(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("%.3g", p)
}

// numbers fills in, for the paper's numbers that name a method's curve
// point or score, our value of it: the mean over seeds of the method's
// curve at that x, or of its score, in the claim's setting or the
// number's own.
func (e evaluator) numbers(c Claim, s selected, v *Verdict) {
	for _, n := range c.Paper {
		if (n.Curve == "" && n.Metric == "") || n.Method == "" {
			continue
		}
		in := s
		if n.Setting != nil {
			var err error
			if in, err = e.selectSetting(n.Setting); err != nil {
				continue // ours stays "—"
			}
		}
		var ys []float64
		for _, r := range in.recs {
			if !matches(n.Method, label(r), c.Check.Plain) {
				continue
			}
			for _, sc := range r.Result.Scalars {
				if n.Metric != "" && sc.Name == n.Metric {
					ys = append(ys, sc.Value)
				}
			}
			for _, cv := range r.Result.Curves {
				if cv.Name != n.Curve {
					continue
				}
				for j, x := range cv.X {
					if math.Abs(x-n.At) < 1e-9 {
						ys = append(ys, cv.Y[j])
					}
				}
			}
		}
		if len(ys) > 0 {
			var sum float64
			for _, y := range ys {
				sum += y
			}
			y := sum / float64(len(ys))
			v.Ours[numberKey(n)] = fmt.Sprintf("%.4f", y)
			if n.Scale != 0 {
				v.Ours[numberKey(n)] += fmt.Sprintf(" (×%g: %.2f)", n.Scale, n.Scale*y)
			}
		}
	}
}

// label is the record's method as the report names it (report's methodName).
func label(r store.Record) string {
	if r.Post != "" {
		return r.Method + "+" + r.Post
	}
	return r.Method
}

// numberKey is where a paper's number finds ours in Verdict.Ours.
func numberKey(n Number) string {
	if n.Key != "" {
		return n.Key
	}
	if n.Metric != "" {
		return fmt.Sprintf("score:%v:%s:%s", n.Setting, n.Method, n.Metric)
	}
	if n.Curve == "" {
		return ""
	}
	return fmt.Sprintf("curve:%s:%s:%g", n.Method, n.Curve, n.At)
}
