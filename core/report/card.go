package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"faithlab/core/protocol"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// A report card says, for each protocol setting a campaign ran, how far to
// believe its ranking on the user's own data and methods: whether the
// Random control ranks below the methods (where the protocol's family
// says a map that ignores the model should), whether the paired tests
// tell the methods apart, whether the ranking holds on another half of
// the inputs, how far off the data its perturbed inputs lie, and how much
// of its score the masks' shape or a model-agnostic smoothing explains —
// the biases the seed papers found — with a verdict in words.

// Finding is one line of a report card.
type Finding struct {
	Value float64 `json:"value"`          // the figure; NaN when not measured
	Lo    float64 `json:"lo,omitempty"`   // its interval, where it has one
	Hi    float64 `json:"hi,omitempty"`   //
	Words string  `json:"words"`          // what it says, in words
	Flag  bool    `json:"flag,omitempty"` // it undermines the setting's ranking
	// Noise: the flag rests on differences within the noise — pairs not
	// told apart, a control not told apart from a method — which more
	// inputs could lift: the verdict it blocks is inconclusive, not
	// "does not hold".
	Noise bool   `json:"noise,omitempty"`
	Short string `json:"short,omitempty"` // the flag in a few words, for the verdict
}

// CardRow is one protocol setting's report card.
type CardRow struct {
	Dataset     string  `json:"dataset"`
	Protocol    string  `json:"protocol"`
	Random      Finding `json:"random_control"`
	Separation  Finding `json:"separation"`
	Reliability Finding `json:"reliability"`
	OOD         Finding `json:"ood"`
	MaskTV      Finding `json:"mask_tv"`
	Post        Finding `json:"post_processing"`
	Truth       Finding `json:"ground_truth"`
	Complexity  Finding `json:"complexity"`
	Protocols   Finding `json:"other_protocols"` // other settings that order two of its methods the other way (Contradiction)
	CanRank     bool    `json:"can_rank"`
	// Outcome of "this setting can rank these methods here": holds (with
	// caveats or not), does not hold (a check found evidence against),
	// inconclusive (its blocking checks rest on the noise: Verdict says
	// the smallest difference the run could find and about how many
	// inputs would decide it), not evaluated (no check could judge it).
	Outcome Outcome `json:"outcome"`
	Verdict string  `json:"verdict"` // the outcome in words, beginning with it
}

// Findings lists the row's findings with their names, in card order.
func (r CardRow) Findings() []struct {
	Name string
	F    Finding
} {
	return []struct {
		Name string
		F    Finding
	}{{"Random control", r.Random}, {"Separation", r.Separation}, {"Reliability", r.Reliability}, {"Off the data", r.OOD},
		{"Mask shape", r.MaskTV}, {"Post-processing", r.Post}, {"Ground truth", r.Truth}, {"Map complexity", r.Complexity}, {"Other protocols", r.Protocols}}
}

// Thresholds of the card's flags, the same for every run; they also
// decide which protocols the answer admits (trust.go). The measurements
// that chose maxOOD: the fills the papers call on-manifold stay below it
// on this project's runs (FUD 0.59, GOAR 0.63–0.69, ROAD 0.50–0.75,
// Deletion's zero fill 0.55–0.73), those they call off-manifold pass it
// (ROAR's mean fill 0.84–0.91, Infidelity's noise 0.85, ROAR on the
// Gaussian mixture 0.96); the README's Which method to trust has the runs.
const (
	minApart       = 0.5 // the share of the methods' pairs the paired tests tell apart
	minReliability = 0.7 // split-half (Spearman–Brown) consistency of the ranking
	maxOOD         = 0.8 // energy AUROC of perturbed against clean inputs
	maxMaskTV      = 0.5 // R² of the accuracy on the masks' total variation
	minTruth       = 0.5 // correlation with ground-truth agreement, in the score's better direction
	maxComplexity  = 0.9 // rank correlation of the score with the maps' sparseness, over five methods or more
)

// isControl says whether a method is a random control (random, pixel- or
// block-random): what every method must beat.
func isControl(method string) bool {
	name, _, _ := splitLabel(method)
	return strings.Contains(name, "random")
}

// ignoresModel says whether a method's maps are made from the image alone
// (Sobel's edges): a control the methods should beat, which need not beat
// Random itself — on a localisation metric it may well score below chance,
// its edges lying away from the evidence — so the card's Random check
// leaves it out, and the answer never trusts it.
func ignoresModel(method string) bool {
	name, _, _ := splitLabel(method)
	return name == "sobel"
}

