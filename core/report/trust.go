package report

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"faithlab/core/protocol"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// Which method to trust on this model: one answer across the protocols a
// run evaluated, from those whose own diagnostics admit them here.
//
// Admission. Each protocol setting whose family judges faithfulness (a
// map that ignores the model should score worst on it:
// protocol.Family.ControlScoresWorst) is admitted, admitted with a caveat
// or set aside by its report card (card.go), the first failing check
// deciding, with the number and the threshold that did:
//
//   - set aside where its perturbed inputs lie off the data (energy AUROC
//     of perturbed against clean inputs above maxOOD, 0.8), where the
//     masks' total variation explains more than maxMaskTV (half) of a
//     retraining or imputation protocol's accuracy, where its ranking
//     does not follow a known ground truth (r below minTruth, 0.5), where
//     a random control ranks above a method and is told apart from it or
//     scores the same as every method, where every method scores the same,
//     and where it tells the random control apart from no method at all
//     (the positive control: a protocol that cannot tell chance from the
//     methods at this n can tell nothing else);
//   - admitted with a caveat where a check fails only within the noise —
//     a control not told apart from some method, fewer than half of the
//     methods' pairs told apart (minApart), a split-half reliability below
//     minReliability (0.7) — or where a smoothing that knows nothing of
//     the model improves its score, its ranking follows the maps'
//     sparseness, no random control ran, or how far off the data its
//     inputs lie was not measured;
//   - admitted otherwise.
//
// The thresholds are the report card's, the same for every run, and the
// measurements that chose them are stated where they are defined
// (card.go) and in the README.
//
// The answer, per dataset, over the admitted settings (caveats included):
// for each method whether it beats every random control under every one
// (told apart by that setting's Holm-corrected paired test); for each
// pair of methods "better under every admitted protocol" (each tells them
// apart the same way), "contradiction" (two tell them apart in opposite
// ways) or "inconclusive"; and a combined ranking — on each input, each
// method's rank among the methods under each admitted setting, averaged
// over the settings, then over inputs — with a percentile interval from
// resampling inputs (and seeds, where every admitted setting ran the same
// number of them; inputs are lined up by their position in the test set,
// which every protocol reads from its start). A method is the one to
// trust when it is better than every other method under every admitted
// protocol and beats the random controls under each. With no admitted
// setting the answer says it cannot answer, and why.

// Admit is what a protocol setting's diagnostics say of its verdicts here.
type Admit string

// Admissions.
const (
	Admitted       Admit = "admitted"
	AdmittedCaveat Admit = "admitted with a caveat"
	SetAside       Admit = "set aside"
	// NotAsked: a family that does not judge faithfulness (robustness,
	// randomisation, complexity, axiomatic): shown beside the answer, not
	// part of it.
	NotAsked Admit = "not a test of faithfulness"
)

// Admission is one protocol setting's admission with what decided it.
type Admission struct {
	Protocol  string          `json:"protocol"`
	Family    protocol.Family `json:"family,omitempty"`
	Admit     Admit           `json:"admission"`
	Check     string          `json:"check,omitempty"`     // the report card's check that decided it
	Value     float64         `json:"value"`               // its figure (NaN where it has none)
	Threshold string          `json:"threshold,omitempty"` // the threshold it was read against
	Words     string          `json:"words"`
}

// TrustMethod is a method's place in the combined ranking.
type TrustMethod struct {
	Method   string         `json:"method"`
	Control  bool           `json:"control,omitempty"` // a random control
	MeanRank stats.Interval `json:"mean_rank"`         // over inputs (and seeds) and admitted settings; 1 is best
	PFirst   float64        `json:"p_first"`           // share of resamples in which it ranks first
	// BeatsRandom: holds where every admitted setting tells it apart above
	// every random control, does not hold where one tells a control
	// apart above it, inconclusive otherwise.
	BeatsRandom Outcome `json:"beats_random"`
	Words       string  `json:"words"`
}

