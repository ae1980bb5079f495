package ui

import (
	"context"
	"fmt"
	"image/color"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/engine/native"
	"faithlab/core/model"
)

// Settings holds what the workbench's campaigns run with — the shared
// cache folder, tasks at once, a memory cap — and shows the engine, the
// GEMM kernel and the versions; the theme is chosen here too.
type Settings struct {
	s       *State
	cache   *entryWidget
	workers *entryWidget
	memory  *entryWidget
	engine  *entryWidget
	engInfo *widget.Label
	theme   *widget.RadioGroup
	onTheme func() // after the theme changed: the charts are drawn again in its colours
	content fyne.CanvasObject
}

func newSettings(s *State) *Settings {
	st := &Settings{s: s, cache: newEntry(), workers: newEntry(), memory: newEntry(), engine: newEntry(),
		engInfo: widget.NewLabel("")}
	p := s.cfg.Prefs
	get := func(key, def string) string {
		if p == nil {
			return def
		}
		return p.StringWithFallback(key, def)
	}
	// The cache field holds only a folder the user chose: empty, the
	// campaigns use the workbench folder's (which -root picks).
	st.cache.SetText(get(prefCache, ""))
	st.cache.SetPlaceHolder(s.cfg.dir("cache"))
	st.workers.SetText(get(prefWorkers, "0"))
	st.memory.SetText(get(prefMemory, "0"))
	st.engine.SetText(get(prefEngine, "native"))
	st.engine.SetPlaceHolder("native, torch, or torch@ssh://user@gpu-host")
	st.engInfo.Wrapping = fyne.TextWrapWord
	check := widget.NewButton("Check", st.checkEngine)
	save := func(key string) func(string) {
		return func(v string) {
			if p != nil {
				p.SetString(key, strings.TrimSpace(v))
			}
		}
	}
	st.cache.OnChanged, st.workers.OnChanged, st.memory.OnChanged, st.engine.OnChanged = save(prefCache), save(prefWorkers), save(prefMemory), save(prefEngine)
	st.theme = widget.NewRadioGroup([]string{"light", "dark", "system"}, func(v string) { st.SetTheme(v) })
	st.theme.Horizontal = true
	s.mark("settings.theme", st.theme, "")
	st.theme.SetSelected(get(prefTheme, "system"))
	root := widget.NewLabel(s.cfg.Root)
	root.Wrapping = fyne.TextWrapBreak
	form := widget.NewForm(
		widget.NewFormItem("Workbench folder", root),
		widget.NewFormItem("Artefact cache", st.cache),
		widget.NewFormItem("Tasks at once", st.workers),
		widget.NewFormItem("Memory cap (GiB)", st.memory),
		widget.NewFormItem("Engine", container.NewBorder(nil, nil, nil, check, st.engine)),
		widget.NewFormItem("Theme", st.theme),
	)
	form.Items[0].HintText = "models trained here, runs and campaign specs: -root on the command line picks it, else the app's storage folder"
	form.Items[1].HintText = "trained models, maps and perturbed samples the campaigns share; empty: the workbench folder's cache; a folder set here wins over -root"
	form.Items[2].HintText = "0: one task per 8 cores, at least one (each task uses up to 8 cores itself)"
	form.Items[3].HintText = "a soft cap on the process's memory while a campaign runs; 0: none"
	form.Items[4].HintText = "where campaigns launched here compute: native, or a PyTorch worker (local, or a GPU host over SSH)"
	wrapHints(form)
	bi, _ := debug.ReadBuildInfo()
	fyneVersion := "unknown"
	if bi != nil {
		for _, d := range bi.Deps {
			if d.Path == "fyne.io/fyne/v2" {
				fyneVersion = d.Version
			}
		}
	}
	kernel := "none"
	if s.cfg.Kernel != nil {
		kernel = s.cfg.Kernel.Name()
	}
	about := widget.NewLabel(fmt.Sprintf("Faithlab %s — a workbench for judging feature-attribution methods.\n\n"+
		"Engine of Explain, Inspect and training: native (float32, NCHW; pieces of 16 samples on one replica per core)\nGEMM kernel: %s; elementwise kernels: %s\n"+
		"Go %s, %s/%s, %d CPUs\nFyne %s\nStorage: %s", model.Version, kernel, native.Kernels(), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), fyneVersion, s.cfg.Root))
	about.Wrapping = fyne.TextWrapWord
	// Padded: the scroll bar lies over the content's right edge, where the
	// entries and the Check button end.
	st.content = container.NewVScroll(container.NewPadded(container.NewVBox(
		widget.NewLabelWithStyle("Campaigns launched here", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), form, st.engInfo,
		widget.NewSeparator(), widget.NewLabelWithStyle("About", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), about)))
	return st
}

// Content is the screen.
func (st *Settings) Content() fyne.CanvasObject { return st.content }