// controlCount is how many random controls the ranking holds.
func controlCount(r Ranking) int {
	n := 0
	for _, m := range r.Methods {
		if isControl(m.Method) {
			n++
		}
	}
	return n
}

// card builds each ranked setting's report card from the confidence
// analysis, the diagnostics and the records.
func card(conf Confidence, d Diagnostics, recs []store.Record) []CardRow {
	c := newCampaign(recs)
	var out []CardRow
	for _, r := range conf.Rankings {
		row := CardRow{Dataset: r.Dataset, Protocol: r.Protocol}
		var family protocol.Family
		if g := c.groupOf(r.Dataset, r.Protocol); g != nil {
			family = g.info.Family
		}
		row.Random = randomFinding(r, family)
		row.Separation = separationFinding(r)
		row.Reliability = reliabilityFinding(r, conf.Seed)
		row.OOD = oodFinding(c, r)
		row.MaskTV = maskTVFinding(d, r)
		row.Post = postFinding(d, r)
		row.Truth = truthFinding(d, r)
		row.Complexity = complexityFinding(conf, r)
		row.Protocols = contradictionFinding(conf, r)
		row.CanRank, row.Outcome, row.Verdict = verdict(row, r, controlCount(r.rankedOnly()))
		out = append(out, row)
	}
	return out
}

// randomFinding says where the random controls rank among the methods,
// on a protocol of a family where a map that ignores the model should
// rank last (protocol.Family.ControlScoresWorst); on the others it says
// why their rank says nothing.
func randomFinding(r Ranking, family protocol.Family) Finding {
	if family != "" && !family.ControlScoresWorst() {
		return Finding{Value: math.NaN(), Words: controlNotApplied(family)}
	}
	var controls, methods []RankedMethod
	weakControl := false
	for _, m := range r.Methods {
		switch {
		case m.Weak: // not ranked: compared with nothing
			weakControl = weakControl || isControl(m.Method)
		case isControl(m.Method):
			controls = append(controls, m)
		case ignoresModel(m.Method): // neither a control Random stands for nor a method it must lose to
		case !math.IsNaN(m.CI.Estimate):
			methods = append(methods, m)
		}
	}
	if len(controls) == 0 && weakControl {
		return Finding{Value: math.NaN(), Words: "no method's retrained models learned in this setting (!): " +
			pickWord(controlCount(r) > 1, "the random controls are", "the random control is") + " not ranked either, so nothing shows what chance scores"}
	}
	if len(controls) == 0 {
		return Finding{Value: math.NaN(), Words: "no random control in this campaign: add random to see what chance scores"}
	}
	if len(methods) == 0 {
		return Finding{Value: math.NaN(), Words: "only controls were evaluated"}
	}
	var words, short []string
	var flag bool
	evidence := false     // a control ranks above a method, told apart, or scores the same as one
	beaten := math.Inf(1) // the fewest methods any control falls below, told apart
	for _, ctl := range controls {
		var above, same, within []string
		apart := 0
		for _, m := range methods {
			p, ok := pairOf(r, ctl.Method, m.Method)
			c, v := oriented(ctl.CI.Estimate, r.Better), oriented(m.CI.Estimate, r.Better)
			switch {
			case c > v:
				above = append(above, inline(m.Method))
				evidence = evidence || ok && p.Differ
			case c == v:
				same = append(same, inline(m.Method))
			case ok && p.Differ:
				apart++
			default: // not told apart, or never compared
				within = append(within, inline(m.Method))
			}
		}
		beaten = math.Min(beaten, float64(apart))
		name := inline(ctl.Method)
		if len(same) == len(methods) { // the metric tells the methods from chance no better than from each other
			words = append(words, fmt.Sprintf("%s scores the same as every method (%s): the metric does not tell them from it", name, number(ctl.CI.Estimate)))
			short = append(short, fmt.Sprintf("%s scores the same as every method", name))
			flag, evidence = true, true
			continue
		}
		evidence = evidence || len(same) > 0
		var parts []string
		if len(above) > 0 {
			parts = append(parts, "ranks above "+strings.Join(above, ", "))
		}
		if len(same) > 0 {
			parts = append(parts, "scores the same as "+strings.Join(same, ", "))
		}
		switch {
		case len(parts) == 0 && len(within) == 0:
			parts = append(parts, "ranks below every method and is told apart from each")
		case len(parts) == 0:
			parts = append(parts, "ranks below every method but cannot be told apart from "+strings.Join(within, ", "))
		case len(within) > 0:
			parts = append(parts, "cannot be told apart from "+strings.Join(within, ", "))
		}
		words = append(words, name+" "+strings.Join(parts, ", and "))
		switch {
		case len(above) > 0:
			short = append(short, fmt.Sprintf("%s ranks above %s", name, strings.Join(above, ", ")))
		case len(same) > 0:
			short = append(short, fmt.Sprintf("%s scores the same as %s", name, strings.Join(same, ", ")))
		case len(within) > 0:
			short = append(short, fmt.Sprintf("%s within the noise of %s", name, strings.Join(within, ", ")))
		}
		flag = flag || len(above)+len(same)+len(within) > 0
	}
	return Finding{Value: beaten, Words: strings.Join(words, "; "), Flag: flag, Noise: flag && !evidence, Short: strings.Join(short, "; ")}
}

