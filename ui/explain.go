package ui

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/attr"
	"faithlab/core/attr/trace"
	"faithlab/core/campaign"
	"faithlab/core/model"
	"faithlab/core/param"
	"faithlab/core/perturb"
	"faithlab/core/report"
)

// Explain computes maps of the chosen methods (their parameter forms built
// from the methods' own descriptions) for a few samples of the open
// dataset under the open model, and shows them side by side: a row per
// sample, the image and each method's map over it in a diverging colour
// scale (shared by all maps or per map) with its legend and an opacity
// slider. TRACE's trajectories play back patch by patch.
type Explain struct {
	s            *State
	methods      *widget.CheckGroup
	forms        map[string]*paramForm
	methodParams map[string][]param.Param // each method's, for its form when first shown
	params       *fyne.Container
	post         *entryWidget
	split        *widget.RadioGroup
	offset       *entryWidget
	count        *entryWidget
	target       *widget.RadioGroup
	seed         *entryWidget
	compute      *widget.Button
	stop         *widget.Button
	progress     *widget.ProgressBar
	overlayC     *widget.Check
	shared       *widget.Check
	opacity      *widget.Slider
	legend       *widget.Label
	gallery      *fyne.Container
	trace        *fyne.Container
	results      []campaign.Explained
	which        *widget.Label     // the model under explanation
	form         *container.Scroll // the side panel: methods, parameters, samples
	galleryArea  *container.Scroll // the maps, scrolling
	mapsOf       *model.Model      // the model the maps shown come from
	mapsPath     string            // its file
	cancel       context.CancelFunc
	// trajectory playback
	traceSel  *selectWidget
	traceStep *widget.Slider
	traceImg  *canvas.Image
	traceText *widget.Label
	content   fyne.CanvasObject
}

