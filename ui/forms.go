package ui

import (
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/param"
)

// paramForm is a form for the parameters of a method or a protocol, built
// from its self-description (package param): an entry per number or text
// with the default as placeholder, a check per switch, a select per
// choice, a comma-separated entry per list; each item's hint is the
// parameter's doc and range. An empty field means the default.
type paramForm struct {
	params []param.Param
	get    map[string]func() (v any, set bool, err error)
	put    map[string]func(v any)
	form   *widget.Form
	// changed runs after every edit of a field (nil: nothing); set it
	// after building the form.
	changed func()
}

func newParamForm(ps []param.Param) *paramForm {
	f := &paramForm{params: ps, get: map[string]func() (any, bool, error){}, put: map[string]func(any){}, form: widget.NewForm()}
	for _, p := range ps {
		hint := p.Doc
		if p.Range != "" {
			hint += " (" + param.Describe(p.Range) + ")"
		}
		if p.Required {
			hint += " — required"
		}
		var w fyne.CanvasObject
		switch {
		case p.Kind == "bool":
			def, _ := p.Default.(bool)
			c := widget.NewCheck("", func(bool) { f.edited() })
			c.SetChecked(def)
			f.get[p.Name] = func() (any, bool, error) { return c.Checked, c.Checked != def, nil }
			f.put[p.Name] = func(v any) { b, _ := v.(bool); c.SetChecked(b) }
			w = c
		case len(p.Choices) > 0:
			s := newSelect(p.Choices, func(string) { f.edited() })
			def := fmt.Sprint(p.Default)
			s.SetSelected(def)
			f.get[p.Name] = func() (any, bool, error) { return s.Selected, s.Selected != def && s.Selected != "", nil }
			f.put[p.Name] = func(v any) { s.SetSelected(fmt.Sprint(v)) }
			w = s
		default:
			e := newEntry()
			e.SetPlaceHolder(formatValue(p.Default))
			e.OnChanged = func(string) { f.edited() }
			kind, name := p.Kind, p.Name
			f.get[p.Name] = func() (any, bool, error) {
				text := strings.TrimSpace(e.Text)
				if text == "" {
					return nil, false, nil
				}
				v, err := parseValue(kind, text)
				if err != nil {
					return nil, false, fmt.Errorf("%s: %w", name, err)
				}
				return v, true, nil
			}
			f.put[p.Name] = func(v any) { e.SetText(formatValue(v)) }
			w = e
		}
		f.form.AppendItem(helpedItem(p.Name, w, hint))
	}
	return f
}

// helpedItem is a form item whose help, under its field, wraps to the
// form's width: a Form's own hint is one line, cut where the form is
// narrower (Explain's side panel, half of Evaluate).
func helpedItem(label string, field fyne.CanvasObject, help string) *widget.FormItem {
	if help == "" {
		return widget.NewFormItem(label, field)
	}
	h := widget.NewRichText(&widget.TextSegment{Text: help,
		Style: widget.RichTextStyle{ColorName: theme.ColorNamePlaceHolder, SizeName: theme.SizeNameCaptionText, Inline: true}})
	h.Wrapping = fyne.TextWrapWord
	return widget.NewFormItem(label, container.NewVBox(field, h))
}

// wrapHints moves each item's hint of a form not shown yet under its
// field, wrapped (helpedItem).
func wrapHints(f *widget.Form) {
	for i, it := range f.Items {
		f.Items[i] = helpedItem(it.Text, it.Widget, it.HintText)
	}
}

func (f *paramForm) edited() {
	if f.changed != nil {
		f.changed()
	}
}

// Values returns the parameters the user set, by name, or the first entry
// that does not parse.
func (f *paramForm) Values() (map[string]any, error) {
	out := map[string]any{}
	for _, p := range f.params {
		v, set, err := f.get[p.Name]()
		if err != nil {
			return nil, err
		}
		if set {
			out[p.Name] = v
		}
	}
	return out, nil
}

