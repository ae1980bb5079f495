package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"

	"faithlab/core/attr"
	"faithlab/core/campaign"
	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
)

// Config is what the workbench needs from its host (cmd/faithlab, a test).
type Config struct {
	Kernel gemm.Kernel // the engine's GEMM kernel
	// Root is the workbench's own folder: models/ (trained ones), runs/
	// (campaigns launched here), cache/ (their shared artefact cache) and
	// campaigns/ (specs saved here). Tests and screenshots use a temporary
	// one, so that nothing reaches the user's config folder.
	Root   string
	Prefs  fyne.Preferences // recent items, window size, last screen; nil: nothing kept
	Do     func(func())     // runs UI updates from other goroutines; default fyne.Do
	Window fyne.Window      // the parent of dialogs; nil: none shown (tests)
	// Worker makes the command that runs the campaign of a spec file in a
	// child process (campaign.Serve behind it): `faithlab
	// -campaign-worker SPEC` in the app.
	// trust is what the user allowed the campaign (campaign.Check),
	// estimate the seconds the estimate shown before the launch said (0:
	// none), which the run keeps beside its wall time (Options.Estimate).
	Worker func(spec string, trust campaign.Trust, estimate float64) *exec.Cmd
	// Speeds makes the command of a child process that measures a
	// campaign's speeds for its estimate (campaign.ServeSpeeds):
	// `faithlab -campaign-speeds` in the app. Measured beside the
	// window's own threads, the speeds came out at half or less of what
	// the campaign's worker runs at. Nil: measured in this process.
	Speeds func() *exec.Cmd
}

func (c Config) dir(name string) string { return filepath.Join(c.Root, name) }

// Preference keys.
const (
	prefRecentData   = "recent.datasets"
	prefRecentModels = "recent.models"
	prefRecentRuns   = "recent.runs"    // specs of campaigns launched here
	prefOpenedRuns   = "recent.results" // run folders opened in Results
	prefTab          = "window.tab"
	prefWidth        = "window.width"
	prefHeight       = "window.height"
	prefTheme        = "theme"
	prefWorkers      = "settings.workers"
	prefMemory       = "settings.memory_gb"
	prefCache        = "settings.cache"
	prefEngine       = "settings.engine"
	prefReproduce    = "reproduce.paper" // the paper chosen last in "Reproduce a paper…"
)

// State is what the screens share: the open dataset, the model under
// explanation and the run shown, with the screens' subscriptions to their
// changes. It is read and changed only on the UI goroutine; background work
// reports back through Config.Do.
type State struct {
	cfg Config

	Data      *Loaded
	Model     *model.Model
	ModelPath string

	onData, onModel []func()
	status          *StatusBar
	inspect         func(split string, i int) // opens a sample in Inspect
	pick            func(open func(string), exts ...string)
	dataGen         int              // counts dataset loads, to drop stale ones
	preds           map[string][]int // predictions of the model on the open dataset, by split
	pending         atomic.Int64     // background work under way (tests, screenshots)
	noticed         map[string]bool  // what modelNotice has said
	showing         func(tab int) bool
	marks           map[string]landmark // the widgets a driver aims at, by name (Landmarks)
	answered        func(what string)   // told of each input the screens answered (Workbench.WatchInput)
}

// answer tells WatchInput's watcher, if any, that the screens have made the
// change an input asked for (UI goroutine).
func (s *State) answer(what string) {
	if s.answered != nil {
		s.answered(what)
	}
}

// isShown says whether the screen (a Tab… index) is the one shown: a
// screen's own work (sizing a campaign, removing features) waits for the
// user to open it. Without a workbench every screen counts as shown.
func (s *State) isShown(tab int) bool { return s.showing == nil || s.showing(tab) }

func newState(cfg Config) *State {
	s := &State{cfg: cfg, status: newStatusBar(cfg.Window)}
	s.status.later = cfg.Do
	s.mark("status.offer", s.status.action, "")
	s.mark("status.message", s.status.message, "")
	return s
}

