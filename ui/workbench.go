package ui

import (
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/model"
)

// Workbench is the main window's content: one tab per screen over the
// shared State, the status bar under them, and the main menu.
type Workbench struct {
	State    *State
	Library  *Library
	Data     *DataView
	Model    *ModelView
	Explain  *Explain
	Evaluate *Evaluate
	Results  *Results
	Inspect  *Inspect
	Settings *Settings
	Tabs     *container.AppTabs
	content  fyne.CanvasObject
	tips     *tipHost // the content, under the layer where tooltips show
	quitWin  func()   // asks, then closes the window (Install)
	showData string   // a dataset opened from a menu or a drop, whose screen opens when it is open
	mainMenu *fyne.MainMenu
	themes   map[string]*fyne.MenuItem // View's theme items, the current one checked
}

// Screen names, in tab order.
const (
	TabLibrary = iota
	TabData
	TabModel
	TabExplain
	TabEvaluate
	TabResults
	TabInspect
	TabSettings
)

// NewWorkbench builds every screen over one State.
func NewWorkbench(cfg Config) *Workbench {
	if cfg.Do == nil {
		cfg.Do = fyne.Do
	}
	for _, d := range []string{"models", "runs", "campaigns"} {
		os.MkdirAll(cfg.dir(d), 0o755)
	}
	s := newState(cfg)
	w := &Workbench{State: s}
	w.Library = newLibrary(s)
	w.Data = newDataView(s)
	w.Model = newModelView(s)
	w.Explain = newExplain(s)
	w.Evaluate = newEvaluate(s)
	w.Results = newResults(s)
	w.Inspect = newInspect(s)
	w.Settings = newSettings(s)
	var screens fyne.CanvasObject
	w.Tabs, screens = lightTabs(
		container.NewTabItem("Library", w.Library.Content()),
		container.NewTabItem("Data", w.Data.Content()),
		container.NewTabItem("Model", w.Model.Content()),
		container.NewTabItem("Explain", w.Explain.Content()),
		container.NewTabItem("Evaluate", w.Evaluate.Content()),
		container.NewTabItem("Results", w.Results.Content()),
		container.NewTabItem("Inspect", w.Inspect.Content()),
		container.NewTabItem("Settings", w.Settings.Content()),
	)
	s.showing = func(tab int) bool { return w.Tabs.SelectedIndex() == tab }
	w.Tabs.OnSelected = func(t *container.TabItem) {
		defer s.answer("screen " + t.Text)
		w.tips.clear() // the tips of the screen left
		s.status.ScreenChanged()
		if cfg.Prefs != nil {
			cfg.Prefs.SetInt(prefTab, w.Tabs.SelectedIndex())
		}
		switch w.Tabs.SelectedIndex() {
		case TabEvaluate:
			w.Evaluate.shown()
		case TabInspect:
			w.Inspect.shown()
		}
	}
	s.inspect = func(split string, i int) {
		w.Inspect.Show(split, i)
		w.Tabs.SelectIndex(TabInspect)
	}
	s.pick = w.openFile
	// A finished campaign's results open only for a user watching
	// Evaluate; elsewhere the status bar says so with a button that opens
	// them, and the user stays where they are — and so does Results, on
	// the run the user picked there: only a Results showing this run (or
	// none) reads it again, a stopped campaign's too.
	w.Evaluate.onRun = func(dir string, finished bool) {
		watching := w.Tabs.SelectedIndex() == TabEvaluate
		shown := w.Results.Shown()
		if w.Results.opening != "" {
			shown = w.Results.opening
		}
		switch {
		case finished && watching:
			w.Results.Open(dir, true)
		case shown == "" || samePlace(shown) == samePlace(dir):
			w.Results.Open(dir, false)
		}
		if finished && !watching {
			s.status.Offer("Open results", func() {
				w.Tabs.SelectIndex(TabResults)
				if samePlace(w.Results.Shown()) != samePlace(dir) && samePlace(w.Results.opening) != samePlace(dir) {
					w.Results.Open(dir, false)
				}
			})
		}
	}
	w.Results.onShow = func() { w.Tabs.SelectIndex(TabResults) }
	s.OnData(func() {
		if w.showData != "" && s.Data.Ref == w.showData {
			w.Tabs.SelectIndex(TabData)
		}
		w.showData = ""
	})
	w.Library.onOpen = func(tab int) { w.Tabs.SelectIndex(tab) }
	w.Settings.onTheme = func() {
		// The charts and figures are bitmaps in the theme's colours.
		w.Model.drawChart()
		if w.Data.drawHist != nil {
			w.Data.drawHist()
		}
		w.Results.showFigure(w.Results.figIndex(w.Results.figSel.Selected))
		w.Evaluate.list.Refresh() // its rows' icons (updateRow)
		if w.Results.drawCard != nil {
			w.Results.drawCard() // its verdicts' icons
		}
		w.markTheme()
	}
	w.Library.openPath = w.OpenPath
	w.tips = withTips(container.NewBorder(nil, container.NewVBox(widget.NewSeparator(), s.status.Content()), nil, nil, screens))
	w.content = w.tips
	return w
}