// controlNotApplied says why a random control need not rank last on a
// protocol of the family.
func controlNotApplied(family protocol.Family) string {
	switch family {
	case protocol.FamilyRobustness:
		return "not applied: on a robustness metric a map that ignores the input need not move when the input does, so a random control can rank well by construction"
	case protocol.FamilyRandomisation:
		return "not applied: on a randomisation test a map that ignores the model changes from draw to draw, so a random control passes by construction"
	case protocol.FamilyComplexity:
		return "not applied: a complexity metric judges the maps' shape, not their faithfulness, so a random control need not rank last"
	case protocol.FamilyAxiomatic:
		return "not applied: on an axiomatic metric a map that ignores the input keeps some properties by construction (a shift of the input does not move it), so a random control need not rank last"
	}
	return fmt.Sprintf("not applied: on a %s metric a random control need not rank last", family)
}

// pairOf finds the comparison of two methods, in either order.
func pairOf(r Ranking, a, b string) (Pair, bool) {
	for _, p := range r.Pairs {
		if p.A == a && p.B == b || p.A == b && p.B == a {
			return p, true
		}
	}
	return Pair{}, false
}

// separationFinding says how many of the methods' pairs the paired tests
// tell apart, and flags the setting when fewer than half are: the
// methods' own intervals also hold the inputs' difficulty, which the
// methods share and a paired test takes out, so their spread against
// those intervals only describes.
func separationFinding(r Ranking) Finding {
	var est, widths []float64
	var names []string
	for _, m := range r.Methods {
		if !isControl(m.Method) && !m.Weak && !math.IsNaN(m.CI.Estimate) {
			est, widths, names = append(est, m.CI.Estimate), append(widths, m.CI.Hi-m.CI.Lo), append(names, m.Method)
		}
	}
	if len(est) < 2 {
		return Finding{Value: math.NaN(), Words: "fewer than two methods (besides controls) to separate"}
	}
	spread := slices.Max(est) - slices.Min(est)
	w := median(widths)
	apart, pairs := 0, 0
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if p, ok := pairOf(r, names[i], names[j]); ok {
				pairs++
				if p.Differ {
					apart++
				}
			}
		}
	}
	if pairs == 0 {
		return Finding{Value: math.NaN(), Words: "not measured (no pair of methods compared)"}
	}
	if spread == 0 {
		return Finding{Value: 0, Words: fmt.Sprintf("every method scores %s: the metric cannot tell them apart", number(est[0])),
			Flag: true, Short: fmt.Sprintf("every method scores %s, so it cannot tell them apart", number(est[0]))}
	}
	share := float64(apart) / float64(pairs)
	words := fmt.Sprintf("%d of %d pairs of methods told apart (paired over the same inputs); their scores spread over %s", apart, pairs, number(spread))
	if w > 0 {
		words += fmt.Sprintf(", %.1f× the median interval width (%s)", spread/w, number(w))
	}
	f := Finding{Value: share, Words: words}
	switch {
	case apart == 0:
		f.Flag, f.Noise, f.Short = true, true, fmt.Sprintf("the methods' scores differ by less than the noise (%d of %d pairs told apart)", apart, pairs)
	case share < minApart:
		f.Flag, f.Noise, f.Short = true, true, fmt.Sprintf("most of the methods' differences lie within the noise (%d of %d pairs told apart)", apart, pairs)
	}
	return f
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func reliabilityFinding(r Ranking, seed uint64) Finding {
	var values [][]float64
	for _, m := range r.Methods {
		values = append(values, r.Values[m.Method])
	}
	rel := stats.SplitHalf(values, 200, seed)
	if math.IsNaN(rel) {
		return Finding{Value: rel, Words: "not measured (fewer than two methods or inputs, or methods identical on every input)"}
	}
	f := Finding{Value: rel, Words: fmt.Sprintf("the ranking on one half of the inputs agrees with the other's at %.2f (split-half, Spearman–Brown; Tomsett et al. 2020)", rel)}
	if rel < minReliability {
		f.Flag, f.Noise, f.Short = true, true, fmt.Sprintf("its ranking changes with the inputs (split-half %.2f)", rel)
	}
	return f
}

