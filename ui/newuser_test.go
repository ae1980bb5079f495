package ui

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"faithlab/core/campaign"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/protocol"
	"faithlab/core/report"
)

// smallCampaign sets up a campaign of two maps under Deletion on a few
// test samples: seconds on the Gaussian mixture.
func smallCampaign(e *Evaluate, name string) {
	e.Quick(name, 300, 40, 1)
	e.methods.Clear()
	e.methods.Set("gradient", nil)
	e.methods.Set("random", nil)
	e.protocols.Clear()
	e.protocols.Set("deletion", map[string]any{"samples": 20})
}

// A campaign that finishes while the user works on Explain leaves them on
// Explain: the status bar says it is done and offers to open the results;
// one finishing under the user's eyes on Evaluate opens Results.
func TestFinishedCampaignKeepsTheUserWhereTheyAre(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		smallCampaign(wb.Evaluate, "stay")
		wb.Evaluate.Launch()
		wb.Tabs.SelectIndex(TabExplain)
	})
	loop.waitFor(t, "the campaign to end", func() bool { return !wb.Evaluate.Running() })
	wb.State.Wait()
	loop.run(func() {
		if got := wb.Tabs.SelectedIndex(); got != TabExplain {
			t.Errorf("the finished campaign moved the user from Explain to tab %d", got)
		}
		st := wb.Status()
		if !strings.Contains(st.Text(), "campaign stay done") || st.Offered() != "Open results" {
			t.Errorf("status %q offering %q, want the campaign done with Open results", st.Text(), st.Offered())
		}
		st.TapOffer()
		if got := wb.Tabs.SelectedIndex(); got != TabResults {
			t.Errorf("Open results showed tab %d", got)
		}
		if wb.Results.run == nil || wb.Results.run.Spec.Name != "stay" {
			t.Errorf("Results shows no run of the campaign")
		}
		// Launched again from Evaluate (every task done already), it ends
		// under the user's eyes: Results opens.
		wb.Tabs.SelectIndex(TabEvaluate)
		wb.Evaluate.Launch()
	})
	loop.waitFor(t, "the second campaign to end", func() bool { return !wb.Evaluate.Running() })
	wb.State.Wait()
	loop.run(func() {
		if got := wb.Tabs.SelectedIndex(); got != TabResults {
			t.Errorf("a campaign finished on Evaluate left tab %d, want Results", got)
		}
		if o := wb.Status().Offered(); o != "" {
			t.Errorf("status still offers %q with Results shown", o)
		}
	})
}

// Results never asks for more room than the window gives (1024×700 at
// least), whatever the length of the run's labels: a method with parameters
// ("smoothgrad{samples=5,noise_frac=0.15}") in the report card's columns
// widened the window past a 1600-pixel screen.
func TestResultsFitTheWindowWithLongMethodLabels(t *testing.T) {
	if raceEnabled {
		t.Skip("layout only: the first pass runs it (raceEnabled)")
	}
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		smallCampaign(wb.Evaluate, "long")
		wb.Evaluate.methods.Set("smoothgrad", map[string]any{"samples": 5, "noise_frac": 0.15})
		wb.Evaluate.Launch()
	})
	loop.waitFor(t, "the campaign to end", func() bool { return !wb.Evaluate.Running() })
	wb.State.Wait()
	loop.waitFor(t, "the run on Results", func() bool { return wb.Results.run != nil })
	loop.run(func() {
		fyne.CurrentApp().Settings().SetTheme(theme.DefaultTheme()) // the app's fonts
		defer fyne.CurrentApp().Settings().SetTheme(test.Theme())
		if !strings.Contains(wb.Results.summary.Text, "smoothgrad{samples=5,noise_frac=0.15}") {
			t.Fatalf("the run has no method with parameters:\n%s", wb.Results.summary.Text)
		}
		for i, tab := range wb.Results.tabs.Items {
			wb.Results.tabs.SelectIndex(i)
			if w := tab.Content.MinSize().Width; w > 600 {
				t.Errorf("Results' %s tab needs %g pixels of width", tab.Text, w)
			}
		}
		if w := wb.Results.Content().MinSize().Width; w > 1200 {
			t.Errorf("Results needs %g pixels of width", w)
		}
		// In a window of 1024×700 (less its menu, the tabs and the status
		// bar), Results with a run open fits: switching to it grew the
		// window to 1172×761.
		for _, w := range fyne.CurrentApp().Driver().AllWindows() {
			if w.Content() == wb.Content() {
				w.Resize(fyne.NewSize(1024, 700))
			}
		}
		wb.Tabs.SelectIndex(TabResults)
		for i, tab := range wb.Results.tabs.Items {
			wb.Results.tabs.SelectIndex(i)
			if sz := wb.Results.Content().MinSize(); sz.Width > 1024 || sz.Height > 560 {
				t.Errorf("Results with its %s tab needs %g×%g", tab.Text, sz.Width, sz.Height)
			}
			if sz := wb.Content().MinSize(); sz.Width > 1024 || sz.Height > 660 {
				t.Errorf("the window's content with Results' %s tab needs %g×%g", tab.Text, sz.Width, sz.Height)
			}
		}
	})
}

