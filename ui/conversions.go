package ui

import (
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/data"
	"faithlab/core/model"
)

// header is the open model's header (nil: none).
func (s *State) header() *model.Header {
	if s.Model == nil {
		return nil
	}
	return &s.Model.Header
}

// conversions says how the open dataset's image files became what the
// open model reads (model.Conversions: resize, channels, scale,
// normalisation), "" for samples that are no image folder's.
func (s *State) conversions() string {
	if s.Data == nil {
		return ""
	}
	t := model.Conversions(s.header(), s.Data.Train)
	if t == "" {
		return ""
	}
	return "Your images as read: " + t + "."
}

// conversionLine is a caption that says State.conversions, kept up to
// date as the dataset and the model change, hidden where there is nothing
// to say; every screen that shows or uses the images has one.
type conversionLine struct {
	label   *widget.Label
	s       *State
	applies func() bool // nil: always; else whether the screen uses the open dataset now
}

func (s *State) newConversionLine(applies func() bool) *conversionLine {
	c := &conversionLine{label: captionLabel(""), s: s, applies: applies}
	c.label.Wrapping = fyne.TextWrapWord
	s.OnData(c.update)
	s.OnModel(c.update)
	c.update()
	return c
}

// update says the conversions again, or hides the line.
func (c *conversionLine) update() {
	t := c.s.conversions()
	if c.applies != nil && !c.applies() {
		t = ""
	}
	if t == c.label.Text && c.label.Visible() == (t != "") {
		return
	}
	c.label.SetText(t)
	if t != "" {
		c.label.Show()
	} else {
		c.label.Hide()
	}
}

// readFor says whether the open dataset, an image folder, was read as
// model m reads one (its side, channels, resize and classes): a folder
// read before the model was open, at the defaults, is read again for it.
func readFor(l *Loaded, m *model.Model) bool {
	c := l.Train.Conversion
	if c == nil || m == nil {
		return true
	}
	opt, err := m.ImageOptions(data.Options{})
	if err != nil || opt.ImageSize == 0 {
		return true // a model that takes no folder's images: nothing to read again for
	}
	return c.Side == opt.ImageSize && c.Channels == opt.Channels && c.Resize == opt.Resize &&
		(len(l.Train.Classes) == len(m.Classes) && (slices.Equal(l.Train.Classes, m.Classes) || data.Numbered(m.Classes)))
}
