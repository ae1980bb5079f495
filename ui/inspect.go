package ui

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/campaign"
	"faithlab/core/model"
)

// Inspect shows one sample at a time: the image, a method's map, the mask
// of the features removed at a rate (slider; ↑ ↓), and what every removal
// reference fills them with — zero (ROAR), the channel and dataset means,
// blur, ROAD's imputation — with the model's prediction and confidence on
// each. ← → step through samples. For TRACE, a step slider plays the
// trajectory back. Below, on request, the on-manifold protocols' versions
// of the sample and the map across MPRT's randomised layers.
type Inspect struct {
	s         *State
	split     *widget.RadioGroup
	index     *entryWidget
	method    *selectWidget
	mapsFile  *entryWidget // the file method's maps (shown for it alone)
	rate      *widget.Slider
	rateText  *widget.Label
	morf      *widget.RadioGroup
	panels    *fyne.Container
	caption   *widget.Label
	traceBox  *fyne.Container
	traceStep *widget.Slider
	traceImg  *canvas.Image
	traceText *widget.Label
	manifold  *manifoldView
	cascade   *cascadeView
	cur       int
	explained *campaign.Explained // the map of the current sample and method
	mapKey    string
	mapGen    int  // counts map requests, so that a stale answer is dropped
	removeGen int  // and removal requests
	stale     bool // asked for while hidden: computed when shown
	// The model and dataset of the panels shown.
	panelsOf   *model.Model
	panelsData *Loaded
	content    fyne.CanvasObject
}

func newInspect(s *State) *Inspect {
	v := &Inspect{s: s, index: newEntry(), rateText: widget.NewLabel(""), panels: container.NewGridWrap(fyne.NewSize(150, 205)),
		caption:   widget.NewLabel("Open a dataset and a model, then pick a sample (or click one on the Data screen)."),
		traceStep: widget.NewSlider(0, 1), traceText: widget.NewLabel("")}
	v.caption.Wrapping = fyne.TextWrapWord
	v.traceText.Wrapping = fyne.TextWrapWord
	v.split = widget.NewRadioGroup([]string{"test", "train"}, func(string) { v.refresh() })
	v.split.Horizontal = true
	v.split.SetSelected("test")
	v.index.SetText("0")
	v.index.OnSubmitted = func(string) { v.refresh() }
	var names []string
	for _, m := range campaign.Methods() {
		names = append(names, m.Name)
	}
	v.mapsFile = newEntry()
	v.mapsFile.SetPlaceHolder("maps file (.npy, .npz)")
	v.mapsFile.OnSubmitted = func(string) { v.refresh() }
	v.mapsFile.Hide()
	v.method = newSelect(names, func(name string) {
		if name == "file" {
			v.mapsFile.Show()
		} else {
			v.mapsFile.Hide()
		}
		v.refresh()
	})
	v.method.SetSelected("gradient")
	v.rate = widget.NewSlider(0.05, 0.95)
	v.rate.Step = 0.05
	v.rate.SetValue(0.3)
	v.rate.OnChanged = func(r float64) { v.rateText.SetText(fmt.Sprintf("%.0f %% removed", 100*r)) }
	v.rate.OnChangeEnded = func(float64) { v.remove() }
	v.rate.OnChanged(v.rate.Value)
	v.morf = widget.NewRadioGroup([]string{"most relevant first", "least relevant first"}, func(string) { v.remove() })
	v.morf.Horizontal = true
	v.morf.SetSelected("most relevant first")
	v.traceStep.Step = 1
	v.traceStep.OnChanged = func(float64) { v.drawTrace() }
	v.traceImg = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	v.traceImg.ScaleMode, v.traceImg.FillMode = canvas.ImageScalePixels, canvas.ImageFillContain
	v.traceImg.SetMinSize(fyne.NewSize(140, 140))
	v.traceBox = container.NewVBox()
	prev := widget.NewButtonWithIcon("", theme.NavigateBackIcon(), func() { v.Step(-1) })
	next := widget.NewButtonWithIcon("", theme.NavigateNextIcon(), func() { v.Step(1) })
	s.mark("inspect.next", next, "next sample")
	which := widget.NewLabel("Model: " + s.modelName())
	which.Truncation = fyne.TextTruncateEllipsis
	top := container.NewVBox(which, s.newConversionLine(nil).label,
		container.NewHBox(widget.NewLabel("Split"), v.split, widget.NewLabel("Sample"), prev, container.NewGridWrap(fyne.NewSize(80, 36), v.index), next,
			widget.NewLabel("Method"), v.method, container.NewGridWrap(fyne.NewSize(260, 36), v.mapsFile)),
		container.NewBorder(nil, nil, container.NewHBox(widget.NewLabel("Rate"), v.rateText), v.morf, v.rate),
		v.caption)
	v.manifold = newManifoldView(s)
	v.manifold.on.OnChanged = func(bool) { v.remove() }
	v.manifold.strength.OnChangeEnded = func(float64) { v.manifold.update(v.explained, v.rate.Value) }
	v.cascade = newCascadeView(s)
	v.cascade.on.OnChanged = func(bool) { v.cascade.update(v.explained) }
	v.content = container.NewBorder(top, v.traceBox, nil, nil, container.NewVScroll(container.NewVBox(v.panels, v.manifold.content, v.cascade.content)))
	offer := func() {
		if s.Data == nil {
			return
		}
		var offered []string
		for _, m := range s.methodsOffered() {
			offered = append(offered, m.Name)
		}
		v.method.Options = offered
		if !slices.Contains(offered, v.method.Selected) {
			v.method.Selected = offered[0]
		}
		v.method.Refresh()
	}
	s.OnData(func() {
		offer()
		v.method.Refresh()
		v.cur = 0
		v.index.SetText("0")
		v.refresh()
	})
	s.OnModel(func() {
		which.SetText("Model: " + s.modelName())
		offer()
		v.mapKey = ""
		v.refresh()
	})
	return v
}

