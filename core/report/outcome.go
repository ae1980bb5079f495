package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/stats"
)

// Every statement of a report — a pair of methods told apart, a
// protocol's ranking naming a best method, a report card's "this
// protocol can rank these methods here", the protocols agreeing — has one
// of four outcomes. Where the run neither confirms nor excludes it, the
// statement is inconclusive, not false, and says the smallest difference
// this run could have found and about how many inputs (or seeds, where
// the seed is the unit) would decide it.

// Outcome is what a run says of a statement.
type Outcome string

// The four outcomes.
const (
	Holds        Outcome = "holds"         // the run confirms it
	DoesNotHold  Outcome = "does not hold" // the run excludes it: evidence against, not noise
	Inconclusive Outcome = "inconclusive"  // within the noise: more inputs or seeds would decide it
	NotEvaluated Outcome = "not evaluated" // nothing here can judge it
)

// power is the chance of finding a difference at which a run "could
// detect" it: 80 %, the usual planning power.
const power = 0.8

// othersSkewness is the skewness a method's intervals are flagged by
// (stats.Bootstrap.Skewness): the score's, pooled over the setting's
// other methods under every seed (stats.PooledSkewness) — the run's
// methods draw a score from distributions of much the same shape, and a
// sample's own skewness at tens of inputs is too noisy to flag by (the
// intervals it leaves unflagged undercover). A method alone in its
// setting is flagged by its own seeds' values.
func othersSkewness(all map[string]series, method string) float64 {
	var pool [][]float64
	for m, s := range all {
		if m != method {
			pool = append(pool, s.data...)
		}
	}
	if len(pool) == 0 {
		pool = all[method].data
	}
	return stats.PooledSkewness(pool)
}

// pairsSkewness is othersSkewness of the k-th pair's differences: those
// of the setting's other pairs under every seed, or its own where it is
// the only pair.
func pairsSkewness(diffs [][][]float64, k int) float64 {
	var pool [][]float64
	for j, d := range diffs {
		if j != k {
			pool = append(pool, d...)
		}
	}
	if len(pool) == 0 {
		pool = diffs[k]
	}
	return stats.PooledSkewness(pool)
}