// Every screen, launching, exporting, opening and quitting have their
// Ctrl shortcut on the main menu, whose shortcuts the driver runs before
// the focused widget (an entry) sees the key.
func TestShortcutsAreOnTheMainMenu(t *testing.T) {
	if raceEnabled {
		t.Skip("layout only: the first pass runs it (raceEnabled)")
	}
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		w := test.NewTempWindow(t, widget.NewLabel(""))
		wb.Install(w)
		menu := wb.menu()
		find := func(key fyne.KeyName) *fyne.MenuItem {
			want := (&desktop.CustomShortcut{KeyName: key, Modifier: fyne.KeyModifierShortcutDefault}).ShortcutName()
			for _, m := range menu.Items {
				for _, it := range m.Items {
					if it.Shortcut != nil && it.Shortcut.ShortcutName() == want {
						return it
					}
				}
			}
			return nil
		}
		for tab := TabLibrary; tab <= TabSettings; tab++ {
			it := find(fyne.KeyName(string(rune('1' + tab))))
			if it == nil {
				t.Fatalf("no menu shortcut Ctrl+%d", tab+1)
			}
			it.Action()
			if got := wb.Tabs.SelectedIndex(); got != tab {
				t.Errorf("Ctrl+%d showed tab %d", tab+1, got)
			}
		}
		for _, k := range []fyne.KeyName{fyne.KeyO, fyne.KeyM, fyne.KeyR, fyne.KeyE, fyne.KeyQ} {
			if find(k) == nil {
				t.Errorf("no menu shortcut Ctrl+%s", k)
			}
		}
		// View checks the theme in use, and follows a switch.
		checked := func() (out []string) {
			for _, it := range menu.Items[1].Items {
				if it.Checked {
					out = append(out, it.Label)
				}
			}
			return out
		}
		wb.Settings.SetTheme("light")
		if got := checked(); len(got) != 1 || got[0] != "Light theme" {
			t.Errorf("View checks %v under the light theme", got)
		}
		wb.Settings.SetTheme("dark")
		if got := checked(); len(got) != 1 || got[0] != "Dark theme" {
			t.Errorf("View checks %v under the dark theme", got)
		}
	})
}

// stoppedCampaign saves the form's small campaign "half" and runs it
// until its first task has finished: a run to resume.
func stoppedCampaign(t *testing.T, wb *Workbench, loop uiLoop, root string) {
	t.Helper()
	trainMLP(t, wb, loop, 1)
	var spec string
	loop.run(func() {
		wb.Tabs.SelectIndex(TabEvaluate) // the form is checked and sized while shown
		smallCampaign(wb.Evaluate, "half")
		wb.Evaluate.protocols.Set("road", map[string]any{"rates": []float64{0.5}})
		if _, err := wb.Evaluate.save(); err != nil {
			t.Fatal(err)
		}
		spec = wb.Evaluate.specPath
	})
	c, err := campaign.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.Workers = 1
	ctx, cancel := context.WithCancel(context.Background())
	// Unbuffered: the runner waits for each event to be taken, so the next
	// task's first event is taken only after the cancel — with a buffer,
	// a loaded machine let the runner finish every task before it (the
	// run then had nothing to resume).
	events := make(chan job.Event)
	go func() {
		for ev := range events {
			if ev.Kind == job.Finished {
				cancel()
			}
		}
	}()
	if _, err := c.Run(ctx, campaign.Options{Kernel: gemm.Gonum{}, Events: events, Trust: campaign.Trust{Folders: []string{root}}}); err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	cancel()
	r, err := campaign.Open(filepath.Join(root, "runs", "half"))
	if err != nil || len(r.Records) == 0 || len(r.Status().Missing) == 0 {
		t.Fatalf("the stopped run: %v", err)
	}
}