func oodFinding(c *campaign, r Ranking) Finding {
	g := c.groupOf(r.Dataset, r.Protocol)
	if g == nil {
		return Finding{Value: math.NaN(), Words: "not measured"}
	}
	var v []float64
	for _, rec := range g.recs {
		for _, s := range rec.Result.Scalars {
			if strings.HasPrefix(s.Name, "ood_auroc") && defined(s.Value) {
				v = append(v, s.Value)
			}
		}
	}
	if len(v) == 0 {
		return Finding{Value: math.NaN(), Words: "not measured (no perturbed inputs to judge)"}
	}
	m, _ := meanSD(v)
	f := Finding{Value: m, Words: fmt.Sprintf("its perturbed inputs are told from clean ones with energy AUROC %.2f (0.5: in distribution)", m)}
	if m > maxOOD {
		f.Flag, f.Short = true, fmt.Sprintf("its perturbed inputs lie off the data (OOD AUROC %.2f)", m)
	}
	return f
}

// groupOf finds the group of a dataset's protocol setting.
func (c *campaign) groupOf(dataset, setting string) *group {
	for _, g := range c.groups {
		if g.dataset == dataset && g.title == setting {
			return g
		}
	}
	return nil
}

func maskTVFinding(d Diagnostics, r Ranking) Finding {
	best := -1.0
	for _, t := range d.TVFits {
		if t.Dataset == r.Dataset && t.Protocol == r.Protocol && t.Fit != nil {
			best = math.Max(best, t.Fit.R2)
		}
	}
	if best < 0 {
		return Finding{Value: math.NaN(), Words: "not measured (needs a retraining or imputation protocol over three or more (method, rate) points)"}
	}
	f := Finding{Value: best, Words: fmt.Sprintf("the masks' total variation alone explains %.0f%% of its accuracy's variance (DPI paper, Table 3)", 100*best)}
	if best > maxMaskTV {
		f.Flag, f.Short = true, fmt.Sprintf("mask TV explains %.0f%% of its accuracy", 100*best)
	}
	return f
}

func postFinding(d Diagnostics, r Ranking) Finding {
	var words, short []string
	worst := math.NaN()
	for _, p := range d.Post {
		if p.Dataset != r.Dataset || p.Protocol != r.Protocol || p.Total == 0 {
			continue
		}
		share := float64(p.Better) / float64(p.Total)
		if math.IsNaN(worst) || share > worst {
			worst = share
		}
		words = append(words, fmt.Sprintf("%s maps scored better than plain ones in %d of %d comparisons", p.Post, p.Better, p.Total))
		if share > 0.5 {
			short = append(short, fmt.Sprintf("%s, which knows nothing of the model, improves the score in %d of %d comparisons", p.Post, p.Better, p.Total))
		}
	}
	if len(words) == 0 {
		return Finding{Value: math.NaN(), Words: "not measured (no post-processed maps beside plain ones)"}
	}
	return Finding{Value: worst, Words: strings.Join(words, "; ") + " (by the data processing inequality a model-agnostic transform should not help)", Flag: len(short) > 0, Short: strings.Join(short, "; ")}
}

