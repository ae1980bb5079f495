package ui

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/report"
)

// The figures listed (those the find field keeps) can be seen as
// thumbnails, drawn in the background and kept for the run; a tap shows
// that figure.

// thumbDPI draws a figure about 240 pixels wide: its shape, not its text.
const thumbDPI = 40

// thumbnail draws a figure small, in the screen's colours.
func thumbnail(f report.Figure, ink report.Ink) (image.Image, error) {
	var buf bytes.Buffer
	if err := report.RenderInk(&buf, f, thumbDPI, ink); err != nil {
		return nil, err
	}
	return png.Decode(&buf)
}

// BrowseFigures shows the listed figures as thumbnails.
func (r *Results) BrowseFigures() {
	w := r.s.cfg.Window
	if w == nil || r.run == nil || len(r.figSel.Options) == 0 {
		return
	}
	ink := screenInk()
	// Kept for the run in the theme they were drawn in.
	if of := fmt.Sprint(r.run.Dir, ink.Background); r.thumbsOf != of {
		r.thumbs, r.thumbsOf = map[string]image.Image{}, of
	}
	thumbs := r.thumbs
	labels := append([]string(nil), r.figSel.Options...)
	var todo []int // those not drawn yet
	for k, l := range labels {
		if thumbs[l] == nil {
			todo = append(todo, k)
		}
	}
	figs := make([]report.Figure, len(labels))
	for k, l := range labels {
		figs[k] = r.figs[r.figIndex(l)]
	}
	common := commonPrefix(figs)
	var d *dialog.CustomDialog
	var grid *widget.GridWrap
	grid = widget.NewGridWrap(func() int { return len(labels) },
		func() fyne.CanvasObject {
			img := canvas.NewImageFromImage(nil)
			img.FillMode = canvas.ImageFillContain
			img.SetMinSize(fyne.NewSize(240, 150))
			// Two lines: protocol and kind, then the name without what
			// every name starts with (the dataset).
			caption := func() *widget.Label {
				l := widget.NewLabel("")
				l.Truncation = fyne.TextTruncateEllipsis
				l.SizeName = theme.SizeNameCaptionText
				return l
			}
			return container.NewVBox(img, caption(), caption())
		},
		func(id widget.GridWrapItemID, o fyne.CanvasObject) {
			c := o.(*fyne.Container)
			if name := fmt.Sprintf("thumbs.%d", id); id < 8 {
				r.s.unmark(o, name)
				r.s.markIn(name, o, labels[id], grid)
			} else {
				r.s.unmark(o, "")
			}
			img := c.Objects[0].(*canvas.Image)
			img.Image = thumbs[labels[id]]
			img.Refresh()
			f := figs[id]
			c.Objects[1].(*widget.Label).SetText(f.Group + " · " + f.Kind)
			c.Objects[2].(*widget.Label).SetText(strings.TrimPrefix(f.Name, common))
		})
	grid.OnSelected = func(id widget.GridWrapItemID) {
		r.figSel.SetSelected(labels[id])
		d.Hide()
	}
	d = dialog.NewCustom("Figures: tap one to show it", "Close", grid, w)
	stop := r.s.Go("drawing the figures' thumbnails", func(ctx context.Context) error {
		for _, k := range todo {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			img, err := thumbnail(figs[k], ink)
			if err != nil {
				return err
			}
			r.s.cfg.Do(func() {
				thumbs[labels[k]] = img
				grid.RefreshItem(k)
			})
		}
		return nil
	}, nil)
	d.SetOnClosed(stop)
	d.Resize(fyne.NewSize(1060, 680))
	d.Show()
}

// commonPrefix is what every figure's name starts with, up to an
// underscore: the dataset's name in a run of one dataset.
func commonPrefix(figs []report.Figure) string {
	if len(figs) < 2 {
		return ""
	}
	p := figs[0].Name
	for _, f := range figs[1:] {
		for !strings.HasPrefix(f.Name, p) {
			p = p[:len(p)-1]
		}
	}
	return p[:strings.LastIndex(p, "_")+1]
}