// A size estimated while a run elsewhere finished a task — the look at the
// folder saw none done, the estimate one — is shown but not kept for the
// spec without a run: a new name would have shown a resume's size.
func TestASizeThatSawTheRunMoveIsNotKept(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	stoppedCampaign(t, wb, loop, root)
	wb.State.Wait()
	var key string
	loop.run(func() {
		e := wb.Evaluate
		s, err := e.build()
		if err != nil {
			t.Fatal(err)
		}
		key = sizeKey(s)
		delete(e.sized, key)
		e.estimate(s, runLook{}, e.edits) // as if the look came before the task finished
	})
	wb.State.Wait()
	loop.run(func() {
		if !strings.Contains(wb.Evaluate.size.Text, "which a resume skips") {
			t.Errorf("the size shown: %q", wb.Evaluate.size.Text)
		}
		if z, ok := wb.Evaluate.sized[key]; ok {
			t.Errorf("a resume's size (%d skipped) kept for the campaign without a run", z.Skipped)
		}
	})
}

// Launch on a campaign whose run stopped says Resume; on another name,
// Launch.
func TestLaunchSaysResumeOnAStoppedCampaign(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	stoppedCampaign(t, wb, loop, root)
	// The user names the campaign again (the form already says "half":
	// the same text is no edit, and its last look at the folder may have
	// come while the run was still going).
	loop.run(func() { wb.Evaluate.name.SetText(""); wb.Evaluate.name.SetText("half") })
	loop.waitFor(t, "Resume", func() bool { return wb.Evaluate.launch.Text == "Resume" })
	wb.State.Wait()
	loop.run(func() {
		// The resume's size: what is left, the finished tasks skipped.
		if !strings.Contains(wb.Evaluate.size.Text, "done already, which a resume skips") {
			t.Errorf("a resume's size: %q", wb.Evaluate.size.Text)
		}
		wb.Evaluate.name.SetText("fresh")
	})
	loop.waitFor(t, "Launch", func() bool { return wb.Evaluate.launch.Text == "Launch" })
	wb.State.Wait()
	var sized int
	loop.run(func() {
		sized = len(wb.Evaluate.sized)
		wb.Evaluate.name.SetText("fresh-again")
	})
	loop.waitFor(t, "Launch", func() bool { return wb.Evaluate.launch.Text == "Launch" })
	wb.State.Wait()
	loop.run(func() {
		// Another name for a campaign with no run is the same size: not
		// estimated again.
		if n := len(wb.Evaluate.sized); n != sized || !strings.Contains(wb.Evaluate.size.Text, "tasks") || strings.Contains(wb.Evaluate.size.Text, "skips") {
			t.Errorf("renaming made %d estimates (had %d): %q", n, sized, wb.Evaluate.size.Text)
		}
	})
}

// A task cancelled alone is its own state: not done, not in the progress,
// and the status bar says it was cancelled (no more "cancelling").
func TestCancelledTaskIsNotCountedDone(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		e := wb.Evaluate
		wb.Tabs.SelectIndex(TabEvaluate) // its progress is drawn while it is shown
		e.rows = []taskRow{{key: "a", label: "gmm · gradient · Deletion"}, {key: "b", label: "gmm · random · Deletion"}}
		e.byKey = map[string]int{"a": 0, "b": 1}
		e.apply(map[string]job.Event{"a": {Kind: job.Finished, Key: "a"}, "b": {Kind: job.Cancelled, Key: "b"}}, 2, 2, 0)
		if e.rows[1].state != string(job.StateCancelled) || e.rows[1].frac != 0 {
			t.Errorf("cancelled task shown %+v", e.rows[1])
		}
		if v := e.overall.Value; v != 0.5 {
			t.Errorf("progress %g with one task of two done and one cancelled, want 0.5", v)
		}
		if got := e.left.text(time.Now()); got != "1/2" {
			t.Errorf("count %q, want 1/2", got)
		}
		if st := wb.Status().Text(); !strings.HasPrefix(st, "cancelled random · Deletion") {
			t.Errorf("status %q after the cancel", st)
		}
		e.rows, e.byKey = nil, map[string]int{}
	})
}

