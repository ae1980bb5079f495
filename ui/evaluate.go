package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/campaign"
	"faithlab/core/data"
	"faithlab/core/model"
	"faithlab/core/spec"
)

// Evaluate builds a campaign — dataset, model, methods, post-processings,
// protocols (forms from their own descriptions), seeds — says its size and
// estimated time before launch, saves it as the YAML spec the CLI runs
// (and opens one), launches it in the background and lists its tasks with
// their progress, stage, ETA and a cancel button each. Interrupted
// campaigns are offered for resumption at start.
type Evaluate struct {
	s        *State
	name     *entryWidget
	dataset  *entryWidget
	conv     *conversionLine // under the dataset: how its files become what the model reads
	trainCap *entryWidget
	testCap  *entryWidget
	// capsCleared are the caps an open set too small for them made "all",
	// restored when a set that holds more is opened and they are still so.
	capsCleared map[*entryWidget]int
	modelKind   *widget.RadioGroup
	arch        *selectWidget
	epochs      *entryWidget
	methods     *checkForms
	post        *entryWidget
	protocols   *checkForms
	seeds       *entryWidget
	retrain     *entryWidget
	model       *widget.Label            // the model the campaign evaluates, named
	size        *widget.Label            // the campaign's estimate, redone after every edit
	runNote     string                   // what its run folder holds already (the start of size's text)
	sizeText    string                   // the rest of size's text
	edits       int                      // counts the form's edits, to drop stale estimates
	pause       *time.Timer              // waits for a pause in the edits
	speeds      *campaign.SpeedBook      // measured here, once per model, dataset and engine
	sized       map[string]campaign.Size // estimates made, by the spec without its name (sizeKey) and what its run holds
	sizing      context.CancelFunc       // stops the estimate under way, which a newer edit replaces
	checking    context.CancelFunc       // stops the look for a stopped run under way
	stale       bool                     // edited while hidden: sized when shown
	form        *container.Scroll        // the form, scrolling
	launch      *widget.Button
	stop        *widget.Button
	overall     *widget.ProgressBar
	eta         *widget.Label
	left        countdown // the campaign's ETA, counted down between its updates
	unseen      bool      // progress came while the screen was hidden: drawn when it is shown
	resume      *fyne.Container
	list        *widget.List
	rows        []taskRow
	byKey       map[string]int
	took        map[string][]time.Duration // the finished tasks' times in this run, by protocol setting
	perTask     time.Duration              // the last estimate's time per task (0: none)
	look        runLook                    // the form's campaign's run folder, as last looked at
	sizeShown   shownSize                  // the estimate shown, and of which campaign
	child       *campaign.Child            // the worker running the campaign
	cancel      context.CancelFunc
	specPath    string                          // of the campaign running or last saved
	script      string                          // a TorchScript model to evaluate (on the torch engine)
	specEngine  string                          // the engine of the spec opened last ("": Settings' engine)
	onRun       func(dir string, finished bool) // a campaign ended (or stopped)
	content     fyne.CanvasObject
}

// taskRow is one task of the running campaign as the list shows it.
type taskRow struct {
	key, label, state, stage string
	frac                     float64
	started                  time.Time // when it started running (zero: not yet)
}

