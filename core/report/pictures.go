package report

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/disintegration/imaging"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"faithlab/core/protocol"
)

// A picture is rows of small images (inputs, maps, overlays) laid out as
// one image, a one-pixel white gap between them, enlarged pixel by pixel
// so that no renderer smooths them, and drawn as a plot with each row
// labelled on the left.

// pixelScale is how many picture pixels a sample pixel becomes, at most:
// fewer where the enlarged picture would be more than maxPicturePixels
// across (ImageNet-sized grids: 2), whose pixels a page shows smaller than
// a dot anyway.
const (
	pixelScale       = 8
	maxPicturePixels = 4096
)

// pixels is a picture drawn enlarged pixel by pixel: it keeps the picture
// at its own size and enlarges it only while it is drawn, so that a run's
// hundreds of sample figures, held together until they are written, do
// not hold 64 times their pixels each (the dpi paper run's 405 grids held
// 8 GB).
type pixels struct {
	img        *image.RGBA
	cols, rows float64
}

// Plot implements plot.Plotter.
func (q pixels) Plot(c draw.Canvas, p *plot.Plot) {
	w := q.img.Bounds().Dx()
	k := max(1, min(pixelScale, maxPicturePixels/w))
	big := imaging.Resize(q.img, w*k, 0, imaging.NearestNeighbor)
	plotter.NewImage(big, 0, 0, q.cols, q.rows).Plot(c, p)
}

// DataRange implements plot.DataRanger.
func (q pixels) DataRange() (xmin, xmax, ymin, ymax float64) { return 0, q.cols, 0, q.rows }

// pictureRow is one row of a picture: its label and how to paint image k
// (at most cols) of it.
type pictureRow struct {
	label string
	n     int
	paint func(k, x, y int) color.RGBA
}

