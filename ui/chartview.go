package ui

import (
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/widget"
)

// chartView shows a chart drawn at the size it is shown, again whenever
// that size changes, so that its text keeps its point size: a chart drawn
// once at a fixed size and scaled into a narrower panel had its tick
// labels shrink to a few pixels.
type chartView struct {
	widget.BaseWidget
	img   *canvas.Image
	min   fyne.Size
	draw  func(w, h int) image.Image
	drawn fyne.Size
}

func newChartView(min fyne.Size) *chartView {
	c := &chartView{img: canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1))), min: min}
	c.img.FillMode = canvas.ImageFillContain
	c.ExtendBaseWidget(c)
	return c
}

// MinSize implements fyne.Widget.
func (c *chartView) MinSize() fyne.Size { return c.min }

// CreateRenderer implements fyne.Widget.
func (c *chartView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(c.img) }

// Resize implements fyne.Widget: the chart is drawn again at the new size.
func (c *chartView) Resize(s fyne.Size) {
	c.BaseWidget.Resize(s)
	c.redraw(false)
}

// Draw shows the chart f draws for a w×h pixel image, now and at every
// size the view takes.
func (c *chartView) Draw(f func(w, h int) image.Image) {
	c.draw = f
	c.redraw(true)
}

func (c *chartView) redraw(again bool) {
	s := c.Size()
	if s.Width < 1 || s.Height < 1 {
		s = c.min // not laid out yet
	}
	if c.draw == nil || !again && s == c.drawn {
		return
	}
	c.drawn = s
	c.img.Image = c.draw(int(s.Width), int(s.Height))
	c.img.Refresh()
}