// Content is the screen.
func (v *Inspect) Content() fyne.CanvasObject { return v.content }

// Show opens sample i of a split.
func (v *Inspect) Show(split string, i int) {
	v.split.SetSelected(split)
	v.index.SetText(strconv.Itoa(i))
	v.refresh()
	v.s.answer(fmt.Sprintf("inspect %s %d", split, i))
}

// shown computes what was asked for while the screen was hidden.
func (v *Inspect) shown() {
	if v.stale {
		v.refresh()
	}
}

// Step moves to the next (+1) or previous (−1) sample.
func (v *Inspect) Step(d int) {
	if v.s.Data == nil {
		return
	}
	n := v.s.Data.Split(v.split.Selected).Len()
	i := ((v.cur+d)%n + n) % n
	v.index.SetText(strconv.Itoa(i))
	v.refresh()
	v.s.answer(fmt.Sprintf("inspect %s %d", v.split.Selected, i))
}

// Key handles the arrow keys: samples left and right, rates up and down.
func (v *Inspect) Key(k fyne.KeyName) {
	switch k {
	case fyne.KeyLeft:
		v.Step(-1)
	case fyne.KeyRight:
		v.Step(1)
	case fyne.KeyUp, fyne.KeyDown:
		d := v.rate.Step
		if k == fyne.KeyDown {
			d = -d
		}
		v.rate.SetValue(min(max(v.rate.Value+d, v.rate.Min), v.rate.Max))
		v.remove()
	}
}

// SetRate sets the removal rate (screenshots, tests).
func (v *Inspect) SetRate(r float64) {
	v.rate.SetValue(r)
	v.remove()
}

