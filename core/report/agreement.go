package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/stats"
)

// Agreement is whether the protocols on one dataset rank the methods they
// share alike: Kendall's τ between every two, Kendall's W over all.
type Agreement struct {
	Dataset   string      `json:"dataset"`
	Protocols []string    `json:"protocols"`
	Methods   []string    `json:"methods"` // those every protocol ranks
	Tau       [][]float64 `json:"tau"`     // between protocols i and j, over the methods both rank
	W         float64     `json:"w"`
	P         float64     `json:"p"`       // permutation p-value of W
	PExact    bool        `json:"p_exact"` // P is enumerated, not drawn
	PError    float64     `json:"p_error"` // P's Monte-Carlo standard error (0 when exact)
	Words     string      `json:"words"`
	Outcome   Outcome     `json:"outcome"` // of "the protocols agree" (Says words it)
	// Left are the settings left out and why: "ROAR (every method scores
	// the same)".
	Left []string `json:"left,omitempty"`
}

// agreement compares the rankings of each dataset's protocol settings over
// the methods they share (at least three): the methods each ranks (not
// weak, with a score), a setting ranking two left out and named, and one
// whose methods all score the same (no ranking to compare: saturated)
// left out and named — where that leaves no τ to compute (fewer than two
// settings, or fewer than three methods shared), an Agreement with no
// protocols says why. A setting that tells none of its pairs apart stays
// in, named: its τ with the others is within its noise. The orders two
// settings flip are Contradictions, whatever the number of methods.
func agreement(rankings []Ranking, seed uint64) []Agreement {
	var out []Agreement
	var datasets []string
	for _, r := range rankings {
		if !slices.Contains(datasets, r.Dataset) {
			datasets = append(datasets, r.Dataset)
		}
	}
	for _, ds := range datasets {
		var rs, two []Ranking // settings ranking three methods or more, and two
		var noisy []string
		var left leftSettings
		for _, r := range rankings {
			if r.Dataset != ds || !left.keep(r) {
				continue
			}
			r = r.rankedOnly()
			switch {
			case len(r.Methods) == 2:
				two = append(two, r)
			default:
				rs = append(rs, r)
				if !slices.ContainsFunc(r.Pairs, func(p Pair) bool { return p.Differ }) {
					noisy = append(noisy, r.Protocol)
				}
			}
		}
		// The methods every setting ranks, in the first's order.
		var methods []string
		if len(rs) >= 2 {
			methods = shared(rs)
		}
		if len(methods) < 3 {
			// Nothing for τ: say why where there were settings to compare
			// (the orders they flip are Contradictions, for any number).
			switch all := append(slices.Clone(rs), two...); {
			case len(all) >= 2:
				out = append(out, Agreement{Dataset: ds, W: math.NaN(), P: math.NaN(),
					Words: fmt.Sprintf("Kendall's τ between the protocols is not computed: the %d protocols share %s, and a rank correlation needs three or more%s",
						len(all), Count(len(shared(all)), "method"), left.words()), Left: left.named()})
			case len(all)+len(left.tied)+len(left.unlearned) >= 2:
				out = append(out, Agreement{Dataset: ds, W: math.NaN(), P: math.NaN(),
					Words: "the protocols cannot be compared: " + left.sentence(), Left: left.named()})
			}
			continue
		}
		a := Agreement{Dataset: ds, Methods: methods, Left: left.named()}
		scores := make([][]float64, len(rs))
		for p, r := range rs {
			a.Protocols = append(a.Protocols, r.Protocol)
			for _, m := range methods {
				i := slices.IndexFunc(r.Methods, func(x RankedMethod) bool { return x.Method == m })
				scores[p] = append(scores[p], oriented(r.Methods[i].CI.Estimate, r.Better))
			}
		}
		a.Tau = make([][]float64, len(rs))
		for i := range rs {
			a.Tau[i] = make([]float64, len(rs))
			for j := range rs {
				a.Tau[i][j] = stats.KendallTau(scores[i], scores[j])
			}
		}
		var p stats.PValue
		a.W, p = stats.KendallW(scores, seed, []float64{Alpha})
		a.P, a.PExact, a.PError = p.P, p.Exact, p.Error
		chance := "beyond chance"
		if !(a.P < Alpha) {
			chance = "but no more than chance would (with this few methods and protocols)"
		}
		a.Words = fmt.Sprintf("the %d protocols %s on the %d methods they share (Kendall's W = %.2f), %s: permutation p %s", len(rs), concordance(a.W), len(methods), a.W, chance, pWords(a.P, a.PExact, a.PError))
		if len(noisy) > 0 {
			a.Words += fmt.Sprintf("; %s %s none of %s pairs apart, so %s τ with the others is within the noise",
				strings.Join(noisy, ", "), pickWord(len(noisy) > 1, "tell", "tells"), pickWord(len(noisy) > 1, "their", "its"), pickWord(len(noisy) > 1, "their", "its"))
		}
		a.Words += left.words()
		if len(two) > 0 {
			var names []string
			for _, r := range two {
				names = append(names, r.Protocol)
			}
			a.Words += fmt.Sprintf("; left out of τ: %s, which %s only two methods", strings.Join(names, ", "), pickWord(len(two) > 1, "rank", "ranks"))
		}
		out = append(out, a)
	}
	return out
}

