package reproduce

import (
	"fmt"
	"math"
	"strings"

	"faithlab/core/report"
	"faithlab/core/stats"
)

// A claim is decided part by part, each part a statistic of the run — a
// paired difference of two methods, a correlation, an R², a share — with
// its interval, oriented so that the claim says it lies above a bound
// (directional: "A scores above B", "R² reaches 0.5") or within a margin
// of zero (equivalence: "minimal differences", "negligible", "blind to
// λ"). A part holds when its evidence confirms the claim (a paired test
// tells the pair apart as claimed; the interval lies past the bound, or
// inside ±margin), is excluded when its evidence rules the claim out (the
// test tells the pair apart the other way; the interval lies on the wrong
// side of the bound, or wholly beyond the margin), and is open otherwise:
// this run cannot tell. The claim's parts combine as its words say
// (rule.combine): every one of them, most of them, any of them. A claim
// is said not to hold only where the evidence excludes it; where it
// neither confirms nor excludes, it is inconclusive, and the verdict says
// the smallest difference the run could have found and about how many
// inputs (or seeds, or methods) would decide it.

// part is one part of a claim as decided on a run, or on the paper's own
// numbers (exact: lo = hi = est).
type part struct {
	name        string
	est, lo, hi float64 // the statistic, oriented as the claim says, and its 95 % interval
	// tested: decided by a paired test rather than by the interval alone;
	// told is then +1 (told apart as claimed), −1 (the other way) or 0.
	tested bool
	told   int
	// For what would decide an open part: the interval the statistic's
	// spread comes from, the level of its test, and the units its
	// interval rests on (n of them, named unit: "input", "seed", "method").
	iv    stats.Interval
	alpha float64
	n     int
	unit  string
}

// partOutcome is where a part's evidence stands.
type partOutcome int

const (
	open partOutcome = iota
	confirmed
	excluded
)

// rule is how a claim's parts are judged and combined.
type rule struct {
	equiv  bool    // equivalence: |est| ≤ margin; else directional: est > bound
	bound  float64 // directional
	margin float64 // equivalence
	// combine: all (default: every part, each a claim of its own, so that
	// some holding is "in part"), every (one claim of the whole set: a part
	// excluded excludes it), most (a quorum of the parts), any (one
	// suffices)
	combine string
	quorum  float64 // most: the share of the parts that must hold
}

func (r rule) judge(p part) partOutcome {
	switch {
	case math.IsNaN(p.est):
		return open
	case r.equiv && p.lo >= -r.margin && p.hi <= r.margin:
		return confirmed
	case r.equiv && (p.lo > r.margin || p.hi < -r.margin):
		return excluded
	case r.equiv:
		return open
	case p.tested && p.told > 0, !p.tested && p.lo > r.bound:
		return confirmed
	case p.tested && p.told < 0, !p.tested && p.hi < r.bound:
		return excluded
	}
	return open
}

// count is how many parts hold, are excluded and are open.
func (r rule) count(parts []part) (held, out, opened int) {
	for _, p := range parts {
		switch r.judge(p) {
		case confirmed:
			held++
		case excluded:
			out++
		default:
			opened++
		}
	}
	return held, out, opened
}

// decide combines the parts into the claim's outcome, with a sentence
// that says which parts stand where and, where the run cannot tell, what
// would decide it.
func (r rule) decide(parts []part) (Outcome, string) {
	if len(parts) == 0 {
		return NotEvaluated, "no part of the claim could be computed"
	}
	var held, out, opened []part
	for _, p := range parts {
		switch r.judge(p) {
		case confirmed:
			held = append(held, p)
		case excluded:
			out = append(out, p)
		default:
			opened = append(opened, p)
		}
	}
	h, x, n := len(held), len(out), len(parts)
	var o Outcome
	switch r.combine {
	case "most":
		need := int(math.Ceil(r.quorum * float64(n)))
		switch {
		case h >= need:
			o = Holds
		case x > n-need:
			o = DoesNotHold
		default:
			o = Inconclusive
		}
	case "any":
		switch {
		case h > 0:
			o = Holds
		case x == n:
			o = DoesNotHold
		default:
			o = Inconclusive
		}
	case "every": // one claim of a whole set (no two alike beyond the margin): any part excluded excludes it
		switch {
		case h == n:
			o = Holds
		case x > 0:
			o = DoesNotHold
		default:
			o = Inconclusive
		}
	default: // all
		switch {
		case h == n:
			o = Holds
		case h > 0:
			o = InPart
		case x > 0:
			o = DoesNotHold
		default:
			o = Inconclusive
		}
	}
	var words []string
	if n > 1 {
		if h > 0 {
			words = append(words, fmt.Sprintf("%d of %d parts hold (%s)", h, n, names(held)))
		}
		if x > 0 {
			words = append(words, fmt.Sprintf("%d excluded (%s)", x, names(out)))
		}
		if len(opened) > 0 {
			words = append(words, fmt.Sprintf("%d undecided (%s)", len(opened), names(opened)))
		}
	}
	s := strings.Join(words, "; ")
	if o == Inconclusive || o == InPart && len(opened) > 0 && x == 0 {
		if w := r.wouldDecide(opened); w != "" {
			s = strings.TrimPrefix(s+". "+w, ". ")
		}
	}
	return o, s
}

