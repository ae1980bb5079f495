package reproduce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/protocol"
	"faithlab/core/stats"
)

// inPartOtherwise is the rest of a rule whose parts are each a claim of
// their own (rule.decide's default combination): a part excluded with
// none holding excludes the claim, though other parts stay open.
const inPartOtherwise = "in part when some do; does not hold when none does and some lie wholly below it; inconclusive otherwise"

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
// maps post-processed by post, matched by the method's name: a point a
// method and rate, its TV and value the means over the seeds (the DPI
// paper's "average of five trials").
func points(s selected, m protocol.Metric, post string) []protocol.TVPoint {
	var res []protocol.Result
	for _, r := range s.recs {
		if r.Post == post {
			x := *r.Result
			x.Method = r.Method
			res = append(res, x)
		}
	}
	type key struct {
		method string
		rate   float64
	}
	sum, n := map[key]protocol.TVPoint{}, map[key]int{}
	var order []key
	for _, p := range protocol.TVPoints(res, m.Name, m.MaskTV) {
		k := key{p.Method, p.Rate}
		if n[k] == 0 {
			order = append(order, k)
		}
		q := sum[k]
		q.Method, q.Rate, q.TV, q.Accuracy = p.Method, p.Rate, q.TV+p.TV, q.Accuracy+p.Accuracy
		sum[k], n[k] = q, n[k]+1
	}
	out := make([]protocol.TVPoint, len(order))
	for i, k := range order {
		q := sum[k]
		q.TV, q.Accuracy = q.TV/float64(n[k]), q.Accuracy/float64(n[k])
		out[i] = q
	}
	return out
}

// MinFitMethods is the fewest attribution methods a tv check fits R² over
// at a rate: with fewer, one method moves R² anywhere in [0, 1] (three
// points leave one degree of freedom), and its bootstrap over the methods
// has too few distinct resamples to mean anything. The DPI paper fits
// seven (Fig. 7).
const MinFitMethods = 5

// post decides a post check: the DPI paper's Table 2 (Check).
func (e evaluator) post(c Check, s selected, v *Verdict) {
	m, err := curveOf(s, c.Curve)
	if err != nil || m.MaskTV == "" || m.Better == "" {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s: no %s curve with its masks' TV and a direction", s.title, c.Curve)
		return
	}
	quantity, better := c.Curve, m.Better
	pts := func(post string) []protocol.TVPoint { return points(s, m, post) }
	if c.Expect == "lower" { // the masks' TV itself (DPI Fig. 6: the filters smooth the masks)
		quantity, better = m.MaskTV, protocol.Lower
		pts = func(post string) []protocol.TVPoint {
			p := points(s, m, post)
			for i := range p {
				p[i].Accuracy = p[i].TV
			}
			return p
		}
	}
	plain := pts(c.Plain)
	wins, total := 0, 0
	var words []string
	var parts []part
	for _, post := range c.Posts {
		w, t := protocol.PostCount(plain, pts(post), better)
		wins, total = wins+w, total+t
		v.Ours["count:"+post] = fmt.Sprintf("%d/%d", w, t)
		if t == 0 {
			continue
		}
		parts = append(parts, sharePart(post, w, t))
		lo, hi := wilson(w, t)
		words = append(words, fmt.Sprintf("%s %d/%d, %.0f %% [%.0f, %.0f]", post, w, t, 100*float64(w)/float64(t), 100*lo, 100*hi))
	}
	if total == 0 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s has no (method, rate) point with both the %q maps and %s", s.title, c.Plain, strings.Join(c.Posts, ", "))
		return
	}
	v.Ours["count"] = fmt.Sprintf("%d/%d", wins, total)
	v.Result = fmt.Sprintf("%s %s (%s is better): the post-processed maps score better than the plain ones in %d of %d comparisons (%s; 95 %% Wilson)",
		s.title, quantity, betterWord(better), wins, total, strings.Join(words, ", "))
	if c.Expect == "lower" {
		v.Result = fmt.Sprintf("%s %s: the post-processed maps' masks have a lower total variation than the plain ones' in %d of %d comparisons (%s; 95 %% Wilson)",
			s.title, quantity, wins, total, strings.Join(words, ", "))
	}
	v.Rule = "for each post-processing, the share of comparisons it wins, with its 95 % Wilson interval: holds when every share's interval lies above one half; " + inPartOtherwise
	o, w := c.ruleOf().decide(parts)
	v.Outcome, v.Result = o, withWords(v.Result, w)
}