// refresh computes the current sample's map when the sample or the
// method changed, then its removals.
//
// Nothing is computed while the screen is hidden: the work waits for the
// user to open it (shown).
func (v *Inspect) refresh() {
	if !v.s.Fits() {
		v.clear()
		return
	}
	if !v.s.isShown(TabInspect) {
		v.stale = true
		return
	}
	v.stale = false
	if v.method.Selected == "file" && strings.TrimSpace(v.mapsFile.Text) == "" {
		v.caption.SetText("Name the maps file (.npy in dataset order, or .npz with an index) and press Enter.")
		return
	}
	ds := v.s.Data.Split(v.split.Selected)
	i, err := strconv.Atoi(strings.TrimSpace(v.index.Text))
	if err != nil || i < 0 || i >= ds.Len() {
		v.s.status.ErrorFrom(causeInspect, fmt.Errorf("sample %q: want 0 to %d", v.index.Text, ds.Len()-1))
		return
	}
	v.s.status.Resolved(causeInspect)
	v.cur = i
	key := fmt.Sprint(v.split.Selected, i, v.method.Selected, v.mapsFile.Text)
	if key == v.mapKey {
		v.remove()
		return
	}
	v.mapGen++
	gen := v.mapGen
	v.mapKey, v.explained = key, nil
	if v.panelsOf != v.s.Model || v.panelsData != v.s.Data {
		// The panels shown are another model's or dataset's: gone at
		// once, the caption saying what comes.
		v.panels.Objects = nil
		v.panels.Refresh()
		v.caption.SetText(fmt.Sprintf("Computing the %s map of sample %d under %s…", v.method.Selected, i, v.s.modelName()))
	}
	m, l := v.s.Model.Copy(), v.s.Data
	q := campaign.Request{Method: v.method.Selected, Split: v.split.Selected, Offset: i, Count: 1, Reduce: "sum"}
	if q.Method == "file" { // one file serves the split shown
		q.Params = map[string]any{"test": v.mapsFile.Text, "train": v.mapsFile.Text}
	}
	var ex campaign.Explained
	v.s.Go(fmt.Sprintf("%s map of sample %d", q.Method, i), func(ctx context.Context) error {
		var err error
		ex, err = campaign.Attribute(ctx, m, l.Train, l.Test, q)
		return err
	}, func(err error) {
		if err != nil || gen != v.mapGen {
			return
		}
		v.explained = &ex
		v.remove()
		v.setupTrace()
		v.cascade.update(v.explained)
	})
}

// remove fills the removed features from every reference and shows the
// panels.
func (v *Inspect) remove() {
	ex := v.explained
	if !v.s.Fits() {
		v.clear()
		return
	}
	if ex == nil {
		return // the map under way calls back when it is ready
	}
	if !v.s.isShown(TabInspect) {
		v.stale = true
		return
	}
	v.removeGen++
	gen := v.removeGen
	m, l := v.s.Model.Copy(), v.s.Data
	ds := l.Split(ex.Request.Split)
	i, rate, morf, target := ex.Request.Offset, v.rate.Value, v.morf.Selected == "most relevant first", ex.Targets[0]
	saliency := ex.Maps.Map(0)
	var out campaign.Removed
	v.s.Go("removing features", func(ctx context.Context) error {
		var err error
		out, err = campaign.Remove(ctx, m, l.Train, ds, i, saliency, rate, morf, target, nil, 1)
		return err
	}, func(err error) {
		if err != nil || gen != v.removeGen || v.explained != ex {
			return
		}
		v.show(ds.Shape, saliency, out, target)
		v.manifold.update(ex, rate)
	})
}

// clear empties the panels when no model fitting the open data is open,
// drops the answers under way, and says why in place of the caption: the
// panels of another dataset's sample must not stay beside this one's.
func (v *Inspect) clear() {
	if v.content == nil {
		return // still being built
	}
	v.mapGen++
	v.removeGen++
	v.mapKey, v.explained = "", nil
	v.panels.Objects = nil
	v.panels.Refresh()
	v.traceBox.Objects = nil
	v.traceBox.Refresh()
	v.manifold.update(nil, 0)
	v.cascade.update(nil)
	v.caption.SetText(v.s.misfit())
}