// Loaded is an open dataset: its splits and where it came from.
type Loaded struct {
	Ref         string // id or path
	Train, Test *data.Dataset
	Fit         []string // the built-in architectures that fit it (model.Fits), listed when it was opened
}

// Split returns the named split ("train" or "test").
func (l *Loaded) Split(name string) *data.Dataset {
	if name == "train" {
		return l.Train
	}
	return l.Test
}

// Tabular says whether samples are feature vectors rather than images.
func (l *Loaded) Tabular() bool { return data.Kind(l.Train.Shape) == "tabular" }

// OnData registers fn to run (on the UI goroutine) when another dataset is open.
func (s *State) OnData(fn func()) { s.onData = append(s.onData, fn) }

// OnModel registers fn to run when another model is open.
func (s *State) OnModel(fn func()) { s.onModel = append(s.onModel, fn) }

// methodsOffered are the methods that explain the open data with the open
// model (campaign.MethodsFor): the transformer methods only for a model
// with attention.
func (s *State) methodsOffered() []attr.Info {
	var net engine.Network
	if s.Model != nil && s.Model.Net != nil {
		net = s.Model.Net
	}
	return campaign.MethodsFor(s.Data.Train, net)
}

// Go runs work in the background with the status bar saying what runs;
// done gets work's error on the UI goroutine. Errors also go to the status
// bar, so that nothing fails silently.
func (s *State) Go(what string, work func(ctx context.Context) error, done func(error)) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	s.status.busy(what)
	s.pending.Add(1)
	go func() {
		err := work(ctx)
		s.cfg.Do(func() {
			defer s.pending.Add(-1)
			s.status.idle(what)
			switch {
			case err == nil:
				s.status.Resolved(what) // the same work failed before
			case !errors.Is(err, context.Canceled):
				s.status.ErrorFrom(what, fmt.Errorf("%s: %w", what, err))
			}
			if done != nil {
				done(err)
			}
		})
	}()
	return cancel
}

// waitQuiet waits, at most limit, until no other background work runs
// than the caller's own: a speed measured beside the app's other work
// (predicting a split, training, maps) measured the contention, and made
// the estimate of a campaign three times what the run took. It says
// whether the app was quiet in the end.
func (s *State) waitQuiet(ctx context.Context, limit time.Duration) bool {
	for end := time.Now().Add(limit); s.pending.Load() > 1 && time.Now().Before(end) && ctx.Err() == nil; {
		time.Sleep(50 * time.Millisecond)
	}
	return s.pending.Load() <= 1
}

// Wait blocks until the background work under way — and what its
// completion starts — has ended (tests, screenshots). Work started from
// other goroutines meanwhile is waited for too.
func (s *State) Wait() {
	for s.pending.Load() > 0 {
		time.Sleep(10 * time.Millisecond)
	}
}

// OpenData loads a dataset by id or path in the background, then makes it
// the open one. A later call supersedes an earlier one still loading.
func (s *State) OpenData(ref string) {
	s.dataGen++
	gen := s.dataGen
	var l *Loaded
	s.Go("opening "+displayName(ref), func(ctx context.Context) error {
		tr, te, err := s.openData(ref)
		if err != nil {
			return err
		}
		l = &Loaded{Ref: ref, Train: tr, Test: te}
		for _, a := range model.Architectures() {
			if model.Fits(a, tr) == nil {
				l.Fit = append(l.Fit, a)
			}
		}
		return nil
	}, func(err error) {
		if err != nil || gen != s.dataGen {
			return
		}
		s.Data = l
		s.preds = nil
		s.remember(prefRecentData, ref)
		masks := ""
		if l.Train.Masks != nil {
			masks = ", a ground-truth mask per sample"
		}
		s.status.Info(fmt.Sprintf("%s: %d training and %d test samples of shape %v, %d classes%s", ref, l.Train.Len(), l.Test.Len(), l.Train.Shape, len(l.Train.Classes), masks))
		for _, fn := range s.onData {
			fn()
		}
		s.predict()
	})
}

