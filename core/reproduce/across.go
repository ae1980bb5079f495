package reproduce

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/stats"
)

// other selects a check's Others[0] on the setting's dataset.
func (e evaluator) other(c Check, s selected) (selected, error) {
	o := maps.Clone(c.Others[0])
	if _, ok := o["dataset"]; !ok {
		o["dataset"] = s.dataset
	}
	return e.selectSetting(o)
}

// scoreOf is a score's direction in a setting.
func scoreOf(s selected, metric string) (protocol.Metric, error) {
	r := s.recs[0]
	p, err := protocol.New(r.Protocol, r.Result.Config)
	if err != nil {
		return protocol.Metric{}, err
	}
	for _, m := range p.Info().Metrics {
		if m.Name == metric {
			return m, nil
		}
	}
	return protocol.Metric{}, fmt.Errorf("%s has no score %q", s.title, metric)
}

// across decides an across check (Check): method A[i] under the setting
// against B[i] (A[i] where B is empty) under Others[0], input by input.
func (e evaluator) across(c Check, s selected, v *Verdict) {
	fail := func(err error) { v.Outcome, v.Result = NotEvaluated, err.Error() }
	o, err := e.other(c, s)
	if err != nil {
		fail(err)
		return
	}
	mb := c.MetricB
	if mb == "" {
		mb = c.Metric
	}
	ma, err := scoreOf(s, c.Metric)
	if err != nil {
		fail(err)
		return
	}
	mo, err := scoreOf(o, mb)
	if err != nil {
		fail(err)
		return
	}
	var pairs []comparison
	for i, a := range c.A {
		b := a
		if len(c.B) > 0 {
			b = c.B[i]
		}
		la, lb := findLabel(s, a, c.Plain), findLabel(o, b, c.Plain)
		if la == "" || lb == "" {
			fail(fmt.Errorf("%s has no %s or %s has no %s", s.title, a, o.title, b))
			return
		}
		va, vb := unitsOf(s, la, c.Metric, 1), unitsOf(o, lb, mb, 1)
		if va == nil || vb == nil {
			fail(fmt.Errorf("%s's %s of %s or %s's %s of %s keeps no per-input values", s.title, c.Metric, la, o.title, mb, lb))
			return
		}
		if len(va) != len(vb) || len(va[0]) != len(vb[0]) {
			fail(fmt.Errorf("%s and %s evaluated different inputs (%d and %d a seed): they cannot be compared input by input", s.title, o.title, len(va[0]), len(vb[0])))
			return
		}
		bt := stats.Bootstrap{Seed: bootSeed(s.dataset, s.title, o.title, la, lb, c.Metric, mb)}
		if ra, rb := ma.Value.Range, mo.Value.Range; len(ra) == 2 && slices.Equal(ra, rb) {
			bt.Range = ra // one score's natural bounds: a few inputs that differ move its mean only so far
		}
		pairs = append(pairs, comparison{a: la + " under " + s.title, b: lb + " under " + o.title, diff: bt.Diff(va, vb), pHolm: bt.Paired(va, vb, holmLevels(len(c.A))).P})
	}
	holmOver(pairs)
	if c.Expect == "near" {
		v.Result = fmt.Sprintf("%s's %s against %s's %s, paired over the same inputs.", s.title, c.Metric, o.title, mb)
		e.equivalent(c, s, pairs, nil, v)
		return
	}
	decidePairs(c, pairs, func(x float64) float64 { return x }, v)
	v.Result = fmt.Sprintf("%s's %s against %s's %s (%s is better), paired over the same inputs: %s", s.title, c.Metric, o.title, mb, betterWord(mo.Better), v.Result)
}

// findLabel is the setting's label that the claim's method name names.
func findLabel(s selected, name, plain string) string {
	for _, r := range s.recs {
		if matches(name, label(r), plain) {
			return label(r)
		}
	}
	return ""
}

// reorders decides a reorders check (Check): whether the setting ranks
// the methods both rank in another order than Others[0] does.
func (e evaluator) reorders(c Check, s selected, v *Verdict) {
	o, err := e.other(c, s)
	if err != nil {
		v.Outcome, v.Result = NotEvaluated, err.Error()
		return
	}
	ra, ok := e.ranking(s, v)
	if !ok {
		return
	}
	rb, ok := e.ranking(o, v)
	if !ok {
		return
	}
	score := func(r report.Ranking, m string) (float64, bool) {
		for _, x := range r.Methods {
			if x.Method == m && x.Ranked() {
				return oriented(x.CI.Estimate, r.Better), true
			}
		}
		return 0, false
	}
	var both []string
	var xa, xb []float64
	for _, m := range ra.Methods {
		a, okA := score(ra, m.Method)
		b, okB := score(rb, m.Method)
		if _, _, post := labelParts(m.Method); okA && okB && post == c.Plain {
			both, xa, xb = append(both, m.Method), append(xa, a), append(xb, b)
		}
	}
	if len(both) < 2 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s and %s rank %d methods in common: an order needs two", s.title, o.title, len(both))
		return
	}
	var flips, turned, same []string
	var parts []part
	for i := range both {
		for j := i + 1; j < len(both); j++ {
			if xa[i] == xa[j] || xb[i] == xb[j] {
				continue
			}
			pa, _ := pairBetween(ra, both[i], both[j])
			pb, _ := pairBetween(rb, both[i], both[j])
			w := fmt.Sprintf("%s and %s", both[i], both[j])
			p := part{name: w, tested: true}
			switch opposite := (xa[i] > xa[j]) != (xb[i] > xb[j]); {
			case opposite && pa.Differ && pb.Differ:
				flips, p.told = append(flips, w), 1
			case opposite:
				turned = append(turned, w)
			case pa.Differ && pb.Differ:
				same, p.told = append(same, w), -1
			}
			parts = append(parts, p)
		}
	}
	tau := stats.KendallTau(xa, xb)
	v.Ours["tau"] = fmt.Sprintf("%+.2f", tau)
	v.Ours["flips"] = fmt.Sprintf("%d", len(flips))
	v.Result = fmt.Sprintf("%s and %s over the %d methods both rank (%s): Kendall's τ of their orders %+.2f; pairs in opposite orders told apart by both: %s; in opposite orders within the noise of one: %s; in the same order, told apart by both: %d",
		s.title, o.title, len(both), strings.Join(both, ", "), tau, listOr(flips), listOr(turned), len(same))
	v.Rule = "holds when some pair of methods is told apart by both settings (paired tests, Holm) in opposite orders; does not hold when every pair is told apart by both in the same order; inconclusive otherwise (orders that differ only within the noise)"
	v.Outcome, _ = c.ruleOf().decide(parts)
}

func listOr(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	slices.Sort(xs)
	return strings.Join(xs, "; ")
}
