package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"faithlab/core/data"
	"faithlab/core/protocol"
	"faithlab/core/store"
)

// Figure kinds (Figure.Kind), and the group of figures over several
// protocols.
const (
	Curves     = "curves"
	Bars       = "bars"
	Ranks      = "ranks"
	BiasChecks = "diagnostics"
	Samples    = "samples"
	Compared   = "protocols compared"
)

// Figure is one figure of a campaign's results, named for its file: a
// plot, its key drawn under it (never on the data), and a colour scale
// at its right where it has one.
type Figure struct {
	Name string
	// Group and Kind place the figure in a front end's list: the protocol
	// it shows (Compared: several), and what it is (Curves, Bars, Ranks,
	// BiasChecks, Samples).
	Group, Kind string
	Plot        *plot.Plot
	Key         []KeyEntry
	Scale       *colourBar // drawn at the plot's right
	// Beside are plots drawn at Plot's right, each as wide as it: the
	// figure is that many columns wide (a page's width for two).
	Beside []*plot.Plot
	// Height is the plot's height without the key (0: Height).
	Height vg.Length
}

// KeyEntry is one entry of a figure's key: a label and what it stands for.
type KeyEntry struct {
	Label  string
	Thumbs []plot.Thumbnailer
}

// Paper column width, and a height that leaves the curves room.
const (
	Width  = 3.5 * vg.Inch
	Height = 2.4 * vg.Inch
)

// Type sizes for a paper column: titles and axis labels 8 pt, ticks and
// keys 7 and 6.5 pt.
const (
	labelSize = 8
	tickSize  = 7
	keySize   = 6.5
)

// Figures builds every figure the records support, from what each
// protocol says about its metrics (protocol.Info): a line figure per
// curve (mean over seeds, ± one standard deviation where there are
// several, the scalar that summarises the curve in the key), bars per
// method for the scalars no curve shows, bars comparing each measure that
// several protocols report (how far their perturbed images lie from the
// data), and accuracy against mask total variation with the fitted line
// and its R² for every accuracy curve that names its masks' TV.
func Figures(recs []store.Record, conf Confidence) ([]Figure, error) {
	var figs []Figure
	c := newCampaign(recs)
	c.conf = conf
	for _, ds := range c.datasets {
		for _, g := range c.groups {
			if g.dataset != ds || !g.known {
				continue
			}
			for _, m := range g.info.Curves {
				f, ok, err := c.curveFigure(g, m)
				if err != nil {
					return nil, err
				}
				if ok {
					figs = append(figs, f)
				}
				if m.MaskTV != "" {
					if f, ok := c.tvFigure(g, m); ok {
						figs = append(figs, f)
					}
				}
				if m.Beside != "" {
					f, ok, err := c.besideFigure(g, m)
					if err != nil {
						return nil, err
					}
					if ok {
						figs = append(figs, f)
					}
				}
			}
			figs = append(figs, c.scalarFigures(g)...)
		}
		figs = append(figs, c.measureFigures(ds)...)
		figs = append(figs, c.confidenceFigures(ds)...)
	}
	return figs, nil
}

// okabeIto is Okabe and Ito's colour-blind-safe set; a method keeps its
// colour (and its dash pattern) in every figure of a campaign.
var okabeIto = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
}

var dashes = [][]vg.Length{nil, {vg.Points(4), vg.Points(2)}, {vg.Points(1), vg.Points(1.5)}, {vg.Points(5), vg.Points(1.5), vg.Points(1), vg.Points(1.5)}}

// style is method i's colour and dash pattern: the palette's colours, then
// the same colours dashed.
func style(i int) (color.RGBA, []vg.Length) {
	return okabeIto[i%len(okabeIto)], dashes[(i/len(okabeIto))%len(dashes)]
}

// newPlot is a plot styled for a paper column.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(labelSize)
	p.Title.Padding = vg.Points(4)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(labelSize)
		a.Tick.Label.Font.Size = vg.Points(tickSize)
		a.Tick.Marker = niceTicks{}
		a.Padding = vg.Points(3)
		a.LineStyle.Width = vg.Points(0.6)
		a.Tick.LineStyle.Width = vg.Points(0.6)
	}
	return p
}