// Training in the Model screen says that the new model is now the one
// under explanation and switches back in one click; Explain names the
// model and clears the maps of another one.
func TestTrainingSaysTheModelChangedAndSwitchesBack(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	var first string
	loop.run(func() {
		first = wb.State.ModelPath
		if !strings.Contains(wb.Explain.which.Text, filepath.Base(first)) || !strings.Contains(wb.Explain.which.Text, "\u00a0% test accuracy") {
			t.Errorf("Explain names %q, want %s and its accuracy", wb.Explain.which.Text, filepath.Base(first))
		}
		if !strings.Contains(wb.Evaluate.model.Text, filepath.Base(first)) {
			t.Errorf("Evaluate names %q", wb.Evaluate.model.Text)
		}
		wb.Explain.Select("gradient")
		wb.Explain.count.SetText("2")
		wb.Explain.Compute()
	})
	loop.waitFor(t, "the maps", func() bool { return len(wb.Explain.results) == 1 })
	time.Sleep(1100 * time.Millisecond) // model files are named to the second
	trainMLP(t, wb, loop, 1)
	loop.waitFor(t, "the second model", func() bool { return wb.State.ModelPath != first })
	loop.run(func() {
		st := wb.Status()
		if st.Offered() != "Switch back to mlp in "+filepath.Base(first) || !strings.Contains(st.Text(), "it was mlp in "+filepath.Base(first)) {
			t.Errorf("status %q offering %q after training", st.Text(), st.Offered())
		}
		if len(wb.Explain.results) != 0 {
			t.Error("Explain kept the maps of the previous model")
		}
		if l, ok := wb.Explain.gallery.Objects[0].(*widget.Label); !ok || !strings.Contains(l.Text, "were cleared") {
			t.Errorf("the gallery does not say its maps were cleared")
		}
		st.TapOffer()
		if wb.State.ModelPath != first {
			t.Errorf("switched back to %s, want %s", wb.State.ModelPath, first)
		}
		if !strings.Contains(wb.Explain.which.Text, filepath.Base(first)) {
			t.Errorf("Explain names %q after switching back", wb.Explain.which.Text)
		}
	})
}

// One file opened by two paths is one row of the Library; after the lists
// change, the details describe the highlighted row.
func TestLibraryListsAFileOnceAndDescribesTheHighlightedRow(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	models := filepath.Join(root, "models")
	a := filepath.Join(models, "a.flm")
	os.WriteFile(a, []byte("not a model"), 0o644)
	link := filepath.Join(t.TempDir(), "link.flm")
	if err := os.Symlink(a, link); err != nil {
		t.Skip(err)
	}
	loop.run(func() {
		wb.State.cfg.Prefs = test.NewTempApp(t).Preferences()
		wb.State.remember(prefRecentModels, link)
		wb.State.remember(prefRecentModels, a)
		wb.Library.Refresh()
	})
	wb.State.Wait()
	loop.run(func() {
		n := 0
		for _, p := range wb.Library.models {
			if samePlace(p) == samePlace(a) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("a.flm listed %d times: %q", n, wb.Library.models)
		}
		wb.Library.mdList.Select(0)
		if wb.Library.selMD != a {
			t.Fatalf("selected %q, want %q first", wb.Library.selMD, a)
		}
	})
	os.WriteFile(filepath.Join(models, "b.flm"), []byte("not a model either"), 0o644) // listed first
	loop.run(wb.Library.Refresh)
	wb.State.Wait()
	loop.run(func() {
		l := wb.Library
		if l.models[0] == a || l.selMD != a {
			t.Fatalf("models %q, selected %q", l.models, l.selMD)
		}
		if l.mdDetail.Text != l.mdInfo[a] || l.mdInfo[a] == "" {
			t.Errorf("details %q, want a.flm's %q", l.mdDetail.Text, l.mdInfo[a])
		}
	})
}

// The mouse wheel scrolls the campaign form with the pointer over an
// entry, and taps still reach what lies under the wheel's layer.
func TestWheelScrollsTheFormOverAnEntry(t *testing.T) {
	test.NewTempApp(t)
	entry := newEntry()
	tapped := 0
	button := widget.NewButton("tap", func() { tapped++ })
	box := container.NewVBox(entry, button)
	for range 40 {
		box.Add(widget.NewLabel("row"))
	}
	sc := wheelScroll(box)
	w := test.NewTempWindow(t, sc)
	w.Resize(fyne.NewSize(300, 200))
	d := fyne.CurrentApp().Driver()
	test.Scroll(w.Canvas(), d.AbsolutePositionForObject(entry).AddXY(20, entry.Size().Height/2), 0, -60)
	if sc.Offset.Y <= 0 {
		t.Errorf("the wheel over an entry moved the form by %g", sc.Offset.Y)
	}
	sc.ScrollToTop()
	test.TapCanvas(w.Canvas(), d.AbsolutePositionForObject(button).AddXY(10, button.Size().Height/2))
	if tapped != 1 {
		t.Error("a tap on a button under the wheel's layer did not reach it")
	}
}