// openData opens ref as the open model saw its data when the model was
// trained on it, else as data.Open does with an image folder read as the
// open model takes its inputs (its size and channels).
func (s *State) openData(ref string) (*data.Dataset, *data.Dataset, error) {
	m := s.Model
	if m != nil && m.Source != nil && m.Source.Ref == ref {
		return m.Data(ref, data.Options{})
	}
	return data.Open(ref, s.dataOptions(ref))
}

// dataOptions are the options openData reads ref with: an image folder as
// the open model takes its inputs (its side, channels, resize and
// classes: model.Header.DataOptions), Open's defaults without a model.
func (s *State) dataOptions(ref string) data.Options {
	var opt data.Options
	if m := s.Model; m != nil && m.Source != nil && m.Source.Ref == ref {
		opt, _ = m.DataOptions(opt)
	} else if m != nil {
		opt, _ = m.ImageOptions(opt) // asks for nothing, so cannot disagree
	}
	return opt
}

// SetModel makes m (saved at path; "" when not saved) the model under
// explanation.
func (s *State) SetModel(m *model.Model, path string) {
	s.Model, s.ModelPath = m, path
	s.preds = nil
	if path != "" {
		s.remember(prefRecentModels, path)
	}
	for _, fn := range s.onModel {
		fn()
	}
	s.predict()
	if s.Data != nil && !readFor(s.Data, m) {
		// An image folder read before this model (at the defaults, or
		// for another model's size) is read again as this model reads it.
		s.OpenData(s.Data.Ref)
	}
}

// offerFitting offers in sel the architectures that fit the open
// dataset, keeping the one chosen where it fits.
func (s *State) offerFitting(sel *selectWidget) {
	sel.Options = s.Data.Fit
	if !containsString(sel.Options, sel.Selected) && len(sel.Options) > 0 {
		sel.SetSelected(sel.Options[0])
	}
	sel.Refresh()
}

// modelName names the model under explanation for the screens that use
// it: "goar-cnn in fashion-mnist.flm, 89.3 % test accuracy".
func (s *State) modelName() string {
	return describeWhich(s.Model, s.ModelPath)
}

// describeWhich names a model and its file (path "": not saved).
func describeWhich(m *model.Model, path string) string {
	if m == nil {
		return "no model open"
	}
	out := m.Arch
	if path != "" {
		out += " in " + filepath.Base(path)
	} else {
		out += " (not saved)"
	}
	if m.Test != nil {
		out += fmt.Sprintf(", %.1f\u00a0%% test accuracy", 100*m.Test.Accuracy)
	}
	return out
}

// OpenModel loads a model file in the background and makes it current.
func (s *State) OpenModel(path string) { s.openModel(path, nil) }

// openModel is OpenModel; say, when given, speaks on the status bar once
// the model is open unless a notice of the file does.
func (s *State) openModel(path string, say func()) {
	var m *model.Model
	s.Go("opening "+filepath.Base(path), func(context.Context) error {
		var err error
		m, err = model.Load(path, s.cfg.Kernel)
		return err
	}, func(err error) {
		if err == nil {
			s.SetModel(m, path)
			if n := s.modelNotice(path); n != "" {
				s.status.Warn(n)
			} else if n := model.ONNXNotice(m); n != "" {
				s.status.Info("note: " + n)
			} else if say != nil {
				say()
			}
		}
	})
}

// Fits says whether the open model takes the open dataset's samples.
func (s *State) Fits() bool {
	return s.Model != nil && s.Data != nil && s.Model.Takes(s.Data.Train.Shape, len(s.Data.Train.Classes))
}