func (v *Inspect) show(shape []int, saliency []float32, r campaign.Removed, target int) {
	ds := v.s.Data.Split(v.split.Selected)
	H, W := shape[1], shape[2]
	if H == 1 && W == 1 {
		H, W = 1, shape[0]
	}
	v.panels.Objects = nil
	win := v.s.cfg.Window
	// A click on a panel enlarges it, with the values under the pointer.
	add := func(img image.Image, title, caption string, value func(x, y int) string) {
		v.panels.Add(zoomable(panel(img, title, caption), func() { v.s.mark("zoom.picture", showEnlarged(win, title, img, value), title) }))
	}
	orig := r.Removals[0]
	add(sampleImage(orig.Image, shape), "original", v.predText(orig), pixelValues(orig.Image, shape))
	limit := absMax(saliency)
	add(heatmap(saliency, H, W, limit), v.method.Selected, fmt.Sprintf("±%.3g\nblue − · red +", limit), mapValue(saliency, W))
	add(maskImage(r.Keep, H, W), "removed (red)", fmt.Sprintf("%.0f %%\n%s", 100*v.rate.Value, v.morf.Selected), mapValue(r.Keep, W))
	for _, rm := range r.Removals[1:] {
		add(sampleImage(rm.Image, shape), rm.Reference, v.predText(rm), pixelValues(rm.Image, shape))
	}
	v.panels.Refresh()
	v.panelsOf, v.panelsData = v.s.Model, v.s.Data
	v.caption.SetText(fmt.Sprintf("Sample %d of the %s split: %s. Explaining %s; the model's probability of it on each version is p(target).",
		v.cur, v.split.Selected, v.s.classLabel(ds.Y[v.cur]), v.s.modelClass(target)))
}

func (v *Inspect) predText(r campaign.Removal) string {
	return fmt.Sprintf("→ %s %.2f\np(target) %.2f", v.s.modelClass(r.Predicted), r.Confidence, r.TargetProb)
}

// panel is an image with a title and a caption.
func panel(img image.Image, title, caption string) fyne.CanvasObject {
	ci := canvas.NewImageFromImage(img)
	ci.ScaleMode, ci.FillMode = canvas.ImageScalePixels, canvas.ImageFillContain
	ci.SetMinSize(fyne.NewSize(140, 140))
	t := widget.NewLabelWithStyle(title, fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	t.Truncation = fyne.TextTruncateEllipsis
	var lines []fyne.CanvasObject
	for _, line := range strings.Split(caption, "\n") {
		c := captionLabel(line)
		c.Alignment, c.Truncation = fyne.TextAlignCenter, fyne.TextTruncateEllipsis
		lines = append(lines, c)
	}
	// The caption's lines as close as a label's own lines (each is a label,
	// to truncate on its own): label-padded, two lines took the room of
	// three, and the GOAR and FUD row's second line fell below the panel.
	tight := layout.NewCustomPaddedVBoxLayout(theme.LineSpacing() - 2*theme.InnerPadding())
	return container.NewBorder(t, container.New(tight, lines...), nil, nil, ci)
}

// setupTrace offers trajectory playback when the map came from TRACE.
func (v *Inspect) setupTrace() {
	v.traceBox.Objects = nil
	if v.explained == nil || len(v.explained.Trace) == 0 {
		v.traceBox.Refresh()
		return
	}
	t := len(v.explained.Trace[0].Trajectory)
	v.traceStep.Max = float64(t)
	v.traceStep.SetValue(0) // the trajectory plays from the whole sample, patch by patch
	v.traceBox.Add(widget.NewSeparator())
	v.traceBox.Add(container.NewBorder(nil, nil, v.traceImg, nil, container.NewVBox(
		widget.NewLabelWithStyle("TRACE trajectory: patches deleted, least important first", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		v.traceStep, v.traceText)))
	v.traceBox.Refresh()
	v.drawTrace()
}

func (v *Inspect) drawTrace() {
	ex := v.explained
	if ex == nil || len(ex.Trace) == 0 || v.s.Data == nil {
		return
	}
	ds := v.s.Data.Split(ex.Request.Split)
	grid, _ := ex.Settings["grid"].(int)
	tr := ex.Trace[0]
	step := int(v.traceStep.Value)
	img, err := trajectoryFrame(ds.Sample(ex.Request.Offset), ds.Shape, grid, tr.Trajectory, step)
	if err != nil {
		v.traceText.SetText(err.Error())
		return
	}
	v.traceImg.Image = img
	v.traceImg.Refresh()
	v.traceText.SetText(traceCaption(step, grid, ex.Settings, tr))
}

// ShowManifold switches GOAR's projection and FUD's in-painting on or off
// (screenshots, tests).
func (v *Inspect) ShowManifold(on bool) { v.manifold.on.SetChecked(on) }