func newExplain(s *State) *Explain {
	e := &Explain{s: s, forms: map[string]*paramForm{}, methodParams: map[string][]param.Param{}, params: container.NewVBox(), post: newEntry(), offset: newEntry(),
		count: newEntry(), seed: newEntry(), progress: widget.NewProgressBar(), legend: widget.NewLabel(""),
		gallery: container.NewGridWithColumns(1), trace: container.NewVBox()}
	var names []string
	titles := map[string]string{}
	for _, m := range campaign.Methods() {
		label := m.Name + " — " + m.Title
		names = append(names, label)
		titles[label] = m.Name
		e.methodParams[m.Name] = m.Params
	}
	e.methods = widget.NewCheckGroup(names, func([]string) { e.showForms(titles) })
	e.methods.SetSelected([]string{names[0], names[2]}) // gradient, ig
	offer := func() {
		// Only the methods that explain this data with this model are offered.
		if s.Data == nil {
			return
		}
		var offered []string
		for _, m := range s.methodsOffered() {
			offered = append(offered, m.Name+" — "+m.Title)
		}
		e.methods.Options = offered
		e.methods.SetSelected(slices.DeleteFunc(slices.Clone(e.methods.Selected), func(l string) bool { return !slices.Contains(offered, l) }))
		e.methods.Refresh()
	}
	s.OnData(offer)
	s.OnModel(offer)
	e.which = widget.NewLabel("Model: " + s.modelName())
	e.which.Wrapping = fyne.TextWrapWord
	s.OnModel(e.modelChanged)
	e.post.SetPlaceHolder("none; e.g. abs,gaussian:1")
	e.split = widget.NewRadioGroup([]string{"test", "train"}, nil)
	e.split.Horizontal = true
	e.split.SetSelected("test")
	e.offset.SetText("0")
	e.count.SetText("6")
	e.target = widget.NewRadioGroup([]string{"predicted", "label"}, nil)
	e.target.Horizontal = true
	e.target.SetSelected("predicted")
	e.seed.SetText("0")
	e.compute = widget.NewButton("Compute maps", e.Compute)
	e.compute.Importance = widget.HighImportance
	e.stop = widget.NewButton("Cancel", func() {
		if e.cancel != nil {
			e.cancel()
		}
	})
	e.stop.Disable()
	e.opacity = widget.NewSlider(0, 1)
	e.opacity.Step = 0.05
	e.opacity.SetValue(0.7)
	e.opacity.OnChangeEnded = func(float64) { e.draw() }
	e.overlayC = widget.NewCheck("over the image", func(on bool) {
		if on {
			e.opacity.Enable()
		} else {
			e.opacity.Disable()
		}
		e.draw()
	})
	e.overlayC.SetChecked(true)
	e.shared = widget.NewCheck("one scale for all maps", func(bool) { e.draw() })
	e.shared.SetChecked(false)
	e.traceSel = newSelect(nil, func(string) { e.drawTrace() })
	e.traceStep = widget.NewSlider(0, 1)
	e.traceStep.Step = 1
	e.traceStep.OnChanged = func(float64) { e.drawTrace() }
	e.traceImg = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	e.traceImg.ScaleMode = canvas.ImageScalePixels
	e.traceImg.FillMode = canvas.ImageFillContain
	e.traceImg.SetMinSize(fyne.NewSize(120, 120))
	e.traceText = widget.NewLabel("")
	e.traceText.Wrapping = fyne.TextWrapWord
	samples := widget.NewForm(
		widget.NewFormItem("Split", e.split),
		widget.NewFormItem("First sample", e.offset),
		widget.NewFormItem("Samples", e.count),
		widget.NewFormItem("Explain", e.target),
		widget.NewFormItem("Seed", e.seed),
		widget.NewFormItem("Post-processing", e.post),
	)
	// The buttons first: the model's name below them wraps to as many
	// lines as it needs, and moves nothing the user aims at.
	left := container.NewVBox(container.NewHBox(e.compute, e.stop), e.progress, e.which, s.newConversionLine(nil).label,
		widget.NewLabelWithStyle("Methods", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), e.methods,
		widget.NewLabelWithStyle("Parameters", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), e.params,
		widget.NewLabelWithStyle("Samples", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), samples)
	bar := canvas.NewImageFromImage(colorBar(256, 12))
	bar.FillMode = canvas.ImageFillStretch
	bar.SetMinSize(fyne.NewSize(180, 14))
	controls := container.NewVBox(
		container.NewHBox(e.overlayC, widget.NewLabel("opacity"), container.NewGridWrap(fyne.NewSize(140, 36), e.opacity), e.shared),
		container.NewHBox(widget.NewLabel("−"), container.NewCenter(bar), widget.NewLabel("+"), e.legend))
	e.galleryArea = container.NewScroll(e.gallery)
	center := container.NewBorder(controls, e.trace, nil, nil, e.galleryArea)
	e.form = sidePanel(360, left)
	s.markIn("explain.compute", e.compute, "", e.form)
	s.markIn("explain.count", e.count, "", e.form)
	e.content = container.NewBorder(nil, nil, e.form, nil, center)
	e.showForms(titles)
	e.gallery.Add(widget.NewLabel("Pick methods and samples, then Compute maps."))
	return e
}

// Content is the screen.
func (e *Explain) Content() fyne.CanvasObject { return e.content }

// modelChanged names the model under explanation and clears the maps of
// another one, saying so: maps stay only beside the model they explain.
func (e *Explain) modelChanged() {
	if e.s.Fits() {
		e.s.status.Resolved(causeExplain)
	}
	e.which.SetText("Model: " + e.s.modelName())
	if len(e.results) == 0 || e.mapsOf == e.s.Model {
		return
	}
	old, oldPath := e.mapsOf, e.mapsPath
	e.results, e.mapsOf = nil, nil
	e.gallery.Layout = container.NewGridWithColumns(1).Layout
	e.gallery.Objects = []fyne.CanvasObject{widget.NewLabel("The maps of " + describeWhich(old, oldPath) +
		" were cleared: the model under explanation is now " + e.s.modelName() + ". Compute maps again.")}
	e.gallery.Refresh()
	e.trace.Objects = nil
	e.trace.Refresh()
}

// formOf is a method's parameter form, made on its first showing: twenty
// forms made at the start took a third of the workbench's start.
func (e *Explain) formOf(name string) *paramForm {
	f := e.forms[name]
	if f == nil {
		f = newParamForm(e.methodParams[name])
		e.forms[name] = f
	}
	return f
}

