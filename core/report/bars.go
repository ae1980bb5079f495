package report

import (
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"faithlab/core/protocol"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// interval is a method's interval of a scalar under the group's setting:
// pooled over the seeds where there are several, else its one seed's.
func (c *campaign) interval(g *group, method, metric string, recs []store.Record) (stats.Interval, bool) {
	seed := AllSeeds
	if seeds(recs) == 1 {
		seed = strconv.FormatUint(recs[0].Seed, 10)
	}
	return c.conf.Interval(g.dataset, g.title, method, metric, seed)
}

// barSeries is one bar per method: its key label, each method's values
// (one per seed) and, where the run has it, each method's 95 % interval.
type barSeries struct {
	label  string
	values map[string][]float64
	ci     map[string]stats.Interval
}

// scalarFigures draws the protocol setting's scalars that no curve shows
// (those that summarise a curve are in its key; measures several
// protocols report are compared across them): a bar per method, scalars
// that share an axis side by side.
func (c *campaign) scalarFigures(g *group) []Figure {
	var titles []string
	byTitle := map[string][]protocol.Metric{}
	for _, m := range g.info.Metrics {
		if m.Of != "" || m.Measure != "" {
			continue
		}
		if byTitle[m.Value.Title] == nil {
			titles = append(titles, m.Value.Title)
		}
		byTitle[m.Value.Title] = append(byTitle[m.Value.Title], m)
	}
	methods, by := c.methodsOf(g.recs)
	var figs []Figure
	for _, t := range titles {
		ms := byTitle[t]
		var series []barSeries
		var names []string
		better := ms[0].Better
		for _, m := range ms {
			s := barSeries{label: m.Label, values: map[string][]float64{}, ci: map[string]stats.Interval{}}
			if s.label == "" {
				s.label = m.Name
			}
			for _, meth := range methods {
				s.values[meth] = present(scalars(by[meth], m.Name))
				if iv, ok := c.interval(g, meth, m.Name, by[meth]); ok {
					s.ci[meth] = iv
				}
			}
			series = append(series, s)
			names = append(names, m.Name)
			if m.Better != better {
				better = ""
			}
		}
		title := g.title + " — " + g.dataset
		if f, ok := c.barFigure(title, ms[0].Value, better, methods, series, seeds(g.recs)); ok {
			f.Name, f.Group, f.Kind = c.name(fileName(g.dataset), g.file, groupName(names)), g.title, Bars
			figs = append(figs, f)
		}
	}
	return figs
}

// present drops the undefined values (a record that lacks a scalar).
func present(v []float64) []float64 {
	return slices.DeleteFunc(v, func(x float64) bool { return !defined(x) })
}

// groupName names a figure of several metrics: their common prefix
// ("tau" for tau_morf and tau_lerf), or all their names.
func groupName(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	prefix := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if p := strings.Trim(prefix, "_"); p != "" && strings.HasSuffix(prefix, "_") {
		return p
	}
	return strings.Join(names, "_")
}

// measureFigures compare, per measure that several protocols report
// alike, its value per method under every protocol setting on the
// dataset: how far each protocol's perturbed images lie from the data
// (FUD paper, Tables 2 and 6).
func (c *campaign) measureFigures(ds string) []Figure {
	type entry struct {
		g *group
		m protocol.Metric
	}
	var measures []string
	byMeasure := map[string][]entry{}
	for _, g := range c.groups {
		if g.dataset != ds {
			continue
		}
		for _, m := range g.info.Metrics {
			if m.Measure == "" {
				continue
			}
			if byMeasure[m.Measure] == nil {
				measures = append(measures, m.Measure)
			}
			byMeasure[m.Measure] = append(byMeasure[m.Measure], entry{g, m})
		}
	}
	var figs []Figure
	for _, measure := range measures {
		es := byMeasure[measure]
		var all []store.Record
		var series []barSeries
		for _, e := range es {
			label := e.g.title
			if cv, ok := e.g.info.Curve(e.m.Of); ok && cv.Label != "" {
				label += " " + cv.Label
			}
			_, by := c.methodsOf(e.g.recs)
			s := barSeries{label: label, values: map[string][]float64{}}
			for meth, recs := range by {
				s.values[meth] = present(scalars(recs, e.m.Name))
			}
			series = append(series, s)
			all = append(all, e.g.recs...)
		}
		methods, _ := c.methodsOf(all)
		axis := es[0].m.Value
		for _, e := range es[1:] {
			// Means over different things (rates, strengths): the
			// curve's title says what the bars are.
			if cv, ok := es[0].g.info.Curve(es[0].m.Of); ok && e.m.Value.Title != axis.Title {
				axis.Title = cv.Value.Title + ", mean over each protocol's levels"
				break
			}
		}
		if f, ok := c.barFigure("Protocols compared — "+ds, axis, "", methods, series, seeds(all)); ok {
			f.Name, f.Group, f.Kind = c.name(fileName(ds), measure), Compared, Bars
			figs = append(figs, f)
		}
	}
	return figs
}

// barFigure draws horizontal bars: a row per method (first on top, its
// label wrapped), a bar per series in each row (mean over seeds, with its
// 95 % interval where the run has one, else ± one standard deviation
// where there are several seeds), from zero along the metric's axis, with
// its reference line. ok is false when no series has a value.
func (c *campaign) barFigure(title string, axis protocol.Axis, better protocol.Better, methods []string, series []barSeries, nSeeds int) (Figure, bool) {
	if n := seedNote(nSeeds); n != "" {
		title += "\n" + n
	}
	p := newPlot(title)
	addGrid(p, true, false)
	rows, per := len(methods), len(series)
	thick := 0.8 / float64(per)
	lo, hi := math.Inf(1), math.Inf(-1)
	var key []KeyEntry
	drawn := false
	for k, s := range series {
		b := hbars{thick: thick, color: okabeIto[k%len(okabeIto)]}
		for i, meth := range methods {
			m, sd := meanSD(s.values[meth])
			elo, ehi := m-sd, m+sd
			if iv, ok := s.ci[meth]; ok && !math.IsNaN(iv.Lo) {
				m, elo, ehi = iv.Estimate, iv.Lo, iv.Hi
			}
			b.values, b.lo, b.hi = append(b.values, m), append(b.lo, elo), append(b.hi, ehi)
			b.pos = append(b.pos, float64(rows-1-i)+(float64(per-1)/2-float64(k))*thick)
			if !math.IsNaN(m) {
				lo, hi, drawn = min(lo, clip(axis, elo)), max(hi, clip(axis, ehi)), true
			}
		}
		if per == 1 {
			b.color = color.RGBA{86, 140, 190, 255}
		}
		p.Add(b)
		key = append(key, KeyEntry{Label: s.label, Thumbs: []plot.Thumbnailer{b}})
	}
	if !drawn {
		return Figure{}, false
	}
	if per == 1 {
		key = nil // the axis title says what the bars are
	}
	fitAxis(&p.X, axis, lo, hi, true)
	p.X.Label.Text = withDirection(p.X.Label.Text, better)
	addReference(p, axis, true)
	ticks := make([]plot.Tick, rows)
	lines := 1
	for i, meth := range methods {
		ticks[i] = plot.Tick{Value: float64(rows - 1 - i), Label: tickLabel(meth)}
		lines = max(lines, strings.Count(ticks[i].Label, "\n")+1)
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Min, p.Y.Max = -0.5, float64(rows)-0.5
	if axis.Reference != nil {
		p.Y.Max += 0.4 // room for the reference's label above the bars
	}
	p.Y.Padding = 0
	rowH := max(vg.Points(6.5*float64(per)+5), vg.Points(7.5*float64(lines)+3))
	h := 0.9*vg.Inch + vg.Length(rows)*rowH
	if strings.Contains(title, "\n") {
		h += vg.Points(labelSize + 2)
	}
	return Figure{Plot: p, Key: key, Height: h}, true
}

// hbars are horizontal bars from zero (or the axis's end nearer zero),
// with whiskers from lo to hi, and "n/a" where a value is undefined.
type hbars struct {
	values, lo, hi []float64
	pos            []float64 // each bar's centre on the y axis
	thick          float64   // in y units
	color          color.Color
}

// Plot implements plot.Plotter.
func (b hbars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	base := trX(math.Max(p.X.Min, math.Min(p.X.Max, 0)))
	whisker := draw.LineStyle{Color: color.Gray{Y: 40}, Width: vg.Points(0.6)}
	for i, v := range b.values {
		y0, y1 := trY(b.pos[i]-b.thick/2), trY(b.pos[i]+b.thick/2)
		if math.IsNaN(v) {
			s := keyStyle()
			s.Font.Size, s.Color = vg.Points(5.5), color.Gray{Y: 110}
			s.XAlign, s.YAlign = draw.XLeft, draw.YCenter
			c.FillText(s, vg.Point{X: base + vg.Points(1.5), Y: (y0 + y1) / 2}, "n/a")
			continue
		}
		x := trX(v)
		c.SetColor(b.color)
		c.Fill(vg.Rectangle{Min: vg.Point{X: min(base, x), Y: y0}, Max: vg.Point{X: max(base, x), Y: y1}}.Path())
		if l, h := b.lo[i], b.hi[i]; h > l {
			y, lo, hi := trY(b.pos[i]), trX(max(p.X.Min, l)), trX(min(p.X.Max, h))
			tick := (y1 - y0) / 4
			c.StrokeLine2(whisker, lo, y, hi, y)
			c.StrokeLine2(whisker, lo, y-tick, lo, y+tick)
			c.StrokeLine2(whisker, hi, y-tick, hi, y+tick)
		}
	}
}

// Thumbnail implements plot.Thumbnailer.
func (b hbars) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	h := r.Size().Y
	r.Min.Y, r.Max.Y = r.Min.Y+h/6, r.Max.Y-h/6
	c.SetColor(b.color)
	c.Fill(r.Path())
}