func truthFinding(d Diagnostics, r Ranking) Finding {
	var rs []float64
	var methods int
	for _, t := range d.Truth {
		if t.Dataset == r.Dataset && t.Protocol == r.Protocol && t.Score == r.Metric && (t.Truth == "fa" || t.Truth == "cos") {
			rs = append(rs, oriented(t.R, r.Better))
			methods = t.Methods
		}
	}
	if len(rs) == 0 {
		return Finding{Value: math.NaN(), Words: "not measured (the data has no known ground truth, or no GroundTruth run beside it)"}
	}
	m, _ := meanSD(rs)
	f := Finding{Value: m, Words: fmt.Sprintf("its score follows ground-truth agreement at r = %+.2f over %d methods (sign set so that + is agreement)", m, methods)}
	if m < minTruth {
		f.Flag, f.Short = true, fmt.Sprintf("its ranking does not follow the ground truth (r = %+.2f)", m)
	}
	return f
}

// complexityFinding says how closely the setting's ranking of the methods
// follows how concentrated their maps are — the sparseness (Gini index)
// of the Complexity protocol run beside it: the DPI paper's blur effect is
// a complexity effect, and a score that the sparser (or the smoother)
// maps win whatever they say ranks their complexity, not their
// faithfulness.
func complexityFinding(conf Confidence, r Ranking) Finding {
	var cx *Ranking
	for i, o := range conf.Rankings {
		if o.Dataset == r.Dataset && (o.Protocol == "Complexity" || strings.HasPrefix(o.Protocol, "Complexity (")) {
			cx = &conf.Rankings[i]
			break
		}
	}
	switch {
	case cx == nil:
		return Finding{Value: math.NaN(), Words: "not measured (no Complexity run beside it)"}
	case cx.Protocol == r.Protocol:
		return Finding{Value: math.NaN(), Words: "not measured: this is the Complexity run itself"}
	}
	sparse := map[string]float64{}
	for _, m := range cx.Methods {
		sparse[m.Method] = m.CI.Estimate
	}
	var xs, ys []float64
	for _, m := range r.Methods {
		if v, ok := sparse[m.Method]; ok && !math.IsNaN(v) && !math.IsNaN(m.CI.Estimate) {
			xs, ys = append(xs, v), append(ys, oriented(m.CI.Estimate, r.Better))
		}
	}
	if len(xs) < 3 {
		return Finding{Value: math.NaN(), Words: "not measured (fewer than three methods with both scores)"}
	}
	switch {
	case slices.Min(ys) == slices.Max(ys):
		return Finding{Value: math.NaN(), Words: "not computed: every method scores the same, and a constant has no rank correlation"}
	case slices.Min(xs) == slices.Max(xs):
		return Finding{Value: math.NaN(), Words: "not computed: every method's maps are equally sparse, and a constant has no rank correlation"}
	}
	rho := stats.Spearman(xs, ys)
	f := Finding{Value: rho, Words: fmt.Sprintf("its ranking follows the maps' sparseness (Gini index) at ρ = %+.2f over %d methods (+: the sparser maps score better)", rho, len(xs))}
	if len(xs) >= 5 && math.Abs(rho) >= maxComplexity {
		which := "sparser"
		if rho < 0 {
			which = "more spread"
		}
		f.Flag, f.Short = true, fmt.Sprintf("the %s maps win: its ranking follows the maps' sparseness (ρ = %+.2f)", which, rho)
	}
	return f
}

// andList joins words with commas and a last "and".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// cellOf is a method's headline with its interval, as a table shows it.
func cellOf(m RankedMethod) string {
	if math.IsNaN(m.CI.Estimate) {
		return "—"
	}
	s := number(m.CI.Estimate)
	if !math.IsNaN(m.CI.Lo) {
		s += " [" + number(m.CI.Lo) + ", " + number(m.CI.Hi) + "]"
	}
	return s
}

// better is the direction's word.
func betterWord(b protocol.Better) string {
	if b == protocol.Lower {
		return "lower is better"
	}
	return "higher is better"
}

// MarshalJSON implements json.Marshaler, writing an undefined value as null.
func (f Finding) MarshalJSON() ([]byte, error) {
	type plain Finding
	return json.Marshal(struct {
		plain
		Value *float64 `json:"value"`
		Lo    *float64 `json:"lo,omitempty"`
		Hi    *float64 `json:"hi,omitempty"`
	}{plain(f), stats.Null(f.Value), nonZero(f.Lo), nonZero(f.Hi)})
}

// nonZero is Null, and nil for 0 (an end a finding does not have).
func nonZero(x float64) *float64 {
	if x == 0 {
		return nil
	}
	return stats.Null(x)
}

// pickWord is a if cond holds, b otherwise: a phrase's plural or singular.
func pickWord(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}