// Pair verdicts across the admitted settings.
const (
	PairBetter        = "better under every admitted protocol"
	PairContradiction = "contradiction"
	PairInconclusive  = "inconclusive"
)

// TrustPair is what the admitted settings say of two methods (A ranked
// above B in the combined ranking).
type TrustPair struct {
	A       string   `json:"a"`
	B       string   `json:"b"`
	Verdict string   `json:"verdict"`
	For     []string `json:"a_better_under,omitempty"` // settings that tell A apart above B
	Against []string `json:"b_better_under,omitempty"` // settings that tell B apart above A
	Words   string   `json:"words"`
}

// Answer is the run's answer to "which method should I trust on this
// model?" on one dataset.
type Answer struct {
	Dataset string `json:"dataset"`
	// Outcome of "one method is the one to trust": holds (Trusted names
	// it), does not hold (admitted settings contradict each other on it),
	// inconclusive (they cannot yet tell), not evaluated (no setting
	// admitted).
	Outcome    Outcome       `json:"outcome"`
	Trusted    string        `json:"trusted,omitempty"`
	Headline   string        `json:"headline"`
	Short      string        `json:"short"` // the headline without the protocols set aside and with its first contradiction only: what a screen's first line shows
	Admissions []Admission   `json:"admissions"`
	Methods    []TrustMethod `json:"methods,omitempty"` // best combined rank first
	Pairs      []TrustPair   `json:"pairs,omitempty"`
	Units      int           `json:"units"` // inputs the combined ranking lines up
	Seeds      int           `json:"seeds"` // seeds it resamples (1: seed means)
	Divergence *Divergence   `json:"divergence,omitempty"`
	// Checks are the answer's noise-resilience and reactivity checks
	// (trustchecks.go), and CheckLine says them in one line.
	Checks    []AnswerCheck `json:"checks,omitempty"`
	CheckLine string        `json:"check_line,omitempty"`
}

// Divergence is the evidence of a contradiction: the input on which two
// admitted settings that order a pair of methods oppositely disagree the
// most, each difference in units of its setting's spread over inputs.
type Divergence struct {
	A, B   string  `json:"-"`
	Input  int     `json:"input"` // position in the test set
	For    string  `json:"a_better_under"`
	Gap    float64 `json:"gap_for"` // A − B under For (oriented: + is A better), over its spread
	Other  string  `json:"b_better_under"`
	GapOth float64 `json:"gap_other"` // the same under Other
	// Shown is the input the evidence figure shows: the one of the first
	// protocol.PreviewCount, whose perturbed images the run keeps, on
	// which the two disagree the most (Input where it is among them).
	Shown int    `json:"shown"`
	Words string `json:"words"`
}

// answers builds each dataset's answer from the rankings and their cards.
func answers(conf Confidence, recs []store.Record) []Answer {
	c := newCampaign(recs)
	var datasets []string
	for _, r := range conf.Rankings {
		if !slices.Contains(datasets, r.Dataset) {
			datasets = append(datasets, r.Dataset)
		}
	}
	weak := weakModels(recs)
	var out []Answer
	for _, ds := range datasets {
		a := Answer{Dataset: ds}
		if i := slices.IndexFunc(weak, func(w WeakModel) bool { return w.Dataset == ds }); i >= 0 {
			// Every verdict on its maps says little: no answer.
			w := weak[i]
			a.Outcome = NotEvaluated
			a.Short = fmt.Sprintf("Cannot answer: the explained model scored %.3f on the test set (seed %d), nearer chance (%.3f) than a perfect score", w.Accuracy, w.Seed, w.Chance)
			a.Headline = a.Short + ", so its maps explain a model that learned little and no protocol's ranking of them says which method to trust; train it longer or on more samples"
			out = append(out, a)
			continue
		}
		var admitted []Ranking
		for _, row := range conf.Card {
			if row.Dataset != ds {
				continue
			}
			var fam protocol.Family
			if g := c.groupOf(row.Dataset, row.Protocol); g != nil {
				fam = g.info.Family
			}
			ad := admit(row, fam)
			r, ok := conf.Ranking(row.Dataset, row.Protocol)
			if ad.Admit == Admitted || ad.Admit == AdmittedCaveat {
				if few, ok2 := ranksTooFew(ad, r, row); ok2 {
					ad = few
				} else if ok {
					admitted = append(admitted, r)
				}
			}
			a.Admissions = append(a.Admissions, ad)
		}
		if methods := a.decide(admitted, conf.Seed); methods != nil {
			a.answerChecks(admitted, methods, c)
		}
		out = append(out, a)
	}
	return out
}