// addGrid draws light grid lines at the labelled ticks of either axis.
func addGrid(p *plot.Plot, vertical, horizontal bool) {
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = nil, nil
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.4), vg.Points(0.4)
	// A translucent grey: Gray 225 on paper, as faint on a screen's dark
	// background (RenderInk).
	line := color.NRGBA{R: 128, G: 128, B: 128, A: 60}
	if vertical {
		g.Vertical.Color = line
	}
	if horizontal {
		g.Horizontal.Color = line
	}
	p.Add(g)
}

// axisTitle is an axis's title with its unit.
func axisTitle(a protocol.Axis) string {
	if a.Unit != "" {
		return a.Title + " (" + a.Unit + ")"
	}
	return a.Title
}

// fitAxis sets a to show the values lo…hi (NaN: none) on the metric's
// axis: its natural range whole (an accuracy's [0, 1]), its reference
// value, zero where bars start from it, and otherwise the data rounded out
// to the next labelled tick; a log scale where the metric has one.
func fitAxis(a *plot.Axis, desc protocol.Axis, lo, hi float64, bars bool) {
	a.Label.Text = axisTitle(desc)
	if desc.Log && lo > 0 {
		a.Scale, a.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		a.Min, a.Max = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
		return
	}
	include := func(v float64) {
		if !math.IsNaN(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if math.IsNaN(lo) {
		lo, hi = math.Inf(1), math.Inf(-1)
	}
	natural := len(desc.Range) == 2
	if natural {
		include(desc.Range[0])
		include(desc.Range[1])
	}
	if desc.Reference != nil {
		include(desc.Reference.Value)
	}
	if bars {
		include(0)
	}
	switch {
	case math.IsInf(lo, 1):
		lo, hi = 0, 1
	case lo == hi:
		d := max(math.Abs(lo)/10, 0.5)
		lo, hi = lo-d, hi+d
	}
	if !natural || lo < desc.Range[0] || hi > desc.Range[1] {
		step := niceStep((hi - lo) / 5)
		lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	}
	a.Min, a.Max = lo, hi
}

// fitOver sets a to show the parameter a curve runs over, lo…hi the
// data's extent: the data exactly, or, where the parameter has a natural
// range (a fraction removed, 0…1), that range widened to the data — not
// rounded out to the next labelled tick, which would leave the axis
// running past the last point (to 40 for strengths that stop at 32). A
// log scale is fitted as fitAxis does.
func fitOver(a *plot.Axis, desc protocol.Axis, lo, hi float64) {
	fitAxis(a, desc, lo, hi, false)
	if (desc.Log && lo > 0) || math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo < hi) {
		return
	}
	if len(desc.Range) == 2 {
		lo, hi = min(lo, desc.Range[0]), max(hi, desc.Range[1])
	}
	a.Min, a.Max = lo, hi
}

// breakTitle puts a long axis title on two lines, broken at the space
// nearest its middle, so that it stays within its side of the plot.
func breakTitle(t string) string {
	const long = 40
	if len([]rune(t)) <= long {
		return t
	}
	return breakMiddle(t)
}

// breakMiddle puts t on two lines, broken at the space nearest its
// middle; t with no space, or on several lines already, stays as it is.
func breakMiddle(t string) string {
	if strings.Contains(t, "\n") {
		return t
	}
	mid, best := len(t)/2, -1
	for i, r := range t {
		if r == ' ' && (best < 0 || abs(i-mid) < abs(best-mid)) {
			best = i
		}
	}
	if best < 0 {
		return t
	}
	return t[:best] + "\n" + t[best+1:]
}

func abs(i int) int { return max(i, -i) }

// clip keeps v within the axis's natural range, where it has one: an
// error bar may reach past what the values can be, the axis does not.
func clip(a protocol.Axis, v float64) float64 {
	if len(a.Range) == 2 {
		return min(a.Range[1], max(a.Range[0], v))
	}
	return v
}

// niceTicks labels about five round values, 1, 2, 2.5 or 5 × 10ⁿ apart,
// each with as many decimals as the step needs ("0.2", "250", never
// "250.00"), and puts an unlabelled tick halfway between.
type niceTicks struct{}

// Ticks implements plot.Ticker.
func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	step := niceStep((hi - lo) / 5)
	prec := decimals(step)
	var ticks []plot.Tick
	eps := step * 1e-9
	for k := math.Ceil((lo - eps) / step); k*step <= hi+eps; k++ {
		v := k * step
		if math.Abs(v) < eps {
			v = 0 // not "-0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		if h := v + step/2; h <= hi+eps {
			ticks = append(ticks, plot.Tick{Value: h})
		}
	}
	if h := math.Ceil((lo-eps)/step)*step - step/2; h >= lo-eps {
		ticks = append(ticks, plot.Tick{Value: h})
	}
	return ticks
}