// picturePlot draws the rows, each of up to cols h×w images, and returns
// the plot with the picture's height over its width.
func picturePlot(title string, rows []pictureRow, h, w int) (*plot.Plot, float64) {
	cols := 0
	for _, r := range rows {
		cols = max(cols, r.n)
	}
	img := image.NewRGBA(image.Rect(0, 0, cols*(w+1)-1, len(rows)*(h+1)-1))
	for i := range img.Pix {
		img.Pix[i] = 255 // white gaps
	}
	for r, row := range rows {
		for k := range row.n {
			for y := range h {
				for x := range w {
					img.SetRGBA(k*(w+1)+x, r*(h+1)+y, row.paint(k, x, y))
				}
			}
		}
	}
	p := newPlot(title)
	p.Add(pixels{img, float64(cols), float64(len(rows))})
	p.HideX()
	ticks := make([]plot.Tick, len(rows))
	for r, row := range rows {
		// The first row is the picture's top; y grows upwards.
		ticks[r] = plot.Tick{Value: float64(len(rows)-r) - 0.5, Label: row.label}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.LineStyle.Width = 0
	p.Y.Padding = vg.Points(2)
	p.Y.Min, p.Y.Max = 0, float64(len(rows))
	p.X.Min, p.X.Max = 0, float64(cols)
	return p, float64(img.Bounds().Dy()) / float64(img.Bounds().Dx())
}

// pictureHeight is the height of a figure whose picture of the given
// aspect (height over width) fills the width the row labels and a colour
// scale (or the right margin) leave it, with square pixels, under a title
// of the given lines.
func pictureHeight(aspect float64, scale bool, titleLines int) vg.Length {
	w := Width - leftMargin - 0.75*vg.Inch - rightMargin
	if scale {
		w += rightMargin - scaleWidth
	}
	return w*vg.Length(aspect) + vg.Points(float64(titleLines)*(labelSize+1)+10)
}

// images are n inputs of c×h×w values with the range lo…hi their grey
// levels (or colours) stretch over.
type images struct {
	values  []float32
	n, c    int
	lo, hi  float64
	h, w    int
	channel int // values per channel plane: h·w
}

func newImages(s protocol.Sample) (images, error) {
	if !picture(s.Shape) {
		return images{}, fmt.Errorf("%s of shape %v: want n×C×H×W with 1 or 3 channels", s.Name, s.Shape)
	}
	return images{values: s.Values, n: s.Shape[0], c: s.Shape[1], h: s.Shape[2], w: s.Shape[3], channel: s.Shape[2] * s.Shape[3]}, nil
}

// span widens lo…hi to the images' values.
func span(lo, hi float64, v []float32) (float64, float64) {
	for _, x := range v {
		lo, hi = min(lo, float64(x)), max(hi, float64(x))
	}
	return lo, hi
}

// at is image k's pixel (x, y) in 0…1 per channel, grey images in all three.
func (im images) at(k, x, y int) [3]float64 {
	var px [3]float64
	scale := 1 / max(im.hi-im.lo, 1e-12)
	for ch := range 3 {
		v := im.values[k*im.c*im.channel+(ch%im.c)*im.channel+y*im.w+x]
		px[ch] = min(1, max(0, (float64(v)-im.lo)*scale))
	}
	return px
}

func (im images) paint(k, x, y int) color.RGBA {
	px := im.at(k, x, y)
	return color.RGBA{byteOf(px[0]), byteOf(px[1]), byteOf(px[2]), 255}
}

func byteOf(v float64) uint8 { return uint8(math.Round(255 * min(1, max(0, v)))) }

// heat is maps in a diverging colour scale (Moreland's blue–red), zero in
// its neutral middle, ±bound at its ends.
type heat struct {
	maps  []float32 // n×h×w
	h, w  int
	bound float64
	cm    palette.DivergingColorMap
}

// newHeat colours the maps with a bound of the 99th percentile of their
// magnitudes, so that a few extreme pixels do not wash the rest out.
func newHeat(maps []float32, h, w int) heat {
	mag := make([]float64, len(maps))
	for i, v := range maps {
		mag[i] = math.Abs(float64(v))
	}
	slices.Sort(mag)
	bound := 1.0
	if len(mag) > 0 {
		if b := mag[int(0.99*float64(len(mag)-1))]; b > 0 {
			bound = b
		} else if b := mag[len(mag)-1]; b > 0 {
			bound = b
		}
	}
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-bound)
	cm.SetMax(bound)
	return heat{maps: maps, h: h, w: w, bound: bound, cm: cm}
}

// value is map k's value at (x, y) clipped to ±bound.
func (hm heat) value(k, x, y int) float64 {
	return min(hm.bound, max(-hm.bound, float64(hm.maps[k*hm.h*hm.w+y*hm.w+x])))
}

func (hm heat) colour(v float64) [3]float64 {
	c, err := hm.cm.At(v)
	if err != nil {
		return [3]float64{1, 1, 1}
	}
	r, g, b, _ := c.RGBA()
	return [3]float64{float64(r) / 0xffff, float64(g) / 0xffff, float64(b) / 0xffff}
}

func (hm heat) paint(k, x, y int) color.RGBA {
	c := hm.colour(hm.value(k, x, y))
	return color.RGBA{byteOf(c[0]), byteOf(c[1]), byteOf(c[2]), 255}
}

// overlay paints map k over image k in grey: the map's colour weighed by
// its magnitude, so that the image shows where the map is near zero.
func (hm heat) overlay(im images) func(k, x, y int) color.RGBA {
	return func(k, x, y int) color.RGBA {
		px := im.at(k, x, y)
		grey := 0.299*px[0] + 0.587*px[1] + 0.114*px[2]
		v := hm.value(k, x, y)
		a := 0.85 * math.Abs(v) / hm.bound
		c := hm.colour(v)
		var out [3]uint8
		for i := range out {
			out[i] = byteOf((1-a)*grey + a*c[i])
		}
		return color.RGBA{out[0], out[1], out[2], 255}
	}
}

