package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// This file guards Fyne 2.7's pop-ups against a missing canvas.

// selectWidget is a widget.Select that drops a tap (or a key that opens
// its list) while the driver finds no canvas for it. Fyne 2.7 opens the
// list on the canvas it looks up for the widget and dereferences nil when
// there is none (fyne-io/fyne#5965, fixed in 2.8): after a file dialog had
// covered the window for a while, tapping Results' figure list crashed the
// workbench. The dropped tap refreshes the widget, which puts it back on
// its canvas; the next tap opens the list.
type selectWidget struct{ widget.Select }

func newSelect(options []string, changed func(string)) *selectWidget {
	s := &selectWidget{}
	s.Options, s.OnChanged = options, changed
	s.ExtendBaseWidget(s)
	return s
}

// canvasFor is the driver's lookup of an object's canvas (tests replace it).
var canvasFor = func(o fyne.CanvasObject) fyne.Canvas { return fyne.CurrentApp().Driver().CanvasForObject(o) }

// onCanvas reports whether the driver finds the widget's canvas, and
// refreshes the widget when it does not.
func (s *selectWidget) onCanvas() bool {
	if canvasFor(s) != nil {
		return true
	}
	s.Refresh()
	return false
}

// Tapped opens the list when the widget is on a canvas.
func (s *selectWidget) Tapped(e *fyne.PointEvent) {
	if s.onCanvas() {
		s.Select.Tapped(e)
	}
}

// TypedKey opens the list (space, up, down) when the widget is on a
// canvas, and steps through the options (left, right) as widget.Select does.
func (s *selectWidget) TypedKey(e *fyne.KeyEvent) {
	switch e.Name {
	case fyne.KeySpace, fyne.KeyUp, fyne.KeyDown:
		if !s.onCanvas() {
			return
		}
	}
	s.Select.TypedKey(e)
}

// entryWidget is a widget.Entry whose right-click menu opens only when the
// driver finds the entry's canvas: Fyne 2.7's menu dereferences the nil
// canvas as its select does (fyne-io/fyne#5965).
type entryWidget struct{ widget.Entry }

func newEntry() *entryWidget {
	e := &entryWidget{}
	e.Wrapping = fyne.TextWrap(fyne.TextTruncateClip) // as widget.NewEntry
	e.ExtendBaseWidget(e)
	return e
}

// TappedSecondary opens the entry's menu when it is on a canvas.
func (e *entryWidget) TappedSecondary(pe *fyne.PointEvent) {
	if canvasFor(e) == nil {
		e.Refresh()
		return
	}
	e.Entry.TappedSecondary(pe)
}
