package ui

import (
	"image"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"fyne.io/fyne/v2/theme"

	"faithlab/core/report"
)

// series is one line of a chart.
type series struct {
	Name   string
	X, Y   []float64
	Colour color.Color
	Dashed bool
	Thin   bool // a line without points
	NoKey  bool // left out of the legend (a continuation of the series before)
}

// Line colours of the charts (Okabe–Ito, readable by colour-blind users).
var (
	blue   = color.RGBA{0, 114, 178, 255}
	orange = color.RGBA{230, 159, 0, 255}
	green  = color.RGBA{0, 158, 115, 255}
)

// chartDPI renders charts at the screen's usual density; the canvas.Image
// holding them scales them to the widget's size.
const chartDPI = 96

// lineChart draws series against x in a w×h pixel image. yMin/yMax fix
// the y range when yMax > yMin (accuracies in [0, 1]).
func lineChart(title, xLabel, yLabel string, ss []series, w, h int, yMin, yMax float64) image.Image {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Left = false
	if yMax > yMin {
		p.Y.Min, p.Y.Max = yMin, yMax
	}
	p.Legend.Top = !endsHigh(ss, yMin, yMax)
	p.Add(faintGrid())
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	for _, s := range ss {
		if len(s.X) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(s.X))
		for i := range s.X {
			xy[i].X, xy[i].Y = s.X[i], s.Y[i]
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			continue
		}
		l.Color, pts.Color, pts.Shape = s.Colour, s.Colour, draw.CircleGlyph{}
		pts.Radius = vg.Points(2)
		if s.Dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		if s.Thin {
			l.Width = vg.Points(0.8)
			p.Add(l)
		} else {
			p.Add(l, pts)
		}
		if !s.NoKey {
			p.Legend.Add(s.Name, l)
		}
	}
	return render(p, w, h)
}

// endsHigh reports whether the series end in the upper half of the y
// range (fixed, or the data's): the legend then goes to the bottom right,
// away from the lines' ends.
func endsHigh(ss []series, yMin, yMax float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	var sum float64
	var n int
	for _, s := range ss {
		for _, y := range s.Y {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
		if len(s.Y) > 0 {
			sum += s.Y[len(s.Y)-1]
			n++
		}
	}
	if yMax > yMin {
		lo, hi = yMin, yMax
	}
	return n > 0 && sum/float64(n) > (lo+hi)/2
}

// barChart draws one bar per label.
func barChart(title, yLabel string, labels []string, values []float64, w, h int) image.Image {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = yLabel
	bars, err := plotter.NewBarChart(plotter.Values(values), vg.Points(float64(w)/float64(len(values)+1)*0.5))
	if err == nil {
		bars.Color, bars.LineStyle.Width = blue, 0
		p.Add(bars)
	}
	p.NominalX(labels...)
	p.Y.Tick.Marker = countTicks{}
	p.X.Tick.Label.Rotation = 0.6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	p.Y.Min = 0
	return render(p, w, h)
}

// render draws a chart in the theme's colours (screenInk).
func render(p *plot.Plot, w, h int) image.Image {
	ink := screenInk()
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(w)*vg.Inch/chartDPI, vg.Length(h)*vg.Inch/chartDPI), vgimg.UseDPI(chartDPI),
		vgimg.UseBackgroundColor(ink.Background))
	// Room on every side for what sits on the plot's edges: the last
	// x tick's label and the points at the ends of the axes.
	pad := vg.Points(8)
	p.Draw(draw.Crop(draw.New(report.InkOn(c, ink)), pad, -pad, pad, -pad))
	return c.Image()
}

// screenInk is the theme's background and foreground, which the charts
// and the figures in the window are drawn in (exports stay black on
// white).
func screenInk() report.Ink {
	return report.Ink{Background: theme.Color(theme.ColorNameBackground), Foreground: theme.Color(theme.ColorNameForeground)}
}

// faintGrid is a grid of translucent grey: faint on a light and a dark
// background alike.
func faintGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.NRGBA{R: 128, G: 128, B: 128, A: 60}
	g.Horizontal.Color = g.Vertical.Color
	return g
}

// plainTicks are about five round ticks (steps of 1, 2, 2.5 or 5 times a
// power of ten), labelled with as few digits as they need ("250", not
// "250.00").
type plainTicks struct{}

// countTicks are plainTicks on whole numbers only: a count of 3 samples
// has no tick at 0.5.
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for _, t := range (plainTicks{}).Ticks(lo, hi) {
		if t.Value == math.Trunc(t.Value) {
			ts = append(ts, t)
		}
	}
	return ts
}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
	}
	return ts
}
