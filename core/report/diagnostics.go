package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// TVDiagnostic is the DPI paper's check of one retraining or imputation
// protocol on one dataset: how much of its accuracy the masks' total
// variation alone explains (Table 3). Fit is absent where R² would mean
// nothing — fewer than three points, or accuracies that do not vary — and
// Explained then says why.
type TVDiagnostic struct {
	Dataset   string             `json:"dataset"`
	Protocol  string             `json:"protocol"`
	Curve     string             `json:"curve"`
	Fit       *protocol.Fit      `json:"fit,omitempty"`
	Points    []protocol.TVPoint `json:"points"`
	Explained string             `json:"explained"`
}

// PostComparison is the DPI paper's Table 2 cell for one post-processing:
// over the (method, rate) points the campaign has with and without it, how
// often the post-processed maps reached the better accuracy (lower for
// ROAR, higher for KAR). Smoothing that "wins" most comparisons while
// agreeing less with the model is the paper's warning sign.
type PostComparison struct {
	Dataset  string `json:"dataset"`
	Protocol string `json:"protocol"`
	Curve    string `json:"curve"`
	Post     string `json:"post"`
	Better   int    `json:"better"`
	Total    int    `json:"total"`
}

// Weak is a retraining protocol's run whose retrained models learned
// little, in a setting where no method's did (weakRetraining): the best of
// them scored nearer chance (always answering the most common class) than
// the explained model's own accuracy on the same test set — or, where that
// is unknown, within chanceMargin of chance. Retraining that teaches no
// model anything ranks maps by nothing, so the setting ranks no method.
type Weak struct {
	Dataset  string  `json:"dataset"`
	Protocol string  `json:"protocol"`
	Method   string  `json:"method"`
	Curve    string  `json:"curve"`
	Best     float64 `json:"best"`           // the best retrained model's accuracy
	Chance   float64 `json:"chance"`         // the most common class's share of the test set
	Base     float64 `json:"base,omitempty"` // the explained model's accuracy on it
}

// WeakModel is an explained model that learned little: its accuracy on
// the test set nearer chance than a perfect score. Its maps explain a
// model that knows little, so every protocol's verdict on them says
// little about the methods.
type WeakModel struct {
	Dataset  string  `json:"dataset"`
	Seed     uint64  `json:"seed"`
	Model    string  `json:"model"`
	Accuracy float64 `json:"accuracy"`
	Chance   float64 `json:"chance"`
}

// weakModels finds the explained models that learned little, once per
// dataset, seed and model.
func weakModels(recs []store.Record) []WeakModel {
	var out []WeakModel
	seen := map[string]bool{}
	for _, r := range recs {
		res := r.Result
		if res == nil || res.Chance <= 0 || res.Base <= 0 || res.Base >= (res.Chance+1)/2 {
			continue
		}
		k := fmt.Sprintf("%s\x00%d\x00%s", r.Dataset, r.Seed, r.Model)
		if !seen[k] {
			seen[k] = true
			out = append(out, WeakModel{Dataset: r.Dataset, Seed: r.Seed, Model: r.Model, Accuracy: res.Base, Chance: res.Chance})
		}
	}
	return out
}

// chanceMargin is how far above chance a retrained model's accuracy must
// reach to count as learned when the explained model's accuracy is not
// recorded: about three binomial standard errors of 0.1 on 400 inputs.
const chanceMargin = 0.05

// Diagnostics are a campaign's bias checks: the TV fits, the
// post-processing comparisons, each score's correlation across methods
// with ground-truth agreement (GOAR Table 1), and the runs whose retrained
// models learned little.
type Diagnostics struct {
	TVFits []TVDiagnostic              `json:"tv_fits"`
	Post   []PostComparison            `json:"post_comparisons,omitempty"`
	Truth  []protocol.TruthCorrelation `json:"truth_correlations"`
	Weak   []Weak                      `json:"weak_retraining,omitempty"`
	// AtChance are the runs whose retrained models stayed near chance at
	// every rate while another method's learned: ranked (their maps
	// removed what the models learn from), yet worth a look at their masks
	// (a map that breaks training scores the same).
	AtChance []Weak `json:"at_chance,omitempty"`
	// WeakModels are the explained models that learned little.
	WeakModels []WeakModel `json:"weak_models,omitempty"`
	// Confidence is how sure the verdicts are (intervals, paired tests,
	// agreement between protocols) and each protocol setting's report card.
	Confidence Confidence `json:"confidence"`
}