// misfit says, for a screen in place of its results, why there are none:
// no dataset, no model, or a model that does not take the dataset's
// samples ("" when the model fits).
func (s *State) misfit() string {
	switch {
	case s.Fits():
		return ""
	case s.Data == nil:
		return "Open a dataset and a model, then pick a sample (or click one on the Data screen)."
	case s.Model == nil:
		return fmt.Sprintf("No model open: open or train a model for %s.", displayName(s.Data.Ref))
	}
	m, d := s.Model, s.Data.Train
	name := displayName(s.Data.Ref)
	if !slices.Equal(m.InputShape, d.Shape) {
		return fmt.Sprintf("The open model (%s, %s) does not take %s's %s: open or train a model for this dataset.",
			m.Arch, describeInput(m.InputShape, "inputs"), name, describeInput(d.Shape, "features"))
	}
	return fmt.Sprintf("The open model (%s, %d classes) does not take %s's %d classes: open or train a model for this dataset.",
		m.Arch, len(m.Classes), name, len(d.Classes))
}

// describeInput names a sample shape: "6 inputs" (a row of a table, noun
// as given) or "1×28×28 images".
func describeInput(shape []int, noun string) string {
	if len(shape) == 3 && shape[1] == 1 && shape[2] == 1 {
		return fmt.Sprintf("%d %s", shape[0], noun)
	}
	var dims []string
	for _, n := range shape {
		dims = append(dims, strconv.Itoa(n))
	}
	return strings.Join(dims, "×") + " images"
}

// Predictions returns the open model's predicted class for every sample of
// the split, or nil while they are being computed (or without a model that
// fits the data); onModel listeners run again when they are ready.
func (s *State) Predictions(split string) []int { return s.preds[split] }

// predict computes the model's predictions on both splits in the background.
func (s *State) predict() {
	if !s.Fits() {
		return
	}
	m, l := s.Model, s.Data
	net := m.Net.Clone()
	// The test split first (a second or two), then the training split.
	var next func(i int)
	splits := []string{"test", "train"}
	next = func(i int) {
		var p []int
		ds := l.Split(splits[i])
		s.Go(fmt.Sprintf("predicting the %s split of %s", splits[i], displayName(l.Ref)), func(ctx context.Context) error {
			var err error
			p, err = engine.Predicted(ctx, net, ds.X, ds.Len(), 512)
			return err
		}, func(err error) {
			if err != nil || s.Model != m || s.Data != l {
				return
			}
			if s.preds == nil {
				s.preds = map[string][]int{}
			}
			s.preds[splits[i]] = p
			for _, fn := range s.onModel {
				fn()
			}
			if i+1 < len(splits) {
				next(i + 1)
			}
		})
	}
	next(0)
}

// PickFile asks the user for a file with one of the extensions (none:
// any) and opens it with open.
func (s *State) PickFile(open func(string), exts ...string) {
	if s.pick != nil {
		s.pick(open, exts...)
	}
}

// Inspect opens sample i of a split of the open dataset in Inspect.
func (s *State) Inspect(split string, i int) {
	if s.inspect != nil {
		s.inspect(split, i)
	}
}

// remember puts item first in a list of recent items (at most ten).
func (s *State) remember(key, item string) {
	if s.cfg.Prefs == nil {
		return
	}
	if !slices.Contains(data.IDs(), item) {
		item = samePlace(item)
	}
	list := slices.DeleteFunc(s.cfg.Prefs.StringList(key), func(v string) bool { return samePlace(v) == item })
	s.cfg.Prefs.SetStringList(key, append([]string{item}, list[:min(len(list), 9)]...))
}