// admit decides a setting's admission from its report card row.
func admit(row CardRow, fam protocol.Family) Admission {
	ad := Admission{Protocol: row.Protocol, Family: fam, Value: math.NaN()}
	if fam != "" && !fam.ControlScoresWorst() {
		ad.Admit, ad.Words = NotAsked, fmt.Sprintf("a %s metric judges something else than whether a map shows what the model uses", fam)
		return ad
	}
	aside := func(check string, v float64, threshold, words string) Admission {
		ad.Admit, ad.Check, ad.Value, ad.Threshold, ad.Words = SetAside, check, v, threshold, words
		return ad
	}
	switch {
	case row.OOD.Flag:
		return aside("Off the data", row.OOD.Value, fmt.Sprintf("energy AUROC above %.2f", maxOOD), row.OOD.Short)
	case row.MaskTV.Flag:
		return aside("Mask shape", row.MaskTV.Value, fmt.Sprintf("R² above %.2f", maxMaskTV), row.MaskTV.Short)
	case row.Truth.Flag:
		return aside("Ground truth", row.Truth.Value, fmt.Sprintf("r below %+.2f", minTruth), row.Truth.Short)
	case row.Random.Flag && !row.Random.Noise:
		return aside("Random control", row.Random.Value, "a control told apart above a method, or scoring as every method", row.Random.Short)
	case row.Separation.Flag && !row.Separation.Noise:
		return aside("Separation", row.Separation.Value, "some difference between the methods", row.Separation.Short)
	case row.Random.Value == 0:
		return aside("Random control", 0, "told apart from at least one method", "it tells the random control apart from no method at this n: it cannot tell chance from the methods, so nothing else it orders can be believed here")
	}
	var caveats, checks []string
	for _, f := range row.Findings() {
		switch f.Name {
		case "Random control", "Separation", "Reliability", "Post-processing", "Map complexity":
			if f.F.Flag && f.F.Short != "" {
				caveats, checks = append(caveats, f.F.Short), append(checks, f.Name)
			}
		}
	}
	if math.IsNaN(row.Random.Value) && !row.Random.Flag {
		caveats, checks = append(caveats, "no random control ranked beside it, so nothing shows what chance scores"), append(checks, "Random control")
	}
	if math.IsNaN(row.OOD.Value) && (fam == "" || fam == protocol.FamilyFaithfulness) {
		caveats, checks = append(caveats, "how far off the data its perturbed inputs lie is not measured"), append(checks, "Off the data")
	}
	if len(caveats) > 0 {
		ad.Admit, ad.Check, ad.Words = AdmittedCaveat, strings.Join(checks, ", "), strings.Join(caveats, "; ")
		return ad
	}
	ad.Check, ad.Value = "Off the data", row.OOD.Value
	ad.Admit = Admitted
	ad.Words = fmt.Sprintf("every check passes: the random control told apart below every method, ranking reliable across inputs (split-half %.2f)", row.Reliability.Value)
	if !math.IsNaN(row.OOD.Value) {
		ad.Threshold = fmt.Sprintf("energy AUROC at most %.2f", maxOOD)
		ad.Words += fmt.Sprintf(", perturbed inputs near the data (AUROC %.2f)", row.OOD.Value)
	}
	return ad
}