func newEvaluate(s *State) *Evaluate {
	e := &Evaluate{s: s, name: newEntry(), dataset: newEntry(), trainCap: newEntry(), testCap: newEntry(), capsCleared: map[*entryWidget]int{},
		arch: newSelect(model.Architectures(), nil), epochs: newEntry(), post: newEntry(), seeds: newEntry(),
		retrain: newEntry(), size: widget.NewLabel(""), model: widget.NewLabel(""), speeds: &campaign.SpeedBook{}, sized: map[string]campaign.Size{}, overall: widget.NewProgressBar(), eta: widget.NewLabel(""),
		resume: container.NewVBox(), byKey: map[string]int{}, took: map[string][]time.Duration{}}
	// The conversions of the open dataset, where the campaign reads it for
	// the open model.
	e.conv = s.newConversionLine(func() bool {
		ref := strings.TrimSpace(e.dataset.Text)
		return e.modelKind != nil && e.modelKind.Selected == "the open model" && s.Data != nil && (ref == "" || ref == s.Data.Ref || samePlace(ref) == samePlace(s.Data.Ref))
	})
	e.name.SetText("my-campaign")
	e.dataset.SetPlaceHolder("id or path (default: the open one)")
	e.trainCap.SetPlaceHolder("all")
	e.testCap.SetPlaceHolder("all")
	e.testCap.SetText("500")
	e.modelKind = widget.NewRadioGroup([]string{"the open model", "train one", "TorchScript file"}, nil)
	e.modelKind.Horizontal = true
	e.modelKind.SetSelected("the open model")
	e.arch.SetSelected("goar-cnn")
	e.overall.Hide() // until a campaign runs: Fyne's empty track reads as a full bar
	e.epochs.SetText("10")
	e.post.SetPlaceHolder("none | abs | abs,gaussian:1")
	e.seeds.SetText("1")
	e.retrain.SetText("5")
	e.size.Wrapping = fyne.TextWrapWord
	var mInfo, pInfo []formItem
	for _, m := range campaign.Methods() {
		mInfo = append(mInfo, formItem{m.Name, m.Title + " — " + m.Doc, m.Params})
	}
	for _, p := range campaign.Protocols() {
		pInfo = append(pInfo, formItem{strings.ToLower(p.Name), p.Doc, p.Params})
	}
	// A fresh form is a quick campaign that still means something: two
	// methods and Random as the control under Deletion and ROAD (neither
	// retrains) on 500 test images; its estimate shows before launch.
	e.methods = newCheckForms(mInfo, e.changed)
	e.methods.Set("gradient", nil)
	e.methods.Set("ig", nil)
	e.methods.Set("random", nil)
	e.protocols = newCheckForms(pInfo, e.changed)
	e.protocols.Set("deletion", nil)
	e.protocols.Set("road", map[string]any{"rates": []float64{0.1, 0.5, 0.9}})
	e.launch = widget.NewButtonWithIcon("Launch", theme.MediaPlayIcon(), e.Launch)
	e.launch.Importance = widget.HighImportance
	e.stop = widget.NewButtonWithIcon("Cancel campaign", theme.MediaStopIcon(), e.Cancel)
	e.stop.Disable()
	save := widget.NewButtonWithIcon("Save spec", theme.DocumentSaveIcon(), func() {
		if _, err := e.save(); err != nil {
			e.s.status.ErrorFrom(causeCampaign, err)
		}
	})
	openSpec := widget.NewButtonWithIcon("Open spec…", theme.FolderOpenIcon(), func() { e.s.PickFile(e.OpenSpec, ".yaml", ".yml") })
	form := widget.NewForm(
		widget.NewFormItem("Name", e.name),
		widget.NewFormItem("Dataset", container.NewVBox(e.dataset, e.conv.label)),
		widget.NewFormItem("Training images read", e.trainCap),
		widget.NewFormItem("Test images read", e.testCap),
		widget.NewFormItem("Model", container.NewVBox(e.modelKind, e.model)),
		widget.NewFormItem("Architecture", e.arch),
		widget.NewFormItem("Epochs", e.epochs),
		widget.NewFormItem("Post-processings", e.post),
		widget.NewFormItem("Seeds", e.seeds),
		widget.NewFormItem("Retraining epochs", e.retrain),
	)
	form.Items[2].HintText = "the first n (empty: all); retraining protocols train on them"
	form.Items[3].HintText = "the first n (empty: all); a protocol's samples are among these"
	form.Items[5].HintText = "when training one"
	form.Items[8].HintText = "comma-separated; one campaign per seed"
	wrapHints(form)
	left := container.NewVBox(form,
		widget.NewLabelWithStyle("Methods", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), e.methods.content,
		widget.NewLabelWithStyle("Protocols", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), e.protocols.content)
	// The actions stay in view below the scrolling form.
	actions := container.NewVBox(widget.NewSeparator(), e.size, container.NewHBox(save, openSpec, layout.NewSpacer(), e.launch, e.stop))
	e.list = widget.NewList(func() int { return len(e.rows) }, e.newRow, e.updateRow)
	right := container.NewBorder(container.NewVBox(e.resume, widget.NewLabelWithStyle("Tasks", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, nil, e.eta, e.overall)), nil, nil, nil, e.list)
	e.form = wheelScroll(left)
	s.markIn("evaluate.testcap", e.testCap, "", e.form)
	s.mark("evaluate.launch", e.launch, "")
	s.mark("evaluate.stop", e.stop, "")
	s.mark("evaluate.size", e.size, "")
	split := container.NewHSplit(container.NewBorder(nil, actions, nil, nil, e.form), right)
	split.Offset = 0.5
	e.content = split
	s.OnData(func() {
		if e.dataset.Text == "" || e.cancel == nil {
			e.dataset.SetText(s.Data.Ref)
		}
		if e.dataset.Text == s.Data.Ref {
			// The form's caps (500 test images by default) become "all"
			// on a set that holds fewer (more than a split holds is an
			// error), and come back on a larger set if still "all".
			for _, c := range []struct {
				en  *entryWidget
				set *data.Dataset
			}{{e.trainCap, s.Data.Train}, {e.testCap, s.Data.Test}} {
				if n, err := strconv.Atoi(c.en.Text); err == nil && n >= c.set.Len() {
					c.en.SetText("")
					e.capsCleared[c.en] = n
				} else if n, ok := e.capsCleared[c.en]; ok && c.en.Text == "" && n < c.set.Len() {
					c.en.SetText(strconv.Itoa(n))
					delete(e.capsCleared, c.en)
				}
			}
		}
		e.s.offerFitting(e.arch)
	})
	var sizedFor *model.Model
	s.OnModel(func() {
		// Listeners hear of the model's predictions too: only another
		// model sizes the campaign again.
		if s.Model != sizedFor {
			sizedFor = s.Model
			e.model.SetText(s.modelName())
			e.changed()
		}
	})
	e.model.SetText(s.modelName())
	if s.cfg.Speeds != nil {
		// Measured where the campaign runs, not beside the window's own
		// threads, and kept where the CLI keeps them: the same speeds and
		// estimate as `run --estimate`.
		e.speeds = campaign.UserSpeedBook()
		e.speeds.Measure = func(ctx context.Context, c *campaign.Campaign) (campaign.Measured, error) {
			return campaign.MeasureIn(ctx, s.cfg.Speeds(), c)
		}
	}
	for _, en := range []*entryWidget{e.name, e.dataset, e.trainCap, e.testCap, e.epochs, e.post, e.seeds, e.retrain} {
		en.OnChanged = func(string) { e.changed() }
	}
	e.modelKind.OnChanged = func(string) { e.changed() }
	e.arch.OnChanged = func(string) { e.changed() }
	e.offerResume()
	e.changed()
	return e
}

