package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// Escape closes the dialog on top (an error's details, a file dialog) and
// nothing else.
func TestEscapeClosesTheDialogOnTop(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		w := test.NewTempWindow(t, widget.NewLabel(""))
		w.Resize(fyne.NewSize(800, 600))
		wb.Install(w)
		dialog.ShowInformation("Error", "something", w)
		if w.Canvas().Overlays().Top() == nil {
			t.Fatal("no dialog shown")
		}
		w.Canvas().(test.WindowlessCanvas).OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
		if w.Canvas().Overlays().Top() != nil {
			t.Error("Escape left the dialog open")
		}
		tab := wb.Tabs.SelectedIndex()
		w.Canvas().(test.WindowlessCanvas).OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
		if wb.Tabs.SelectedIndex() != tab {
			t.Error("Escape without a dialog changed the screen")
		}
	})
}

// A message about one screen leaves the status bar when the user goes to
// another ("maps of 7 methods…" stayed under Results); an error, an offer
// and a message of the action that changed the screen stay.
func TestStatusMessageLeavesWithItsScreen(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	st := wb.Status()
	step := func(do func()) string {
		var got string
		loop.run(do)
		loop.run(func() { got = st.Text() })
		return got
	}
	step(func() { wb.Tabs.SelectIndex(TabExplain) })
	step(func() { st.Info("maps of 7 methods for 6 samples") })
	if got := step(func() { wb.Tabs.SelectIndex(TabResults) }); got != "ready" {
		t.Errorf("Explain's message stays on Results: %q", got)
	}
	if got := step(func() { st.Info("warning: a damaged record"); wb.Tabs.SelectIndex(TabExplain) }); got != "warning: a damaged record" {
		t.Errorf("the message of the action that changed the screen left: %q", got)
	}
	step(func() { st.Warn("the model was trained on another dataset") }) // arrives in its own turn, as a model's notice does
	for _, tab := range []int{TabData, TabModel} {
		if got := step(func() { wb.Tabs.SelectIndex(tab) }); got != "warning: the model was trained on another dataset" {
			t.Errorf("a warning left with the screen: %q", got)
		}
	}
	step(func() { st.Error(fmt.Errorf("no such file")) })
	if got := step(func() { wb.Tabs.SelectIndex(TabData) }); got != "no such file" {
		t.Errorf("an error left with its screen: %q", got)
	}
	step(func() { st.Info("campaign done"); st.Offer("Open results", func() {}) })
	if got := step(func() { wb.Tabs.SelectIndex(TabModel) }); got != "campaign done" || st.Offered() == "" {
		t.Errorf("a message with an offer left: %q offering %q", got, st.Offered())
	}
}

// An error of the campaign form leaves the status bar once the form is
// fixed; the form says what is wrong in place of the size meanwhile.
func TestFixedErrorLeavesTheStatusBar(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		wb.Tabs.SelectIndex(TabEvaluate) // the form is checked and sized while shown
		smallCampaign(wb.Evaluate, "fix")
		wb.Evaluate.seeds.SetText("one")
		wb.Evaluate.Launch()
		if !wb.Status().IsError() || !strings.Contains(wb.Status().Text(), "seeds") {
			t.Fatalf("status %q after launching with bad seeds", wb.Status().Text())
		}
	})
	loop.waitFor(t, "the form's problem in place of its size", func() bool {
		return strings.HasPrefix(wb.Evaluate.size.Text, "Not ready") && strings.Contains(wb.Evaluate.size.Text, "seeds")
	})
	loop.run(func() { wb.Evaluate.seeds.SetText("1") })
	loop.waitFor(t, "the error to clear", func() bool { return !wb.Status().IsError() })
	loop.waitFor(t, "the estimate", func() bool { return strings.Contains(wb.Evaluate.size.Text, "tasks") })
	wb.State.Wait()
}

// File dialogs open where the user last was for their kind of file; an
// export starts beside the run until the user exports elsewhere.
func TestFileDialogsStartWhereTheUserWas(t *testing.T) {
	a := test.NewTempApp(t)
	root, run, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	s := newState(Config{Root: root, Prefs: a.Preferences()})
	if got := s.startFolder(folderExport, run); got != run {
		t.Errorf("first export starts in %q, want the run's folder %q", got, run)
	}
	s.usedFolder(folderExport, filepath.Join(elsewhere, "x-results.csv"))
	if got := s.startFolder(folderExport, run); got != elsewhere {
		t.Errorf("next export starts in %q, want %q where the last went", got, elsewhere)
	}
	if got := s.startFolder(folderModel, ""); got != "" {
		t.Errorf("a model dialog starts in %q (no models folder, nothing used yet)", got)
	}
	os.MkdirAll(filepath.Join(root, "models"), 0o755)
	if got := s.startFolder(folderModel, ""); got != filepath.Join(root, "models") {
		t.Errorf("a model dialog starts in %q, want the workbench's models", got)
	}
	os.RemoveAll(elsewhere)
	if got := s.startFolder(folderExport, run); got != run {
		t.Errorf("with the last export folder gone, exports start in %q", got)
	}
}