// ranksTooFew sets aside a setting that ranks fewer than two methods here
// (a retraining protocol whose retrained models learned nothing ranks
// none): it cannot order anything, and the methods the answer compares
// are those every admitted setting ranks.
func ranksTooFew(ad Admission, r Ranking, row CardRow) (Admission, bool) {
	n := len(r.rankedOnly().Methods)
	if n >= 2 {
		return ad, false
	}
	ad.Admit, ad.Check, ad.Value, ad.Threshold = SetAside, "Methods ranked", float64(n), "at least 2"
	ad.Words = fmt.Sprintf("it ranks %s here", Count(n, "method"))
	if strings.Contains(row.Random.Words, "retrained models learned") {
		ad.Words += ": no method's retrained models learned"
	}
	return ad, true
}

// decide fills the answer from the admitted settings' rankings and
// returns the methods it ranks (nil where it cannot answer).
func (a *Answer) decide(admitted []Ranking, seed uint64) []string {
	names := make([]string, len(admitted))
	for i, r := range admitted {
		names[i] = r.Protocol
	}
	var aside []string
	for _, ad := range a.Admissions {
		if ad.Admit == SetAside {
			aside = append(aside, fmt.Sprintf("%s (%s)", ad.Protocol, ad.Words))
		}
	}
	if len(admitted) == 0 {
		a.Outcome = NotEvaluated
		switch {
		case len(aside) > 0:
			a.Short = "Cannot answer: every protocol that judges faithfulness here is set aside by its own diagnostics"
			a.Headline = a.Short + " — " + strings.Join(aside, "; ")
		default:
			a.Headline = "Cannot answer: no protocol of this run judges faithfulness (add Deletion, ROAD, IROF or another faithfulness protocol with a random control)"
			a.Short = a.Headline
		}
		return nil
	}
	// The methods every admitted setting ranks, in the first one's order.
	var methods []string
	for _, m := range admitted[0].Methods {
		if !m.Ranked() {
			continue
		}
		in := true
		for _, r := range admitted[1:] {
			if k := slices.IndexFunc(r.Methods, func(x RankedMethod) bool { return x.Method == m.Method }); k < 0 || !r.Methods[k].Ranked() {
				in = false
			}
		}
		if in {
			methods = append(methods, m.Method)
		}
	}
	if len(methods) < 2 {
		a.Outcome, a.Headline = NotEvaluated, "Cannot answer: the admitted protocols share fewer than two ranked methods"
		a.Short = a.Headline
		return nil
	}
	a.combine(admitted, methods, seed)
	// Each method against the random controls, each pair against the other.
	for i := range a.Methods {
		m := &a.Methods[i]
		if m.Control {
			m.BeatsRandom, m.Words = NotEvaluated, pickWord(isControl(m.Method), "a random control", "a control that ignores the model")
			continue
		}
		m.BeatsRandom, m.Words = beatsRandom(admitted, m.Method, methods)
	}
	for i, x := range a.Methods {
		for _, y := range a.Methods[i+1:] {
			if isControl(x.Method) || isControl(y.Method) || x.Control && y.Control {
				continue // Random is each method's own line; Sobel's pairs stay
			}
			a.Pairs = append(a.Pairs, pairAcross(admitted, x.Method, y.Method))
		}
	}
	a.headline(names, aside)
	a.Divergence = divergence(admitted, a.Pairs)
	return methods
}

// beatsRandom says whether every admitted setting tells the method apart
// above every random control it ranks.
func beatsRandom(admitted []Ranking, method string, methods []string) (Outcome, string) {
	var below, within, above []string
	controls := 0
	for _, r := range admitted {
		for _, ctl := range methods {
			if !isControl(ctl) {
				continue
			}
			controls++
			p, ok := pairOf(r, method, ctl)
			switch {
			case ok && p.Differ && p.A == method:
				below = append(below, r.Protocol)
			case ok && p.Differ:
				above = append(above, r.Protocol)
			default:
				within = append(within, r.Protocol)
			}
		}
	}
	switch {
	case controls == 0:
		return NotEvaluated, "no random control ran beside it"
	case len(above) > 0:
		return DoesNotHold, "a random control scores better under " + andList(above)
	case len(within) > 0:
		return Inconclusive, "not told apart from the random control under " + andList(within)
	}
	return Holds, "beats the random control under every admitted protocol"
}

