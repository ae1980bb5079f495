package reproduce

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/stats"
)

// order decides an order check (Check).
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
	apart, pairs, against := 0, 0, 0 // against: told apart in the order opposite to the parameter's
	for _, p := range r.Pairs {
		ia := slices.IndexFunc(pts, func(q pt) bool { return q.label == p.A })
		ib := slices.IndexFunc(pts, func(q pt) bool { return q.label == p.B })
		if ia >= 0 && ib >= 0 {
			pairs++
			if p.Differ {
				apart++
				if (pts[ia].x-pts[ib].x)*oriented(p.Diff.Estimate, r.Better) < 0 {
					against++
				}
			}
		}
	}
	v.Ours["rho"] = fmt.Sprintf("%+.2f [%+.2f, %+.2f]", rho, lo, hi)
	if slices.Min(means) == slices.Max(means) {
		// No order to correlate: ρ is undefined (decided as 0, no trend),
		// not a precise 0.
		v.Ours["rho"] = fmt.Sprintf("undefined: every %s scores the same", c.Param)
	}
	v.Ours["apart"] = fmt.Sprintf("%d of %d", apart, pairs)
	v.Result = fmt.Sprintf("Spearman ρ of %s (%s, %s is better) with %s: %s; %d of %d pairs told apart. Scores: %s",
		s.title, r.Metric, betterWord(r.Better), c.Param, v.Ours["rho"], apart, pairs, strings.Join(parts, "; "))
	switch c.Expect {
	case "increasing":
		v.Result += fmt.Sprintf("; %d of the pairs told apart in the order opposite to %s's", against, c.Param)
		v.Rule = fmt.Sprintf("holds when ρ's 95 %% interval lies above 0 and no two %s told apart score in the opposite order; does not hold when the interval lies below 0 or some pair is told apart against the order; inconclusive otherwise", c.Param)
		units := r.Values[pts[0].label]
		rp := part{name: "ρ", est: rho, lo: lo, hi: hi, iv: stats.Interval{Estimate: rho, Lo: lo, Hi: hi}, n: len(units), unit: "input"}
		o, words := rule{}.decide([]part{rp})
		if against > 0 {
			o, words = DoesNotHold, ""
		}
		v.Outcome = o
		v.Result = withWords(v.Result, words)
	case "flat":
		var cs []comparison
		for _, p := range r.Pairs {
			if slices.ContainsFunc(pts, func(q pt) bool { return q.label == p.A }) && slices.ContainsFunc(pts, func(q pt) bool { return q.label == p.B }) {
				cs = append(cs, comparison{a: p.A, b: p.B, diff: p.Diff, differ: p.Differ})
			}
		}
		var vals [][]float64
		for _, p := range pts {
			vals = append(vals, r.Values[p.label])
		}
		e.equivalent(c, s, cs, vals, v)
	}
}

// withWords adds decide's words to a result, as a sentence of their own.
func withWords(result, words string) string {
	if words == "" {
		return result
	}
	if !strings.HasSuffix(result, ".") {
		result += "."
	}
	if !strings.HasSuffix(words, ".") {
		words += "."
	}
	return result + " " + strings.ToUpper(words[:1]) + words[1:]
}