// WatchInput has f called on the UI goroutine each time the screens have
// made the change a user's input asked for — "screen NAME" once another
// screen is shown (a tab, a shortcut, a click that opens one), "inspect
// SPLIT I" once Inspect shows another sample (the arrow keys, a click on a
// sample) —, right after the change and before the window draws it; the
// work the change starts in the background is not waited for. What
// scripts/tour times its input by (FAITHLAB_TOUR_MAP).
func (w *Workbench) WatchInput(f func(what string)) { w.State.answered = f }

// Content is the window's content.
func (w *Workbench) Content() fyne.CanvasObject { return w.content }

// Status is the status bar.
func (w *Workbench) Status() *StatusBar { return w.State.status }

// Install puts the workbench into its window: content, main menu,
// keyboard shortcuts, dropped files, and the size and screen remembered
// from the last session.
func (w *Workbench) Install(win fyne.Window) {
	cfg := w.State.cfg
	win.SetContent(w.content)
	size := fyne.NewSize(1280, 800)
	if p := cfg.Prefs; p != nil {
		if wd, ht := p.Float(prefWidth), p.Float(prefHeight); wd >= 640 && ht >= 480 {
			size = fyne.NewSize(float32(wd), float32(ht))
		}
		w.Tabs.SelectIndex(min(max(p.Int(prefTab), 0), TabSettings))
	}
	win.SetCloseIntercept(func() { w.quit(win) })
	win.Resize(size)
	// The shortcuts are the main menu's (menu): the driver runs a menu
	// item's shortcut before the focused widget sees the key, so that they
	// work while a text field has focus too.
	w.quitWin = func() { w.quit(win) }
	win.SetMainMenu(w.menu())
	win.Canvas().SetOnTypedKey(func(e *fyne.KeyEvent) {
		if e.Name == fyne.KeyEscape && closeTop(win.Canvas()) {
			return
		}
		if w.Tabs.SelectedIndex() == TabInspect {
			w.Inspect.Key(e.Name)
		}
	})
	win.SetOnDropped(func(_ fyne.Position, uris []fyne.URI) {
		for _, u := range uris {
			w.OpenPath(u.Path())
		}
	})
}

// quit closes the window — remembering its size — after asking, when a
// campaign or a training runs, whether to stop it (a campaign's finished
// tasks are kept and it is offered for resumption at the next start).
func (w *Workbench) quit(win fyne.Window) {
	closeNow := func() {
		if p := w.State.cfg.Prefs; p != nil {
			sz := win.Canvas().Size()
			p.SetFloat(prefWidth, float64(sz.Width))
			p.SetFloat(prefHeight, float64(sz.Height))
		}
		w.Evaluate.Cancel()
		w.Model.Cancel()
		win.Close()
	}
	var running []string
	if w.Evaluate.Running() {
		running = append(running, "a campaign (its finished tasks are kept, and the next start offers to resume it)")
	}
	if w.Model.Training() {
		running = append(running, "a training (nothing of it is saved)")
	}
	if len(running) == 0 {
		closeNow()
		return
	}
	dialog.ShowConfirm("Quit Faithlab?", "Quitting stops "+strings.Join(running, " and ")+".", func(ok bool) {
		if ok {
			closeNow()
		}
	}, win)
}

// OpenPath opens what a file or folder holds: a model (.flm), a campaign
// (.yaml), a run folder (with a manifest.json), or a dataset.
func (w *Workbench) OpenPath(p string) {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		w.State.status.Error(err)
	case model.IsTorchScript(p):
		w.Evaluate.UseTorchScript(p)
		w.Tabs.SelectIndex(TabEvaluate)
	case strings.EqualFold(filepath.Ext(p), ".flm") || model.IsONNX(p):
		w.State.OpenModel(p)
		w.Tabs.SelectIndex(TabModel)
	case strings.EqualFold(filepath.Ext(p), ".yaml") || strings.EqualFold(filepath.Ext(p), ".yml"):
		w.Evaluate.OpenSpec(p)
		w.Tabs.SelectIndex(TabEvaluate)
	case st.IsDir() && fileExists(filepath.Join(p, "manifest.json")):
		w.Results.Open(p, false)
		w.Tabs.SelectIndex(TabResults)
	default:
		w.openDataThenShow(p)
	}
}