// pairAcross is what the admitted settings say of methods x and y.
func pairAcross(admitted []Ranking, x, y string) TrustPair {
	t := TrustPair{A: x, B: y}
	var open []string
	for _, r := range admitted {
		p, ok := pairOf(r, x, y)
		switch {
		case ok && p.Differ && p.A == x:
			t.For = append(t.For, r.Protocol)
		case ok && p.Differ:
			t.Against = append(t.Against, r.Protocol)
		default:
			open = append(open, r.Protocol)
		}
	}
	switch {
	case len(t.For) > 0 && len(t.Against) > 0:
		t.Verdict = PairContradiction
		t.Words = fmt.Sprintf("%s %s %s above %s, %s the other way, each told apart", andList(t.For), pickWord(len(t.For) > 1, "rank", "ranks"), x, y, andList(t.Against))
	case len(open) == 0 && len(t.For) > 0:
		t.Verdict, t.Words = PairBetter, fmt.Sprintf("%s is better than %s under every admitted protocol", x, y)
	case len(open) == 0:
		t.Verdict, t.Words = PairBetter, fmt.Sprintf("%s is better than %s under every admitted protocol", y, x)
		t.A, t.B, t.For, t.Against = y, x, t.Against, nil
	default:
		t.Verdict = PairInconclusive
		told := "no admitted protocol tells them apart"
		switch {
		case len(t.For) > 0:
			told = fmt.Sprintf("%s %s %s above %s; %s cannot tell them apart", andList(t.For), pickWord(len(t.For) > 1, "rank", "ranks"), x, y, andList(open))
		case len(t.Against) > 0:
			told = fmt.Sprintf("%s %s %s above %s; %s cannot tell them apart", andList(t.Against), pickWord(len(t.Against) > 1, "rank", "ranks"), y, x, andList(open))
		}
		t.Words = told
	}
	return t
}

// combine ranks the methods by their mean rank over inputs, seeds and the
// admitted settings, with intervals from resampling inputs (and seeds).
func (a *Answer) combine(admitted []Ranking, methods []string, seed uint64) {
	n := admitted[0].Units
	seeds := admitted[0].Seeds
	for _, r := range admitted {
		n = min(n, r.Units)
		if r.Seeds != seeds {
			seeds = 1 // unequal seed counts: each setting's seed means
		}
	}
	a.Units, a.Seeds = n, seeds
	k := len(methods)
	ranks := rankTable(admitted, methods, n, seeds)
	mean := func(ss, ii []int) []float64 {
		out := make([]float64, k)
		cnt := 0
		for _, s := range ss {
			for _, i := range ii {
				if math.IsNaN(ranks[s][i][0]) {
					continue
				}
				for m := range out {
					out[m] += ranks[s][i][m]
				}
				cnt++
			}
		}
		for m := range out {
			out[m] /= float64(cnt)
		}
		return out
	}
	all := func(l int) []int {
		x := make([]int, l)
		for i := range x {
			x[i] = i
		}
		return x
	}
	est := mean(all(seeds), all(n))
	const resamples = 2000
	rng := rand.New(rand.NewPCG(seed, 0x7275737421)) // "trust!"
	draws := make([][]float64, k)
	first := make([]int, k)
	ss, ii := make([]int, seeds), make([]int, n)
	for range resamples {
		for j := range ss {
			ss[j] = rng.IntN(seeds)
		}
		if seeds == 1 {
			ss[0] = 0
		}
		for j := range ii {
			ii[j] = rng.IntN(n)
		}
		d := mean(ss, ii)
		best := 0
		for m := range d {
			draws[m] = append(draws[m], d[m])
			if d[m] < d[best] {
				best = m
			}
		}
		first[best]++
	}
	for m, name := range methods {
		slices.Sort(draws[m])
		lo, hi := stats.Percentiles(draws[m], 0.95)
		a.Methods = append(a.Methods, TrustMethod{Method: name, Control: isControl(name) || ignoresModel(name),
			MeanRank: stats.Interval{Estimate: est[m], Lo: lo, Hi: hi, Units: n, Groups: seeds, Method: "percentile bootstrap over inputs" + pickWord(seeds > 1, " and seeds", "")},
			PFirst:   float64(first[m]) / resamples})
	}
	slices.SortStableFunc(a.Methods, func(x, y TrustMethod) int {
		switch {
		case x.MeanRank.Estimate < y.MeanRank.Estimate:
			return -1
		case x.MeanRank.Estimate > y.MeanRank.Estimate:
			return 1
		}
		return 0
	})
}