// CacheDir is the artefact cache campaigns launched here share.
func (st *Settings) CacheDir() string { return strings.TrimSpace(st.cache.Text) }

// Workers is the tasks a campaign runs at once (0: the runner's default).
func (st *Settings) Workers() int {
	n, err := strconv.Atoi(strings.TrimSpace(st.workers.Text))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// MemoryGB is the campaigns' memory cap (0: none).
func (st *Settings) MemoryGB() float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(st.memory.Text), 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// SetTheme switches between the light, dark and system themes and
// remembers the choice.
func (st *Settings) SetTheme(v string) {
	if st.theme.Selected != v {
		st.theme.SetSelected(v) // calls back here
		return
	}
	if p := st.s.cfg.Prefs; p != nil {
		p.SetString(prefTheme, v)
	}
	if app := fyne.CurrentApp(); app != nil {
		app.Settings().SetTheme(variantTheme(v))
	}
	if st.onTheme != nil {
		st.onTheme()
	}
}

// variantTheme is Fyne's default theme held to one variant ("system":
// the desktop's), with input borders that show on the light background.
func variantTheme(v string) fyne.Theme {
	switch v {
	case "light":
		return workbenchTheme{theme.DefaultTheme(), theme.VariantLight, true}
	case "dark":
		return workbenchTheme{theme.DefaultTheme(), theme.VariantDark, true}
	}
	return workbenchTheme{Theme: theme.DefaultTheme()}
}

// workbenchTheme is Fyne's default theme, held to a variant when forced,
// whose light variant draws input borders — an unticked check box, an
// entry's and a drop-down's outline — dark enough to see: Fyne's #e3e3e3 on
// white hid them.
type workbenchTheme struct {
	fyne.Theme
	variant fyne.ThemeVariant
	forced  bool
}

// lightInputBorder is the light variant's input border: 3:1 against white
// (WCAG's contrast for the parts of a control).
var lightInputBorder = color.NRGBA{R: 0x8a, G: 0x8a, B: 0x8a, A: 0xff}

// Icon is the default theme's icon, told apart by the variant it is drawn
// in: Fyne's widget.Icon redraws only when handed another resource, and
// the default theme hands the same one in either variant, so that after a
// switch to the light theme a drop-down kept the dark theme's white arrow
// on its light field (invisible).
func (t workbenchTheme) Icon(n fyne.ThemeIconName) fyne.Resource {
	res := t.Theme.Icon(n)
	if th, ok := res.(*theme.ThemedResource); ok {
		return variantIcon{th, t.variantNow()}
	}
	return res
}

// variantNow is the variant the theme draws in now.
func (t workbenchTheme) variantNow() fyne.ThemeVariant {
	if t.forced {
		return t.variant
	}
	if a := fyne.CurrentApp(); a != nil {
		return a.Settings().ThemeVariant()
	}
	return theme.VariantDark
}

// variantIcon is a themed icon as drawn in one variant: another value, and
// another name for the caches, in the other.
type variantIcon struct {
	*theme.ThemedResource
	variant fyne.ThemeVariant
}

// Name implements fyne.Resource.
func (r variantIcon) Name() string {
	return fmt.Sprintf("variant%d_%s", r.variant, r.ThemedResource.Name())
}

func (t workbenchTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if t.forced {
		v = t.variant
	}
	if v == theme.VariantLight && n == theme.ColorNameInputBorder {
		return lightInputBorder
	}
	return t.Theme.Color(n, v)
}

// checkEngine starts the engine setting's worker in the background and
// says what it runs on (torch's version, the device) or why it cannot.
func (st *Settings) checkEngine() {
	setting := strings.TrimSpace(st.engine.Text)
	if _, err := model.EngineKind(setting); err != nil {
		st.engInfo.SetText(err.Error())
		return
	}
	var info model.EngineInfo
	st.engInfo.SetText("starting " + setting + "…")
	st.s.Go("checking the engine", func(ctx context.Context) error {
		eng, err := model.OpenEngine(ctx, setting, st.s.cfg.Kernel)
		if err != nil {
			return err
		}
		defer eng.Close()
		info, err = eng.Info(ctx)
		return err
	}, func(err error) {
		if err != nil {
			st.engInfo.SetText("cannot use " + setting + ": " + oneLine(err.Error()))
			return
		}
		text := fmt.Sprintf("%s: %s", info.Engine, info.Device)
		if info.Torch != "" {
			text += ", torch " + info.Torch
		}
		st.engInfo.SetText(text + ". Explain, Inspect and training here use the native engine; campaigns launched here use this one.")
	})
}

// CheckEngine sets the engine setting and checks it as the Check button
// does.
func (st *Settings) CheckEngine(setting string) {
	st.engine.SetText(setting)
	st.checkEngine()
}

// Engine is the engine setting campaigns launched here run on.
func (st *Settings) Engine() string { return strings.TrimSpace(st.engine.Text) }
