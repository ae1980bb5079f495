package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// markersUpTo is how many points a curve may have and still show each as
// a marker; denser curves (deletion's per-feature steps) are lines.
const markersUpTo = 12

// curveFigure draws one curve metric of a protocol setting: a line per
// method, the mean over seeds with its 95 % band (meanCurve), on the
// metric's axes, with its reference line, and in the
// key each method with the scalar that summarises the curve ("AUC 0.425").
func (c *campaign) curveFigure(g *group, m protocol.Metric) (Figure, bool, error) {
	labels, by := c.methodsOf(g.recs)
	i := slices.IndexFunc(g.info.Metrics, func(s protocol.Metric) bool { return s.Of == m.Name })
	hasSummary := i >= 0
	var summary protocol.Metric
	if hasSummary {
		summary = g.info.Metrics[i]
	}
	p := newPlot(curveTitle(g, m, seeds(g.recs)))
	addGrid(p, true, true)
	var key []KeyEntry
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, label := range labels {
		pts, errs, banded := meanCurve(by[label], m.Name, m.Value.Range)
		if len(pts) == 0 {
			continue
		}
		for i, q := range pts {
			errs[i].Low, errs[i].High = q.Y-clip(m.Value, q.Y-errs[i].Low), clip(m.Value, q.Y+errs[i].High)-q.Y
			xlo, xhi = min(xlo, q.X), max(xhi, q.X)
			ylo, yhi = min(ylo, q.Y-errs[i].Low), max(yhi, q.Y+errs[i].High)
		}
		colour, dash := style(c.methods[label])
		dense := len(pts) > markersUpTo
		if banded && dense { // a band under the line
			band, err := plotter.NewPolygon(bandOf(pts, errs))
			if err != nil {
				return Figure{}, false, fmt.Errorf("%s %s: %w", g.title, m.Name, err)
			}
			band.Color, band.LineStyle.Width = color.NRGBA{colour.R, colour.G, colour.B, 50}, 0
			p.Add(band)
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return Figure{}, false, fmt.Errorf("%s %s: %w", g.title, m.Name, err)
		}
		line.Color, line.Width, line.Dashes = colour, vg.Points(1), dash
		thumbs := []plot.Thumbnailer{line}
		p.Add(line)
		if !dense {
			dots, err := plotter.NewScatter(pts)
			if err != nil {
				return Figure{}, false, err
			}
			dots.Color, dots.Radius, dots.Shape = colour, vg.Points(1.6), draw.CircleGlyph{}
			p.Add(dots)
			thumbs = append(thumbs, dots)
		}
		if banded && !dense {
			bars, err := plotter.NewYErrorBars(errPoints{pts, errs})
			if err != nil {
				return Figure{}, false, err
			}
			bars.Color, bars.Width, bars.CapWidth = colour, vg.Points(0.6), vg.Points(3)
			p.Add(bars)
		}
		key = append(key, KeyEntry{Label: label, Thumbs: thumbs})
	}
	if len(key) == 0 {
		return Figure{}, false, nil
	}
	// The key: each method with the scalar that summarises its curve, all
	// written alike.
	vs := make([]float64, len(key))
	for i, e := range key {
		vs[i] = math.NaN()
		if hasSummary {
			vs[i], _ = meanSD(scalars(by[e.Label], summary.Name))
		}
	}
	for i, v := range numbers(vs...) {
		if math.IsNaN(vs[i]) {
			key[i].Label = display(key[i].Label)
		} else {
			key[i].Label = keyLabel(key[i].Label, summary.Label+" "+v)
		}
	}
	fitOver(&p.X, *m.Over, xlo, xhi)
	fitAxis(&p.Y, m.Value, ylo, yhi, false)
	p.Y.Label.Text = breakTitle(withDirection(p.Y.Label.Text, m.Better))
	addReference(p, m.Value, false)
	return Figure{Name: c.name(fileName(g.dataset), g.file, m.Name), Group: g.title, Kind: Curves, Plot: p, Key: key}, true, nil
}

// curveTitle is "Protocol, label — dataset", with the seeds' note on a
// second line.
func curveTitle(g *group, m protocol.Metric, seeds int) string {
	t := g.title
	if m.Label != "" {
		t += ", " + m.Label
	}
	t += " — " + g.dataset
	if n := seedNote(seeds); n != "" {
		t += "\n" + n
	}
	return t
}

// withDirection appends which way is better to an axis title.
func withDirection(title string, b protocol.Better) string {
	switch b {
	case protocol.Higher:
		return title + " (↑ better)"
	case protocol.Lower:
		return title + " (↓ better)"
	}
	return title
}

// bandOf is the outline of the band of ± one standard deviation around
// a curve: along its top, then back along its bottom.
func bandOf(pts plotter.XYs, errs plotter.YErrors) plotter.XYs {
	band := make(plotter.XYs, 0, 2*len(pts))
	for i, q := range pts {
		band = append(band, plotter.XY{X: q.X, Y: q.Y + errs[i].High})
	}
	for i := len(pts) - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: pts[i].X, Y: pts[i].Y - errs[i].Low})
	}
	return band
}

// number writes a value for a key or a table: three significant digits,
// but three decimals below 1 ("0.170", "8.98", "17.2", "250").
func number(v float64) string { return Decimals(v, numberDecimals(v)) }

