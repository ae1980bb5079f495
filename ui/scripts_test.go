package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"faithlab/core/campaign"
	"faithlab/core/engine/gemm"
)

// A TorchScript model a campaign file names runs code from its file: the
// launch asks, naming the file in full, as for a program. One the user
// opened by hand (the Library, the File menu) is theirs: the launch goes
// ahead with it allowed, after the one-time warning shown when it was
// opened.
func TestATorchScriptFromASpecAsksAndOneOpenedByHandDoesNot(t *testing.T) {
	test.NewTempApp(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	loop := newUILoop(t)
	fixture, _ := filepath.Abs(filepath.Join("..", "testdata", "torch", "scripted-cnn.pt"))
	spec := filepath.Join(t.TempDir(), "sent.yaml")
	os.WriteFile(spec, []byte("output: run\nengine: torch\ndatasets: [fashion-mnist]\nmodel: {file: "+fixture+"}\nmethods: [gradient]\nprotocols: [deletion]\n"), 0o644)
	c, err := campaign.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	var wb *Workbench
	var w fyne.Window
	loop.run(func() {
		w = test.NewTempWindow(t, nil)
		wb = NewWorkbench(Config{Kernel: gemm.Gonum{}, Root: t.TempDir(), Do: loop.do, Worker: testWorker, Window: w})
		w.SetContent(wb.Content())
		w.Resize(fyne.NewSize(1280, 800))
	})
	t.Cleanup(wb.State.Wait)
	var launched *campaign.Trust
	launch := func(tr campaign.Trust) { launched = &tr }
	loop.run(func() { wb.State.withConsent(c, nil, launch) })
	loop.waitFor(t, "the consent dialog", func() bool { return button(w, "Allow and launch") != nil })
	loop.run(func() {
		if text := overlayText(w); !strings.Contains(text, "loads the TorchScript model "+fixture) {
			t.Errorf("the dialog says %q, not the model in full", text)
		}
		if launched != nil {
			t.Error("launched before the user allowed it")
		}
		test.Tap(button(w, "Cancel"))
	})
	loop.run(func() { wb.State.withConsent(c, []string{fixture}, launch) })
	loop.run(func() {
		if launched == nil {
			t.Fatal("a model opened by hand was asked for")
		}
		if err := c.Check(*launched, ""); err != nil {
			t.Errorf("the launch's trust: %v", err)
		}
	})
}