// niceStep is the round step (1, 2, 2.5 or 5 × 10ⁿ) nearest above raw.
func niceStep(raw float64) float64 {
	if !(raw > 0) || math.IsInf(raw, 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, f := range []float64{1, 2, 2.5, 5} {
		if f*mag >= raw*(1-1e-9) {
			return f * mag
		}
	}
	return 10 * mag
}

// decimals is how many decimals multiples of step need.
func decimals(step float64) int {
	for d := 0; d < 8; d++ {
		s := step * math.Pow(10, float64(d))
		if math.Abs(s-math.Round(s)) < 1e-6*s {
			return d
		}
	}
	return 8
}

// refLine is a reference value drawn across the data as a thin dashed
// grey line, labelled at its right end: chance, no correlation.
type refLine struct {
	value    float64
	label    string
	vertical bool // a value on the x axis
}

// Plot implements plot.Plotter.
func (r refLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(0.6), Dashes: []vg.Length{vg.Points(2.5), vg.Points(1.5)}}
	ts := keyStyle()
	ts.Color = ls.Color
	ts.Font.Size = vg.Points(6)
	if r.vertical {
		x := trX(r.value)
		c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
		ts.XAlign, ts.YAlign = draw.XLeft, draw.YTop
		c.FillText(ts, vg.Point{X: x + vg.Points(1.5), Y: c.Max.Y}, r.label)
		return
	}
	y := trY(r.value)
	c.StrokeLine2(ls, c.Min.X, y, c.Max.X, y)
	ts.XAlign, ts.YAlign = draw.XRight, draw.YBottom
	c.FillText(ts, vg.Point{X: c.Max.X - vg.Points(1), Y: y + vg.Points(0.5)}, r.label)
}

// addReference draws the axis's reference value, if it has one.
func addReference(p *plot.Plot, a protocol.Axis, vertical bool) {
	if a.Reference != nil {
		p.Add(refLine{a.Reference.Value, a.Reference.Label, vertical})
	}
}

// keyStyle is the text style of keys.
func keyStyle() text.Style {
	s := plot.New().Legend.TextStyle
	s.Font.Size = vg.Points(keySize)
	return s
}

// Key layout, in points.
const (
	thumbWidth vg.Length = 14
	keyGap     vg.Length = 3  // between a thumbnail and its label
	keyColumn  vg.Length = 10 // between columns
	keyPad     vg.Length = 4  // above and below the key
)

// keyLayout is how a key fits a width: its columns, the column width and
// its height.
func keyLayout(key []KeyEntry, width vg.Length) (cols int, colW, rowH, height vg.Length) {
	if len(key) == 0 {
		return 0, 0, 0, 0
	}
	s := keyStyle()
	for _, e := range key {
		colW = max(colW, thumbWidth+keyGap+s.Width(e.Label)+keyColumn)
		rowH = max(rowH, s.Height(e.Label)+vg.Points(1.5))
	}
	cols = max(1, min(len(key), int((width-2*keyPad)/colW)))
	rows := (len(key) + cols - 1) / cols
	return cols, colW, rowH, vg.Length(rows)*rowH + 2*keyPad
}

// drawKey draws the key in c, centred, row by row.
func drawKey(c draw.Canvas, key []KeyEntry) {
	cols, colW, rowH, _ := keyLayout(key, c.Size().X)
	s := keyStyle()
	s.XAlign, s.YAlign = draw.XLeft, draw.YTop
	line := s.Height("M")
	x0 := c.Min.X + (c.Size().X-vg.Length(cols)*colW+keyColumn)/2
	for i, e := range key {
		x := x0 + vg.Length(i%cols)*colW
		top := c.Max.Y - keyPad - vg.Length(i/cols)*rowH
		thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: top - line}, Max: vg.Point{X: x + thumbWidth, Y: top}}}
		for _, t := range e.Thumbs {
			t.Thumbnail(&thumb)
		}
		c.FillText(s, vg.Point{X: x + thumbWidth + keyGap, Y: top}, e.Label)
	}
}

// rightMargin is the room a plot leaves at its right edge.
const rightMargin = 6 * vg.Length(1)

// leftMargin is the room a figure leaves at its left edge, so that the
// first letters of row labels and axis titles ("overlay", "GOAR (…") stand
// clear of it rather than touching it, and look cut where the page ends.
const leftMargin = 4 * vg.Length(1)

