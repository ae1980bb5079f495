package reproduce

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// Outcome is a claim's verdict.
type Outcome string

// The verdicts.
const (
	Holds        Outcome = "holds"
	InPart       Outcome = "holds in part"
	DoesNotHold  Outcome = "does not hold"
	NotEvaluated Outcome = "not evaluated"
)

// Check says how a claim is decided on a run. Kind is one of:
//
//   - order: Spearman's ρ between the methods' parameter Param (v_λ's
//     lambda) and the setting's headline score oriented so that higher is
//     better, with a bootstrap interval over the test inputs (all methods
//     resampled on the same inputs). Expect increasing: holds when the
//     interval lies above 0, in part when only ρ does. Expect flat: does
//     not hold when the interval excludes 0; in part when it does not but
//     some pair of methods is told apart (paired bootstrap, Holm);
//     holds when no pair is.
//   - versus: every method of A against every method of B under the
//     setting's headline score, by the run's paired comparisons (Holm at
//     5 %). Expect above (A better) or below (A worse): holds when every
//     pair is told apart that way, in part when some are, not when none
//     is. "*" in A stands for every method that is not a random control.
//     With Metric, another score than the headline: paired bootstraps of
//     its per-input values, Holm-corrected over the claim's pairs.
//   - post: the DPI paper's Table 2 — over the (method, rate) points of
//     the Plain maps and of each of Posts, how often the post-processed
//     maps reach the better Curve value; the share's 95 % Wilson interval
//     decides: holds when it lies above one half, in part when only the
//     share does.
//   - tv: the DPI paper's Table 3 — R² of Curve on the masks' total
//     variation over the Plain maps at each rate, with a bootstrap
//     interval over the points; holds when every rate's R² reaches
//     MinR2, in part when some do.
//   - truth: GOAR's Table 1 — Pearson's r across the methods between
//     each setting's headline score, oriented so that higher is better
//     (the "performance drop"), and each ground-truth agreement measure of
//     Truths (the GroundTruth protocol's FA … RC); the Setting's r less
//     each of Others' r with a bootstrap interval over the methods. Holds
//     when every interval lies above 0, in part when some difference
//     does, not when none does.
//   - scores: the Setting's Metric against the MetricB of Others[0], a
//     method at a time (their mean over seeds), for measures of a
//     protocol rather than of a method (FUD's Tables 2 to 4: how far its
//     samples lie from the data, how smooth its curves are). The mean
//     difference over the methods both ran, with a bootstrap interval over
//     the methods: expect below or above; holds when the interval lies
//     on that side of 0, in part when only the mean does.
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
}

func (c Check) validate() error {
	if _, ok := c.Setting["protocol"].(string); !ok {
		return fmt.Errorf("check needs setting: {protocol: NAME, …}")
	}
	want := map[string][]string{"order": {"increasing", "flat"}, "versus": {"above", "below"}, "post": {""}, "tv": {""}, "truth": {""}, "scores": {"above", "below"}}
	exp, ok := want[c.Kind]
	switch {
	case !ok:
		return fmt.Errorf("unknown check %q (order, versus, post, tv, truth, scores)", c.Kind)
	case !slices.Contains(exp, c.Expect):
		return fmt.Errorf("check %s: expect %q: want one of %q", c.Kind, c.Expect, exp)
	case c.Kind == "order" && c.Param == "":
		return fmt.Errorf("check order needs param")
	case c.Kind == "versus" && (len(c.A) == 0 || len(c.B) == 0):
		return fmt.Errorf("check versus needs a and b")
	case c.Kind == "post" && (len(c.Posts) == 0 || c.Curve == ""):
		return fmt.Errorf("check post needs posts and curve")
	case c.Kind == "tv" && (c.Curve == "" || !(c.MinR2 > 0 && c.MinR2 < 1)):
		return fmt.Errorf("check tv needs curve and min_r2 in (0, 1)")
	case c.Kind == "scores" && (len(c.Others) != 1 || c.Metric == "" || c.MetricB == ""):
		return fmt.Errorf("check scores needs metric, one of others and metric_b")
	case c.Kind == "truth" && (len(c.Others) == 0 || len(c.Truths) == 0):
		return fmt.Errorf("check truth needs others and truths")
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
			}
		}
		e.numbers(c, sel, &v)
		if n := weakRuns(d.Weak, sel); n > 0 && v.Outcome != NotEvaluated {
			v.Result += fmt.Sprintf(" Warning: %d of the setting's runs retrained models that learned little (nearer chance than the explained model): their scores, and this verdict, say little.", n)
		}
		out[i] = v
	}
	return out
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
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range sel {
			if k != "protocol" && !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, sel[k]))
	}
	name := fmt.Sprint(sel["protocol"])
	if len(parts) == 0 {
		return name
	}
	return name + " (" + strings.Join(parts, ", ") + ")"
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