// Recent lists the recent items under key that still exist (datasets by
// id are always there).
func (s *State) Recent(key string) []string {
	if s.cfg.Prefs == nil {
		return nil
	}
	var out []string
	for _, v := range s.cfg.Prefs.StringList(key) {
		if slices.Contains(data.IDs(), v) {
			out = append(out, v)
		} else if _, err := os.Stat(v); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// oneLine cuts text to its first line, for labels that must not grow.
func oneLine(text string) string {
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		return text[:i] + " …"
	}
	return text
}

// cacheDir is the artefact cache the campaigns launched here share
// (Settings).
func (s *State) cacheDir() string {
	if p := s.cfg.Prefs; p != nil {
		if v := strings.TrimSpace(p.String(prefCache)); v != "" {
			return v
		}
	}
	return s.cfg.dir("cache")
}

// workers is the tasks a campaign launched here runs at once (Settings;
// 0: the runner's default).
func (s *State) workers() int {
	if p := s.cfg.Prefs; p != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(p.String(prefWorkers))); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// memoryGB is the campaigns' memory cap (Settings; 0: none).
func (s *State) memoryGB() float64 {
	if p := s.cfg.Prefs; p != nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(p.String(prefMemory)), 64); err == nil && v > 0 {
			return v
		}
	}
	return 0
}

// Busy says whether background work is under way (UI goroutine).
func (s *State) Busy() bool { return len(s.status.running) > 0 }

// fixedWidth lays out one object at a fixed width and its own height: a
// side panel that scrolls vertically without being cut off.
type fixedWidth float32

func (w fixedWidth) MinSize(objs []fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(float32(w), objs[0].MinSize().Height)
}

func (w fixedWidth) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(fyne.NewSize(size.Width, objs[0].MinSize().Height))
}

// narrow lays out one object in whatever width it is given, asking for
// none of its own: a list of long entries that must not widen the window.
type narrow struct{}

func (narrow) MinSize(objs []fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(0, objs[0].MinSize().Height)
}

func (narrow) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(size)
}

// linesHigh lays out one object (a wrapping label) in the height of that
// many lines of text, whatever its own: a line whose text changes length
// as it is updated never moves what lies below it.
type linesHigh int

func (n linesHigh) MinSize(objs []fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(objs[0].MinSize().Width, linesHeight(int(n), theme.TextSize()))
}

// linesHeight is the height n lines of text of the size take in a label.
func linesHeight(n int, size float32) float32 {
	line := fyne.MeasureText("M", size, fyne.TextStyle{}).Height + theme.LineSpacing()
	return float32(n)*line + 2*theme.InnerPadding()
}

func (n linesHigh) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(size)
}

// captionLines is linesHigh at the caption's size.
type captionLines int

func (n captionLines) MinSize(objs []fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(objs[0].MinSize().Width, linesHeight(int(n), theme.CaptionTextSize()))
}

func (n captionLines) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	linesHigh(n).Layout(objs, size)
}

// cappedHeight lays out one object, a scroll over content, at content's
// height up to max.
type cappedHeight struct {
	content fyne.CanvasObject
	max     float32
}

func (c cappedHeight) MinSize(objs []fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(objs[0].MinSize().Width, min(c.content.MinSize().Height, c.max))
}

func (c cappedHeight) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(size)
}

// cappedScroll shows content at its own height up to max and scrolls past
// it: a short summary takes its lines, a long one scrolls instead of pushing
// what is below it off the window.
func cappedScroll(content fyne.CanvasObject, max float32) fyne.CanvasObject {
	return container.New(cappedHeight{content, max}, container.NewScroll(content))
}

// sidePanel is a panel of the given width that scrolls vertically, by
// the mouse wheel wherever the pointer is (over a form's entries too:
// wheelScroll).
func sidePanel(width float32, content fyne.CanvasObject) *container.Scroll {
	sc := wheelScroll(container.New(fixedWidth(width), content))
	sc.Direction = container.ScrollVerticalOnly
	return sc
}

// engine is the engine setting of the campaigns launched here (Settings;
// "": native).
func (s *State) engine() string {
	if p := s.cfg.Prefs; p != nil {
		if v := strings.TrimSpace(p.String(prefEngine)); v != "native" {
			return v
		}
	}
	return ""
}