// Diagnose computes the diagnostics the records support: a TV fit for
// every accuracy curve whose protocol names its masks' TV curve, over all
// the protocol's results on a dataset; the post-processing comparisons,
// the ground-truth correlations and the weak retrainings; then the
// confidence of the verdicts and the report card (ConfidenceOptions'
// defaults).
func Diagnose(recs []store.Record) Diagnostics {
	var d Diagnostics
	type key struct{ ds, proto string }
	byProto := map[key][]store.Record{}
	var order []key
	c := newCampaign(recs)
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		k := key{r.Dataset, c.setting(r)}
		if byProto[k] == nil {
			order = append(order, k)
		}
		byProto[k] = append(byProto[k], r)
	}
	for _, k := range order {
		info, ok := describe(byProto[k][0])
		if !ok {
			continue
		}
		var results []protocol.Result
		for _, r := range byProto[k] {
			results = append(results, *r.Result)
		}
		for _, m := range tvCurves(info) {
			pts := protocol.TVPoints(results, m.Name, m.MaskTV)
			if len(pts) == 0 {
				continue
			}
			t := TVDiagnostic{Dataset: k.ds, Protocol: k.proto, Curve: m.Name, Points: pts}
			if fit, err := protocol.TVFit(pts); err != nil {
				t.Explained = fmt.Sprintf("%s %s on %s: no fit (%v)", k.proto, m.Name, k.ds, err)
			} else {
				t.Fit = &fit
				t.Explained = fmt.Sprintf("mask total variation alone explains %.0f%% of the variance of %s %s on %s", 100*fit.R2, k.proto, m.Name, k.ds)
			}
			d.TVFits = append(d.TVFits, t)
		}
	}
	d.Post = comparePost(recs)
	d.Weak, d.AtChance = weakRetraining(recs)
	d.WeakModels = weakModels(recs)
	// Ground-truth correlations pair a method's scores with its agreement
	// on the same dataset and seed.
	bySeed := map[string][]protocol.Result{}
	var seeds []string
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		k := fmt.Sprintf("%s\x00%d", r.Dataset, r.Seed)
		if _, ok := bySeed[k]; !ok {
			seeds = append(seeds, k)
		}
		res := *r.Result
		res.Protocol = c.setting(r) // a protocol's settings apart
		bySeed[k] = append(bySeed[k], res)
	}
	for _, k := range seeds {
		ds, seed, _ := strings.Cut(k, "\x00")
		for _, c := range protocol.CorrelateWithTruth(bySeed[k]) {
			if !math.IsNaN(c.R) { // a constant score or agreement has no correlation
				c.Dataset, c.Seed = ds, seed
				d.Truth = append(d.Truth, c)
			}
		}
	}
	d.Confidence = Confident(recs, ConfidenceOptions{})
	d.Confidence.Card = card(d.Confidence, d, recs)
	d.Confidence.reconcile()
	d.Confidence.Trust = answers(d.Confidence, recs)
	return d
}

// tvCurves are the protocol's accuracy curves that name their masks' TV.
func tvCurves(info protocol.Info) []protocol.Metric {
	var out []protocol.Metric
	for _, m := range info.Curves {
		if m.MaskTV != "" {
			out = append(out, m)
		}
	}
	return out
}

// comparePost counts, per dataset, protocol and post-processing, the
// (method, rate) points where the post-processed maps scored better than
// the plain ones, by each accuracy curve's direction.
func comparePost(recs []store.Record) []PostComparison {
	type group struct{ ds, proto, post string }
	points := map[group][]protocol.Result{}
	first := map[group]store.Record{}
	var order []group
	c := newCampaign(recs)
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		g := group{r.Dataset, c.setting(r), r.Post}
		if _, ok := first[g]; !ok {
			first[g] = r
			order = append(order, g)
		}
		res := *r.Result
		res.Method = r.Method // match post-processed and plain maps by method
		points[g] = append(points[g], res)
	}
	var out []PostComparison
	for _, g := range order {
		plain, ok := points[group{g.ds, g.proto, ""}]
		if g.post == "" || !ok {
			continue
		}
		info, ok := describe(first[g])
		if !ok {
			continue
		}
		for _, m := range tvCurves(info) {
			better, total := protocol.PostCount(protocol.TVPoints(plain, m.Name, m.MaskTV), protocol.TVPoints(points[g], m.Name, m.MaskTV), m.Better)
			if total > 0 {
				out = append(out, PostComparison{Dataset: g.ds, Protocol: g.proto, Curve: m.Name, Post: g.post, Better: better, Total: total})
			}
		}
	}
	return out
}