// rankTable is each method's rank on each input of each seed (1: best;
// ties share their mean rank), averaged over the settings:
// out[s][i][m], every entry NaN on an input where a setting lacks a value.
// With one seed it reads the settings' seed means (Ranking.Values).
func rankTable(admitted []Ranking, methods []string, n, seeds int) [][][]float64 {
	k := len(methods)
	ranks := make([][][]float64, seeds)
	v := make([]float64, k)
	for s := range ranks {
		ranks[s] = make([][]float64, n)
		for i := range n {
			sum := make([]float64, k)
			ok := true
			for _, r := range admitted {
				for m, name := range methods {
					x := r.Values[name][i]
					if seeds > 1 {
						x = r.PerSeed[name][s][i]
					}
					v[m] = -oriented(x, r.Better)
					ok = ok && !math.IsNaN(v[m])
				}
				if !ok {
					break
				}
				for m, rk := range midRanks(v) {
					sum[m] += rk / float64(len(admitted))
				}
			}
			if !ok {
				for m := range sum {
					sum[m] = math.NaN()
				}
			}
			ranks[s][i] = sum
		}
	}
	return ranks
}

// meanRanks is each method's rank averaged over the table's inputs and
// seeds (those where every method has one).
func meanRanks(ranks [][][]float64, k int) []float64 {
	out := make([]float64, k)
	cnt := 0
	for _, seed := range ranks {
		for _, r := range seed {
			if math.IsNaN(r[0]) {
				continue
			}
			for m := range out {
				out[m] += r[m]
			}
			cnt++
		}
	}
	for m := range out {
		out[m] /= float64(cnt)
	}
	return out
}

// headline states the answer in a sentence and sets its outcome.
func (a *Answer) headline(admitted, aside []string) {
	under := fmt.Sprintf("under the %d admitted protocols (%s)", len(admitted), andList(admitted))
	if len(admitted) == 1 {
		under = fmt.Sprintf("under the one admitted protocol (%s)", admitted[0])
	}
	tail := ""
	if len(aside) > 0 {
		tail = "; set aside: " + strings.Join(aside, "; ")
	}
	var contra []string
	for _, p := range a.Pairs {
		if p.Verdict == PairContradiction {
			contra = append(contra, p.Words)
		}
	}
	// A method better than every other under every admitted setting.
	controls := slices.ContainsFunc(a.Methods, func(m TrustMethod) bool { return m.Control })
	for _, m := range a.Methods {
		if m.Control || m.BeatsRandom != Holds && controls {
			continue
		}
		best := true
		for _, p := range a.Pairs {
			if (p.A == m.Method || p.B == m.Method) && !(p.Verdict == PairBetter && p.A == m.Method) {
				best = false
			}
		}
		if best {
			a.Outcome, a.Trusted = Holds, m.Method
			a.Headline = fmt.Sprintf("Trust %s: it beats the random control and every other method %s%s", m.Method, under, tail)
			if !controls {
				a.Headline = fmt.Sprintf("Trust %s: it beats every other method %s, but no random control ran, so whether it beats chance is not shown%s", m.Method, under, tail)
			}
			a.Short = strings.TrimSuffix(a.Headline, tail)
			return
		}
	}
	top := a.Methods[slices.IndexFunc(a.Methods, func(m TrustMethod) bool { return !m.Control })]
	ranked := fmt.Sprintf("the combined ranking puts %s first (mean rank %s [%s, %s])", top.Method, Fixed2(top.MeanRank.Estimate), Fixed2(top.MeanRank.Lo), Fixed2(top.MeanRank.Hi))
	if len(contra) > 0 {
		a.Outcome = DoesNotHold
		a.Headline = fmt.Sprintf("Contradiction: no method is better than the others %s — %s; %s%s", under, strings.Join(contra, "; "), ranked, tail)
		a.Short = fmt.Sprintf("Contradiction: no method is better than the others %s — %s", under, contra[0])
		if len(contra) > 1 {
			a.Short += fmt.Sprintf(" (and %s more)", Count(len(contra)-1, "pair"))
		}
		return
	}
	a.Outcome = Inconclusive
	a.Headline = fmt.Sprintf("Inconclusive: no method is yet told apart above every other %s; %s%s", under, ranked, tail)
	a.Short = strings.TrimSuffix(a.Headline, tail)
}

