package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"faithlab/core/protocol"
)

// confidenceFigures are a dataset's figures of how sure its rankings are:
// a critical-difference diagram per protocol setting (Demšar 2006: the
// methods by their mean rank over the inputs, with the letters of the
// paired tests on the score; neighbours sharing a letter joined by a
// bar), the chance that each method ranks first under each setting, and
// Kendall's τ between the settings' rankings.
func (c *campaign) confidenceFigures(ds string) []Figure {
	var figs []Figure
	var rs []Ranking // the settings that rank at least two methods, and those alone, not all tied
	var left leftSettings
	for _, r := range c.conf.Rankings {
		if r.Dataset == ds && left.keep(r) {
			rs = append(rs, r.rankedOnly())
		}
	}
	for _, r := range rs {
		g := c.groupOf(ds, r.Protocol)
		if g == nil {
			continue
		}
		figs = append(figs, Figure{Name: c.name(fileName(ds), g.file, "critical_difference"), Group: g.title, Kind: Ranks, Plot: cdPlot(r), Height: cdHeight(r)})
	}
	if len(rs) > 0 {
		var methods []string
		series := make([]barSeries, len(rs))
		for k, r := range rs {
			series[k] = barSeries{label: r.Protocol, values: map[string][]float64{}}
			for _, m := range r.Methods {
				if !slices.Contains(methods, m.Method) {
					methods = append(methods, m.Method)
				}
				series[k].values[m.Method] = []float64{m.PFirst}
			}
		}
		slices.SortStableFunc(methods, func(a, b string) int { return c.methods[a] - c.methods[b] })
		axis := protocol.Axis{Title: "bootstrap probability of ranking first", Range: []float64{0, 1}}
		if f, ok := c.barFigure("Which method ranks first — "+ds+leftNote(left.named()), axis, "", methods, series, 1); ok {
			f.Name, f.Group, f.Kind = c.name(fileName(ds), "rank_probability"), Compared, Ranks
			figs = append(figs, f)
		}
	}
	for _, a := range c.conf.Agreement {
		if a.Dataset == ds && len(a.Protocols) >= 2 {
			figs = append(figs, tauFigure(c, a))
		}
	}
	return figs
}

// leftNote is a figure title's line naming the settings it leaves out,
// with why ("": none).
func leftNote(left []string) string {
	if len(left) == 0 {
		return ""
	}
	return "\nnot shown: " + strings.Join(left, ", ")
}

// cdHeight leaves room for the axis, the group bars and a row of labels
// per two methods.
func cdHeight(r Ranking) vg.Length {
	return 0.6*vg.Inch + vg.Length((len(r.Methods)+1)/2)*vg.Points(10) + vg.Length(max(len(r.Methods), len(cdBars(cdOrder(r)))))*vg.Points(4)
}

// cdOrder is the ranking's methods in the diagram's order, by mean rank.
func cdOrder(r Ranking) []RankedMethod {
	ms := slices.Clone(r.Methods)
	slices.SortStableFunc(ms, func(a, b RankedMethod) int { return cmpFloat(a.MeanRank, b.MeanRank) })
	return ms
}

// cdPlot draws a ranking's critical-difference diagram (Demšar 2006): the
// rank axis on top, each method's mean rank marked on it with a line down
// to its label — the better half at the left, the rest at the right — and
// bars under the axis joining methods the paired tests cannot tell apart
// (cdBars). The letters come from the paired tests on the mean score, the
// places from the mean rank, so a group's methods need not be neighbours:
// a bar joins only neighbours that share a letter and never passes over a
// method that does not.
func cdPlot(r Ranking) *plot.Plot {
	p := newPlot(fmt.Sprintf("%s — %s\nmean rank on %s over %s × %s\n(1: best); methods sharing a letter cannot be told apart\n(paired tests); bars join such neighbours", r.Protocol, r.Dataset, r.Metric, Count(r.Units, "input"), Count(r.Seeds, "seed")))
	p.HideAxes()
	p.Add(cdDiagram{r})
	return p
}

// cdDiagram draws the diagram in the plot's data area (its axes hidden).
type cdDiagram struct{ r Ranking }

