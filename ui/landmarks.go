package ui

import (
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// A driver that uses the app as a person does — the pointer and the keys,
// as scripts/tour does under Xvfb — must find what it clicks, not guess
// where a layout puts it: a tour that clicked coordinates clicked the
// wrong button after a layout change, and its checks passed anyway. The
// screens name the widgets such a driver aims at (mark), and Landmarks
// says where each one shown is, with its text, and what the screens
// show: the screen, the model, the run, the figure, the theme.

// Landmark is a named widget shown on the window's canvas: its place in
// the canvas' pixels and its text; or, named "@…", a piece of the
// screens' state (Text alone).
type Landmark struct {
	Name       string
	X, Y, W, H int
	Text       string
}

// mark names a widget for Landmarks, with its text (""): a label's,
// button's or entry's own). A name marks one widget: the last one given.
func (s *State) mark(name string, o fyne.CanvasObject, text string) { s.markIn(name, o, text, nil) }

// markIn is mark for a widget in a scroll, a list or a grid (within): it
// is shown only while its centre lies inside within's part of the window.
func (s *State) markIn(name string, o fyne.CanvasObject, text string, within fyne.CanvasObject) {
	if s.marks == nil {
		s.marks = map[string]landmark{}
	}
	s.marks[name] = landmark{o, text, within}
}

// unmark drops the names of o but keep (a recycled cell that shows
// another item now).
func (s *State) unmark(o fyne.CanvasObject, keep string) {
	for name, m := range s.marks {
		if m.o == o && name != keep {
			delete(s.marks, name)
		}
	}
}

type landmark struct {
	o      fyne.CanvasObject
	text   string
	within fyne.CanvasObject // the scroll it is shown in (nil: the window)
}

// textOf is what a widget says.
func textOf(o fyne.CanvasObject) string {
	switch v := o.(type) {
	case *widget.Label:
		return v.Text
	case *hint:
		return v.Text
	case *widget.Button:
		return v.Text
	case *entryWidget:
		return v.Text
	case *escEntry:
		return v.Text
	}
	return ""
}

// Landmarks lists the marked widgets shown now — not those hidden, in a
// screen or tab not shown, or outside the window — sorted by name, each
// option of a marked radio group as NAME.OPTION; then the screens' state
// (UI goroutine).
func (w *Workbench) Landmarks() []Landmark {
	s := w.State
	d := fyne.CurrentApp().Driver()
	c := d.CanvasForObject(w.content)
	if c == nil {
		return nil
	}
	scale, size := c.Scale(), c.Size()
	// Where the driver finds no place for an object (not in the tree
	// shown), it says the canvas' origin: less its inset, in the test
	// driver.
	inset, _ := c.InteractiveArea()
	nowhere := fyne.NewPos(-inset.X, -inset.Y)
	px := func(v float32) int { return int(v*scale + 0.5) }
	var out []Landmark
	add := func(name string, p fyne.Position, sz fyne.Size, text string) {
		if p.X+sz.Width/2 > size.Width || p.Y+sz.Height/2 > size.Height {
			return // scrolled or laid out past the window
		}
		out = append(out, Landmark{name, px(p.X), px(p.Y), px(sz.Width), px(sz.Height), strings.ReplaceAll(text, "\n", " ")})
	}
	for name, m := range s.marks {
		o := m.o
		if o == nil || !o.Visible() || d.CanvasForObject(o) == nil {
			continue
		}
		p, sz := d.AbsolutePositionForObject(o), o.Size()
		if p.IsZero() || p == nowhere || sz.IsZero() {
			continue // not in the tree shown (the driver finds no place)
		}
		if in := m.within; in != nil {
			at, isz := d.AbsolutePositionForObject(in), in.Size()
			cx, cy := p.X+sz.Width/2, p.Y+sz.Height/2
			if cx < at.X || cy < at.Y || cx > at.X+isz.Width || cy > at.Y+isz.Height {
				continue // scrolled out of view
			}
		}
		text := m.text
		if text == "" {
			text = textOf(o)
		}
		if rg, ok := o.(*widget.RadioGroup); ok && rg.Horizontal && len(rg.Options) > 0 {
			// Fyne lays a horizontal group's items out at equal widths,
			// its MinSize's share each.
			item := fyne.NewSize(rg.MinSize().Width/float32(len(rg.Options)), rg.MinSize().Height)
			for i, opt := range rg.Options {
				add(name+"."+opt, p.AddXY(float32(i)*item.Width, 0), item, opt)
			}
			continue
		}
		add(name, p, sz, text)
	}
	slices.SortFunc(out, func(a, b Landmark) int { return strings.Compare(a.Name, b.Name) })
	state := func(name, text string) { out = append(out, Landmark{Name: "@" + name, Text: text}) }
	state("screen", w.Tabs.Selected().Text)
	if s.Data != nil {
		state("data", s.Data.Ref)
	}
	state("model", s.ModelPath)
	state("inspect", fmt.Sprintf("%s %d", w.Inspect.split.Selected, w.Inspect.cur))
	state("run", w.Results.Shown())
	state("figure", w.Results.figSel.Selected)
	state("results.tab", w.Results.tabs.Selected().Text)
	state("theme", w.Settings.theme.Selected)
	state("running", map[bool]string{true: "yes", false: "no"}[w.Evaluate.Running()])
	state("evaluate.scroll", fmt.Sprintf("%.0f", w.Evaluate.form.Offset.Y))
	state("explain.scroll", fmt.Sprintf("%.0f", w.Explain.form.Offset.Y))
	state("overlays", fmt.Sprint(len(c.Overlays().List())))
	return out
}