// equivalent decides a claim that methods score alike (flat, near): every
// pair's difference within ±Within (decide), in a setting that responds
// at all. A setting whose methods all score the same on every input has
// shown it can tell nothing apart, and so has one whose removals never
// moved the accuracy of its models further than Within from the explained
// model's — the positive control: a setting that does not respond to
// removing up to its largest rate of the features (ROAR on a mixture whose
// class survives in any few of its coordinates) could have separated
// nothing, however small the differences its tests could find; its
// verdict is inconclusive. values are the methods' per-input values (nil
// where the claim compares across settings).
func (e evaluator) equivalent(c Check, s selected, pairs []comparison, values [][]float64, v *Verdict) {
	var parts []part
	var words []string
	inside := 0
	for _, p := range pairs {
		pp := diffPart(p)
		parts = append(parts, pp)
		mark := "beyond ±" + fmt.Sprint(c.Within)
		switch c.ruleOf().judge(pp) {
		case confirmed:
			inside++
			mark = "interval inside ±" + fmt.Sprint(c.Within)
		case open:
			mark = "interval across ±" + fmt.Sprint(c.Within)
		}
		words = append(words, fmt.Sprintf("%s − %s: %s (%s)", p.a, p.b, ciText(p.diff), mark))
	}
	v.Ours["pairs"] = fmt.Sprintf("%d of %d", inside, len(pairs))
	if !strings.HasSuffix(v.Result, ".") && v.Result != "" {
		v.Result += "."
	}
	v.Result = strings.TrimSpace(v.Result + fmt.Sprintf(" %d of %d pairs within ±%g: %s", inside, len(pairs), c.Within, strings.Join(words, "; ")))
	v.Rule = fmt.Sprintf("an equivalence at the margin %g the claim states: holds when every pair's 95 %% interval of the difference lies inside ±%g; does not hold when some pair's lies wholly beyond it; inconclusive otherwise, or where the setting responds to nothing", c.Within, c.Within)
	if len(pairs) == 0 {
		v.Outcome = NotEvaluated
		return
	}
	o, w := c.ruleOf().decide(parts)
	v.Outcome, v.Result = o, withWords(v.Result, w)
	if why := unresponsive(c, s, values); why != "" && o == Holds {
		v.Outcome = Inconclusive
		v.Result = withWords(v.Result, "inconclusive: "+why)
	}
}

// unresponsive says why the setting could have separated nothing ("" when
// it responds): its removals moved no model's accuracy further than
// c.Within, or every method scores the same on every input.
func unresponsive(c Check, s selected, values [][]float64) string {
	saturated, at := len(values) > 0, math.NaN()
	for _, vs := range values {
		for _, x := range vs {
			if math.IsNaN(at) {
				at = x
			}
			saturated = saturated && x == at
		}
	}
	moved, base, known := response(s)
	switch {
	case known && moved <= c.Within:
		return fmt.Sprintf("removing up to the largest rate of the features moved no retrained model's accuracy further than %.3g from the explained model's %.3f, within the %g that counts as none, so this setting showed no response to removal at all — it could not have separated these methods, nor any others", moved, base, c.Within)
	case saturated && !math.IsNaN(at):
		return fmt.Sprintf("every input scores %.3g under every method, so this setting tells nothing apart here — the flatness is the protocol's saturation, not a finding that it weighs the methods alike", at)
	}
	return ""
}

// versus decides a versus check (Check).
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
	if c.Expect == "flat" {
		e.flat(c, s, r, as, v)
		return
	}
	if len(as) == 0 || len(bs) == 0 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s ranks none of %s or none of %s", s.title, strings.Join(c.A, ", "), strings.Join(c.B, ", "))
		return
	}
	metric, better, pairs, err := e.comparisons(c, s, r, as, bs)
	if err != nil {
		v.Outcome, v.Result = NotEvaluated, err.Error()
		return
	}
	defer func() { v.Result += unranked(c, r, as, bs) }()
	if c.Expect == "near" {
		v.Result = fmt.Sprintf("%s (%s, %s is better).", s.title, metric, betterWord(better))
		e.equivalent(c, s, pairs, nil, v)
		return
	}
	decidePairs(c, pairs, func(x float64) float64 { return oriented(x, better) }, v)
	v.Result = fmt.Sprintf("%s (%s, %s is better): %s", s.title, metric, betterWord(better), v.Result)
}