// numberDecimals is how many decimals number writes v with.
func numberDecimals(v float64) int {
	switch a := math.Abs(v); {
	case a >= 100:
		return 0
	case a >= 10:
		return 1
	case a >= 1:
		return 2
	}
	return 3
}

// numbers writes values shown together, in one figure's key, with the
// same decimals: as many as number gives the one that needs the most
// ("1.000" beside "0.998", never "1.00"). Undefined values take none.
func numbers(vs ...float64) []string {
	d := 0
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			d = max(d, numberDecimals(v))
		}
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = Decimals(v, d)
	}
	return out
}

// keyLabel is a method's label for a key (display) with what it scored
// after it, on its last line: the method's name and parameters stay
// together, then "(AUC 0.425)".
func keyLabel(label, scored string) string {
	return display(label) + " (" + scored + ")"
}

// Decimals writes v with n decimals, a negative value that rounds to zero
// without its sign ("0.000", never "-0.000": no sign to read into it).
func Decimals(v float64, n int) string {
	s := fmt.Sprintf("%.*f", n, v)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}

// Count writes n and the noun, in the plural unless n is 1: "1 seed",
// "2 seeds".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// errPoints are points with their error bars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// meanCurve is a curve of the records, mean over seeds, with each point's
// 95 % band inside rng (pooledBand: from the inputs' spread the protocol
// kept, and from the seeds' spread where there are several); banded
// reports that any point has one.
func meanCurve(recs []store.Record, name string, rng []float64) (pts plotter.XYs, errs plotter.YErrors, banded bool) {
	var xs []float64
	for _, r := range recs {
		for _, cv := range r.Result.Curves {
			if cv.Name == name && xs == nil {
				xs = cv.X
			}
		}
	}
	for j, x := range xs {
		b := pooledBand(recs, name, j, x, rng)
		if math.IsNaN(b.mean) {
			continue
		}
		lo, hi := b.mean-b.lo, b.hi-b.mean
		if math.IsNaN(lo) || math.IsNaN(hi) {
			lo, hi = 0, 0
		} else {
			banded = true
		}
		pts = append(pts, plotter.XY{X: x, Y: b.mean})
		errs = append(errs, struct{ Low, High float64 }{lo, hi})
	}
	return pts, errs, banded
}

// tvFigure is accuracy against the masks' total variation over every
// method and rate of a protocol setting, with the least-squares line and
// its R² (DPI paper, Table 3); none where the fit is undefined (fewer than
// three points, or accuracies that do not vary).
func (c *campaign) tvFigure(g *group, acc protocol.Metric) (Figure, bool) {
	var results []protocol.Result
	for _, r := range g.recs {
		results = append(results, *r.Result)
	}
	pts := protocol.TVPoints(results, acc.Name, acc.MaskTV)
	fit, err := protocol.TVFit(pts)
	if err != nil {
		return Figure{}, false
	}
	title := g.title
	if acc.Label != "" {
		title += ", " + acc.Label
	}
	p := newPlot(fmt.Sprintf("%s: accuracy against mask TV — %s\nR² %.2f over %d (method, rate) points", title, g.dataset, fit.R2, fit.N))
	addGrid(p, true, true)
	var key []KeyEntry
	var order []string
	byMethod := map[string]plotter.XYs{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range pts {
		if _, ok := byMethod[q.Method]; !ok {
			order = append(order, q.Method)
		}
		byMethod[q.Method] = append(byMethod[q.Method], plotter.XY{X: q.TV, Y: q.Accuracy})
		lo, hi = min(lo, q.TV), max(hi, q.TV)
	}
	line, err := plotter.NewLine(plotter.XYs{{X: lo, Y: fit.Intercept + fit.Slope*lo}, {X: hi, Y: fit.Intercept + fit.Slope*hi}})
	if err != nil {
		return Figure{}, false
	}
	line.Color, line.Width, line.Dashes = color.Gray{Y: 90}, vg.Points(0.8), []vg.Length{vg.Points(3), vg.Points(2)}
	p.Add(line)
	for _, m := range order {
		sc, err := plotter.NewScatter(byMethod[m])
		if err != nil {
			return Figure{}, false
		}
		colour, _ := style(c.methods[m])
		sc.Color, sc.Radius, sc.Shape = colour, vg.Points(1.8), draw.CircleGlyph{}
		p.Add(sc)
		key = append(key, KeyEntry{Label: display(m), Thumbs: []plot.Thumbnailer{sc}})
	}
	key = append(key, KeyEntry{Label: fmt.Sprintf("fit: %.3g·TV %+.3g", fit.Slope, fit.Intercept), Thumbs: []plot.Thumbnailer{line}})
	tv := protocol.Axis{Title: "mean total variation of the masks"}
	if m, ok := g.info.Curve(acc.MaskTV); ok {
		tv = m.Value
	}
	fitAxis(&p.X, tv, lo, hi, false)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, q := range pts {
		ylo, yhi = min(ylo, q.Accuracy), max(yhi, q.Accuracy)
	}
	fitAxis(&p.Y, acc.Value, ylo, yhi, false)
	p.Y.Label.Text = breakTitle(p.Y.Label.Text)
	return Figure{Name: c.name(fileName(g.dataset), g.file, acc.Name+"_vs_tv"), Group: g.title, Kind: BiasChecks, Plot: p, Key: key}, true
}
