package ui

import (
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"
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
	w.Tabs = container.NewAppTabs(
		container.NewTabItem("Library", w.Library.Content()),
		container.NewTabItem("Data", w.Data.Content()),
		container.NewTabItem("Model", w.Model.Content()),
		container.NewTabItem("Explain", w.Explain.Content()),
		container.NewTabItem("Evaluate", w.Evaluate.Content()),
		container.NewTabItem("Results", w.Results.Content()),
		container.NewTabItem("Inspect", w.Inspect.Content()),
		container.NewTabItem("Settings", w.Settings.Content()),
	)
	w.Tabs.OnSelected = func(*container.TabItem) {
		if cfg.Prefs != nil {
			cfg.Prefs.SetInt(prefTab, w.Tabs.SelectedIndex())
		}
	}
	s.inspect = func(split string, i int) {
		w.Inspect.Show(split, i)
		w.Tabs.SelectIndex(TabInspect)
	}
	s.pick = w.openFile
	w.Evaluate.onRun = func(dir string) {
		w.Results.Open(dir)
	}
	w.Results.onShow = func() { w.Tabs.SelectIndex(TabResults) }
	w.Library.onOpen = func(tab int) { w.Tabs.SelectIndex(tab) }
	w.content = container.NewBorder(nil, container.NewVBox(widget.NewSeparator(), s.status.Content()), nil, nil, w.Tabs)
	return w
}

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
	win.SetMainMenu(w.menu())
	size := fyne.NewSize(1280, 800)
	if p := cfg.Prefs; p != nil {
		if wd, ht := p.Float(prefWidth), p.Float(prefHeight); wd >= 640 && ht >= 480 {
			size = fyne.NewSize(float32(wd), float32(ht))
		}
		w.Tabs.SelectIndex(min(max(p.Int(prefTab), 0), TabSettings))
		win.SetCloseIntercept(func() {
			sz := win.Canvas().Size()
			p.SetFloat(prefWidth, float64(sz.Width))
			p.SetFloat(prefHeight, float64(sz.Height))
			win.Close()
		})
	}
	win.Resize(size)
	for i := range TabSettings + 1 {
		tab := i
		win.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyName(string(rune('1' + tab))), Modifier: fyne.KeyModifierShortcutDefault},
			func(fyne.Shortcut) { w.Tabs.SelectIndex(tab) })
	}
	for key, fn := range map[fyne.KeyName]func(){
		fyne.KeyO: w.openDataset, fyne.KeyM: w.openModel, fyne.KeyE: w.Results.exportCSV, fyne.KeyR: w.Evaluate.Launch,
	} {
		fn := fn
		win.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: key, Modifier: fyne.KeyModifierShortcutDefault}, func(fyne.Shortcut) { fn() })
	}
	win.Canvas().SetOnTypedKey(func(e *fyne.KeyEvent) {
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

// OpenPath opens what a file or folder holds: a model (.flm), a campaign
// (.yaml), a run folder (with a manifest.json), or a dataset.
func (w *Workbench) OpenPath(p string) {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		w.State.status.Error(err)
	case strings.EqualFold(filepath.Ext(p), ".flm"):
		w.State.OpenModel(p)
		w.Tabs.SelectIndex(TabModel)
	case strings.EqualFold(filepath.Ext(p), ".yaml") || strings.EqualFold(filepath.Ext(p), ".yml"):
		w.Evaluate.OpenSpec(p)
		w.Tabs.SelectIndex(TabEvaluate)
	case st.IsDir() && fileExists(filepath.Join(p, "manifest.json")):
		w.Results.Open(p)
		w.Tabs.SelectIndex(TabResults)
	default:
		w.State.OpenData(p)
		w.Tabs.SelectIndex(TabData)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func (w *Workbench) menu() *fyne.MainMenu {
	item := func(label string, fn func()) *fyne.MenuItem { return fyne.NewMenuItem(label, fn) }
	file := fyne.NewMenu("File",
		item("Open dataset…", w.openDataset),
		item("Open model…", w.openModel),
		item("Open campaign…", w.openCampaign),
		item("Open run…", w.openRun),
		fyne.NewMenuItemSeparator(),
		item("Export results CSV…", w.Results.exportCSV),
		item("Export figures…", w.Results.exportFigures),
	)
	var screens []*fyne.MenuItem
	for i, t := range w.Tabs.Items {
		tab := i
		screens = append(screens, item(t.Text, func() { w.Tabs.SelectIndex(tab) }))
	}
	view := fyne.NewMenu("View", append(screens, fyne.NewMenuItemSeparator(),
		item("Light theme", func() { w.Settings.SetTheme("light") }),
		item("Dark theme", func() { w.Settings.SetTheme("dark") }),
		item("System theme", func() { w.Settings.SetTheme("system") }))...)
	help := fyne.NewMenu("Help",
		item("Keyboard shortcuts", w.showShortcuts),
		item("About Faithlab", func() { w.Tabs.SelectIndex(TabSettings) }))
	return fyne.NewMainMenu(file, view, help)
}

func (w *Workbench) showShortcuts() {
	if w.State.cfg.Window == nil {
		return
	}
	text := "Ctrl+1 … Ctrl+8\tscreens, in tab order\nCtrl+O\topen a dataset\nCtrl+M\topen a model\nCtrl+R\tlaunch the campaign on Evaluate\n" +
		"Ctrl+E\texport the results CSV\n← →\tInspect: previous / next sample\n↑ ↓\tInspect: next / previous rate\n" +
		"Drop a file\t.flm model, .yaml campaign, run folder, or dataset"
	dialog.ShowInformation("Keyboard shortcuts", text, w.State.cfg.Window)
}

// openFile asks for a file, then runs open with its path.
func (w *Workbench) openFile(open func(string), exts ...string) {
	win := w.State.cfg.Window
	if win == nil {
		return
	}
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			w.State.status.Error(err)
			return
		}
		if r == nil {
			return
		}
		r.Close()
		open(r.URI().Path())
	}, win)
	if len(exts) > 0 {
		d.SetFilter(storage.NewExtensionFileFilter(exts))
	}
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

// openFolder asks for a folder, then runs open with its path.
func (w *Workbench) openFolder(open func(string)) {
	win := w.State.cfg.Window
	if win == nil {
		return
	}
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			w.State.status.Error(err)
			return
		}
		if u != nil {
			open(u.Path())
		}
	}, win)
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

func (w *Workbench) openDataset() {
	w.openFile(func(p string) { w.State.OpenData(p); w.Tabs.SelectIndex(TabData) }, ".csv", ".npz", ".gz", ".npy")
}

func (w *Workbench) openModel() {
	w.openFile(func(p string) { w.State.OpenModel(p); w.Tabs.SelectIndex(TabModel) }, ".flm")
}

func (w *Workbench) openCampaign() {
	w.openFile(func(p string) { w.Evaluate.OpenSpec(p); w.Tabs.SelectIndex(TabEvaluate) }, ".yaml", ".yml")
}

func (w *Workbench) openRun() {
	w.openFolder(func(p string) { w.Results.Open(p); w.Tabs.SelectIndex(TabResults) })
}
