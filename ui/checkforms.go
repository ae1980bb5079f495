package ui

import (
	"errors"
	"fmt"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/param"
)

// formItem describes one method or protocol for checkForms.
type formItem struct {
	name, doc string
	params    []param.Param
}

// checkForms is a list of checkable methods or protocols, each with its
// parameter forms shown while it is checked: one per setting, since a
// campaign may run one method or protocol in several (v_λ at five λ, GOAR
// with and without projection), each a separate entry of the spec.
type checkForms struct {
	items    []formItem
	checks   map[string]*widget.Check
	settings map[string][]*paramForm // the first is made when the item is first ticked or read (first)
	boxes    map[string]*fyne.Container
	content  *fyne.Container
	changed  func() // after every edit
}

// newCheckForms lists items; changed runs after every edit of the list.
// An item's parameter form is made when it is first ticked: the forty
// protocols' and twenty methods' forms took most of the workbench's start.
func newCheckForms(items []formItem, changed func()) *checkForms {
	f := &checkForms{items: items, checks: map[string]*widget.Check{}, settings: map[string][]*paramForm{},
		boxes: map[string]*fyne.Container{}, content: container.NewVBox(), changed: changed}
	for _, it := range items {
		box := container.NewVBox()
		box.Hide()
		// The parameters stay folded away until the item is ticked.
		check := widget.NewCheck(it.name, func(on bool) {
			if on && len(it.params) > 0 {
				f.first(it.name)
				box.Show()
			} else {
				box.Hide()
			}
			if f.changed != nil {
				f.changed()
			}
		})
		hint := newHint(it.doc)
		f.checks[it.name], f.boxes[it.name] = check, box
		f.content.Add(container.NewBorder(nil, nil, check, nil, hint))
		f.content.Add(box)
	}
	return f
}

// first is an item's first setting's form, made and put in its box (with
// the button that adds another setting) on the first call.
func (f *checkForms) first(name string) *paramForm {
	if forms := f.settings[name]; len(forms) > 0 {
		return forms[0]
	}
	params := f.params(name)
	form := newParamForm(params)
	form.changed = f.changed
	box := f.boxes[name]
	box.Add(container.NewPadded(form.form))
	if len(params) > 0 {
		box.Add(container.NewHBox(widget.NewButtonWithIcon("another setting of "+name, theme.ContentAddIcon(), func() { f.add(name) })))
	}
	f.settings[name] = []*paramForm{form}
	return form
}

// add appends another setting's form to an item, with a button that
// removes it, and returns the form.
func (f *checkForms) add(name string) *paramForm {
	f.first(name)
	form := newParamForm(f.params(name))
	form.changed = f.changed
	box := f.boxes[name]
	var row *fyne.Container
	remove := widget.NewButtonWithIcon("", theme.ContentRemoveIcon(), func() {
		box.Remove(row)
		f.settings[name] = slices.DeleteFunc(f.settings[name], func(p *paramForm) bool { return p == form })
		if f.changed != nil {
			f.changed()
		}
	})
	label := widget.NewLabelWithStyle(fmt.Sprintf("%s, setting %d", name, len(f.settings[name])+1), fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	row = container.NewBorder(container.NewBorder(nil, nil, nil, remove, label), nil, nil, nil, container.NewPadded(form.form))
	box.Objects = slices.Insert(box.Objects, len(box.Objects)-1, fyne.CanvasObject(row)) // before the add button
	box.Refresh()
	f.settings[name] = append(f.settings[name], form)
	if f.changed != nil {
		f.changed()
	}
	return form
}

// params is an item's parameters.
func (f *checkForms) params(name string) []param.Param {
	for _, it := range f.items {
		if it.name == name {
			return it.params
		}
	}
	return nil
}

// Checked lists the checked items, in the list's order.
func (f *checkForms) Checked() []string {
	var out []string
	for _, it := range f.items {
		if f.checks[it.name].Checked {
			out = append(out, it.name)
		}
	}
	return out
}

// Settings reads a checked item's forms: one parameter set per setting.
func (f *checkForms) Settings(name string) ([]map[string]any, error) {
	var out []map[string]any
	var errs []error
	if f.checks[name] != nil {
		f.first(name)
	}
	for _, form := range f.settings[name] {
		v, err := form.Values()
		out, errs = append(out, v), append(errs, err)
	}
	return out, errors.Join(errs...)
}

// Set checks an item and fills its form; an item already checked gets
// another setting, filled.
func (f *checkForms) Set(name string, params map[string]any) {
	c := f.checks[name]
	if c == nil {
		return
	}
	f.first(name)
	if c.Checked {
		if len(f.boxes[name].Objects) > 1 { // an item with parameters
			f.add(name).Set(params)
		}
		return
	}
	c.SetChecked(true)
	f.settings[name][0].Set(params)
}

// Clear unchecks every item and removes every setting but the first.
func (f *checkForms) Clear() {
	for name, c := range f.checks {
		c.SetChecked(false)
		if box := f.boxes[name]; len(f.settings[name]) > 1 {
			box.Objects = []fyne.CanvasObject{box.Objects[0], box.Objects[len(box.Objects)-1]} // the first form, the add button
			box.Refresh()
			f.settings[name] = f.settings[name][:1]
		}
	}
}