// scale is the colour bar of the maps' diverging scale.
func (hm heat) scale() *colourBar {
	return &colourBar{colour: func(v float64) color.Color {
		c := hm.colour(v)
		return color.RGBA{byteOf(c[0]), byteOf(c[1]), byteOf(c[2]), 255}
	}, lo: -hm.bound, hi: hm.bound, label: "attribution"}
}

// colourBar is a vertical colour scale with its ticks and title at its
// right.
type colourBar struct {
	colour func(float64) color.Color
	lo, hi float64
	label  string
	raise  vg.Length // room left under it, level with a plot's x axis
}

// draw draws the bar in c, its top and bottom inset by half a tick label;
// values of a magnitude far from 1 are labelled in units of a power of
// ten, given in the title ("attribution (×10^−3)", the exponent raised).
func (b *colourBar) draw(c draw.Canvas) {
	ts := keyStyle()
	ts.Font.Size = vg.Points(6)
	inset := ts.Height("0")
	x0, x1 := c.Min.X+vg.Points(3), c.Min.X+vg.Points(10)
	y0, y1 := c.Min.Y+b.raise+inset, c.Max.Y-inset
	const steps = 128
	for i := range steps {
		lo := y0 + (y1-y0)*vg.Length(i)/steps
		hi := y0 + (y1-y0)*vg.Length(i+1)/steps
		c.SetColor(b.colour(b.lo + (b.hi-b.lo)*(float64(i)+0.5)/steps))
		c.Fill(vg.Rectangle{Min: vg.Point{X: x0, Y: lo}, Max: vg.Point{X: x1, Y: hi + vg.Points(0.2)}}.Path())
	}
	frame := draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(0.5)}
	c.StrokeLines(frame, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
	exp, unit := 0, 1.0
	if m := max(math.Abs(b.lo), math.Abs(b.hi)); m > 0 && (m < 0.1 || m >= 1e4) {
		exp = int(math.Floor(math.Log10(m)))
		unit = math.Pow(10, float64(exp))
	}
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YCenter
	width := vg.Length(0)
	for _, t := range (niceTicks{}).Ticks(b.lo/unit, b.hi/unit) {
		if t.Label == "" {
			continue
		}
		y := y0 + (y1-y0)*vg.Length((t.Value*unit-b.lo)/(b.hi-b.lo))
		c.StrokeLine2(frame, x1, y, x1+vg.Points(2), y)
		c.FillText(ts, vg.Point{X: x1 + vg.Points(3), Y: y}, t.Label)
		width = max(width, ts.Width(t.Label))
	}
	// The title reads upwards; its text's "up" is the canvas's −x.
	ts.Font.Size = vg.Points(tickSize)
	ts.Rotation, ts.XAlign, ts.YAlign = math.Pi/2, draw.XLeft, draw.YTop
	x := x1 + vg.Points(4) + width
	parts := []string{b.label}
	if exp != 0 {
		// "(×10", the exponent smaller and raised, ")": the fonts have no
		// superscript minus.
		parts = []string{b.label + " (×10", strings.Replace(strconv.Itoa(exp), "-", "−", 1), ")"}
	}
	small := ts
	small.Font.Size = vg.Points(5)
	styles := []text.Style{ts, small, ts}
	var length vg.Length
	for i, p := range parts {
		length += styles[i].Width(p)
	}
	y := (y0+y1)/2 - length/2
	for i, p := range parts {
		at := vg.Point{X: x, Y: y}
		if i == 1 {
			at.X -= vg.Points(2.5)
		}
		c.FillText(styles[i], at, p)
		y += styles[i].Width(p)
	}
}

// picture says whether samples of shape n×C×H×W can be drawn: grey or RGB
// images, not tabular rows (D×1×1).
func picture(shape []int) bool {
	return len(shape) == 4 && (shape[1] == 1 || shape[1] == 3) && shape[2] > 1 && shape[3] > 1
}