func isControl(label string) bool {
	name, _, _ := labelParts(label)
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

func (e evaluator) order(c Check, s selected, v *Verdict) {
	r, ok := e.ranking(s, v)
	if !ok {
		return
	}
	type pt struct {
		x     float64
		label string
	}
	var pts []pt
	for _, m := range r.Methods {
		_, params, post := labelParts(m.Method)
		x, err := strconv.ParseFloat(params[c.Param], 64)
		if err == nil && post == c.Plain {
			pts = append(pts, pt{x, m.Method})
		}
	}
	if len(pts) < 3 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s ranks %d methods with a parameter %s: an order needs three", s.title, len(pts), c.Param)
		return
	}
	slices.SortFunc(pts, func(a, b pt) int { return cmp.Compare(a.x, b.x) })
	xs := make([]float64, len(pts))
	series := make([][][]float64, len(pts))
	means := make([]float64, len(pts))
	var parts []string
	for i, p := range pts {
		xs[i] = p.x
		series[i] = [][]float64{r.Values[p.label]}
		for _, m := range r.Methods {
			if m.Method == p.label {
				means[i] = oriented(m.CI.Estimate, r.Better)
				parts = append(parts, fmt.Sprintf("%s=%g: %s", c.Param, p.x, ciText(m.CI)))
			}
		}
	}
	rho := spearman0(xs, means)
	var reps []float64
	for _, rep := range (stats.Bootstrap{Seed: bootSeed(s.dataset, s.title, c.Param)}).Replicates(series) {
		o := make([]float64, len(rep))
		for i, x := range rep {
			o[i] = oriented(x, r.Better)
		}
		reps = append(reps, spearman0(xs, o))
	}
	lo, hi := percentileCI(reps)
	apart, pairs := 0, 0
	for _, p := range r.Pairs {
		if slices.ContainsFunc(pts, func(q pt) bool { return q.label == p.A }) && slices.ContainsFunc(pts, func(q pt) bool { return q.label == p.B }) {
			pairs++
			if p.Differ {
				apart++
			}
		}
	}
	v.Ours["rho"] = fmt.Sprintf("%+.2f [%+.2f, %+.2f]", rho, lo, hi)
	v.Ours["apart"] = fmt.Sprintf("%d of %d", apart, pairs)
	v.Result = fmt.Sprintf("Spearman ρ of %s (%s, %s is better) with %s: %s; %d of %d pairs told apart. Scores: %s",
		s.title, r.Metric, betterWord(r.Better), c.Param, v.Ours["rho"], apart, pairs, strings.Join(parts, "; "))
	switch c.Expect {
	case "increasing":
		v.Rule = "holds when ρ's 95 % interval lies above 0; in part when only ρ does"
		v.Outcome = pick(lo > 0, rho > 0)
	case "flat":
		v.Rule = "does not hold when ρ's 95 % interval excludes 0; in part when it includes 0 but some pair of methods is told apart; holds when no pair is"
		switch {
		case lo > 0 || hi < 0:
			v.Outcome = DoesNotHold
		case apart > 0:
			v.Outcome = InPart
		default:
			v.Outcome = Holds
		}
	}
}

// spearman0 is Spearman's ρ, 0 where a side is constant (no order at all).
func spearman0(x, y []float64) float64 {
	r := stats.Spearman(x, y)
	if math.IsNaN(r) {
		return 0
	}
	return r
}