// Plot implements plot.Plotter.
func (d cdDiagram) Plot(c draw.Canvas, _ *plot.Plot) {
	k := len(d.r.Methods)
	ms := cdOrder(d.r)
	ts := keyStyle()
	labels := make([]string, len(ms))
	var labelW vg.Length
	for i, m := range ms {
		labels[i] = fmt.Sprintf("%s  %s  %.2f", slug(m.Method), m.Letters, m.MeanRank)
		labelW = max(labelW, ts.Width(labels[i]))
	}
	// Labels take the sides; the axis what is left, at least a third.
	labelW = min(labelW, (c.Max.X-c.Min.X)/3)
	left, right := c.Min.X+labelW+vg.Points(8), c.Max.X-labelW-vg.Points(8)
	hi := math.Max(2, float64(k))
	x := func(rank float64) vg.Length { return left + (right-left)*vg.Length((rank-1)/(hi-1)) }
	axis := draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}
	top := c.Max.Y - ts.Height("0") - vg.Points(4)
	c.StrokeLine2(axis, x(1), top, x(hi), top)
	tick := ts
	tick.XAlign, tick.YAlign = draw.XCenter, draw.YBottom
	for v := 1.0; v <= hi; v++ {
		c.StrokeLine2(axis, x(v), top, x(v), top+vg.Points(3))
		c.FillText(tick, vg.Point{X: x(v), Y: top + vg.Points(4)}, fmt.Sprint(v))
	}
	bar := draw.LineStyle{Color: color.Gray{Y: 20}, Width: vg.Points(2)}
	y := top - vg.Points(5)
	for _, b := range cdBars(ms) {
		c.StrokeLine2(bar, x(ms[b.first].MeanRank)-vg.Points(2), y, x(ms[b.last].MeanRank)+vg.Points(2), y)
		y -= vg.Points(4)
	}
	line := draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(0.6)}
	half := (len(ms) + 1) / 2
	ts.YAlign = draw.YCenter
	for i, m := range ms {
		if math.IsNaN(m.MeanRank) {
			continue
		}
		row := i
		if i >= half {
			row = len(ms) - 1 - i
		}
		ly := y - vg.Points(4+10*float64(row))
		end, at := left-vg.Points(4), left-vg.Points(6)
		ts.XAlign = draw.XRight
		if i >= half {
			end, at = right+vg.Points(4), right+vg.Points(6)
			ts.XAlign = draw.XLeft
		}
		px := x(m.MeanRank)
		c.StrokeLines(line, []vg.Point{{X: px, Y: top}, {X: px, Y: ly}, {X: end, Y: ly}})
		c.FillText(ts, vg.Point{X: at, Y: ly}, labels[i])
		c.SetColor(color.Black)
		c.Fill(circle(px, top, vg.Points(1.6)))
	}
}

// cdBar is a bar of a critical-difference diagram: it joins the methods
// first to last (indices into the plotted order), which all share Letter.
type cdBar struct {
	letter      rune
	first, last int
}

// cdBars are the bars joining methods the paired tests cannot tell apart,
// ms in the plotted (mean-rank) order: per letter, one bar for each
// maximal run of consecutive methods that all hold it, so that no bar
// passes over a method without its letter. A run of one method gets no
// bar, nor does a method without a mean rank. Bars come letter by letter,
// in the order the letters first appear, then left to right.
func cdBars(ms []RankedMethod) []cdBar {
	var order []rune
	for _, m := range ms {
		for _, l := range m.Letters {
			if !slices.Contains(order, l) {
				order = append(order, l)
			}
		}
	}
	var bars []cdBar
	for _, l := range order {
		holds := func(i int) bool {
			return i < len(ms) && !math.IsNaN(ms[i].MeanRank) && strings.ContainsRune(ms[i].Letters, l)
		}
		for i := 0; i < len(ms); i++ {
			if !holds(i) {
				continue
			}
			j := i
			for holds(j + 1) {
				j++
			}
			if j > i {
				bars = append(bars, cdBar{letter: l, first: i, last: j})
			}
			i = j
		}
	}
	return bars
}

// circle is a filled circle's path.
func circle(x, y, r vg.Length) vg.Path {
	var path vg.Path
	path.Move(vg.Point{X: x + r, Y: y})
	path.Arc(vg.Point{X: x, Y: y}, r, 0, 2*math.Pi)
	path.Close()
	return path
}