// A file dialog takes a typed or pasted path — absolute, or relative to
// the folder it shows — says why one will not do while staying open, and
// closes on Escape with the focus in its path field.
func TestFileDialogTakesATypedPathAndClosesOnEscape(t *testing.T) {
	a := test.NewTempApp(t)
	dir, elsewhere := t.TempDir(), t.TempDir()
	w := test.NewTempWindow(t, widget.NewLabel(""))
	w.Resize(fyne.NewSize(1000, 700))
	s := newState(Config{Root: t.TempDir(), Prefs: a.Preferences(), Window: w})
	var got []string
	ask := func(mode pathMode) *escEntry {
		s.askPath("t", mode, folderExport, dir, "x-results.csv", nil, func(p string) { got = append(got, p) })
		f, ok := w.Canvas().Focused().(*escEntry)
		if !ok {
			t.Fatal("the path field does not have the focus")
		}
		return f
	}

	f := ask(saveFile)
	if f.Text != filepath.Join(dir, "x-results.csv") || f.SelectedText() != f.Text {
		t.Errorf("the field starts as %q (selected %q), want the whole suggested path selected", f.Text, f.SelectedText())
	}
	typed := filepath.Join(elsewhere, "typed.csv")
	test.Type(f, typed) // replaces the selection, as typing does
	f.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if len(got) != 1 || got[0] != typed {
		t.Fatalf("Enter on a typed absolute path gave %q, want %q", got, typed)
	}
	if s.startFolder(folderExport, dir) != elsewhere {
		t.Error("the typed path's folder is not remembered for the next export")
	}
	if w.Canvas().Overlays().Top() != nil {
		t.Error("the dialog stays open after saving")
	}

	f = ask(saveFile)
	f.SetText("no-such-folder/y.csv")
	f.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if len(got) != 1 || w.Canvas().Overlays().Top() == nil {
		t.Errorf("a path into a missing folder was taken (%q) or closed the dialog", got)
	}
	f.SetText("rel.csv") // relative: inside the folder shown
	f.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if len(got) != 2 || got[1] != filepath.Join(dir, "rel.csv") {
		t.Errorf("a relative path gave %q, want it inside %s", got, dir)
	}

	f = ask(openFile)
	f.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if w.Canvas().Overlays().Top() != nil || len(got) != 2 {
		t.Error("Escape in the path field left the dialog open or opened something")
	}
}

// A folder to export into that does not exist is made, as the CLI's
// export --figures makes it; one that cannot be made is said so, plainly,
// with the dialog left open.
func TestExportFolderIsMadeWhenNew(t *testing.T) {
	a := test.NewTempApp(t)
	dir := t.TempDir()
	w := test.NewTempWindow(t, widget.NewLabel(""))
	w.Resize(fyne.NewSize(1000, 700))
	s := newState(Config{Root: t.TempDir(), Prefs: a.Preferences(), Window: w})
	var got []string
	ask := func() *escEntry {
		s.askPath("t", saveDir, folderExport, dir, "", nil, func(p string) { got = append(got, p) })
		return w.Canvas().Focused().(*escEntry)
	}

	f := ask()
	fresh := filepath.Join(dir, "figs")
	f.SetText(fresh)
	f.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if st, err := os.Stat(fresh); err != nil || !st.IsDir() {
		t.Fatalf("the new folder was not made: %v", err)
	}
	if len(got) != 1 || got[0] != fresh || w.Canvas().Overlays().Top() != nil {
		t.Errorf("confirming a new folder gave %q (dialog open: %v)", got, w.Canvas().Overlays().Top() != nil)
	}

	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, nil, 0o644)
	f = ask()
	f.SetText(filepath.Join(file, "sub"))
	f.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if len(got) != 1 || w.Canvas().Overlays().Top() == nil {
		t.Fatalf("a folder under a file was taken (%q) or closed the dialog", got)
	}
	want := filepath.Join(file, "sub") + " does not exist, nor does the folder above it (" + file + ")"
	if !strings.Contains(dialogText(w), want) {
		t.Errorf("the dialog says %q, want %q", dialogText(w), want)
	}
	// One level only, and no variables taken for names: a typo or "$HOME"
	// makes nothing.
	for _, typed := range []string{filepath.Join(dir, "typo", "figs"), "$HOME/figs"} {
		f.SetText(typed)
		f.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
		if len(got) != 1 || w.Canvas().Overlays().Top() == nil {
			t.Fatalf("%s was taken (%q) or closed the dialog", typed, got)
		}
	}
	if !strings.Contains(dialogText(w), "variables ($…) are not expanded here") {
		t.Errorf("the dialog says %q for $HOME/figs", dialogText(w))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 { // figs and a-file
		t.Errorf("folders made: %v", entries)
	}
	f.SetText(file)
	f.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if want := file + " is a file, not a folder"; !strings.Contains(dialogText(w), want) {
		t.Errorf("the dialog says %q, want %q", dialogText(w), want)
	}
}

// dialogText is the texts of the labels in the window's top overlay.
func dialogText(w fyne.Window) string {
	var texts []string
	find(w.Canvas().Overlays().Top(), func(o fyne.CanvasObject) bool {
		if l, ok := o.(*widget.Label); ok && l.Visible() {
			texts = append(texts, l.Text)
		}
		return false
	})
	return strings.Join(texts, "\n")
}
