package report

import (
	"fmt"
	"math"
	"strings"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// TVDiagnostic is the DPI paper's check of one retraining or imputation
// protocol on one dataset: how much of its accuracy the masks' total
// variation alone explains (Table 3).
type TVDiagnostic struct {
	Dataset   string             `json:"dataset"`
	Protocol  string             `json:"protocol"`
	Curve     string             `json:"curve"`
	Fit       protocol.Fit       `json:"fit"`
	Points    []protocol.TVPoint `json:"points"`
	Explained string             `json:"explained"`
}

// PostComparison is the DPI paper's Table 2 cell for one post-processing:
// over the (method, rate) points the campaign has with and without it, how
// often the post-processed maps reached the lower accuracy. Smoothing that
// "wins" most comparisons while agreeing less with the model is the
// paper's warning sign.
type PostComparison struct {
	Dataset  string `json:"dataset"`
	Protocol string `json:"protocol"`
	Curve    string `json:"curve"`
	Post     string `json:"post"`
	Lower    int    `json:"lower"`
	Total    int    `json:"total"`
}

// Diagnostics are a campaign's bias checks: the TV fits, the
// post-processing comparisons, and each score's correlation across methods
// with ground-truth agreement (GOAR Table 1).
type Diagnostics struct {
	TVFits []TVDiagnostic              `json:"tv_fits"`
	Post   []PostComparison            `json:"post_comparisons,omitempty"`
	Truth  []protocol.TruthCorrelation `json:"truth_correlations"`
}

// Diagnose computes the diagnostics the records support.
func Diagnose(recs []store.Record) Diagnostics {
	var d Diagnostics
	byDataset := map[string][]protocol.Result{}
	var order []string
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		if _, ok := byDataset[r.Dataset]; !ok {
			order = append(order, r.Dataset)
		}
		byDataset[r.Dataset] = append(byDataset[r.Dataset], *r.Result)
	}
	for _, ds := range order {
		results := byDataset[ds]
		for _, c := range []struct{ proto, acc, tv string }{
			{"ROAR", "accuracy", "mask_tv"}, {"KAR", "accuracy", "mask_tv"}, {"EvalX", "accuracy", "mask_tv"},
			{"ROAD", "accuracy_morf", "mask_tv_morf"}, {"ROAD", "accuracy_lerf", "mask_tv_lerf"},
		} {
			var of []protocol.Result
			for _, r := range results {
				if r.Protocol == c.proto {
					of = append(of, r)
				}
			}
			pts := protocol.TVPoints(of, c.acc, c.tv)
			fit, err := protocol.TVFit(pts)
			if err != nil {
				continue // fewer than two points, or one TV value
			}
			d.TVFits = append(d.TVFits, TVDiagnostic{Dataset: ds, Protocol: c.proto, Curve: c.acc, Fit: fit, Points: pts,
				Explained: fmt.Sprintf("mask total variation alone explains %.0f%% of the variance of %s %s on %s", 100*fit.R2, c.proto, c.acc, ds)})
		}
	}
	d.Post = comparePost(recs)
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
		bySeed[k] = append(bySeed[k], *r.Result)
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
	return d
}

// comparePost counts, per dataset, protocol and post-processing, the
// (method, rate) points where the post-processed maps scored lower than
// the plain ones.
func comparePost(recs []store.Record) []PostComparison {
	type group struct{ ds, proto, post string }
	points := map[group]map[string][]protocol.Result{} // by plain method name
	var order []group
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		g := group{r.Dataset, r.Protocol, r.Post}
		if points[g] == nil {
			points[g] = map[string][]protocol.Result{}
			order = append(order, g)
		}
		res := *r.Result
		res.Method = r.Method // match post-processed and plain maps by method
		points[g][r.Method] = append(points[g][r.Method], res)
	}
	var out []PostComparison
	for _, g := range order {
		if g.post == "" {
			continue
		}
		plain, ok := points[group{g.ds, g.proto, ""}]
		if !ok {
			continue
		}
		for _, c := range [][2]string{{"accuracy", "mask_tv"}, {"accuracy_morf", "mask_tv_morf"}} {
			var a, b []protocol.Result
			for _, rs := range plain {
				a = append(a, rs...)
			}
			for _, rs := range points[g] {
				b = append(b, rs...)
			}
			lower, total := protocol.PostCount(protocol.TVPoints(a, c[0], c[1]), protocol.TVPoints(b, c[0], c[1]))
			if total > 0 {
				out = append(out, PostComparison{Dataset: g.ds, Protocol: g.proto, Curve: c[0], Post: g.post, Lower: lower, Total: total})
			}
		}
	}
	return out
}

// Summary is one line per finding, for a terminal.
func (d Diagnostics) Summary() []string {
	var out []string
	for _, f := range d.TVFits {
		out = append(out, fmt.Sprintf("%s %s on %s: accuracy = %.4g·TV + %.4g, R² %.3f over %d (method, rate) points",
			f.Protocol, f.Curve, f.Dataset, f.Fit.Slope, f.Fit.Intercept, f.Fit.R2, f.Fit.N))
	}
	for _, c := range d.Post {
		out = append(out, fmt.Sprintf("%s %s on %s: %s maps scored lower than plain ones in %d of %d (method, rate) comparisons",
			c.Protocol, c.Curve, c.Dataset, c.Post, c.Lower, c.Total))
	}
	for _, c := range d.Truth {
		if c.Truth == "fa" || c.Truth == "rc" || c.Truth == "cos" {
			out = append(out, fmt.Sprintf("%s %s vs ground-truth %s: Pearson r %+.2f over %d methods", c.Protocol, c.Score, c.Truth, c.R, c.Methods))
		}
	}
	return out
}