func pick(all, some bool) Outcome {
	switch {
	case all:
		return Holds
	case some:
		return InPart
	}
	return DoesNotHold
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

func ciText(iv stats.Interval) string {
	if math.IsNaN(iv.Lo) {
		return fmt.Sprintf("%.3f", iv.Estimate)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", iv.Estimate, iv.Lo, iv.Hi)
}

func betterWord(b protocol.Better) string {
	if b == protocol.Lower {
		return "lower"
	}
	return "higher"
}

func (e evaluator) versus(c Check, s selected, v *Verdict) {
	r, ok := e.ranking(s, v)
	if !ok {
		return
	}
	resolve := func(names, other []string) []string {
		var out []string
		for _, m := range r.Methods {
			for _, n := range names {
				if n == "*" {
					if !isControl(m.Method) && !slices.ContainsFunc(other, func(o string) bool { return matches(o, m.Method, c.Plain) }) {
						_, _, post := labelParts(m.Method)
						if post == c.Plain {
							out = append(out, m.Method)
						}
					}
				} else if matches(n, m.Method, c.Plain) {
					out = append(out, m.Method)
				}
			}
		}
		return slices.Compact(out)
	}
	as, bs := resolve(c.A, c.B), resolve(c.B, c.A)
	if len(as) == 0 || len(bs) == 0 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s ranks none of %s or none of %s", s.title, strings.Join(c.A, ", "), strings.Join(c.B, ", "))
		return
	}
	want := c.Expect == "above"
	metric, better, pairs, err := e.comparisons(c, s, r, as, bs)
	if err != nil {
		v.Outcome, v.Result = NotEvaluated, err.Error()
		return
	}
	total, expected, opposite := len(pairs), 0, 0
	var parts []string
	for _, p := range pairs {
		mark := "not told apart"
		if p.differ {
			if (oriented(p.diff.Estimate, better) > 0) == want {
				expected++
				mark = "told apart as claimed"
			} else {
				opposite++
				mark = "told apart the other way"
			}
		}
		parts = append(parts, fmt.Sprintf("%s − %s: %s, Holm p %s (%s)", p.a, p.b, ciText(p.diff), pText(p.pHolm), mark))
	}
	v.Ours["pairs"] = fmt.Sprintf("%d of %d", expected, total)
	v.Result = fmt.Sprintf("%s (%s, %s is better): %d of %d pairs told apart as claimed, %d the other way. %s",
		s.title, metric, betterWord(better), expected, total, opposite, strings.Join(parts, "; "))
	v.Rule = fmt.Sprintf("holds when every pair is told apart (paired bootstrap, Holm-corrected over the setting's pairs, 5 %%) with A %s B; in part when some are; not when none is", c.Expect)
	if metric != r.Metric {
		v.Rule = strings.Replace(v.Rule, "the setting's pairs", "the claim's pairs", 1)
	}
	if total == 0 {
		v.Outcome = NotEvaluated
		return
	}
	v.Outcome = pick(expected == total, expected > 0)
}

// comparison is a paired comparison of methods a and b: a − b.
type comparison struct {
	a, b   string
	diff   stats.Interval
	pHolm  float64
	differ bool
}

// comparisons compares every a with every b: by the ranking's pairs for
// its headline, or, for another Metric, by paired bootstraps of the
// metric's per-input values (over seeds, then inputs), Holm over these
// pairs.
func (e evaluator) comparisons(c Check, s selected, r report.Ranking, as, bs []string) (string, protocol.Better, []comparison, error) {
	var out []comparison
	if c.Metric == "" || c.Metric == r.Metric {
		for _, a := range as {
			for _, b := range bs {
				p, ok := pairBetween(r, a, b)
				if a == b || !ok {
					continue
				}
				d := p.Diff
				if p.A != a { // the pair is ranked b above a: turn it into a − b
					d = stats.Interval{Estimate: -d.Estimate, Lo: -d.Hi, Hi: -d.Lo, Units: d.Units, Groups: d.Groups}
				}
				out = append(out, comparison{a: a, b: b, diff: d, pHolm: p.PHolm, differ: p.Differ})
			}
		}
		return r.Metric, r.Better, out, nil
	}
	rec := s.recs[0]
	p, err := protocol.New(rec.Protocol, rec.Result.Config)
	if err != nil {
		return "", "", nil, err
	}
	var better protocol.Better
	for _, m := range p.Info().Metrics {
		if m.Name == c.Metric {
			better = m.Better
		}
	}
	if better == "" {
		return "", "", nil, fmt.Errorf("%s has no score %q with a direction", s.title, c.Metric)
	}
	values := func(method string) [][]float64 {
		var data [][]float64
		for _, r := range s.recs { // one series per seed, in the records' order
			if label(r) != method {
				continue
			}
			if u := r.Result.Units.Of(c.Metric); u != nil {
				row := make([]float64, len(u))
				for i, x := range u {
					row[i] = float64(x)
				}
				data = append(data, row)
			}
		}
		return data
	}
	var ps []float64
	for _, a := range as {
		for _, b := range bs {
			if a == b {
				continue
			}
			va, vb := values(a), values(b)
			if len(va) == 0 || len(vb) == 0 {
				return "", "", nil, fmt.Errorf("%s keeps no per-input values of %s for %s and %s", s.title, c.Metric, a, b)
			}
			d, pv := (stats.Bootstrap{Seed: bootSeed(s.dataset, s.title, a, b, c.Metric)}).Diff(va, vb)
			out = append(out, comparison{a: a, b: b, diff: d})
			ps = append(ps, pv)
		}
	}
	for i, ph := range stats.Holm(ps) {
		out[i].pHolm, out[i].differ = ph, ph < report.Alpha
	}
	return c.Metric, better, out, nil
}

func pairBetween(r report.Ranking, a, b string) (report.Pair, bool) {
	for _, p := range r.Pairs {
		if (p.A == a && p.B == b) || (p.A == b && p.B == a) {
			return p, true
		}
	}
	return report.Pair{}, false
}

func pText(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("%.3g", p)
}

// curveOf describes the named curve of the setting's protocol: its
// direction and the name of its masks' TV curve.
func curveOf(s selected, name string) (protocol.Metric, error) {
	r := s.recs[0]
	p, err := protocol.New(r.Protocol, r.Result.Config)
	if err != nil {
		return protocol.Metric{}, err
	}
	for _, m := range p.Info().Curves {
		if m.Name == name {
			return m, nil
		}
	}
	return protocol.Metric{}, fmt.Errorf("%s has no curve %q", r.Protocol, name)
}

// points are the setting's (method, rate, TV, curve value) points of the
// maps post-processed by post, matched by the method's name.
func points(s selected, m protocol.Metric, post string) []protocol.TVPoint {
	var res []protocol.Result
	for _, r := range s.recs {
		if r.Post == post {
			x := *r.Result
			x.Method = r.Method
			res = append(res, x)
		}
	}
	return protocol.TVPoints(res, m.Name, m.MaskTV)
}

func (e evaluator) post(c Check, s selected, v *Verdict) {
	m, err := curveOf(s, c.Curve)
	if err != nil || m.MaskTV == "" || m.Better == "" {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s: no %s curve with its masks' TV and a direction", s.title, c.Curve)
		return
	}
	plain := points(s, m, c.Plain)
	wins, total := 0, 0
	var parts []string
	for _, post := range c.Posts {
		w, t := protocol.PostCount(plain, points(s, m, post), m.Better)
		wins, total = wins+w, total+t
		v.Ours["count:"+post] = fmt.Sprintf("%d/%d", w, t)
		parts = append(parts, fmt.Sprintf("%s %d/%d", post, w, t))
	}
	if total == 0 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s has no (method, rate) point with both the %q maps and %s", s.title, c.Plain, strings.Join(c.Posts, ", "))
		return
	}
	share := float64(wins) / float64(total)
	lo, hi := wilson(wins, total)
	v.Ours["count"] = fmt.Sprintf("%d/%d", wins, total)
	v.Result = fmt.Sprintf("%s %s (%s is better): the post-processed maps score better than the plain ones in %d of %d comparisons (%s), %.0f %% [%.0f, %.0f] (95 %% Wilson)",
		s.title, c.Curve, betterWord(m.Better), wins, total, strings.Join(parts, ", "), 100*share, 100*lo, 100*hi)
	v.Rule = "holds when the share's 95 % Wilson interval lies above one half; in part when only the share does"
	v.Outcome = pick(lo > 0.5, share > 0.5)
}