// closeTop closes the topmost dialog or pop-up of a canvas (Escape) and
// says whether there was one.
func closeTop(c fyne.Canvas) bool {
	top := c.Overlays().Top()
	if top == nil {
		return false
	}
	top.Hide()
	c.Overlays().Remove(top)
	return true
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// menu is the main menu, which holds the keyboard shortcuts.
func (w *Workbench) menu() *fyne.MainMenu {
	item := func(label string, fn func()) *fyne.MenuItem { return fyne.NewMenuItem(label, fn) }
	ctrl := func(it *fyne.MenuItem, key fyne.KeyName) *fyne.MenuItem {
		it.Shortcut = &desktop.CustomShortcut{KeyName: key, Modifier: fyne.KeyModifierShortcutDefault}
		return it
	}
	file := fyne.NewMenu("File",
		ctrl(item("Open dataset…", w.openDataset), fyne.KeyO),
		ctrl(item("Open model…", w.openModel), fyne.KeyM),
		item("Open campaign…", w.openCampaign),
		item("Open run…", w.openRun),
		fyne.NewMenuItemSeparator(),
		ctrl(item("Launch or resume the campaign", w.Evaluate.Launch), fyne.KeyR),
		ctrl(item("Export results CSV…", w.Results.AskExportCSV), fyne.KeyE),
		item("Export figures…", w.Results.exportFigures),
	)
	if w.quitWin != nil {
		// Fyne adds its own Quit to the first menu, without a shortcut.
		file.Items = append(file.Items, fyne.NewMenuItemSeparator(), ctrl(item("Quit", w.quitWin), fyne.KeyQ))
	}
	var screens []*fyne.MenuItem
	for i, t := range w.Tabs.Items {
		tab := i
		screens = append(screens, ctrl(item(t.Text, func() { w.Tabs.SelectIndex(tab) }), fyne.KeyName(string(rune('1'+tab)))))
	}
	w.themes = map[string]*fyne.MenuItem{}
	themes := []*fyne.MenuItem{fyne.NewMenuItemSeparator()}
	for _, v := range []string{"light", "dark", "system"} {
		it := item(strings.ToUpper(v[:1])+v[1:]+" theme", func() { w.Settings.SetTheme(v) })
		w.themes[v] = it
		themes = append(themes, it)
	}
	view := fyne.NewMenu("View", append(screens, themes...)...)
	help := fyne.NewMenu("Help",
		item("Keyboard shortcuts", w.showShortcuts),
		item("About Faithlab", func() { w.Tabs.SelectIndex(TabSettings) }))
	w.mainMenu = fyne.NewMainMenu(file, view, help)
	w.markTheme()
	return w.mainMenu
}

// markTheme checks the View menu's item of the theme in use.
func (w *Workbench) markTheme() {
	for v, it := range w.themes {
		it.Checked = v == w.Settings.theme.Selected
	}
	if w.mainMenu != nil {
		w.mainMenu.Refresh()
	}
}

func (w *Workbench) showShortcuts() {
	if w.State.cfg.Window == nil {
		return
	}
	form := widget.NewForm()
	for _, kv := range [][2]string{
		{"Ctrl+1 … Ctrl+8", "the screens, in tab order"},
		{"Ctrl+O", "open a dataset"},
		{"Ctrl+M", "open a model"},
		{"Ctrl+R", "launch (or resume) the campaign on Evaluate"},
		{"Ctrl+E", "export the results CSV"},
		{"Ctrl+Q", "quit"},
		{"← →", "Inspect: previous, next sample"},
		{"↑ ↓", "Inspect: higher, lower removal rate"},
		{"drop a file", ".flm model, .yaml campaign, run folder, or dataset"},
	} {
		form.Append(kv[0], widget.NewLabel(kv[1]))
	}
	dialog.ShowCustom("Keyboard shortcuts", "Close", form, w.State.cfg.Window)
}

// openFile asks for a file, then runs open with its path.
func (w *Workbench) openFile(open func(string), exts ...string) {
	kind := folderKind(exts)
	title := "Open a file"
	if len(exts) > 0 {
		title = "Open a file (" + strings.Join(exts, ", ") + ")"
	}
	w.State.askPath(title, openFile, kind, w.State.startFolder(kind, ""), "", exts, open)
}

// openFolder asks for a folder, then runs open with its path.
func (w *Workbench) openFolder(open func(string)) {
	w.State.askPath("Open a run folder", openDir, folderRun, w.State.startFolder(folderRun, ""), "", nil, open)
}

func (w *Workbench) openDataset() {
	w.openFile(w.openDataThenShow, ".csv", ".npz", ".gz", ".npy")
}

// openDataThenShow opens a dataset and shows the Data screen once it is
// open (a file that is no dataset leaves the screen as it is).
func (w *Workbench) openDataThenShow(p string) {
	w.State.OpenData(p)
	w.showData = p
}

func (w *Workbench) openModel() {
	w.openFile(w.OpenPath, ".flm", ".pt", ".onnx")
}

func (w *Workbench) openCampaign() {
	w.openFile(func(p string) { w.Evaluate.OpenSpec(p); w.Tabs.SelectIndex(TabEvaluate) }, ".yaml", ".yml")
}

func (w *Workbench) openRun() {
	w.openFolder(func(p string) { w.Results.Open(p, false); w.Tabs.SelectIndex(TabResults) })
}