// Set fills the form with values (a spec's parameters).
func (f *paramForm) Set(values map[string]any) {
	for k, v := range values {
		if put := f.put[k]; put != nil {
			put(v)
		}
	}
}

// parseValue reads a form field as a parameter of the given kind.
func parseValue(kind, text string) (any, error) {
	switch kind {
	case "int":
		v, err := strconv.Atoi(text)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", text)
		}
		return v, nil
	case "uint64":
		v, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number ≥ 0", text)
		}
		return v, nil
	case "float64":
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", text)
		}
		return v, nil
	case "[]float64", "[]int":
		var out []any
		for _, f := range strings.Split(text, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not a list of numbers", text)
			}
			out = append(out, v)
		}
		return out, nil
	}
	return text, nil
}

// formatValue writes a value as a form shows it (lists comma-separated).
func formatValue(v any) string {
	switch x := v.(type) {
	case []float64:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
		}
		return strings.Join(parts, ", ")
	case []any:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = fmt.Sprint(f)
		}
		return strings.Join(parts, ", ")
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// wheelScroll is a scroll over content that the mouse wheel moves wherever
// the pointer is: an entry's own scroller otherwise takes the wheel while
// the pointer is over it, and a form of entries barely moved.
func wheelScroll(content fyne.CanvasObject) *container.Scroll {
	sc := container.NewScroll(nil)
	w := &wheel{target: sc}
	w.ExtendBaseWidget(w)
	sc.Content = container.NewStack(content, w)
	return sc
}

// wheel lies over a scroll's content and hands it the wheel's events; it
// takes nothing else (taps, hovers, keys reach the content).
type wheel struct {
	widget.BaseWidget
	target fyne.Scrollable
}

func (w *wheel) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(canvas.NewRectangle(color.Transparent))
}

// Scrolled implements fyne.Scrollable; a tooltip shown goes, as the text
// it tells of moves away from under it.
func (w *wheel) Scrolled(ev *fyne.ScrollEvent) {
	w.target.Scrolled(ev)
	if c := canvasFor(w); c != nil {
		if h, ok := c.Content().(*tipHost); ok {
			h.clear()
		}
	}
}

// hint is a one-line help text, cut with "…" where it is longer than its
// room, that shows whole under the pointer while the pointer rests on it.
type hint struct {
	widget.Label
	tip tooltip
}

func newHint(text string) *hint {
	h := &hint{}
	h.Text = text
	h.SizeName = theme.SizeNameCaptionText
	h.Truncation = fyne.TextTruncateEllipsis
	h.ExtendBaseWidget(h)
	return h
}

// MouseIn shows the whole text below the label.
func (h *hint) MouseIn(*desktop.MouseEvent) { h.tip.show(h, h.Text) }

// MouseMoved shows the whole text again where the wheel took it away.
func (h *hint) MouseMoved(*desktop.MouseEvent) { h.tip.show(h, h.Text) }

// SetText changes the text; the whole text shown of the last one goes.
func (h *hint) SetText(text string) {
	if text != h.Text {
		h.tip.hide()
	}
	h.Label.SetText(text)
}

// MouseOut hides the whole text.
func (h *hint) MouseOut() { h.tip.hide() }

// Tip is the whole text shown under the pointer ("": none; tests).
func (h *hint) Tip() string { return h.tip.shown() }

// tooltip is a whole help text shown under an object: in the tip layer
// over the window's content (withTips), which takes no event — the wheel,
// taps and the pointer's hovering reach what lies under it —, or, for an
// object in a dialog or a window without that layer, in a pop-up (which
// takes every event of the window while it is shown).
type tooltip struct {
	box   fyne.CanvasObject // in layer (nil: none shown there)
	layer *fyne.Container
	popup *widget.PopUp
	text  string
}

