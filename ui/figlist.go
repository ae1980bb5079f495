package ui

import (
	"cmp"
	"slices"
	"strings"

	"faithlab/core/report"
)

// The run's figures are listed by protocol, then by kind — curves, bars,
// ranks, the bias checks, samples — each entry naming both, and the list
// keeps the entries holding every word typed in its search field.

// kindOrder is the order of the figure kinds in the list.
var kindOrder = []string{report.Curves, report.Bars, report.Ranks, report.BiasChecks, report.Samples}

// figureLabel is a figure's entry in the list: "ROAR · curves ·
// fashion-mnist_roar_accuracy".
func figureLabel(f report.Figure) string {
	group, kind := f.Group, f.Kind
	if group == "" {
		group = "other"
	}
	if kind == "" {
		kind = "figure"
	}
	return group + " · " + kind + " · " + f.Name
}

// figureLabels lists the figures matching find (every word, in any case)
// by group — the protocols in the run's order, then those over several
// protocols, then the maps — and kind, in the run's order within.
func figureLabels(figs []report.Figure, find string) []string {
	words := strings.Fields(strings.ToLower(find))
	groupAt := map[string]int{}
	for _, f := range figs {
		if _, ok := groupAt[f.Group]; !ok {
			groupAt[f.Group] = len(groupAt)
		}
	}
	rank := func(f report.Figure) int {
		switch f.Group {
		case report.Compared:
			return len(figs)
		case "Attribution maps":
			return len(figs) + 1
		}
		return groupAt[f.Group]
	}
	idx := make([]int, 0, len(figs))
	for i, f := range figs {
		label := strings.ToLower(figureLabel(f))
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(label, w) }) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		fa, fb := figs[a], figs[b]
		return cmp.Or(cmp.Compare(rank(fa), rank(fb)), cmp.Compare(kindAt(fa.Kind), kindAt(fb.Kind)))
	})
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = figureLabel(figs[i])
	}
	return out
}

func kindAt(kind string) int {
	if i := slices.Index(kindOrder, kind); i >= 0 {
		return i
	}
	return len(kindOrder)
}
