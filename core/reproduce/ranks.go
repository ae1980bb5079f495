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
		v.Rule = fmt.Sprintf("holds when ρ's 95 %% interval lies above 0 and no two %s told apart score in the opposite order; in part when ρ is above 0", c.Param)
		v.Outcome = pick(lo > 0 && against == 0, rho > 0)
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
		flatPower(c, s, cs, vals, v)
	}
}

// flatPower says whether a flat verdict that holds had the power to see a difference
// of c.Within (Check): the smallest difference each pair's paired test
// finds with 80 % power at the Holm level of its setting's pairs
// (Bonferroni's, its first step), from the pair's interval: (z₁₋α/(2k) +
// z₀.₈) times the interval's standard error, its width over 2·1.96. A
// setting whose methods all score the same on every input (every
// interval of zero width) has shown it can tell nothing apart: no power,
// whatever the arithmetic says; so has one whose removals never moved
// the accuracy of its models further than Within from the explained
// model's — the positive control: a setting that does not respond to
// removing up to its largest rate of the features cannot separate
// anything (ROAR on a mixture whose class survives in any few of its
// coordinates), however small the differences its tests could find.
// values are the methods' per-input values.
func flatPower(c Check, s selected, pairs []comparison, values [][]float64, v *Verdict) {
	if len(pairs) == 0 || v.Outcome != Holds {
		return // a difference found needs no power to have been found
	}
	z := func(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
	k := float64(len(pairs))
	factor := (z(1-report.Alpha/(2*k)) + z(0.8)) / (2 * z(0.975))
	var mde float64
	for _, p := range pairs {
		w := p.diff.Hi - p.diff.Lo
		if math.IsNaN(w) {
			v.Power = fmt.Sprintf("no power: %s − %s has no interval", p.a, p.b)
			return
		}
		mde = max(mde, factor*w)
	}
	// Saturated: every input scores the same under every method.
	saturated, at := false, math.NaN()
	for _, vs := range values {
		for _, x := range vs {
			if math.IsNaN(at) {
				at, saturated = x, true
			}
			saturated = saturated && x == at
		}
	}
	v.Ours["mde"] = fmt.Sprintf("%.3g", mde)
	moved, base, known := response(s)
	switch {
	case known && moved <= c.Within:
		v.Power = fmt.Sprintf("no power: removing up to the largest rate of the features moved no retrained model's accuracy further than %.3g from the explained model's %.3f, within the %g that counts as none, so this setting showed no response to removal at all — it could not have separated these methods, nor any others, whatever its paired tests could resolve", moved, base, c.Within)
	case saturated:
		v.Power = fmt.Sprintf("no power: every input scores %.3g under every method, so this setting tells nothing apart here — not these methods, nor any other; the flatness is the protocol's saturation, not a finding that it weighs the methods alike", at)
	case mde > c.Within:
		v.Power = fmt.Sprintf("no power at this size: the paired tests would find only differences of %.3g or more (80 %% power, Holm level over %d pairs), above the %.3g that counts as none; more test inputs or seeds would be needed", mde, len(pairs), c.Within)
	}
	if !strings.HasSuffix(v.Result, ".") {
		v.Result += "."
	}
	if v.Power != "" {
		v.Result += " " + strings.ToUpper(v.Power[:1]) + v.Power[1:] + "."
	} else {
		v.Result += fmt.Sprintf(" Power: the paired tests would find any difference of %.3g or more (80 %% power), within the %.3g that counts as none.", mde, c.Within)
	}
	v.Rule += fmt.Sprintf("; a flat verdict also needs the power to see a difference of %g (else it says it has none)", c.Within)
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
	want := c.Expect == "above"
	metric, better, pairs, err := e.comparisons(c, s, r, as, bs)
	if err != nil {
		v.Outcome, v.Result = NotEvaluated, err.Error()
		return
	}
	defer func() { v.Result += unranked(c, r, as, bs) }()
	if c.Expect == "near" {
		e.near(c, s, metric, better, pairs, v)
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
	v.Rule = fmt.Sprintf("holds when every pair is told apart (the report's paired test, Holm-corrected over the claim's pairs, 5 %%) with A %s B; in part when some are; not when none is", c.Expect)
	if total == 0 {
		v.Outcome = NotEvaluated
		return
	}
	v.Outcome = pick(expected == total, expected > 0)
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
// §6.2's "minimal differences in performance within attribution methods".
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
	holmOver(pairs)
	if len(pairs) == 0 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s ranks fewer than two of %s", s.title, strings.Join(c.A, ", "))
		return
	}
	apart := 0
	var parts []string
	for _, p := range pairs {
		mark := "not told apart"
		if p.differ {
			apart++
			mark = "told apart"
		}
		parts = append(parts, fmt.Sprintf("%s − %s: %s, Holm p %s (%s)", p.a, p.b, ciText(p.diff), pText(p.pHolm), mark))
	}
	v.Ours["apart"] = fmt.Sprintf("%d of %d", apart, len(pairs))
	v.Result = fmt.Sprintf("%s (%s, %s is better): %d of %d pairs of %s told apart. %s",
		s.title, r.Metric, betterWord(r.Better), apart, len(pairs), strings.Join(as, ", "), strings.Join(parts, "; "))
	v.Rule = "holds when no pair of the methods is told apart (the report's paired test, Holm-corrected over the claim's pairs, 5 %); in part when some are; not when all are"
	v.Outcome = pick(apart == 0, apart < len(pairs))
	flatPower(c, s, pairs, vals, v)
}

// near decides a versus claim that A scores within c.Within of B.
func (e evaluator) near(c Check, s selected, metric string, better protocol.Better, pairs []comparison, v *Verdict) {
	inside, close := 0, 0
	var parts []string
	for _, p := range pairs {
		mark := "beyond ±" + fmt.Sprint(c.Within)
		switch {
		case p.diff.Lo >= -c.Within && p.diff.Hi <= c.Within:
			inside++
			close++
			mark = "interval inside ±" + fmt.Sprint(c.Within)
		case math.Abs(p.diff.Estimate) <= c.Within:
			close++
			mark = "estimate inside ±" + fmt.Sprint(c.Within) + ", interval not"
		}
		parts = append(parts, fmt.Sprintf("%s − %s: %s (%s)", p.a, p.b, ciText(p.diff), mark))
	}
	v.Ours["pairs"] = fmt.Sprintf("%d of %d", inside, len(pairs))
	v.Result = fmt.Sprintf("%s (%s, %s is better): %d of %d pairs within ±%g. %s",
		s.title, metric, betterWord(better), inside, len(pairs), c.Within, strings.Join(parts, "; "))
	v.Rule = fmt.Sprintf("holds when every pair's 95 %% interval of A − B (the report's, paired) lies inside ±%g; in part when every estimate does; not otherwise", c.Within)
	if len(pairs) == 0 {
		v.Outcome = NotEvaluated
		return
	}
	v.Outcome = pick(inside == len(pairs), close == len(pairs))
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
