package reproduce

import (
	"cmp"
	"fmt"
	"slices"
)

// ruleOf is the rule the check's parts are decided by (decide): an
// equivalence at Within for flat and near, of the whole set (a pair
// beyond the margin excludes "minimal differences"); most of the comparisons for
// truth ("in almost all cases"); any pair for reorders; a majority for a
// post's share; MinR2 for a tv fit; above 0 otherwise.
func (c Check) ruleOf() rule {
	switch {
	case c.Expect == "flat" || c.Expect == "near":
		return rule{equiv: true, margin: c.Within, combine: "every"}
	case c.Kind == "truth":
		return rule{combine: "most", quorum: almostAll}
	case c.Kind == "reorders":
		return rule{combine: "any"}
	case c.Kind == "post":
		return rule{bound: 0.5}
	case c.Kind == "tv":
		return rule{bound: c.MinR2}
	}
	return rule{}
}

// paperParts are the claim's parts as the paper's own numbers give them
// (PaperValues), decided as exact (their intervals of no width, "told
// apart" wherever they differ) but for a post's counts, which keep their
// Wilson interval: what the claim's rule must find holds.
func paperParts(c Check, pv PaperValues) ([]part, error) {
	scale := cmp.Or(pv.Scale, 1)
	sign := 1.0
	if c.Expect == "below" {
		sign = -1
	}
	if pv.Better == "lower" && c.Kind == "versus" { // versus compares "better"; across and scores the raw difference
		sign = -sign
	}
	exact := func(name string, x float64, tested bool) part {
		told := 0
		if x > 0 {
			told = 1
		} else if x < 0 {
			told = -1
		}
		return part{name: name, est: x, lo: x, hi: x, tested: tested, told: told}
	}
	pair := func(p PaperPart) (float64, error) {
		if p.A == nil || p.B == nil {
			return 0, fmt.Errorf("part %q: want a and b", p.Name)
		}
		return (*p.A - *p.B) / scale, nil
	}
	var parts []part
	switch {
	case c.Kind == "order":
		if len(pv.X) < 3 || len(pv.X) != len(pv.Y) {
			return nil, fmt.Errorf("an order needs x and y, three or more of each")
		}
		y := slices.Clone(pv.Y)
		if pv.Better == "lower" {
			for i := range y {
				y[i] = -y[i]
			}
		}
		if c.Expect == "flat" {
			for i := range y {
				for j := i + 1; j < len(y); j++ {
					parts = append(parts, exact(fmt.Sprintf("%g − %g", pv.X[i], pv.X[j]), (y[i]-y[j])/scale, false))
				}
			}
			return parts, nil
		}
		for i := range y { // exact numbers against the order are told apart against it: excluded
			for j := range y {
				if pv.X[i] < pv.X[j] && y[i] > y[j] {
					return []part{exact(fmt.Sprintf("%g above %g", pv.X[i], pv.X[j]), -1, false)}, nil
				}
			}
		}
		return []part{exact("ρ", spearman0(pv.X, y), false)}, nil
	case c.Kind == "versus" && c.Expect == "flat":
		names := slices.Sorted(func(yield func(string) bool) {
			for k := range pv.Scores {
				if !yield(k) {
					return
				}
			}
		})
		for i, a := range names {
			for _, b := range names[i+1:] {
				parts = append(parts, exact(a+" − "+b, (pv.Scores[a]-pv.Scores[b])/scale, false))
			}
		}
	case c.Kind == "post":
		for _, p := range pv.Parts {
			if p.N <= 0 || p.K < 0 || p.K > p.N {
				return nil, fmt.Errorf("part %q: want k of n comparisons", p.Name)
			}
			parts = append(parts, sharePart(p.Name, p.K, p.N))
		}
	case c.Kind == "tv" || c.Kind == "truth" && c.Expect == "low":
		for _, p := range pv.Parts {
			if p.Value == nil {
				return nil, fmt.Errorf("part %q: want a value", p.Name)
			}
			x := *p.Value
			if c.Kind == "truth" {
				x = c.Within - x // the claim: r below Within
			}
			parts = append(parts, exact(p.Name, x, false))
		}
	case c.Kind == "reorders":
		if len(pv.Rankings) != 2 {
			return nil, fmt.Errorf("reorders needs two rankings")
		}
		var cols []map[string]float64
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range pv.Rankings {
				if !yield(k) {
					return
				}
			}
		}) {
			col := map[string]float64{}
			for m, x := range pv.Rankings[k] {
				col[m] = x
				if pv.Directions[k] == "lower" {
					col[m] = -x
				}
			}
			cols = append(cols, col)
		}
		var methods []string
		for m := range cols[0] {
			if _, ok := cols[1][m]; ok {
				methods = append(methods, m)
			}
		}
		slices.Sort(methods)
		for i, a := range methods {
			for _, b := range methods[i+1:] {
				da, db := cols[0][a]-cols[0][b], cols[1][a]-cols[1][b]
				if da == 0 || db == 0 {
					continue
				}
				p := part{name: a + " and " + b, tested: true, told: -1}
				if (da > 0) != (db > 0) {
					p.told = 1
				}
				parts = append(parts, p)
			}
		}
	default: // versus, across and scores of pairs; truth's comparisons
		for _, p := range pv.Parts {
			d, err := pair(p)
			if err != nil {
				return nil, err
			}
			if c.Expect == "near" {
				parts = append(parts, exact(p.Name, d, false))
				continue
			}
			parts = append(parts, exact(p.Name, sign*d, c.Kind != "truth" && c.Kind != "scores"))
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("no numbers to apply the rule to")
	}
	return parts, nil
}