// wilson is the 95 % Wilson score interval of k successes in n.
func wilson(k, n int) (lo, hi float64) {
	const z = 1.959963984540054
	p, nf := float64(k)/float64(n), float64(n)
	den := 1 + z*z/nf
	mid := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return max(0, mid-half), min(1, mid+half)
}

func (e evaluator) tv(c Check, s selected, v *Verdict) {
	m, err := curveOf(s, c.Curve)
	if err != nil || m.MaskTV == "" {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s: no %s curve with its masks' TV", s.title, c.Curve)
		return
	}
	byRate := map[float64][]protocol.TVPoint{}
	for _, p := range points(s, m, c.Plain) {
		byRate[p.Rate] = append(byRate[p.Rate], p)
	}
	rates := slices.Sorted(func(yield func(float64) bool) {
		for r := range byRate {
			if !yield(r) {
				return
			}
		}
	})
	reached, fitted := 0, 0
	var parts []string
	for _, rate := range rates {
		pts := byRate[rate]
		fit, err := protocol.TVFit(pts)
		key := "r2:" + strconv.FormatFloat(rate, 'g', -1, 64)
		if err != nil {
			v.Ours[key] = "—"
			parts = append(parts, fmt.Sprintf("%g: no fit (%v)", rate, err))
			continue
		}
		fitted++
		lo, hi := r2Interval(pts, bootSeed(s.dataset, s.title, key))
		v.Ours[key] = fmt.Sprintf("%.2f [%.2f, %.2f]", fit.R2, lo, hi)
		parts = append(parts, fmt.Sprintf("%g: R² %s over %d methods (slope %.3g)", rate, v.Ours[key], len(pts), fit.Slope))
		if fit.R2 >= c.MinR2 {
			reached++
		}
	}
	if fitted == 0 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s: no rate with three methods whose %s varies: %s", s.title, c.Curve, strings.Join(parts, "; "))
		return
	}
	v.Result = fmt.Sprintf("R² of %s %s on the masks' total variation, plain maps, by rate (95 %% bootstrap over the methods): %s", s.title, c.Curve, strings.Join(parts, "; "))
	v.Rule = fmt.Sprintf("holds when R² reaches %.2g at every rate; in part when it does at some", c.MinR2)
	v.Outcome = pick(reached == len(rates), reached > 0)
}