// changed runs after every edit of the form: after a pause in the edits
// the campaign is checked and sized again (Size).
func (e *Evaluate) changed() {
	e.conv.update()
	e.edits++
	edit := e.edits
	if e.pause != nil && e.pause.Stop() {
		e.s.pending.Add(-1)
	}
	e.s.pending.Add(1) // a size to come (State.Wait)
	e.pause = time.AfterFunc(300*time.Millisecond, func() {
		e.s.cfg.Do(func() {
			defer e.s.pending.Add(-1)
			if edit != e.edits {
				return
			}
			if !e.s.isShown(TabEvaluate) {
				e.stale = true // sized when the user opens the screen
				return
			}
			e.Size()
		})
	})
}

// shown runs what waited for the screen to be shown.
func (e *Evaluate) shown() {
	if e.unseen {
		e.drawProgress()
	}
	if e.stale {
		e.stale = false
		e.Size()
	}
}

// Content is the screen.
func (e *Evaluate) Content() fyne.CanvasObject { return e.content }

// build makes the campaign's spec from the form; paths are absolute, so
// that the saved spec runs from anywhere (the CLI, a cluster).
func (e *Evaluate) build() (*spec.Spec, error) {
	var errs []error
	name := strings.TrimSpace(e.name.Text)
	if name == "" || strings.ContainsAny(name, `/\ `) {
		errs = append(errs, fmt.Errorf("name %q: one word, no slashes or spaces", name))
	}
	ref := strings.TrimSpace(e.dataset.Text)
	if ref == "" && e.s.Data != nil {
		ref = e.s.Data.Ref
	}
	if ref == "" {
		errs = append(errs, errors.New("no dataset: open one or name one"))
	}
	if abs, err := filepath.Abs(ref); err == nil && fileExists(ref) {
		ref = abs
	}
	whole := func(en *entryWidget, what string) int {
		t := strings.TrimSpace(en.Text)
		if t == "" {
			return 0
		}
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%s %q: want a whole number", what, t))
		}
		return n
	}
	s := &spec.Spec{Name: name, Output: filepath.Join(e.s.cfg.dir("runs"), name), Cache: e.s.cacheDir(), Reduce: "sum",
		Datasets: []spec.Dataset{{Ref: ref, TrainSamples: whole(e.trainCap, "training samples"), TestSamples: whole(e.testCap, "test samples")}},
		Retrain:  spec.Retrain{Epochs: whole(e.retrain, "retraining epochs")}, Workers: e.s.workers(), MemoryGB: e.s.memoryGB(), Engine: e.s.engine()}
	if e.specEngine != "" {
		s.Engine = e.specEngine // the opened spec's, allowed at launch or not (State.withConsent)
	}
	// On the open dataset a model that does not fit it is named here, not
	// found by sizing the campaign.
	open := e.s.Data != nil && (ref == e.s.Data.Ref || samePlace(ref) == samePlace(e.s.Data.Ref))
	switch e.modelKind.Selected {
	case "the open model":
		switch {
		case e.s.ModelPath == "":
			errs = append(errs, errors.New("no model file open: open one, or train one here"))
		case open && e.s.Model != nil && !e.s.Fits():
			errs = append(errs, fmt.Errorf("the open model (%s, inputs %v, %d classes) does not fit %s (%v, %d classes): open one that does, or train one here",
				e.s.Model.Arch, e.s.Model.InputShape, len(e.s.Model.Classes), displayName(e.s.Data.Ref), e.s.Data.Train.Shape, len(e.s.Data.Train.Classes)))
		}
		s.Model.File = e.s.ModelPath
	case "TorchScript file":
		if e.script == "" {
			errs = append(errs, errors.New("no TorchScript model chosen: open a .pt file from the Library or the File menu"))
		}
		s.Model.File = e.script
		if s.Engine == "" {
			s.Engine = "torch" // a TorchScript module runs in a PyTorch worker
		}
	default:
		s.Model.Arch, s.Model.Epochs = e.arch.Selected, whole(e.epochs, "epochs")
		if open && !containsString(e.s.Data.Fit, s.Model.Arch) {
			fit := e.s.Data.Fit
			choose := "no built-in architecture fits it: open a model file instead"
			if len(fit) > 0 {
				choose = "choose one of " + strings.Join(fit, ", ")
			}
			why := "it does not fit"
			if err := model.Fits(s.Model.Arch, e.s.Data.Train); err != nil {
				why = err.Error()
			}
			errs = append(errs, fmt.Errorf("%s does not fit %s: %s; %s", s.Model.Arch, displayName(e.s.Data.Ref), why, choose))
		}
	}
	for _, name := range e.methods.Checked() {
		settings, err := e.methods.Settings(name)
		errs = append(errs, err)
		for _, params := range settings {
			s.Methods = append(s.Methods, spec.Method{Name: name, Params: params})
		}
	}
	for _, name := range e.protocols.Checked() {
		settings, err := e.protocols.Settings(name)
		errs = append(errs, err)
		for _, params := range settings {
			s.Protocols = append(s.Protocols, spec.Protocol{Name: name, Params: params})
		}
	}
	s.Post = nil
	for _, p := range strings.Split(e.post.Text, "|") {
		p = strings.TrimSpace(p)
		if p == "none" {
			p = ""
		}
		s.Post = append(s.Post, p)
	}
	for _, f := range strings.Split(e.seeds.Text, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("seeds %q: want whole numbers, comma-separated", e.seeds.Text))
			break
		}
		s.Seeds = append(s.Seeds, v)
	}
	return s, errors.Join(errs...)
}

