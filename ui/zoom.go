package ui

import (
	"fmt"
	"image"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// pixelView is a picture — a map, a sample, a figure — drawn at a zoom
// with its pixels sharp, that says the coordinates under the pointer and
// what the picture holds there (napari's status line).
type pixelView struct {
	widget.BaseWidget
	img    *canvas.Image
	w, h   int                   // the picture's pixels
	zoom   float32               // screen units per pixel
	value  func(x, y int) string // what pixel (x, y) holds ("": only the coordinates)
	onRead func(string)          // gets the readout as the pointer moves
}

func newPixelView(img image.Image, value func(x, y int) string, onRead func(string)) *pixelView {
	b := img.Bounds()
	v := &pixelView{img: canvas.NewImageFromImage(img), w: b.Dx(), h: b.Dy(), zoom: 1, value: value, onRead: onRead}
	v.img.ScaleMode = canvas.ImageScalePixels
	v.img.FillMode = canvas.ImageFillStretch
	v.ExtendBaseWidget(v)
	return v
}

func (v *pixelView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.img) }

// MinSize is the picture at its zoom.
func (v *pixelView) MinSize() fyne.Size {
	return fyne.NewSize(float32(v.w)*v.zoom, float32(v.h)*v.zoom)
}

// SetZoom draws the picture at z screen units per pixel.
func (v *pixelView) SetZoom(z float32) {
	v.zoom = max(z, 0.1)
	v.Refresh()
}

// At is the pixel under a position in the view, and whether there is one.
func (v *pixelView) At(p fyne.Position) (x, y int, ok bool) {
	sz := v.Size()
	if sz.Width <= 0 || sz.Height <= 0 || p.X < 0 || p.Y < 0 {
		return 0, 0, false
	}
	x, y = int(p.X/sz.Width*float32(v.w)), int(p.Y/sz.Height*float32(v.h))
	return x, y, x < v.w && y < v.h
}

// Readout says what lies under a position: "x 3, y 1: +0.0123".
func (v *pixelView) Readout(p fyne.Position) string {
	x, y, ok := v.At(p)
	if !ok {
		return ""
	}
	out := fmt.Sprintf("x %d, y %d", x, y)
	if v.value != nil {
		if s := v.value(x, y); s != "" {
			out += ": " + s
		}
	}
	return out
}

// MouseIn implements desktop.Hoverable.
func (v *pixelView) MouseIn(e *desktop.MouseEvent) { v.MouseMoved(e) }

// MouseMoved reads the pixel under the pointer out.
func (v *pixelView) MouseMoved(e *desktop.MouseEvent) {
	if v.onRead != nil {
		v.onRead(v.Readout(e.Position))
	}
}

// MouseOut implements desktop.Hoverable.
func (v *pixelView) MouseOut() {}

// showEnlarged opens a picture in a dialog: as large as the window allows, a
// zoom slider, and the coordinates and value under the pointer.
//
// It returns the picture shown (nil: none), for its caller to mark.
func showEnlarged(win fyne.Window, title string, img image.Image, value func(x, y int) string) fyne.CanvasObject {
	if win == nil || img == nil {
		return nil
	}
	read := widget.NewLabel("point at the picture to read its pixels")
	v := newPixelView(img, value, func(s string) {
		if s != "" {
			read.SetText(s)
		}
	})
	b := img.Bounds()
	fit := min(640/float32(b.Dx()), 480/float32(b.Dy()))
	v.SetZoom(fit)
	area := container.NewScroll(container.NewCenter(v))
	zoom := widget.NewSlider(1, 8)
	zoom.Step = 0.5
	zoom.OnChanged = func(z float64) { v.SetZoom(fit * float32(z)); area.Refresh() }
	zoomText := widget.NewLabel("zoom")
	content := container.NewBorder(nil, container.NewBorder(nil, nil, zoomText, nil, container.NewVBox(zoom, read)), nil, nil, area)
	d := dialog.NewCustom(title, "Close", content, win)
	d.Resize(fyne.NewSize(760, 640))
	d.Show()
	// The smallest zoom fits the picture whole in the room the dialog
	// leaves it (less than the dialog's size: its title, the zoom, the
	// readout and Close take their share).
	if sz := area.Size(); sz.Width > 0 && sz.Height > 0 {
		fit = min(sz.Width/float32(b.Dx()), sz.Height/float32(b.Dy()))
		v.SetZoom(fit)
		area.Refresh()
	}
	return v
}

// zoomable is o with a tap that runs open (an enlarged picture).
func zoomable(o fyne.CanvasObject, open func()) fyne.CanvasObject {
	b := widget.NewButton("", open)
	b.Importance = widget.LowImportance
	return container.NewStack(b, o)
}

// mapValue reads a map of rows of w values at a pixel.
func mapValue(m []float32, w int) func(x, y int) string {
	return func(x, y int) string {
		if i := y*w + x; i < len(m) {
			return fmt.Sprintf("%+.4g", m[i])
		}
		return ""
	}
}

// pixelValues reads a C×H×W sample at a pixel, a value per channel
// (a tabular sample: its features in a row).
func pixelValues(x []float32, shape []int) func(px, py int) string {
	c, h, w := shape[0], shape[1], shape[2]
	if h == 1 && w == 1 {
		return mapValue(x, len(x))
	}
	return func(px, py int) string {
		if px >= w || py >= h {
			return ""
		}
		vals := make([]string, c)
		for k := range c {
			vals[k] = fmt.Sprintf("%.3g", x[k*h*w+py*w+px])
		}
		return strings.Join(vals, ", ")
	}
}