// r2Interval is a 95 % bootstrap interval of R² over the points
// (resamples whose fit is undefined left out).
func r2Interval(pts []protocol.TVPoint, seed uint64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(seed, 0x7265))
	reps := make([]float64, 0, stats.DefaultResamples)
	draw := make([]protocol.TVPoint, len(pts))
	for range stats.DefaultResamples {
		for i := range draw {
			draw[i] = pts[rng.IntN(len(pts))]
		}
		if f, err := protocol.TVFit(draw); err == nil {
			reps = append(reps, f.R2)
		}
	}
	return percentileCI(reps)
}

// numbers fills in, for the paper's numbers that name a curve point, our
// value of it: the mean over seeds of the method's curve at that x.
func (e evaluator) numbers(c Claim, s selected, v *Verdict) {
	for _, n := range c.Paper {
		if (n.Curve == "" && n.Metric == "") || n.Method == "" {
			continue
		}
		var ys []float64
		for _, r := range s.recs {
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
		return fmt.Sprintf("score:%s:%s", n.Method, n.Metric)
	}
	if n.Curve == "" {
		return ""
	}
	return fmt.Sprintf("curve:%s:%s:%g", n.Method, n.Curve, n.At)
}

// headlineMetric is the setting's headline score with its direction.
func headlineMetric(s selected) (protocol.Metric, error) {
	r := s.recs[0]
	p, err := protocol.New(r.Protocol, r.Result.Config)
	if err != nil {
		return protocol.Metric{}, err
	}
	h, ok := p.Info().Headline()
	if !ok || h.Better == "" {
		return protocol.Metric{}, fmt.Errorf("%s has no headline score with a direction", s.title)
	}
	return h, nil
}

// unitsOf is a method's per-input values of a score in the setting, a row
// per seed in seed order, each value times sign; nil where none are kept.
func unitsOf(s selected, method, metric string, sign float64) [][]float64 {
	recs := slices.Clone(s.recs)
	slices.SortStableFunc(recs, func(a, b store.Record) int { return cmp.Compare(a.Seed, b.Seed) })
	var rows [][]float64
	for _, r := range recs {
		if label(r) != method {
			continue
		}
		u := r.Result.Units.Of(metric)
		if u == nil {
			return nil
		}
		row := make([]float64, len(u))
		for i, x := range u {
			row[i] = sign * float64(x)
		}
		rows = append(rows, row)
	}
	return rows
}

func (e evaluator) truth(c Check, s selected, v *Verdict) {
	fail := func(err error) { v.Outcome, v.Result = NotEvaluated, err.Error() }
	truthSet, err := e.selectSetting(map[string]any{"protocol": "groundtruth", "dataset": s.dataset})
	if err != nil {
		fail(err)
		return
	}
	type setting struct {
		sel    selected
		name   string // as the claim names its protocol
		metric protocol.Metric
	}
	settings := []setting{{sel: s, name: fmt.Sprint(c.Setting["protocol"])}}
	for _, o := range c.Others {
		o = maps.Clone(o)
		o["dataset"] = s.dataset
		sel, err := e.selectSetting(o)
		if err != nil {
			fail(err)
			return
		}
		settings = append(settings, setting{sel: sel, name: fmt.Sprint(o["protocol"])})
	}
	for i := range settings {
		if settings[i].metric, err = headlineMetric(settings[i].sel); err != nil {
			fail(err)
			return
		}
	}
	// Every (setting, method) score and (truth, method) agreement as a
	// series of per-input values, resampled together: the same inputs
	// and seeds for all.
	var methods []string
	for _, r := range s.recs {
		if !slices.Contains(methods, label(r)) {
			methods = append(methods, label(r))
		}
	}
	var series [][][]float64
	at := map[string]int{} // "setting|truth\x00method" → series index
	var kept []string
	for _, m := range methods {
		var add [][][]float64
		keys := []string{}
		ok := true
		for _, st := range settings {
			sign := 1.0
			if st.metric.Better == protocol.Lower {
				sign = -1
			}
			u := unitsOf(st.sel, m, st.metric.Name, sign)
			ok = ok && u != nil
			add, keys = append(add, u), append(keys, st.name+"\x00"+m)
		}
		for _, t := range c.Truths {
			u := unitsOf(truthSet, m, t, 1)
			ok = ok && u != nil
			add, keys = append(add, u), append(keys, "truth:"+t+"\x00"+m)
		}
		if !ok {
			continue
		}
		kept = append(kept, m)
		for i, k := range keys {
			at[k] = len(series)
			series = append(series, add[i])
		}
	}
	if len(kept) < 3 {
		fail(fmt.Errorf("%d methods keep per-input values under %s, the other settings and the ground truth: a correlation needs three", len(kept), s.title))
		return
	}
	corr := func(means []float64, name, t string) float64 {
		x, y := make([]float64, len(kept)), make([]float64, len(kept))
		for i, m := range kept {
			x[i], y[i] = means[at[name+"\x00"+m]], means[at["truth:"+t+"\x00"+m]]
		}
		return protocol.Pearson(x, y)
	}
	full := make([]float64, len(series))
	for k, rows := range series {
		full[k] = (stats.Bootstrap{}).Mean(rows).Estimate
	}
	reps := (stats.Bootstrap{Seed: bootSeed(s.dataset, s.title, "truth")}).Replicates(series)
	self := settings[0]
	total, above, lead := 0, 0, 0
	var parts []string
	for _, t := range c.Truths {
		r := corr(full, self.name, t)
		v.Ours["r:"+self.name+":"+t] = fmt.Sprintf("%+.2f", r)
		for _, o := range settings[1:] {
			ro := corr(full, o.name, t)
			v.Ours["r:"+o.name+":"+t] = fmt.Sprintf("%+.2f", ro)
			if math.IsNaN(r) || math.IsNaN(ro) {
				parts = append(parts, fmt.Sprintf("%s: undefined (an agreement or a score the same for every method)", t))
				continue
			}
			d := make([]float64, len(reps))
			for i, rep := range reps {
				d[i] = corr(rep, self.name, t) - corr(rep, o.name, t)
			}
			lo, hi := percentileCI(d)
			total++
			if lo > 0 {
				above++
			}
			if r > ro {
				lead++
			}
			parts = append(parts, fmt.Sprintf("%s: r %+.2f against %s's %+.2f, difference [%+.2f, %+.2f]", t, r, o.sel.title, ro, lo, hi))
		}
	}
	v.Ours["lead"] = fmt.Sprintf("%d of %d", lead, total)
	v.Result = fmt.Sprintf("Pearson's r across %d methods between each setting's headline score, higher is better (%s's %s), and ground-truth agreement, with the 95 %% bootstrap interval over the test inputs (and seeds) of the difference: %s",
		len(kept), s.title, self.metric.Name, strings.Join(parts, "; "))
	v.Rule = "holds when the difference's interval lies above 0 for every measure and every other setting; in part when the correlation is higher for some; not when for none"
	v.Outcome = pick(above == total, lead > 0)
}

// meanScores is each method's value of a score in the setting, averaged
// over seeds (NaN left out).
func meanScores(s selected, metric string) map[string]float64 {
	sum, n := map[string]float64{}, map[string]int{}
	for _, r := range s.recs {
		for _, sc := range r.Result.Scalars {
			if sc.Name == metric && !math.IsNaN(sc.Value) {
				sum[label(r)] += sc.Value
				n[label(r)]++
			}
		}
	}
	for m := range sum {
		sum[m] /= float64(n[m])
	}
	return sum
}

func (e evaluator) scores(c Check, s selected, v *Verdict) {
	other := maps.Clone(c.Others[0])
	if _, ok := other["dataset"]; !ok {
		other["dataset"] = s.dataset
	}
	o, err := e.selectSetting(other)
	if err != nil {
		v.Outcome, v.Result = NotEvaluated, err.Error()
		return
	}
	a, b := meanScores(s, c.Metric), meanScores(o, c.MetricB)
	var methods []string
	for m := range a {
		if _, ok := b[m]; ok {
			methods = append(methods, m)
		}
	}
	slices.Sort(methods)
	if len(methods) == 0 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("no method has both %s's %s and %s's %s", s.title, c.Metric, o.title, c.MetricB)
		return
	}
	diffs := make([][]float64, 1)
	var ma, mb float64
	var parts []string
	for _, m := range methods {
		diffs[0] = append(diffs[0], a[m]-b[m])
		ma, mb = ma+a[m]/float64(len(methods)), mb+b[m]/float64(len(methods))
		parts = append(parts, fmt.Sprintf("%s %.3f against %.3f", m, a[m], b[m]))
	}
	d := (stats.Bootstrap{Seed: bootSeed(s.dataset, s.title, o.title, c.Metric, c.MetricB)}).Mean(diffs)
	v.Ours["a"], v.Ours["b"] = fmt.Sprintf("%.3f", ma), fmt.Sprintf("%.3f", mb)
	v.Ours["diff"] = ciText(d)
	v.Result = fmt.Sprintf("%s's %s against %s's %s over %d methods: %.3f against %.3f, difference %s (95 %% bootstrap over the methods). By method: %s",
		s.title, c.Metric, o.title, c.MetricB, len(methods), ma, mb, ciText(d), strings.Join(parts, "; "))
	v.Rule = fmt.Sprintf("holds when the difference's interval lies %s 0; in part when only its mean does", c.Expect)
	if c.Expect == "below" {
		v.Outcome = pick(d.Hi < 0, d.Estimate < 0)
	} else {
		v.Outcome = pick(d.Lo > 0, d.Estimate > 0)
	}
}