// sharePart is k wins of n comparisons as a part whose claim is a
// majority: the share, with its 95 % Wilson interval, above one half.
func sharePart(name string, k, n int) part {
	lo, hi := wilson(k, n)
	p := float64(k) / float64(n)
	return part{name: name, est: p, lo: lo, hi: hi, iv: stats.Interval{Estimate: p, Lo: lo, Hi: hi}, n: n, unit: "comparison"}
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

// tv decides a tv check: the DPI paper's Table 3 (Check).
func (e evaluator) tv(c Check, s selected, v *Verdict) {
	m, err := curveOf(s, c.Curve)
	if err != nil || m.MaskTV == "" {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s: no %s curve with its masks' TV", s.title, c.Curve)
		return
	}
	// The paper's quantity: attribution methods alone. A control's mask
	// (PixelRandom's speckle, BlockRandom's rectangle) sits at an extreme
	// of TV by construction and would make the fit's line.
	byRate := map[float64][]protocol.TVPoint{}
	var controls []string
	for _, p := range points(s, m, c.Plain) {
		if isControl(p.Method) {
			if !slices.Contains(controls, p.Method) {
				controls = append(controls, p.Method)
			}
			continue
		}
		byRate[p.Rate] = append(byRate[p.Rate], p)
	}
	left := ""
	if len(controls) > 0 {
		left = fmt.Sprintf(" (controls left out of the fit: %s)", strings.Join(controls, ", "))
	}
	for _, pts := range byRate {
		if len(pts) < MinFitMethods {
			v.Outcome = NotEvaluated
			v.Result = fmt.Sprintf("%s: %d attribution methods at a rate%s; R² over methods needs at least %d to decide anything (the paper fits 7): add attribution methods to the campaign", s.title, len(pts), left, MinFitMethods)
			return
		}
	}
	rates := slices.Sorted(func(yield func(float64) bool) {
		for r := range byRate {
			if !yield(r) {
				return
			}
		}
	})
	// The paper's direction: smoother (lower-TV) masks score better, so a
	// lower-is-better score rises with TV; R² is signed by it.
	dir := -1.0
	if m.Better == protocol.Lower {
		dir = 1
	}
	fitted := 0
	var words []string
	var parts []part
	for _, rate := range rates {
		pts := byRate[rate]
		fit, err := protocol.TVFit(pts)
		key := "r2:" + strconv.FormatFloat(rate, 'g', -1, 64)
		if err != nil {
			v.Ours[key] = "—"
			words = append(words, fmt.Sprintf("%g: no fit (%v)", rate, err))
			continue
		}
		fitted++
		lo, hi := r2Interval(pts, dir, bootSeed(s.dataset, s.title, key))
		sign := "+"
		if fit.Slope < 0 {
			sign = "−"
		}
		signed := fit.R2 * dir * math.Copysign(1, fit.Slope)
		v.Ours[key] = fmt.Sprintf("%.2f, slope %s (signed by the paper's direction: %+.2f [%+.2f, %+.2f])", fit.R2, sign, signed, lo, hi)
		words = append(words, fmt.Sprintf("%g: R² %.2f over %d methods (slope %.3g), signed by the paper's direction %.2f [%.2f, %.2f]", rate, fit.R2, len(pts), fit.Slope, signed, lo, hi))
		parts = append(parts, part{name: fmt.Sprintf("rate %g", rate), est: signed, lo: lo, hi: hi, iv: stats.Interval{Estimate: signed, Lo: lo, Hi: hi}, n: len(pts), unit: "method"})
	}
	if fitted == 0 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s: no rate with three methods whose %s varies: %s", s.title, c.Curve, strings.Join(words, "; "))
		return
	}
	v.Result = fmt.Sprintf("R² of %s %s on the masks' total variation, plain maps of the attribution methods%s, by rate (95 %% bootstrap over the methods): %s", s.title, c.Curve, left, strings.Join(words, "; "))
	v.Rule = fmt.Sprintf("R² signed by the slope (positive in the paper's direction: smoother masks, better score), at each rate: holds when every rate's interval lies above %.2g; %s", c.MinR2, inPartOtherwise)
	o, w := c.ruleOf().decide(parts)
	v.Outcome, v.Result = o, withWords(v.Result, w)
}

// r2Interval is a 95 % bootstrap interval of R² signed by its slope times
// dir over the points (resamples whose fit is undefined left out).
func r2Interval(pts []protocol.TVPoint, dir float64, seed uint64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(seed, 0x7265))
	reps := make([]float64, 0, stats.DefaultResamples)
	draw := make([]protocol.TVPoint, len(pts))
	for range stats.DefaultResamples {
		for i := range draw {
			draw[i] = pts[rng.IntN(len(pts))]
		}
		if f, err := protocol.TVFit(draw); err == nil {
			reps = append(reps, f.R2*dir*math.Copysign(1, f.Slope))
		}
	}
	return percentileCI(reps)
}