// decidePairs decides a directional claim over paired comparisons (A
// better than B for expect above, worse for below; orient turns a
// difference into "higher is better"): each pair holds when its paired test
// (Holm over the claim's pairs) tells it apart as claimed and is excluded
// when it tells it apart the other way; every pair must hold.
func decidePairs(c Check, pairs []comparison, orient func(float64) float64, v *Verdict) {
	sign := 1.0
	if c.Expect == "below" {
		sign = -1
	}
	var parts []part
	var words []string
	expected, opposite := 0, 0
	for _, p := range pairs {
		pp := pairPart(p, orient, sign, len(pairs))
		parts = append(parts, pp)
		mark := "not told apart"
		switch pp.told {
		case 1:
			expected++
			mark = "told apart as claimed"
		case -1:
			opposite++
			mark = "told apart the other way"
		}
		words = append(words, fmt.Sprintf("%s − %s: %s, Holm p %s (%s)", p.a, p.b, ciText(p.diff), pText(p.pHolm), mark))
	}
	v.Ours["pairs"] = fmt.Sprintf("%d of %d", expected, len(pairs))
	v.Result = fmt.Sprintf("%d of %d pairs told apart as claimed, %d the other way. %s", expected, len(pairs), opposite, strings.Join(words, "; "))
	v.Rule = fmt.Sprintf("each pair holds when the paired test (Holm over the claim's pairs, 5 %%) tells A %s B, and is excluded when it tells them apart the other way: holds when every pair holds; in part when some do; does not hold when none does and some are excluded; inconclusive when the rest cannot be told apart", c.Expect)
	if len(pairs) == 0 {
		v.Outcome = NotEvaluated
		return
	}
	o, w := c.ruleOf().decide(parts)
	v.Outcome, v.Result = o, withWords(v.Result, w)
}

// response is how far the setting's accuracy curves (those whose names
// begin with accuracy: ROAR's, ROAD's MoRF and LeRF) ever moved from the
// explained model's accuracy, over every record, rate and order; known is
// false where the records have no such curve or no base accuracy.
func response(s selected) (moved, base float64, known bool) {
	for _, r := range s.recs {
		if r.Result.Base <= 0 {
			continue
		}
		for _, cv := range r.Result.Curves {
			if !strings.HasPrefix(cv.Name, "accuracy") {
				continue
			}
			for _, y := range cv.Y {
				if d := math.Abs(y - r.Result.Base); !math.IsNaN(d) {
					moved, base, known = max(moved, d), r.Result.Base, true
				}
			}
		}
	}
	return moved, base, known
}

// flat decides a versus claim that the methods as score alike: GOAR
// §6.2's "minimal differences in performance within attribution methods",
// an equivalence at the claim's margin.
func (e evaluator) flat(c Check, s selected, r report.Ranking, as []string, v *Verdict) {
	var pairs []comparison
	var vals [][]float64
	for i, a := range as {
		vals = append(vals, r.Values[a])
		for _, b := range as[i+1:] {
			if p, ok := pairBetween(r, a, b); ok {
				pairs = append(pairs, comparison{a: p.A, b: p.B, diff: p.Diff, pHolm: p.P})
			}
		}
	}
	if len(pairs) == 0 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s ranks fewer than two of %s", s.title, strings.Join(c.A, ", "))
		return
	}
	v.Result = fmt.Sprintf("%s (%s, %s is better), the pairs of %s.", s.title, r.Metric, betterWord(r.Better), strings.Join(as, ", "))
	e.equivalent(c, s, pairs, vals, v)
}

