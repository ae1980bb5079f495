package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"gonum.org/v1/plot"

	"faithlab/core/protocol"
)

// besideFigure draws a curve that its protocol compares across a boolean
// parameter (protocol.Metric.Beside) for two settings of the group's
// dataset and protocol that differ in that parameter (and least in the
// others, differences), side by side:
// the setting with it off at the left, on at the right, on one y range,
// each method in its colour with both summaries in the key (GOAR's
// cumulative misclassification with and without projection, GOAR Fig. 8).
// It is drawn once, from the group with the parameter off; ok is false
// when the other setting is not among the records.
func (c *campaign) besideFigure(g *group, m protocol.Metric) (Figure, bool, error) {
	if on, _ := g.param(m.Beside); on {
		return Figure{}, false, nil
	}
	var other *group
	least := -1
	for _, h := range c.groups {
		if h == g || h.dataset != g.dataset || h.recs[0].Protocol != g.recs[0].Protocol {
			continue
		}
		if d, ok := g.differences(h, m.Beside); ok && (least < 0 || d < least) {
			other, least = h, d
		}
	}
	if other == nil {
		return Figure{}, false, nil
	}
	left, ok, err := c.curveFigure(g, m)
	if err != nil || !ok {
		return Figure{}, false, err
	}
	right, ok, err := c.curveFigure(other, m)
	if err != nil || !ok {
		return Figure{}, false, err
	}
	off, on := besideLabels(m)
	left.Plot.Title.Text = fmt.Sprintf("%s — %s\n%s", g.recs[0].Protocol, g.dataset, off)
	right.Plot.Title.Text = fmt.Sprintf("%s — %s\n%s", g.recs[0].Protocol, g.dataset, on)
	for _, a := range []*plot.Axis{&left.Plot.Y, &right.Plot.Y} {
		a.Min, a.Max = min(left.Plot.Y.Min, right.Plot.Y.Min), max(left.Plot.Y.Max, right.Plot.Y.Max)
	}
	// The key: each method once, with its summary in either setting.
	labels, by := c.methodsOf(g.recs)
	_, byOther := c.methodsOf(other.recs)
	var summary protocol.Metric
	for _, s := range g.info.Metrics {
		if s.Of == m.Name {
			summary = s
		}
	}
	key := left.Key
	var shown []string // the methods of the left panel's key, in order
	var vs []float64   // their summaries, off then on
	for _, label := range labels {
		if pts, _, _ := meanCurve(by[label], m.Name, m.Value.Range); len(pts) == 0 {
			continue // no entry in the left panel's key
		}
		l, _ := meanSD(scalars(by[label], summary.Name))
		r, _ := meanSD(scalars(byOther[label], summary.Name))
		shown, vs = append(shown, label), append(vs, l, r)
	}
	if summary.Name != "" {
		written := numbers(vs...)
		for i, label := range shown[:min(len(shown), len(key))] {
			key[i].Label = keyLabel(label, fmt.Sprintf("%s %s %s, %s %s", summary.Label, written[2*i], off, written[2*i+1], on))
		}
	}
	return Figure{Name: c.name(fileName(g.dataset), g.file, m.Name, "beside", fileName(m.Beside)), Group: g.title, Kind: Curves, Plot: left.Plot,
		Beside: []*plot.Plot{right.Plot}, Key: key}, true, nil
}

// besideLabels are what the two settings of a side-by-side figure are
// called: the protocol's own words, or the parameter off and on.
func besideLabels(m protocol.Metric) (off, on string) {
	if len(m.BesideLabels) == 2 {
		return m.BesideLabels[0], m.BesideLabels[1]
	}
	name := strings.ReplaceAll(m.Beside, "_", " ")
	return name + ": off", name + ": on"
}

// param is the group's configured value of a boolean parameter.
func (g *group) param(name string) (bool, bool) {
	v, ok := g.recs[0].Result.Config[name].(bool)
	return v, ok
}

// differences reports whether h's configuration has the boolean parameter
// name flipped from g's, and in how many other parameters they differ
// (some matter only to one side, as GOAR's DDIM steps without projection):
// the setting to compare with is the one that differs least.
func (g *group) differences(h *group, name string) (int, bool) {
	a, b := g.recs[0].Result.Config, h.recs[0].Result.Config
	va, _ := a[name].(bool)
	vb, _ := b[name].(bool)
	if va == vb {
		return 0, false
	}
	keys := maps.Clone(a)
	maps.Copy(keys, b)
	d := 0
	for k := range keys {
		if k == name {
			continue
		}
		ja, _ := json.Marshal(a[k])
		jb, _ := json.Marshal(b[k])
		if string(ja) != string(jb) {
			d++
		}
	}
	return d, true
}