// scaleWidth is the room a colour scale takes at a plot's right.
const scaleWidth = 0.55 * vg.Inch

// draw lays the figure out in c (layout) and draws it.
func (f Figure) draw(c draw.Canvas) {
	key, scale, cols := f.layout(c)
	if len(f.Key) > 0 {
		drawKey(key, f.Key)
	}
	if f.Scale != nil {
		f.Scale.draw(scale)
	}
	for i, p := range append([]*plot.Plot{f.Plot}, f.Beside...) {
		p.Draw(cols[i])
	}
}

// layout divides c among the figure's parts: the key under the plot, the
// colour scale at its right, and a column for the plot and each plot
// beside it, in order.
func (f Figure) layout(c draw.Canvas) (key, scale draw.Canvas, cols []draw.Canvas) {
	if len(f.Key) > 0 {
		_, _, _, h := keyLayout(f.Key, c.Size().X)
		key = c
		key.Max.Y = c.Min.Y + h
		c.Min.Y += h
	}
	if f.Scale != nil {
		scale = c
		scale.Min.X = c.Max.X - scaleWidth
		c.Max.X = scale.Min.X
		// Level with the picture: below the title, above the hidden x axis.
		scale.Max.Y -= f.Plot.Title.TextStyle.Height(f.Plot.Title.Text) + f.Plot.Title.Padding
	}
	c.Min.X += leftMargin
	w := c.Size().X / vg.Length(1+len(f.Beside))
	for i, p := range append([]*plot.Plot{f.Plot}, f.Beside...) {
		col := c
		col.Min.X, col.Max.X = c.Min.X+vg.Length(i)*w, c.Min.X+vg.Length(i+1)*w
		if p.X.Width > 0 || f.Scale == nil {
			// Room at the right for the last tick's label and for markers
			// on the axis's end, which gonum/plot lets run past the canvas,
			// and for a picture (whose x axis is hidden) not to touch the
			// edge, where a colour scale does not stand.
			col.Max.X -= rightMargin
		}
		cols = append(cols, col)
	}
	return key, scale, cols
}

// size is the figure's width and height: the plot's height and the key's.
func (f Figure) size() (vg.Length, vg.Length) {
	h := f.Height
	if h == 0 {
		h = Height
	}
	w := Width * vg.Length(1+len(f.Beside))
	_, _, _, k := keyLayout(f.Key, w)
	return w, h + k
}

// CheckFormats checks figure formats before any figure is drawn: png, svg
// and pdf.
func CheckFormats(formats ...string) error {
	for _, f := range formats {
		if f != "png" && f != "svg" && f != "pdf" {
			return fmt.Errorf("figure format %q: png, svg or pdf", f)
		}
	}
	return nil
}

// Render writes a figure in one format: "png" (at dpi), "svg" or "pdf".
func Render(w io.Writer, f Figure, format string, dpi int) error {
	var c draw.Canvas
	var out io.WriterTo
	width, height := f.size()
	switch format {
	case "png":
		img := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi))}
		c, out = draw.New(img), img
	case "svg":
		s := vgsvg.New(width, height)
		c, out = draw.New(s), s
	case "pdf":
		p := vgpdf.New(width, height)
		p.EmbedFonts(true)
		c, out = draw.New(pdfText{p}), p
	default:
		return CheckFormats(format)
	}
	f.draw(c)
	_, err := out.WriteTo(w)
	return err
}

// Save writes every figure to root/dir (dir relative to root, "" for root
// itself) in each format, PNG at 300 dpi, with data.WriteFileIn: no write
// follows a symbolic link out of root (a run or report folder someone
// sent may hold one where its figures folder should be).
func Save(root, dir string, figs []Figure, formats ...string) ([]string, error) {
	if err := CheckFormats(formats...); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	if err := data.MkdirIn(root, dir); err != nil {
		return nil, err
	}
	var files []string
	for _, f := range figs {
		for _, fm := range formats {
			var buf bytes.Buffer
			if err := Render(&buf, f, fm, 300); err != nil {
				return files, fmt.Errorf("figure %s: %w", f.Name, err)
			}
			name := filepath.Join(dir, f.Name+"."+fm)
			if err := data.WriteFileIn(root, name, buf.Bytes()); err != nil {
				return files, err
			}
			files = append(files, filepath.Join(root, name))
		}
	}
	return files, nil
}