// divergence finds, for the first contradiction, the input on which its
// two settings disagree the most.
func divergence(admitted []Ranking, pairs []TrustPair) *Divergence {
	i := slices.IndexFunc(pairs, func(p TrustPair) bool { return p.Verdict == PairContradiction })
	if i < 0 {
		return nil
	}
	p := pairs[i]
	get := func(name string) Ranking {
		return admitted[slices.IndexFunc(admitted, func(r Ranking) bool { return r.Protocol == name })]
	}
	rf, ro := get(p.For[0]), get(p.Against[0])
	gaps := func(r Ranking) []float64 {
		a, b := r.Values[p.A], r.Values[p.B]
		n := min(len(a), len(b), rf.Units, ro.Units)
		g := make([]float64, n)
		for k := range g {
			g[k] = oriented(a[k], r.Better) - oriented(b[k], r.Better)
		}
		_, sd := meanSD(g)
		if sd > 0 {
			for k := range g {
				g[k] /= sd
			}
		}
		return g
	}
	gf, go_ := gaps(rf), gaps(ro)
	most := func(n int) int {
		best, at := math.Inf(-1), -1
		for k := range n {
			if d := math.Min(gf[k], -go_[k]); !math.IsNaN(d) && d > best {
				best, at = d, k
			}
		}
		return at
	}
	n := min(len(gf), len(go_))
	at := most(n)
	if at < 0 {
		return nil
	}
	d := &Divergence{A: p.A, B: p.B, Input: at, For: rf.Protocol, Gap: gf[at], Other: ro.Protocol, GapOth: go_[at], Shown: most(min(n, protocol.PreviewCount)),
		Words: fmt.Sprintf("the test set's input %d (counting from 0): %s puts %s above %s by %s of its spread over inputs, %s puts it below by %s", at, rf.Protocol, p.A, p.B, Fixed2(gf[at]), ro.Protocol, Fixed2(-go_[at]))}
	if d.Shown >= 0 && d.Shown != at {
		d.Words += fmt.Sprintf("; the evidence figure shows input %d, where they part the most of the first %d, whose perturbed images the run keeps (%s: %s, %s: %s)",
			d.Shown, protocol.PreviewCount, rf.Protocol, Fixed2(gf[d.Shown]), ro.Protocol, Fixed2(go_[d.Shown]))
	}
	return d
}

// MarshalJSON implements json.Marshaler, writing an undefined value as null.
func (a Admission) MarshalJSON() ([]byte, error) {
	type plain Admission
	return json.Marshal(struct {
		plain
		Value *float64 `json:"value"`
	}{plain(a), stats.Null(a.Value)})
}

// MarshalJSON implements json.Marshaler, writing an undefined value as null.
func (m TrustMethod) MarshalJSON() ([]byte, error) {
	type plain TrustMethod
	return json.Marshal(struct {
		plain
		PFirst *float64 `json:"p_first"`
	}{plain(m), stats.Null(m.PFirst)})
}