// A cut help text shows whole while the pointer rests on it.
func TestHintShowsWholeOnHover(t *testing.T) {
	test.NewTempApp(t)
	long := strings.Repeat("a long help text that does not fit ", 8)
	h := newHint(long)
	w := test.NewTempWindow(t, container.NewGridWrap(fyne.NewSize(120, 30), h))
	w.Resize(fyne.NewSize(400, 300))
	h.MouseIn(&desktop.MouseEvent{})
	if h.Tip() != long || w.Canvas().Overlays().Top() == nil {
		t.Errorf("hover shows %q", h.Tip())
	}
	h.MouseOut()
	if h.Tip() != "" || w.Canvas().Overlays().Top() != nil {
		t.Error("the help stays after the pointer left")
	}
}

// The Diagnostics tab's numbers are tables: a row per check under its
// columns, a fit that means nothing saying why.
func TestDiagnosticsAreTables(t *testing.T) {
	d := report.Diagnostics{
		TVFits: []report.TVDiagnostic{
			{Dataset: "gmm", Protocol: "ROAR", Curve: "accuracy", Fit: &protocol.Fit{Slope: -0.5, Intercept: 0.9, R2: 0.875, N: 6}},
			{Dataset: "gmm", Protocol: "KAR", Curve: "accuracy", Explained: "fewer than three points"},
		},
		Weak: []report.Weak{{Dataset: "gmm", Protocol: "ROAR", Curve: "accuracy", Method: "ig", Best: 0.52, Chance: 0.5, Base: 0.9}},
	}
	tabs := diagnosticsTables(d)
	if len(tabs) != 2 {
		t.Fatalf("%d tables, want weak retrainings and TV fits", len(tabs))
	}
	got := diagnosticsText(tabs)
	for _, want := range []string{
		"gmm | ROAR | accuracy | ig | 0.520 | 0.500 | 0.900\n",
		"dataset | protocol | curve | R² | points | slope | intercept | note\n",
		"gmm | ROAR | accuracy | 0.875 | 6 | -0.5 | 0.9 | \n",
		"gmm | KAR | accuracy | — | 0 | — | — | fewer than three points\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("tables lack %q:\n%s", want, got)
		}
	}
	for _, tb := range tabs {
		for _, r := range tb.rows {
			if len(r) != len(tb.header) {
				t.Errorf("%s: row %q under %d columns", tb.title, r, len(tb.header))
			}
		}
	}
	if len(diagnosticsTables(report.Diagnostics{})) != 0 {
		t.Error("tables of no diagnostics")
	}
}

// The figure list holds the figures by protocol then kind, and keeps those
// holding every word searched for.
func TestFigureListGroupedAndSearchable(t *testing.T) {
	figs := []report.Figure{
		{Name: "d_roar_accuracy_vs_tv", Group: "ROAR", Kind: report.BiasChecks},
		{Name: "d_rank_probability", Group: report.Compared, Kind: report.Ranks},
		{Name: "d_roar_accuracy", Group: "ROAR", Kind: report.Curves},
		{Name: "d_maps_ig", Group: "Attribution maps", Kind: report.Samples},
		{Name: "d_deletion_morf", Group: "Deletion", Kind: report.Curves},
		{Name: "d_roar_auc", Group: "ROAR", Kind: report.Bars},
	}
	got := strings.Join(figureLabels(figs, ""), "\n")
	want := strings.Join([]string{
		"ROAR · curves · d_roar_accuracy",
		"ROAR · bars · d_roar_auc",
		"ROAR · diagnostics · d_roar_accuracy_vs_tv",
		"Deletion · curves · d_deletion_morf",
		"protocols compared · ranks · d_rank_probability",
		"Attribution maps · samples · d_maps_ig",
	}, "\n")
	if got != want {
		t.Errorf("list:\n%s\nwant:\n%s", got, want)
	}
	if got := figureLabels(figs, "Roar  CURVES"); len(got) != 1 || got[0] != "ROAR · curves · d_roar_accuracy" {
		t.Errorf("search roar curves: %q", got)
	}
	if got := figureLabels(figs, "tsne"); len(got) != 0 {
		t.Errorf("search for what no figure holds: %q", got)
	}
	// Long entries do not widen the screen past the window.
	test.NewTempApp(t)
	r := newResults(newState(Config{Root: t.TempDir()}))
	figs[0].Name = strings.Repeat("a_very_long_figure_name_", 6)
	for i := range figs {
		figs[i].Plot = plot.New()
	}
	r.figs = figs
	r.listFigures()
	if w := r.Content().MinSize().Width; w > 1280 {
		t.Errorf("Results needs %g wide with a long figure name", w)
	}
	// A figure asked for by name is shown; one the run lacks is an error
	// naming the figures it has, the figure shown left as it was (a
	// screenshot of it would pass for the one asked for).
	r.run = &campaign.Results{Dir: "run"}
	if err := r.ShowFigure("deletion_morf"); err != nil || r.figSel.Selected != "Deletion · curves · d_deletion_morf" {
		t.Errorf("ShowFigure(deletion_morf) = %v, shows %q", err, r.figSel.Selected)
	}
	err := r.ShowFigure("roar_critical_difference")
	if err == nil || !strings.Contains(err.Error(), "roar_critical_difference") || !strings.Contains(err.Error(), "d_rank_probability") {
		t.Errorf("ShowFigure of a figure the run lacks: %v", err)
	}
	if r.figSel.Selected != "Deletion · curves · d_deletion_morf" {
		t.Errorf("a missing figure changed the one shown to %q", r.figSel.Selected)
	}
}