// shared lists the methods every ranking ranks, in the first's order.
func shared(rs []Ranking) []string {
	var methods []string
	for _, m := range rs[0].Methods {
		all := true
		for _, r := range rs[1:] {
			all = all && slices.ContainsFunc(r.Methods, func(x RankedMethod) bool { return x.Method == m.Method })
		}
		if all {
			methods = append(methods, m.Method)
		}
	}
	return methods
}

// leftSettings are the settings of two or more methods that rank no two
// of them: every method scores the same (tied), or fewer than two
// methods' retrained models learned or have a score (unlearned).
type leftSettings struct{ tied, unlearned []string }

// Why a setting is left out, in the agreement's words.
const (
	whyTied      = "every method scores the same"
	whyUnlearned = "fewer than two methods' retrained models learned or have a score"
)

// keep reports whether r ranks two methods or more, noting it as left
// out where it had two or more to rank and ranks fewer.
func (l *leftSettings) keep(r Ranking) bool {
	if len(r.Methods) < 2 {
		return false
	}
	switch ranked := r.rankedOnly(); {
	case len(ranked.Methods) < 2:
		l.unlearned = append(l.unlearned, r.Protocol)
	case ranked.allEqual():
		l.tied = append(l.tied, r.Protocol)
	default:
		return true
	}
	return false
}

// groups are the settings left out, each group with why.
func (l leftSettings) groups() [][2]string {
	var out [][2]string
	for _, g := range []struct {
		names []string
		why   string
	}{{l.tied, whyTied}, {l.unlearned, whyUnlearned}} {
		if len(g.names) > 0 {
			out = append(out, [2]string{strings.Join(g.names, ", "), g.why})
		}
	}
	return out
}

// words says which settings are left out and why ("; left out: …").
func (l leftSettings) words() string {
	var w string
	for _, g := range l.groups() {
		w += fmt.Sprintf("; left out: %s, where %s", g[0], g[1])
	}
	return w
}

// sentence says which settings are left out and why, as a clause.
func (l leftSettings) sentence() string {
	var parts []string
	for _, g := range l.groups() {
		parts = append(parts, fmt.Sprintf("%s left out, where %s", g[0], g[1]))
	}
	return strings.Join(parts, "; ")
}

// named lists each setting left out with why, for a figure's title.
func (l leftSettings) named() []string {
	var out []string
	for _, p := range l.tied {
		out = append(out, p+" ("+whyTied+")")
	}
	for _, p := range l.unlearned {
		out = append(out, p+" (its retrained models learned nothing)")
	}
	return out
}

// concordance words Kendall's W (Schmidt 1997's reading: 0.1 very weak,
// 0.3 weak, 0.5 moderate, 0.7 strong).
func concordance(w float64) string {
	switch {
	case math.IsNaN(w):
		return "cannot be compared"
	case w < 0.1:
		return "do not agree"
	case w < 0.3:
		return "agree very weakly"
	case w < 0.5:
		return "agree weakly"
	case w < 0.7:
		return "agree moderately"
	}
	return "agree strongly"
}

// pValue writes a p-value with its relation: "= 0.042", "< 0.001".
func pValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p < 0.001:
		return "< 0.001"
	}
	return "= " + strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", p), "0"), ".")
}

// pWords writes a p-value with how it was had: "= 0.049 (exact)", "=
// 0.052 ± 0.002 (Monte Carlo)" with its standard error, "< 0.001 (Monte
// Carlo)" below what its draws resolve.
func pWords(p float64, exact bool, mcError float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case exact:
		return pValue(p) + " (exact)"
	case p < 0.001:
		return pValue(p) + " (Monte Carlo)"
	}
	return pValue(p) + " ± " + strconv.FormatFloat(mcError, 'g', 1, 64) + " (Monte Carlo)"
}

// MarshalJSON implements json.Marshaler.
func (a Agreement) MarshalJSON() ([]byte, error) {
	type plain Agreement
	tau := make([][]*float64, len(a.Tau))
	for i, row := range a.Tau {
		for _, v := range row {
			tau[i] = append(tau[i], stats.Null(v))
		}
	}
	return json.Marshal(struct {
		plain
		Tau [][]*float64 `json:"tau"`
		W   *float64     `json:"w"`
		P   *float64     `json:"p"`
	}{plain(a), tau, stats.Null(a.W), stats.Null(a.P)})
}
