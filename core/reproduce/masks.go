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
	var parts []string
	for _, post := range c.Posts {
		w, t := protocol.PostCount(plain, pts(post), better)
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
		s.title, quantity, betterWord(better), wins, total, strings.Join(parts, ", "), 100*share, 100*lo, 100*hi)
	if c.Expect == "lower" {
		v.Result = fmt.Sprintf("%s %s: the post-processed maps' masks have a lower total variation than the plain ones' in %d of %d comparisons (%s), %.0f %% [%.0f, %.0f] (95 %% Wilson)",
			s.title, quantity, wins, total, strings.Join(parts, ", "), 100*share, 100*lo, 100*hi)
	}
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
		sign := "+"
		if fit.Slope < 0 {
			sign = "−"
		}
		v.Ours[key] = fmt.Sprintf("%.2f [%.2f, %.2f], slope %s", fit.R2, lo, hi, sign)
		parts = append(parts, fmt.Sprintf("%g: R² %.2f [%.2f, %.2f] over %d methods (slope %.3g)", rate, fit.R2, lo, hi, len(pts), fit.Slope))
		// The paper's direction: smoother (lower-TV) masks score better,
		// so a lower-is-better score rises with TV.
		if fit.R2 >= c.MinR2 && (fit.Slope > 0) == (m.Better == protocol.Lower) {
			reached++
		}
	}
	if fitted == 0 {
		v.Outcome, v.Result = NotEvaluated, fmt.Sprintf("%s: no rate with three methods whose %s varies: %s", s.title, c.Curve, strings.Join(parts, "; "))
		return
	}
	v.Result = fmt.Sprintf("R² of %s %s on the masks' total variation, plain maps of the attribution methods%s, by rate (95 %% bootstrap over the methods): %s", s.title, c.Curve, left, strings.Join(parts, "; "))
	v.Rule = fmt.Sprintf("holds when R² reaches %.2g at every rate with the paper's direction (smoother masks, better score: a slope of %s sign); in part when it does at some", c.MinR2, map[bool]string{true: "positive", false: "negative"}[m.Better == protocol.Lower])
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