// unranked names the claim's methods the ranking does not rank — their
// retrained models learned little, or they have no score — whose pairs
// the ranking's headline therefore lacks ("" for none).
func unranked(c Check, r report.Ranking, as, bs []string) string {
	if c.Metric != "" && c.Metric != r.Metric {
		return ""
	}
	var out []string
	for _, m := range r.Methods {
		if !m.Ranked() && (slices.Contains(as, m.Method) || slices.Contains(bs, m.Method)) {
			out = append(out, m.Method)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return fmt.Sprintf(" Left out, as the ranking does not rank them (retrained models that learned little, or no score): %s.", strings.Join(out, ", "))
}

// comparison is a paired comparison of methods a and b: a − b.
type comparison struct {
	a, b   string
	diff   stats.Interval
	pHolm  float64
	differ bool
}

// holmOver turns the comparisons' raw p-values (in pHolm) into Holm's over
// them, and says which differ at report.Alpha: a claim's pairs are the
// family its verdict is corrected over, not every pair of its setting
// (TRACE's deletion setting ranks ten methods, 45 pairs, where a claim
// asks of one).
func holmOver(cs []comparison) {
	ps := make([]float64, len(cs))
	for i, c := range cs {
		ps[i] = c.pHolm
	}
	for i, ph := range stats.Holm(ps) {
		cs[i].pHolm, cs[i].differ = ph, ph < report.Alpha
	}
}

// comparisons compares every a with every b: by the ranking's pairs for
// its headline (their paired test's p-values), or, for another Metric, by
// the report's paired test and interval of the metric's per-input values
// (over seeds, then inputs); Holm over these pairs, the claim's.
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
				out = append(out, comparison{a: a, b: b, diff: d, pHolm: p.P})
			}
		}
		holmOver(out)
		return r.Metric, r.Better, out, nil
	}
	rec := s.recs[0]
	p, err := protocol.New(rec.Protocol, rec.Result.Config)
	if err != nil {
		return "", "", nil, err
	}
	var better protocol.Better
	var rng []float64
	for _, m := range p.Info().Metrics {
		if m.Name == c.Metric {
			better, rng = m.Better, m.Value.Range
		}
	}
	if better == "" {
		return "", "", nil, fmt.Errorf("%s has no score %q with a direction", s.title, c.Metric)
	}
	// The values as the report reads them: counts over a grid's k,
	// exactly, where the scalar lies on one (protocol.Units.Exact).
	values := func(method string) ([][]float64, float64) {
		var data [][]float64
		den := 0.0
		for _, r := range s.recs { // one series per seed, in the records' order
			if label(r) != method {
				continue
			}
			if num, d := r.Result.Units.Exact(c.Metric); num != nil {
				if den != 0 && d != den {
					return nil, 0 // seeds on different grids: not comparable as counts
				}
				data, den = append(data, num), d
			}
		}
		return data, den
	}
	pairs := 0
	for _, a := range as {
		for _, b := range bs {
			if a != b {
				pairs++
			}
		}
	}
	levels := holmLevels(pairs)
	for _, a := range as {
		for _, b := range bs {
			if a == b {
				continue
			}
			va, da := values(a)
			vb, db := values(b)
			if len(va) == 0 || len(vb) == 0 || da != db {
				return "", "", nil, fmt.Errorf("%s keeps no per-input values of %s for %s and %s on one grid", s.title, c.Metric, a, b)
			}
			bt := stats.Bootstrap{Seed: bootSeed(s.dataset, s.title, a, b, c.Metric)}
			if len(rng) == 2 {
				bt.Range = []float64{rng[0] * da, rng[1] * da}
			}
			d := bt.Diff(va, vb)
			d.Estimate, d.Lo, d.Hi = d.Estimate/da, d.Lo/da, d.Hi/da
			out = append(out, comparison{a: a, b: b, diff: d, pHolm: bt.Paired(va, vb, levels).P})
		}
	}
	holmOver(out)
	return c.Metric, better, out, nil
}

// holmLevels are the levels Holm's procedure over m tests compares its p
// values with, which a Monte-Carlo p is settled against.
func holmLevels(m int) []float64 {
	levels := make([]float64, m)
	for k := range levels {
		levels[k] = report.Alpha / float64(k+1)
	}
	return levels
}

// pairBetween is the ranking's comparison of a and b, either way round.
func pairBetween(r report.Ranking, a, b string) (report.Pair, bool) {
	for _, p := range r.Pairs {
		if (p.A == a && p.B == b) || (p.A == b && p.B == a) {
			return p, true
		}
	}
	return report.Pair{}, false
}