func names(ps []part) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.name)
	}
	return strings.Join(out, "; ")
}

// wouldDecide says, for the open parts, the smallest difference this run
// could have found (80 % power at each part's level) and about how many
// units would decide the part nearest a decision: a directional part's
// estimate found by its test, an equivalence part's interval brought
// inside the margin (or wholly beyond it).
func (r rule) wouldDecide(opened []part) string {
	var detect float64
	need, unit := 0, ""
	for _, p := range opened {
		alpha := p.alpha
		if alpha == 0 {
			alpha = report.Alpha
		}
		iv := p.iv
		if math.IsNaN(iv.Hi - iv.Lo) {
			iv = stats.Interval{Lo: p.lo, Hi: p.hi}
		}
		seeds := p.unit == "seed" && iv.Method == stats.MethodSeeds
		d := stats.Detectable(iv, 0.95, alpha, 0.8)
		if seeds { // Student's t at the seeds' degrees of freedom
			d = stats.DetectableSeeds(iv, 0.95, alpha, 0.8)
		}
		if !math.IsNaN(d) {
			detect = max(detect, d)
		}
		gap := p.est - r.bound
		if r.equiv {
			gap = r.margin - math.Abs(p.est)
		}
		if gap <= 0 && !r.equiv {
			continue // the estimate goes against the claim: no count of units finds it
		}
		k := stats.UnitsFor(iv, p.n, gap, 0.95, alpha, 0.8)
		if seeds {
			k = stats.SeedsFor(iv, gap, 0.95, alpha, 0.8)
		}
		if k > 0 && (need == 0 || k > need) {
			need, unit = k, p.unit
		}
	}
	var w []string
	if detect > 0 {
		what := "difference"
		if r.equiv {
			what = "departure from no difference"
		}
		w = append(w, fmt.Sprintf("this run could have found a %s of %.3g or more (80 %% power)", what, detect))
	}
	if need > 0 {
		w = append(w, fmt.Sprintf("about %d %ss would decide it at the difference seen", need, unit))
	}
	if len(w) == 0 {
		return ""
	}
	return "Cannot tell at this size: " + strings.Join(w, "; ") + "."
}

// unitsOfIV names what an interval of a paired comparison rests on: its
// seeds where there are several (retraining: the seed is the unit), else
// its inputs.
func unitsOfIV(iv stats.Interval) (int, string) {
	if iv.Groups >= 2 {
		return iv.Groups, "seed"
	}
	return iv.Units, "input"
}

// pairPart is a paired comparison a − b as a directional part: oriented
// so that the claim (sign +1: A better; −1: A worse) says it is above 0,
// decided by its test (Holm over the claim's pairs, k of them).
func pairPart(c comparison, better func(float64) float64, sign float64, k int) part {
	o := func(x float64) float64 { return sign * better(x) }
	lo, hi := o(c.diff.Lo), o(c.diff.Hi)
	if lo > hi {
		lo, hi = hi, lo
	}
	told := 0
	if c.differ {
		told = 1
		if o(c.diff.Estimate) < 0 {
			told = -1
		}
	}
	n, unit := unitsOfIV(c.diff)
	return part{name: c.a + " − " + c.b, est: o(c.diff.Estimate), lo: lo, hi: hi, tested: true, told: told,
		iv: c.diff, alpha: report.Alpha / float64(max(k, 1)), n: n, unit: unit}
}

// diffPart is a paired comparison a − b as an equivalence part.
func diffPart(c comparison) part {
	n, unit := unitsOfIV(c.diff)
	return part{name: c.a + " − " + c.b, est: c.diff.Estimate, lo: c.diff.Lo, hi: c.diff.Hi, iv: c.diff, n: n, unit: unit}
}