func cmpFloat(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	case math.IsNaN(b), a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// tauFigure draws Kendall's τ between every two protocol settings'
// rankings of the methods they share, in a diverging scale from −1
// (reversed) to +1 (the same), with W in the title. The rows carry the
// settings' names, each with a number, and the columns those numbers
// alone, so that long names neither overlap nor squeeze the cells; the
// cells fill the width up to the colour scale and are about square.
func tauFigure(c *campaign, a Agreement) Figure {
	k := len(a.Protocols)
	p := newPlot(fmt.Sprintf("Do the protocols agree? — %s\nKendall's W = %.2f (p %s) over %d methods%s", a.Dataset, a.W, pValue(a.P), len(a.Methods), leftNote(a.Left)))
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -0.5, float64(k)-0.5, -0.5, float64(k)-0.5
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-1)
	cm.SetMax(1)
	colour := func(v float64) color.Color {
		if math.IsNaN(v) {
			return color.Gray{Y: 220}
		}
		col, err := cm.At(v)
		if err != nil {
			return color.Gray{Y: 220}
		}
		return col
	}
	p.Add(tauCells{tau: a.Tau, colour: colour})
	// A name goes on two lines where it would leave the cells less than
	// about 24 pt each.
	room := max(Width-scaleWidth-vg.Points(12)-vg.Length(k)*vg.Points(24), vg.Points(60))
	rows, cols := tauLabels(a.Protocols, func(s string) bool { return p.Y.Tick.Label.Width(s) <= room })
	var ticks, yticks []plot.Tick
	var labelW, labelH vg.Length
	for i := range a.Protocols {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: cols[i]})
		yticks = append(yticks, plot.Tick{Value: float64(k - 1 - i), Label: rows[i]})
		labelW = max(labelW, p.Y.Tick.Label.Width(rows[i]))
		labelH = max(labelH, p.Y.Tick.Label.Height(rows[i]))
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(ticks), plot.ConstantTicks(yticks)
	p.X.Tick.Length, p.Y.Tick.Length = 0, 0
	p.X.Padding, p.Y.Padding = 0, 0
	// Rows as tall as the cells are wide, within reason; the title and the
	// columns' numbers above and below them.
	cell := (Width - scaleWidth - labelW - vg.Points(12)) / vg.Length(k)
	cell = max(min(max(cell, vg.Points(14)), vg.Points(28)), labelH+vg.Points(2))
	title := p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
	numbers := p.X.Tick.Label.Height("0") + vg.Points(2)
	h := title + numbers + vg.Length(k)*cell + vg.Points(4)
	return Figure{Name: c.name(fileName(a.Dataset), "protocol_agreement"), Group: Compared, Kind: Ranks, Plot: p, Height: h,
		Scale: &colourBar{colour: colour, lo: -1, hi: 1, label: "Kendall's τ", raise: numbers}}
}

// tauLabels are the agreement figure's row labels — each setting's name,
// on two lines where one does not fit, then its number — and its column
// labels, the numbers alone.
func tauLabels(protocols []string, fits func(string) bool) (rows, cols []string) {
	for i, name := range protocols {
		n := strconv.Itoa(i + 1)
		row := name + "  " + n
		if !fits(row) {
			row = breakMiddle(name) + "  " + n
		}
		rows = append(rows, row)
		cols = append(cols, n)
	}
	return rows, cols
}

// tauCells draws a τ matrix, a cell per pair with its value written in it,
// in type small enough to fit the cell.
type tauCells struct {
	tau    [][]float64
	colour func(float64) color.Color
}

// Plot implements plot.Plotter.
func (t tauCells) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	k := len(t.tau)
	ts := tauStyle(trX(1) - trX(0))
	for i := range k {
		for j := range k {
			v := t.tau[i][j]
			x0, x1 := trX(float64(j)-0.5), trX(float64(j)+0.5)
			y0, y1 := trY(float64(k-1-i)-0.5), trY(float64(k-1-i)+0.5)
			c.SetColor(t.colour(v))
			c.Fill(vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}.Path())
			label := "—"
			if !math.IsNaN(v) {
				label = fmt.Sprintf("%+.2f", v)
			}
			// Colours the screen's ink leaves as they are (Ink.recolour):
			// the text stands on its cell, not on the page.
			ts.Color = cellDark
			if !math.IsNaN(v) && math.Abs(v) > 0.7 {
				ts.Color = cellLight
			}
			c.FillText(ts, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, label)
		}
	}
}

// tauStyle is the type of the values in cells of the given width: the
// keys' size, or smaller where "+0.00" would not fit, down to 4 pt.
func tauStyle(cell vg.Length) text.Style {
	ts := keyStyle()
	ts.XAlign, ts.YAlign = draw.XCenter, draw.YCenter
	if w := ts.Width("+0.00"); w > cell-vg.Points(2) {
		ts.Font.Size = max(vg.Points(4), ts.Font.Size*(cell-vg.Points(2))/w)
	}
	return ts
}

// cellDark and cellLight are text on a coloured cell: a near black that
// is not grey and a light grey that is not white, which Ink.recolour
// leaves alone in either theme.
var (
	cellDark  = color.NRGBA{R: 18, G: 18, B: 30, A: 255}
	cellLight = color.Gray{Y: 245}
)