func (tt *tooltip) show(under fyne.CanvasObject, text string) {
	tt.shown()
	c := canvasFor(under)
	if c == nil || text == "" || tt.popup != nil || tt.box != nil {
		return
	}
	label := widget.NewLabel(text)
	label.Wrapping = fyne.TextWrapWord
	width := min(max(under.Size().Width, 320), 560)
	label.Resize(fyne.NewSize(width, 0))
	size := fyne.NewSize(width, label.MinSize().Height+2*theme.Padding())
	d := fyne.CurrentApp().Driver()
	at := d.AbsolutePositionForObject(under)
	// While a dialog or a pop-up is shown, the pointer hovers nothing
	// but what it holds: the tip goes over it, in a pop-up of its own.
	if host, ok := c.Content().(*tipHost); ok && c.Overlays().Top() == nil {
		origin, room := d.AbsolutePositionForObject(host), host.Size()
		pos := at.Subtract(origin).AddXY(0, under.Size().Height)
		if pos.Y+size.Height > room.Height { // no room below: above
			pos.Y = at.Y - origin.Y - size.Height
		}
		pos.X = max(min(pos.X, room.Width-size.Width), 0)
		pos.Y = max(pos.Y, 0)
		bg := canvas.NewRectangle(theme.Color(theme.ColorNameOverlayBackground))
		bg.StrokeColor, bg.StrokeWidth = theme.Color(theme.ColorNameShadow), 1
		bg.CornerRadius = theme.Size(theme.SizeNameInputRadius)
		box := container.NewStack(bg, container.New(fixedLabelPad{}, label))
		box.Resize(size)
		box.Move(pos)
		tt.box, tt.layer = box, host.layer
		host.layer.Add(box)
		tt.text = text
		return
	}
	tt.popup = widget.NewPopUp(label, c)
	tt.popup.Resize(size)
	tt.popup.ShowAtPosition(at.AddXY(0, under.Size().Height))
	tt.text = text
}

// shown is the text shown ("": none), once the tooltip has learnt whether
// its layer was cleared (tipHost.clear).
func (tt *tooltip) shown() string {
	if tt.box != nil && !slices.Contains(tt.layer.Objects, tt.box) {
		tt.box, tt.layer, tt.text = nil, nil, ""
	}
	return tt.text
}

func (tt *tooltip) hide() {
	if tt.box != nil {
		tt.layer.Remove(tt.box)
		tt.box, tt.layer = nil, nil
	}
	if tt.popup != nil {
		tt.popup.Hide()
		tt.popup = nil
	}
	tt.text = ""
}

// fixedLabelPad lays a wrapped label out at its container's width, within
// the padding a pop-up gives it.
type fixedLabelPad struct{}

func (fixedLabelPad) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	p := theme.Padding()
	for _, o := range objs {
		o.Move(fyne.NewPos(0, p))
		o.Resize(fyne.NewSize(size.Width, size.Height-2*p))
	}
}

func (fixedLabelPad) MinSize(objs []fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(0, 0) // sized by the tooltip
}

// tipHost is a window's content under a layer where tooltips show
// (tooltip): the layer lies over the content and holds only the tips
// shown, which take no event.
type tipHost struct {
	widget.BaseWidget
	content fyne.CanvasObject
	layer   *fyne.Container
}

// withTips puts content under a tip layer: what a window's content is for
// its tooltips to leave the wheel to what lies under them.
func withTips(content fyne.CanvasObject) *tipHost {
	h := &tipHost{content: content, layer: container.NewWithoutLayout()}
	h.ExtendBaseWidget(h)
	return h
}

// clear hides the tips shown (the screen under them went).
func (h *tipHost) clear() {
	if len(h.layer.Objects) > 0 {
		h.layer.RemoveAll()
	}
}

func (h *tipHost) CreateRenderer() fyne.WidgetRenderer { return &tipHostRenderer{h} }

type tipHostRenderer struct{ h *tipHost }

func (r *tipHostRenderer) Layout(size fyne.Size) {
	r.h.content.Resize(size)
	r.h.layer.Resize(size)
}
func (r *tipHostRenderer) MinSize() fyne.Size { return r.h.content.MinSize() }
func (r *tipHostRenderer) Refresh()           { r.h.content.Refresh() }
func (r *tipHostRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.h.content, r.h.layer}
}
func (r *tipHostRenderer) Destroy() {}