// Settings shows the workbench folder -root picked; the cache is its own
// unless the user chose another, which then wins.
func TestSettingsSayWhereRunsLive(t *testing.T) {
	a := test.NewTempApp(t)
	root, mine := t.TempDir(), t.TempDir()
	s := newState(Config{Root: root, Prefs: a.Preferences()})
	st := newSettings(s)
	if got := s.cacheDir(); got != filepath.Join(root, "cache") || st.cache.Text != "" || st.cache.PlaceHolder != got {
		t.Errorf("cache %q, field %q (placeholder %q), want the root's", got, st.cache.Text, st.cache.PlaceHolder)
	}
	shown := false
	for _, o := range test.LaidOutObjects(st.Content()) {
		if l, ok := o.(*widget.Label); ok && l.Text == root {
			shown = true
		}
	}
	if !shown {
		t.Error("Settings does not show the workbench folder")
	}
	st.cache.SetText(mine)
	if got := s.cacheDir(); got != mine {
		t.Errorf("cache %q after choosing %q", got, mine)
	}
}

// The light and dark themes hand a drop-down's arrow as different
// resources (with different names), so that the arrow is redrawn in the
// new theme's colour after a switch; the light theme's input borders show
// on its background.
func TestThemesRedrawIconsAndShowInputBorders(t *testing.T) {
	test.NewTempApp(t)
	light, dark := variantTheme("light"), variantTheme("dark")
	l, d := light.Icon(theme.IconNameArrowDropDown), dark.Icon(theme.IconNameArrowDropDown)
	if l == d || l.Name() == d.Name() {
		t.Errorf("the same arrow in both themes: %s, %s", l.Name(), d.Name())
	}
	if light.Icon(theme.IconNameArrowDropDown) != l {
		t.Error("the light theme's arrow changes between calls (every refresh would redraw it)")
	}
	r, g, b, _ := light.Color(theme.ColorNameInputBorder, theme.VariantDark).RGBA()
	br, _, _, _ := light.Color(theme.ColorNameBackground, theme.VariantDark).RGBA()
	if lum := (r + g + b) / 3; br-lum < 0x6000 {
		t.Errorf("light input border %x on background %x: too faint", lum>>8, br>>8)
	}
}

// An estimate replaced by a newer one (the form changed again) is dropped
// quietly: no error for the one stopped, the newer one shown.
func TestReplacedEstimateIsNoError(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	wb.State.Wait()
	loop.run(func() {
		e := wb.Evaluate
		smallCampaign(e, "twice")
		e.speeds, e.sized = &campaign.SpeedBook{}, map[string]campaign.Size{} // measure again
		e.Size()
		e.edits++ // another edit
		e.Size()
	})
	wb.State.Wait()
	loop.run(func() {
		if st := wb.Status(); st.IsError() {
			t.Errorf("status after a replaced estimate: %q", st.Text())
		}
		if !strings.Contains(wb.Evaluate.size.Text, "tasks") {
			t.Errorf("size %q", wb.Evaluate.size.Text)
		}
	})
}

// The campaign's sizing measures this machine's speeds once the app's
// other work has ended, not beside it (which measured the contention).
func TestSpeedsWaitForTheAppsOtherWork(t *testing.T) {
	test.NewTempApp(t)
	loop := newUILoop(t)
	s := newState(Config{Root: t.TempDir(), Do: loop.do})
	release := make(chan struct{})
	loop.run(func() {
		s.Go("other work", func(context.Context) error { <-release; return nil }, nil)
	})
	measured := make(chan time.Time, 1)
	s.Go("sizing", func(ctx context.Context) error {
		if !s.waitQuiet(ctx, time.Minute) {
			t.Error("the app was not quiet after its other work ended")
		}
		measured <- time.Now()
		return nil
	}, nil)
	time.Sleep(300 * time.Millisecond)
	released := time.Now()
	close(release)
	if at := <-measured; at.Before(released) {
		t.Errorf("the speeds were measured %v before the other work ended", released.Sub(at))
	}
	s.Wait()
}