// weakRetraining finds the retraining settings whose retrained models
// learned little (Weak, one per method): those where no method's did. Only
// when no run of a setting (dataset, protocol setting, accuracy curve)
// learned is the retraining itself too weak to tell the methods apart; a
// run whose chance is unknown counts as one that may have learned. A
// method whose models sit at chance while another method's learned is not
// weak: the retraining works, and its maps removed what the models learn
// from — ROAR's best outcome, KAR's worst — so it is ranked like any
// other, and listed (atChance) for a look at its masks.
func weakRetraining(recs []store.Record) (weak, atChance []Weak) {
	type key struct{ dataset, setting, curve string }
	var order []key
	runs := map[key][]Weak{}
	learned := map[key]bool{}
	c := newCampaign(recs)
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		info, ok := describe(r)
		if !ok || info.Category != "retrain" {
			continue
		}
		res := r.Result
		limit := res.Chance + chanceMargin
		if res.Base > res.Chance {
			limit = (res.Chance + res.Base) / 2
		}
		for _, m := range info.Curves {
			if m.Over == nil || m.Better == "" || !(m.Name == "accuracy" || strings.HasPrefix(m.Name, "accuracy_")) {
				continue
			}
			for _, cv := range res.Curves {
				if cv.Name != m.Name || len(cv.Y) == 0 {
					continue
				}
				k := key{r.Dataset, c.setting(r), m.Name}
				if _, seen := runs[k]; !seen {
					order = append(order, k)
					runs[k] = nil
				}
				best := slices.Max(cv.Y)
				if res.Chance <= 0 || best > limit {
					learned[k] = true
					continue
				}
				runs[k] = append(runs[k], Weak{Dataset: r.Dataset, Protocol: k.setting, Method: methodName(r), Curve: m.Name, Best: best, Chance: res.Chance, Base: res.Base})
			}
		}
	}
	for _, k := range order {
		if learned[k] {
			atChance = append(atChance, runs[k]...)
		} else {
			weak = append(weak, runs[k]...)
		}
	}
	return weak, atChance
}

// Summary is one line per finding, for a terminal.
func (d Diagnostics) Summary() []string {
	var out []string
	for _, w := range d.WeakModels {
		out = append(out, fmt.Sprintf("warning: the explained model on %s (seed %d) scored %.3f on the test set, nearer chance (%.3f, always the most common class) than a perfect score: its maps explain a model that learned little, so every protocol's verdict says little about the methods; train it longer or on more samples",
			w.Dataset, w.Seed, w.Accuracy, w.Chance))
	}
	for i := 0; i < len(d.Weak); {
		// One line a setting: its methods' runs are weak together.
		j, best := i, d.Weak[i]
		for ; j < len(d.Weak) && d.Weak[j].Dataset == best.Dataset && d.Weak[j].Protocol == best.Protocol && d.Weak[j].Curve == best.Curve; j++ {
			if d.Weak[j].Best > best.Best {
				best = d.Weak[j]
			}
		}
		than := fmt.Sprintf("within %.2f of chance (%.3f, always the most common class)", chanceMargin, best.Chance)
		if best.Base > best.Chance {
			than = fmt.Sprintf("nearer chance (%.3f, always the most common class) than the explained model's %.3f", best.Chance, best.Base)
		}
		out = append(out, fmt.Sprintf("warning: %s %s on %s: no method's retrained models learned — the best, %s's, scored %.3f, %s — so the retraining cannot tell the methods apart and none is ranked; retrain longer or on more samples",
			best.Protocol, best.Curve, best.Dataset, best.Method, best.Best, than))
		i = j
	}
	for _, w := range d.AtChance {
		out = append(out, fmt.Sprintf("note: %s %s on %s, %s: its retrained models stayed near chance (best %.3f, chance %.3f) while other methods' learned: ranked, as maps that removed what the models learn from; a look at its masks tells that from maps that broke training",
			w.Protocol, w.Curve, w.Dataset, w.Method, w.Best, w.Chance))
	}
	for _, f := range d.TVFits {
		if f.Fit == nil {
			out = append(out, f.Explained)
			continue
		}
		out = append(out, fmt.Sprintf("%s %s on %s: the masks' total variation alone explains %.0f%% of its variance (R² %.3f over %d (method, rate) points; accuracy = %.4g·TV + %.4g)",
			f.Protocol, f.Curve, f.Dataset, 100*f.Fit.R2, f.Fit.R2, f.Fit.N, f.Fit.Slope, f.Fit.Intercept))
	}
	for _, c := range d.Post {
		out = append(out, fmt.Sprintf("%s %s on %s: %s maps scored better than plain ones in %d of %d (method, rate) comparisons",
			c.Protocol, c.Curve, c.Dataset, c.Post, c.Better, c.Total))
	}
	for _, c := range d.Truth {
		if c.Truth == "fa" || c.Truth == "rc" || c.Truth == "cos" {
			out = append(out, fmt.Sprintf("%s %s vs ground-truth %s: Pearson r %+.2f over %d methods", c.Protocol, c.Score, c.Truth, c.R, c.Methods))
		}
	}
	return out
}