// save writes the campaign's spec to the workbench's campaigns folder
// (where the spec's checks run, every problem named) and loads it back.
func (e *Evaluate) save() (*campaign.Campaign, error) {
	s, err := e.build()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(e.s.cfg.dir("campaigns"), s.Name)
	if _, err := os.Stat(filepath.Join(dir, "campaign.yaml")); err == nil {
		// A campaign of this name exists: replace its spec unless it has
		// results, which belong to the spec that made them (the check
		// Size makes to warn before).
		if r, err := campaign.Open(s.Output); err == nil && len(r.Records) > 0 {
			if !r.Ran(s) {
				return nil, otherSpecError(s)
			}
		} else {
			os.Remove(filepath.Join(dir, "campaign.yaml"))
		}
	}
	c, path, err := campaign.Save(dir, s)
	if err != nil {
		return nil, err
	}
	e.specPath = path
	if line, err := c.RunLine(); err == nil {
		e.s.status.Info("saved " + path + " — run it headless with: " + line)
	} else {
		e.s.status.Info("saved " + path)
	}
	return c, nil
}

// OpenSpec fills the form from a spec file.
func (e *Evaluate) OpenSpec(path string) {
	c, err := campaign.Load(path)
	if err != nil {
		e.s.status.Error(err)
		return
	}
	s := c.Spec
	e.specEngine = s.Engine
	e.name.SetText(s.Name)
	if len(s.Datasets) > 0 {
		d := s.Datasets[0]
		e.dataset.SetText(d.Ref)
		e.trainCap.SetText(zeroEmpty(d.TrainSamples))
		e.testCap.SetText(zeroEmpty(d.TestSamples))
	}
	if s.Model.File != "" {
		e.modelKind.SetSelected("the open model")
		e.s.OpenModel(s.Model.File)
	} else {
		e.modelKind.SetSelected("train one")
		if !containsString(e.arch.Options, s.Model.Arch) {
			// The spec's, though it may not fit the open data (build says so).
			e.arch.Options = append(e.arch.Options, s.Model.Arch)
		}
		e.arch.SetSelected(s.Model.Arch)
		e.epochs.SetText(zeroEmpty(s.Model.Epochs))
	}
	e.methods.Clear()
	for _, m := range s.Methods {
		e.methods.Set(m.Name, m.Params)
	}
	e.protocols.Clear()
	for _, p := range s.Protocols {
		e.protocols.Set(strings.ToLower(p.Name), p.Params)
	}
	var post, seeds []string
	for _, p := range s.Post {
		if p == "" {
			p = "none"
		}
		post = append(post, p)
	}
	for _, v := range s.Seeds {
		seeds = append(seeds, strconv.FormatUint(v, 10))
	}
	e.post.SetText(strings.Join(post, " | "))
	e.seeds.SetText(strings.Join(seeds, ", "))
	e.retrain.SetText(strconv.Itoa(s.Retrain.Epochs))
	if len(s.Datasets) > 1 {
		e.s.status.Error(fmt.Errorf("opened campaign %s: it runs %d datasets and the form holds the first (%s); the file as it is runs with faithlab-cli run", path, len(s.Datasets), s.Datasets[0].Ref))
		return
	}
	msg := "opened campaign " + path
	if s.Engine != "" {
		msg += " (engine " + s.Engine + ", the spec's)"
	}
	e.s.status.Info(msg)
}

func zeroEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// Quick sets up a small campaign on the open model — the first train and
// test samples, Gradient, Integrated Gradients and Random under ROAR, ROAD,
// deletion and a small FUD (20 inputs, 10 steps, three ratios kept) — that
// runs in a minute or two on a laptop (screenshots, a first try).
func (e *Evaluate) Quick(name string, train, test, retrainEpochs int) {
	e.specEngine = ""
	e.name.SetText(name)
	e.trainCap.SetText(zeroEmpty(train))
	e.testCap.SetText(zeroEmpty(test))
	e.modelKind.SetSelected("the open model")
	e.methods.Clear()
	for _, m := range []string{"gradient", "ig", "random"} {
		e.methods.Set(m, nil)
	}
	e.protocols.Clear()
	rates := []float64{0.1, 0.5, 0.9}
	e.protocols.Set("roar", map[string]any{"rates": rates})
	e.protocols.Set("road", map[string]any{"rates": rates})
	e.protocols.Set("deletion", map[string]any{"samples": 100})
	e.protocols.Set("fud", map[string]any{"samples": 20, "steps": 10, "ratios": []float64{0.2, 0.5, 0.8}})
	e.post.SetText("")
	e.seeds.SetText("1")
	e.retrain.SetText(strconv.Itoa(retrainEpochs))
}

// UseTorchScript makes a researcher's TorchScript classifier (a .pt file
// with its .pt.json) the model of the campaign: campaigns evaluate it on
// the torch engine with every method but DeepLift and every protocol.
func (e *Evaluate) UseTorchScript(path string) {
	e.script = path
	e.modelKind.SetSelected("TorchScript file")
	msg := "the campaign evaluates " + filepath.Base(path) + " on the torch engine (Settings: engine); Explain and Inspect work with built-in models"
	if n := e.s.modelNotice(path); n != "" {
		msg = "warning: " + n + "\n\n" + msg
	}
	e.s.status.Info(msg)
}