// showForms lists the parameter forms of the checked methods.
func (e *Explain) showForms(titles map[string]string) {
	e.params.Objects = nil
	for _, label := range e.methods.Selected {
		name := titles[label]
		e.params.Add(widget.NewCard("", name, e.formOf(name).form))
	}
	e.params.Refresh()
}

// chosen returns the checked methods' names.
func (e *Explain) chosen() []string {
	var out []string
	for _, label := range e.methods.Selected {
		name, _, _ := strings.Cut(label, " — ")
		out = append(out, name)
	}
	return out
}

// Select checks exactly the named methods (screenshots, tests).
func (e *Explain) Select(names ...string) {
	var labels []string
	for _, opt := range e.methods.Options {
		name, _, _ := strings.Cut(opt, " — ")
		if containsString(names, name) {
			labels = append(labels, opt)
		}
	}
	e.methods.SetSelected(labels)
}

// Compute makes the maps in the background, one method after another.
func (e *Explain) Compute() {
	if e.cancel != nil {
		return
	}
	if !e.s.Fits() {
		e.s.status.ErrorFrom(causeExplain, fmt.Errorf("explaining needs an open dataset and a model that takes its samples"))
		return
	}
	offset, err1 := strconv.Atoi(strings.TrimSpace(e.offset.Text))
	count, err2 := strconv.Atoi(strings.TrimSpace(e.count.Text))
	seed, err3 := strconv.ParseUint(strings.TrimSpace(e.seed.Text), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || offset < 0 || count < 1 || count > 64 {
		e.s.status.ErrorFrom(causeExplain, fmt.Errorf("first sample, samples (1 to 64) and seed must be whole numbers"))
		return
	}
	var reqs []campaign.Request
	for _, name := range e.chosen() {
		params, err := e.formOf(name).Values()
		if err != nil {
			e.s.status.ErrorFrom(causeExplain, fmt.Errorf("%s: %w", name, err))
			return
		}
		reqs = append(reqs, campaign.Request{Method: name, Params: params, Post: e.post.Text, Reduce: "sum", Split: e.split.Selected,
			Offset: offset, Count: count, Target: e.target.Selected, Seed: seed})
	}
	if len(reqs) == 0 {
		e.s.status.ErrorFrom(causeExplain, fmt.Errorf("pick at least one method"))
		return
	}
	e.s.status.Resolved(causeExplain)
	m, l := e.s.Model.Copy(), e.s.Data
	of, ofPath := e.s.Model, e.s.ModelPath
	var out []campaign.Explained
	e.compute.Disable()
	e.stop.Enable()
	e.progress.SetValue(0)
	e.cancel = e.s.Go("computing maps", func(ctx context.Context) error {
		for i, q := range reqs {
			// The bar moves within a method too, a few times a second
			// (the gradient methods report every batch).
			var last time.Time
			within := attr.WithProgress(ctx, func(done float64) {
				if now := time.Now(); now.Sub(last) >= 100*time.Millisecond {
					last = now
					frac := (float64(i) + done) / float64(len(reqs))
					e.s.cfg.Do(func() { e.progress.SetValue(frac) })
				}
			})
			ex, err := campaign.Attribute(within, m, l.Train, l.Test, q)
			if err != nil {
				return fmt.Errorf("%s: %w", q.Method, err)
			}
			out = append(out, ex)
			frac := float64(i+1) / float64(len(reqs))
			e.s.cfg.Do(func() { e.progress.SetValue(frac) })
		}
		return nil
	}, func(err error) {
		e.cancel = nil
		e.compute.Enable()
		e.stop.Disable()
		if err != nil {
			e.progress.SetValue(0)
			return
		}
		if e.s.Model != of {
			return // another model meanwhile: these maps explain none shown
		}
		e.results, e.mapsOf, e.mapsPath = out, of, ofPath
		e.draw()
		e.setupTrace()
		e.s.status.Info(fmt.Sprintf("maps of %s for %s of the %s split", report.Count(len(out), "method"), report.Count(out[0].Maps.N(), "sample"), out[0].Request.Split))
	})
}

// draw lays out the gallery: a header row of method names, then per
// sample its image and each method's map.
func (e *Explain) draw() {
	if len(e.results) == 0 || e.s.Data == nil {
		return
	}
	first := e.results[0]
	ds := e.s.Data.Split(first.Request.Split)
	n := first.Maps.N()
	cols := len(e.results) + 1
	var shared float32
	for _, r := range e.results {
		shared = max(shared, absMax(r.Maps.Data))
	}
	e.gallery.Objects = nil
	e.gallery.Layout = container.NewVBox().Layout
	header := container.NewGridWithColumns(cols, widget.NewLabelWithStyle("sample", fyne.TextAlignCenter, fyne.TextStyle{Bold: true}))
	for _, r := range e.results {
		l := widget.NewLabelWithStyle(r.Request.Method, fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
		l.Truncation = fyne.TextTruncateEllipsis
		header.Add(l)
	}
	e.gallery.Add(header)
	shape := ds.Shape
	for i := range n {
		idx := first.Request.Offset + i
		x := ds.Sample(idx)
		base := sampleImage(x, shape)
		caption := e.s.classLabel(ds.Y[idx])
		if t := first.Targets[i]; t != ds.Y[idx] {
			caption += " (explains " + e.s.modelClass(t) + ")"
		}
		row := container.NewGridWithColumns(cols, e.cell(base, fmt.Sprintf("#%d %s", idx, caption), func() { e.s.Inspect(first.Request.Split, idx) }))
		e.s.markIn(fmt.Sprintf("explain.map.%d.0", i), row.Objects[0], fmt.Sprintf("#%d %s", idx, caption), e.galleryArea)
		e.gallery.Add(row)
		for _, r := range e.results {
			m := r.Maps.Map(i)
			limit := absMax(m)
			if e.shared.Checked {
				limit = shared
			}
			var img *image.RGBA
			H, W := r.Maps.Shape[2], r.Maps.Shape[3]
			if H*W == 1 { // a tabular sample's map: a strip of its features
				H, W = 1, len(m)
			}
			switch {
			case e.overlayC.Checked && H*W == base.Rect.Dx()*base.Rect.Dy():
				img = overlay(base, m, limit, e.opacity.Value)
			default:
				img = heatmap(m, H, W, limit)
			}
			title := fmt.Sprintf("%s on #%d %s", r.Request.Method, idx, caption)
			row.Add(e.cell(img, fmt.Sprintf("±%.3g", limit), func() {
				e.s.mark("zoom.picture", showEnlarged(e.s.cfg.Window, title, img, mapValue(m, W)), title)
			}))
			e.s.markIn(fmt.Sprintf("explain.map.%d.%d", i, len(row.Objects)-1), row.Objects[len(row.Objects)-1], title, e.galleryArea)
		}
	}
	if e.shared.Checked {
		e.legend.SetText(fmt.Sprintf("±%.3g, all maps", shared))
	} else {
		e.legend.SetText("± each map's own largest |value|")
	}
	e.gallery.Refresh()
}

// cell is an image with a caption; tapping it runs tap (when not nil).
func (e *Explain) cell(img image.Image, caption string, tap func()) fyne.CanvasObject {
	ci := canvas.NewImageFromImage(img)
	ci.ScaleMode = canvas.ImageScalePixels
	ci.FillMode = canvas.ImageFillContain
	ci.SetMinSize(fyne.NewSize(112, 112))
	l := captionLabel(caption)
	l.Alignment = fyne.TextAlignCenter
	l.Truncation = fyne.TextTruncateEllipsis
	var top fyne.CanvasObject = ci
	if tap != nil {
		b := widget.NewButton("", tap)
		b.Importance = widget.LowImportance
		top = container.NewStack(b, ci)
	}
	return container.NewBorder(nil, l, nil, nil, top)
}

// setupTrace offers the samples of the TRACE results for playback.
func (e *Explain) setupTrace() {
	e.trace.Objects = nil
	var opts []string
	for _, r := range e.results {
		for i := range r.Trace {
			opts = append(opts, fmt.Sprintf("%s · sample #%d", r.Request.Method, r.Request.Offset+i))
		}
	}
	if len(opts) == 0 {
		e.trace.Refresh()
		return
	}
	e.traceSel.Options = opts
	e.traceStep.SetValue(0) // new trajectories play from the whole sample, as Inspect's
	e.traceSel.SetSelected(opts[0])
	e.trace.Add(widget.NewSeparator())
	e.trace.Add(widget.NewLabelWithStyle("TRACE trajectory: patches deleted, least important first", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	e.trace.Add(container.NewBorder(nil, nil, e.traceImg, nil, container.NewVBox(e.traceSel, e.traceStep, e.traceText)))
	e.trace.Refresh()
	e.drawTrace()
}

// drawTrace shows the chosen sample with the first patches of its TRACE
// trajectory deleted, as many as the step slider says.
func (e *Explain) drawTrace() {
	if e.traceSel.Selected == "" || e.s.Data == nil {
		return
	}
	k := 0
	for _, r := range e.results {
		for i, tr := range r.Trace {
			if e.traceSel.Options[k] != e.traceSel.Selected {
				k++
				continue
			}
			ds := e.s.Data.Split(r.Request.Split)
			grid, _ := r.Settings["grid"].(int)
			t := len(tr.Trajectory)
			e.traceStep.Max = float64(t)
			step := min(int(e.traceStep.Value), t)
			img, err := trajectoryFrame(ds.Sample(r.Request.Offset+i), ds.Shape, grid, tr.Trajectory, step)
			if err != nil {
				e.traceText.SetText(err.Error())
				return
			}
			e.traceImg.Image = img
			e.traceImg.Refresh()
			e.traceText.SetText(traceCaption(step, grid, r.Settings, tr))
			return
		}
	}
}

// traceCaption is what Explain and Inspect say under a TRACE trajectory
// shown at step: how far it is, and what it optimises.
func traceCaption(step, grid int, settings map[string]any, tr trace.Result) string {
	return fmt.Sprintf("%d of %d patches deleted (%d×%d grid). %s", step, len(tr.Trajectory), grid, grid, traceObjective(settings, tr))
}

// traceObjective says what a TRACE trajectory optimises and how well it
// does, in the deletion metric's terms: the core's objective is a sum of
// the explained class's score over the trajectory's t+1 steps (TRACE
// paper, Eq. 1 and 3), shown as the mean over the steps (near the
// deletion test's area under the curve, which is trapezoidal).
func traceObjective(settings map[string]any, r trace.Result) string {
	n := float64(len(r.Trajectory) + 1)
	unit := "p(target)"
	if logit, _ := settings["logit"].(bool); logit {
		unit = "logit of the target"
	}
	var out string
	switch obj, _ := settings["objective"].(string); trace.Objective(obj) {
	case trace.Le:
		out = fmt.Sprintf("TRACE-Le maximises LeRF: mean %s %.3f while the least important patches go first (higher is better)", unit, r.Value/n)
	case trace.Mo:
		out = fmt.Sprintf("TRACE-Mo minimises MoRF: mean %s %.3f while the most important patches go first (lower is better)", unit, -r.Value/n)
	default:
		out = fmt.Sprintf("TRACE-Le−Mo maximises LeRF − MoRF: mean %s %.3f higher with the least important patches going first than with the most important (higher is better)", unit, r.Value/n)
	}
	switch alg, _ := settings["algorithm"].(string); alg {
	case "greedy":
		out += fmt.Sprintf("; found greedily in %.2f s", r.Seconds)
	case "exact":
		out += fmt.Sprintf("; the exact optimum, found in %.2f s", r.Seconds)
	default:
		out += fmt.Sprintf("; found by %d annealing iterations in %.2f s", r.Iterations, r.Seconds)
	}
	return out
}

// trajectoryFrame draws a sample with the first step patches of a TRACE
// trajectory (least important first) on a grid×grid partition set to 0.
func trajectoryFrame(x []float32, shape []int, grid int, trajectory []int, step int) (*image.RGBA, error) {
	H, W := shape[1], shape[2]
	feats, err := perturb.NewFeatures(H, W, grid)
	if err != nil {
		return nil, err
	}
	keep := make([]float32, H*W)
	feats.Keep(keep, trajectory, min(step, len(trajectory)))
	y := append([]float32(nil), x...)
	hw := H * W
	for c := range shape[0] {
		for p := range hw {
			y[c*hw+p] *= keep[p]
		}
	}
	return sampleImage(y, shape), nil
}