// The listed figures show as thumbnails, drawn in the background — small,
// in the screen's colours, with the figure's lines on them — and kept for
// the run.
func TestFigureThumbnails(t *testing.T) {
	test.NewTempApp(t)
	loop := newUILoop(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	w.Resize(fyne.NewSize(1280, 800))
	s := newState(Config{Root: t.TempDir(), Window: w, Do: loop.do})
	var r *Results
	var first image.Image
	loop.run(func() {
		r = newResults(s)
		for _, name := range []string{"d_deletion_morf", "d_roar_accuracy"} {
			p := plot.New()
			line, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 0}})
			line.Color = color.NRGBA{R: 230, A: 255}
			line.Width = vg.Points(4)
			p.Add(line)
			r.figs = append(r.figs, report.Figure{Name: name, Group: "ROAR", Kind: report.Curves, Plot: p})
		}
		r.run = &campaign.Results{Dir: t.TempDir()}
		r.listFigures()
		r.BrowseFigures()
		if w.Canvas().Overlays().Top() == nil {
			t.Fatal("no thumbnails shown")
		}
	})
	s.Wait()
	loop.run(func() {
		if len(r.thumbs) != 2 {
			t.Fatalf("%d thumbnails for 2 figures", len(r.thumbs))
		}
		for label, img := range r.thumbs {
			b := img.Bounds()
			if b.Dx() < 100 || b.Dx() > 400 {
				t.Errorf("%s: thumbnail %d pixels wide", label, b.Dx())
			}
			red := 0
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					if c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA); c.R > 180 && c.G < 80 {
						red++
					}
				}
			}
			if red < 50 {
				t.Errorf("%s: the figure's line is not on its thumbnail (%d red pixels)", label, red)
			}
		}
		if p := commonPrefix(r.figs); p != "d_" {
			t.Errorf("the captions drop %q, want the dataset's d_", p)
		}
		first = r.thumbs[r.figSel.Options[0]]
		r.BrowseFigures() // again: kept, not drawn anew
		if r.thumbs[r.figSel.Options[0]] != first {
			t.Error("the thumbnails were drawn again for the same run")
		}
		fyne.CurrentApp().Settings().SetTheme(variantTheme("light"))
		r.BrowseFigures() // in another theme: drawn anew, in its colours
	})
	s.Wait()
	loop.run(func() {
		defer fyne.CurrentApp().Settings().SetTheme(test.Theme())
		img := r.thumbs[r.figSel.Options[0]]
		if img == nil || img == first {
			t.Fatal("the thumbnails were not drawn again in the light theme")
		}
		if c := color.GrayModel.Convert(img.At(2, 2)).(color.Gray); c.Y < 200 {
			t.Errorf("a light theme's thumbnail has a background of grey %d", c.Y)
		}
	})
}

// A finished campaign changed under its name does not say it is finished:
// the estimate says what Launch says, that its folder holds another spec's
// results.
func TestChangedFinishedCampaignSaysLaunchRefusesIt(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		smallCampaign(wb.Evaluate, "done")
		wb.Tabs.SelectIndex(TabEvaluate) // the form is checked and sized while shown
		wb.Evaluate.Launch()
	})
	loop.waitFor(t, "the campaign to end", func() bool { return !wb.Evaluate.Running() })
	wb.State.Wait()
	loop.run(func() {
		wb.Tabs.SelectIndex(TabEvaluate) // back from the results it opened
		wb.Evaluate.name.SetText("")
		wb.Evaluate.name.SetText("done")
	})
	loop.waitFor(t, "the finished note", func() bool {
		return strings.Contains(wb.Evaluate.size.Text, "all of the campaign")
	})
	wb.State.Wait()
	loop.run(func() { wb.Evaluate.testCap.SetText("30") })
	want := "campaign done has results from another spec in "
	loop.waitFor(t, "the other spec's note", func() bool {
		return strings.HasPrefix(wb.Evaluate.size.Text, want)
	})
	wb.State.Wait()
	loop.run(func() {
		if strings.Contains(wb.Evaluate.size.Text, "all of the campaign") {
			t.Errorf("size %q says the changed campaign is finished", wb.Evaluate.size.Text)
		}
		wb.Evaluate.Launch()
	})
	wb.State.Wait()
	loop.run(func() {
		if st := wb.Status().Text(); !strings.Contains(st, want) {
			t.Errorf("Launch says %q, want %q…", st, want)
		}
	})
}