// holmLevels are the levels Holm's procedure reads each p against:
// Alpha/(m − j + 1) for the j-th smallest of m (ties in input order),
// NaN for a NaN p.
func holmLevels(ps []float64) []float64 {
	order := make([]int, 0, len(ps))
	for i, p := range ps {
		if !math.IsNaN(p) {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(i, j int) int {
		switch {
		case ps[i] < ps[j]:
			return -1
		case ps[i] > ps[j]:
			return 1
		}
		return 0
	})
	out := make([]float64, len(ps))
	for i := range out {
		out[i] = math.NaN()
	}
	for j, i := range order {
		out[i] = Alpha / float64(len(order)-j)
	}
	return out
}

// judge sets the pair's outcome and what the run could have told, its
// difference's interval at the confidence level.
func (p *Pair) judge(level float64) {
	p.Detectable, p.Needed, p.Unit = math.NaN(), 0, "inputs"
	seeds := p.Diff.Groups >= 2
	if seeds {
		p.Unit = "seeds"
	}
	switch {
	case math.IsNaN(p.P) || math.IsNaN(p.PHolm):
		p.Outcome, p.Words = NotEvaluated, "not evaluated: no p-value"
		return
	case p.Differ:
		p.Outcome, p.Words = Holds, "holds: told apart (Holm p "+strings.TrimPrefix(pValue(p.PHolm), "= ")+")"
		return
	}
	p.Outcome = Inconclusive
	if p.Diff.Method == stats.MethodNoneDiffer {
		p.Words = "inconclusive: " + NoneDiffer + ", so these inputs cannot tell them apart"
		return
	}
	if seeds {
		p.Detectable = stats.DetectableSeeds(p.Diff, level, p.Level, power)
		p.Needed = stats.SeedsFor(p.Diff, p.Diff.Estimate, level, p.Level, power)
	} else {
		p.Detectable = stats.Detectable(p.Diff, level, p.Level, power)
		p.Needed = stats.UnitsFor(p.Diff, p.Diff.Units, p.Diff.Estimate, level, p.Level, power)
	}
	p.Words = "inconclusive: " + p.plan()
}

// NoneDiffer is what a pair's difference says where no input differs,
// in place of an interval.
const NoneDiffer = "no input differs"

// plan words what an inconclusive pair's run could have told: "this run
// finds a difference of 0.031 or more 80 % of the time (at Holm's 0.05);
// about 240 inputs would tell them apart".
func (p Pair) plan() string {
	var parts []string
	if !math.IsNaN(p.Detectable) {
		parts = append(parts, fmt.Sprintf("this run finds a difference of %s or more %.0f %% of the time (at Holm's level %s)", small(p.Detectable), 100*power, strings.TrimPrefix(pValue(p.Level), "= ")))
	}
	switch most := map[bool]int{true: 1e6, false: 1e9}[p.Unit == "seeds"]; {
	case p.Needed >= most:
		parts = append(parts, fmt.Sprintf("more than %s %s would be needed to tell them apart", thousands(most), p.Unit))
	case p.Needed > 0:
		parts = append(parts, fmt.Sprintf("about %s %s would tell them apart", thousands(p.Needed), p.Unit))
	case p.Diff.Estimate == 0:
		parts = append(parts, "their scores do not differ on average, so no number of "+p.Unit+" is predicted to tell them apart")
	}
	if len(parts) == 0 {
		return "not told apart"
	}
	return strings.Join(parts, "; ")
}

// small writes a positive figure to two significant digits at least.
func small(v float64) string {
	if math.Abs(v) >= 0.001 || v == 0 || math.IsNaN(v) {
		return number(v)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// thousands writes n with a thin space between groups of three digits
// from 10 000 on: "240", "1200", "12 000".
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 10000 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteRune(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// judge sets the ranking's outcome and its words.
func (r *Ranking) judge() {
	r.Outcome, r.Says = r.outcome()
}

// Verdict words whether the ranking names a best method, and why not,
// beginning with its outcome: "holds: best ig, told apart from the
// runner-up", "inconclusive: no clear winner — …; about 240 inputs would
// tell them apart"; "" for a ranking of one method.
func (r Ranking) Verdict() string {
	_, words := r.outcome()
	return words
}

func (r Ranking) outcome() (Outcome, string) {
	ranked := r.rankedOnly().Methods
	switch {
	case len(r.Methods) <= 1:
		return NotEvaluated, ""
	case r.Winner != "":
		return Holds, "holds: best " + r.Winner + ", told apart from the runner-up"
	case r.Withheld != "":
		return DoesNotHold, "does not hold: " + r.Withheld + " is told apart from the runner-up, but the report card finds that " + r.Protocol + " cannot rank these methods here, so no best is named"
	case slices.ContainsFunc(r.Methods, func(m RankedMethod) bool { return m.Weak }):
		return NotEvaluated, "not evaluated: no winner named, as no method's retrained models learned in this setting (!)"
	case len(ranked) < 2:
		return NotEvaluated, "not evaluated: no winner named, as fewer than two methods have a score"
	case r.allEqual():
		return DoesNotHold, "does not hold: no winner, as every method scores the same (" + number(ranked[0].CI.Estimate) + ")"
	}
	words := "inconclusive: no clear winner — the best, " + ranked[0].Method + ", cannot be told apart from the runner-up, " + ranked[1].Method
	if p, ok := pairOf(r, ranked[0].Method, ranked[1].Method); ok && p.Outcome == Inconclusive {
		words += "; " + strings.TrimPrefix(p.Words, "inconclusive: ")
	}
	return Inconclusive, words
}

// judgeAgreement sets each dataset's agreement's outcome: holds where
// the protocols concord beyond chance, inconclusive where no more than
// chance would, not evaluated where nothing is compared — and does not
// hold where two protocols order two methods oppositely, each order told
// apart (Contradiction), whatever their concordance.
func (c *Confidence) judgeAgreement() {
	for i := range c.Agreement {
		a := &c.Agreement[i]
		switch {
		case slices.ContainsFunc(c.Contradictions, func(x Contradiction) bool { return x.Dataset == a.Dataset }):
			a.Outcome = DoesNotHold
		case len(a.Protocols) == 0 || math.IsNaN(a.P):
			a.Outcome = NotEvaluated
		case a.P < Alpha:
			a.Outcome = Holds
		default:
			a.Outcome = Inconclusive
		}
	}
}

// Says is the agreement's outcome and its words: "inconclusive: the 2
// protocols agree strongly … but no more than chance would …".
func (a Agreement) Says() string {
	o := a.Outcome
	if o == "" {
		o = NotEvaluated
	}
	if o == DoesNotHold {
		return string(o) + ": two of the protocols order two methods oppositely, each order told apart; " + a.Words
	}
	return string(o) + ": " + a.Words
}

// reconcile names no winner beside a report card that finds its setting
// cannot rank these methods here (Outcome DoesNotHold): the best method
// told apart from the runner-up is then Withheld, and the ranking's
// verdict says why.
func (c *Confidence) reconcile() {
	for _, row := range c.Card {
		if row.Outcome != DoesNotHold {
			continue
		}
		for i := range c.Rankings {
			r := &c.Rankings[i]
			if r.Dataset == row.Dataset && r.Protocol == row.Protocol && r.Winner != "" {
				r.Withheld, r.Winner = r.Winner, ""
				r.judge()
			}
		}
	}
}

// verdict words the card: whether the setting can rank these methods
// here, and why not — its outcome, and the verdict beginning with it.
// A check that blocks the ranking on evidence (a control above a method
// and told apart from it, every method scoring the same) makes it "does
// not hold"; checks that block it on the noise alone (pairs not told
// apart, a control within a method's noise, a ranking that changes with
// the inputs) make it inconclusive, with what the run could have told.
func verdict(row CardRow, r Ranking, controls int) (bool, Outcome, string) {
	var problems []string
	for _, f := range row.Findings() {
		if f.F.Flag && f.F.Short != "" {
			problems = append(problems, f.F.Short)
		}
	}
	blocking := []Finding{row.Separation, row.Random, row.Reliability}
	can := !slices.ContainsFunc(blocking, func(f Finding) bool { return f.Flag })
	switch {
	case !can && slices.ContainsFunc(blocking, func(f Finding) bool { return f.Flag && !f.Noise }):
		return false, DoesNotHold, fmt.Sprintf("Does not hold: %s cannot rank these methods here: %s", row.Protocol, strings.Join(problems, "; "))
	case !can:
		return false, Inconclusive, inconclusiveVerdict(row, r, problems)
	case len(problems) > 0:
		return true, Holds, fmt.Sprintf("Holds, with caveats: %s ranks these methods: %s", row.Protocol, strings.Join(problems, "; "))
	}
	// What the checks that ran found.
	var passed []string
	if !row.Random.Flag && row.Random.Value >= 1 {
		passed = append(passed, pickWord(controls > 1, "the random controls rank", "the random control ranks")+" below them")
	}
	switch s := row.Separation.Value; {
	case s == 1:
		passed = append(passed, "every pair of them is told apart")
	case !math.IsNaN(s):
		passed = append(passed, "half or more of their pairs are told apart")
	}
	if !math.IsNaN(row.Reliability.Value) {
		passed = append(passed, "the ranking holds across inputs")
	}
	if len(passed) == 0 {
		return true, NotEvaluated, fmt.Sprintf("Not evaluated: %s ranks these methods here, but no check could judge its ranking", row.Protocol)
	}
	return true, Holds, fmt.Sprintf("Holds: %s ranks these methods here: %s", row.Protocol, andList(passed))
}

// inconclusiveVerdict is the card's verdict where only the noise blocks
// the ranking: what the checks found, the smallest difference between
// two methods the run could find, and about how many inputs (or seeds)
// would tell apart the neighbours in the ranking it cannot yet order. It
// names a best method where the ranking does (the best told apart from
// the runner-up) rather than saying the setting cannot rank them.
func inconclusiveVerdict(row CardRow, r Ranking, problems []string) string {
	var head string
	if r.Winner != "" {
		head = fmt.Sprintf("Inconclusive: %s names a best method, %s (told apart from the runner-up), but cannot yet order the rest: %s", row.Protocol, r.Winner, strings.Join(problems, "; "))
	} else {
		head = fmt.Sprintf("Inconclusive: %s cannot yet rank these methods here: %s", row.Protocol, strings.Join(problems, "; "))
	}
	// The neighbours in the ranking not told apart, best first.
	ranked := r.rankedOnly().Methods
	var detect []float64
	var need []string
	unit := "inputs"
	for k := 0; k+1 < len(ranked); k++ {
		p, ok := pairOf(r, ranked[k].Method, ranked[k+1].Method)
		if !ok || p.Outcome != Inconclusive {
			continue
		}
		unit = p.Unit
		if !math.IsNaN(p.Detectable) {
			detect = append(detect, p.Detectable)
		}
		switch {
		case p.Diff.Method == stats.MethodNoneDiffer:
			need = append(need, fmt.Sprintf("%s: %s from %s", NoneDiffer, p.A, p.B))
		case p.Needed > 0 && len(ranked) == 2:
			need = append(need, "about "+thousands(p.Needed)+" "+p.Unit+" would tell them apart")
		case p.Needed > 0:
			need = append(need, fmt.Sprintf("about %s %s would tell %s from %s", thousands(p.Needed), p.Unit, p.A, p.B))
		}
	}
	if len(detect) > 0 {
		lo, hi := slices.Min(detect), slices.Max(detect)
		span := small(lo)
		if small(hi) != span {
			span += "–" + small(hi)
		}
		head += fmt.Sprintf("; on these %s this run finds a difference between two methods of %s or more %.0f %% of the time", unit, span, 100*power)
	}
	if len(need) > 3 {
		need = append(need[:3], "…")
	}
	if len(need) > 0 {
		head += "; " + strings.Join(need, "; ")
	}
	return head
}