// Save spec suggests a command line that runs the campaign as given: the
// run folder and the cache, in the workbench's folders outside the
// spec's, granted on it (the CLI asks consent for them otherwise).
func TestSavedSpecSuggestsARunnableCommandLine(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	var (
		c   *campaign.Campaign
		err error
		st  string
	)
	loop.run(func() {
		smallCampaign(wb.Evaluate, "line")
		c, err = wb.Evaluate.save()
		st = wb.Status().Text()
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.RunLine()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(st, "run it headless with: "+want) || !strings.Contains(want, " --out ") || !strings.Contains(want, " --cache ") {
		t.Errorf("status %q, want it to end with %q granting --out and --cache", st, want)
	}
}

// A reproduction running shows its tasks done of all, says so in the
// dialog opened again (and on another paper, why Run waits), and Cancel
// stops it, the status bar saying so.
func TestReproductionShowsProgressAndCancels(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	var r *Reproduce
	loop.run(func() {
		r = wb.Library.RunReproduction("goar-synthetic", "smoke")
		wb.Library.CloseReproduce()
	})
	loop.waitWithin(t, 3*time.Minute, "the tasks counted", func() bool {
		return strings.Contains(r.report.String(), " tasks done") || strings.Contains(r.report.String(), " task done")
	})
	loop.run(func() {
		wb.Library.showReproduce()
		if md := r.report.String(); !strings.Contains(md, "Running goar-synthetic at size smoke") || !strings.Contains(md, " done") {
			t.Errorf("reopened: %q", md)
		}
		for _, o := range r.pick.Options {
			if o != "goar-synthetic" {
				r.pick.SetSelected(o)
				break
			}
		}
		if md := r.report.String(); !strings.Contains(md, "Run waits: goar-synthetic runs") || !r.run.Disabled() {
			t.Errorf("another paper while one runs: %q (Run disabled: %v)", md, r.run.Disabled())
		}
		r.pick.SetSelected("goar-synthetic")
		if r.stop.Disabled() {
			t.Error("Cancel disabled while it runs")
		}
		test.Tap(r.stop)
	})
	loop.waitWithin(t, 3*time.Minute, "the reproduction to stop", func() bool { return !r.Running() })
	loop.run(func() {
		if st := wb.Status().Text(); !strings.Contains(st, "reproduction goar-synthetic at size smoke stopped") {
			t.Errorf("status %q", st)
		}
		if !r.stop.Disabled() || r.run.Disabled() {
			t.Error("after it stopped: Cancel enabled or Run disabled")
		}
	})
}

// A standardised table says so over its values, and the statistics show
// the file's own mean and std per feature (not 0 and 1).
func TestDataTableSaysItsValuesAreStandardised(t *testing.T) {
	if raceEnabled {
		t.Skip("layout only: the first pass runs it (raceEnabled)")
	}
	wb, loop, root := newTestWorkbench(t)
	csv := "a,b,label\n"
	for i := range 40 {
		csv += fmt.Sprintf("%d.5,%d,%d\n", 10+i, 100+3*i, i%2)
	}
	path := filepath.Join(root, "small.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	loop.run(func() { wb.State.OpenData(path) })
	loop.waitFor(t, "the CSV to load", func() bool { return wb.State.Data.Train.Standardization != nil })
	loop.run(func() {
		st := wb.State.Data.Train.Standardization
		if st == nil {
			t.Error("gmm not standardised: the test checks nothing")
			return
		}
		if !strings.Contains(wb.Data.scale.Text, "standardised per feature") || !strings.Contains(wb.Data.scale.Text, "the file's mean") {
			t.Errorf("over the table: %q", wb.Data.scale.Text)
		}
		for j, f := range wb.Data.feature {
			if math.Abs(f[0]-float64(st.Mean[j])) > 1e-6 || math.Abs(f[1]-float64(st.Std[j])) > 1e-6 {
				t.Errorf("feature %d: mean %.3f std %.3f, want the file's %.3f and %.3f", j, f[0], f[1], st.Mean[j], st.Std[j])
			}
			if f[2] > f[0] || f[3] < f[0] {
				t.Errorf("feature %d: min %.3f max %.3f around mean %.3f", j, f[2], f[3], f[0])
			}
		}
	})
}
