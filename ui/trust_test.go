package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/engine/gemm"
)

// find returns the first object under o (o included) for which match holds.
func find(o fyne.CanvasObject, match func(fyne.CanvasObject) bool) fyne.CanvasObject {
	if o == nil {
		return nil
	}
	if match(o) {
		return o
	}
	var kids []fyne.CanvasObject
	switch v := o.(type) {
	case *fyne.Container:
		kids = v.Objects
	case fyne.Widget:
		kids = test.WidgetRenderer(v).Objects()
	}
	for _, k := range kids {
		if f := find(k, match); f != nil {
			return f
		}
	}
	return nil
}

// button finds the button with the text in the window's top overlay.
func button(w fyne.Window, text string) *widget.Button {
	top := w.Canvas().Overlays().Top()
	b, _ := find(top, func(o fyne.CanvasObject) bool { b, ok := o.(*widget.Button); return ok && b.Text == text }).(*widget.Button)
	return b
}

// overlayText is every label's text in the window's top overlay.
func overlayText(w fyne.Window) string {
	var b strings.Builder
	find(w.Canvas().Overlays().Top(), func(o fyne.CanvasObject) bool {
		if l, ok := o.(*widget.Label); ok {
			b.WriteString(l.Text + "\n")
		}
		return false
	})
	return b.String()
}

// A campaign file that names a program opens in Evaluate, and Launch
// shows the program in full and runs nothing until the user allows it:
// Cancel leaves it unrun; "Allow and launch" runs it.
func TestASpecNamingAProgramLaunchesOnlyOnceAllowed(t *testing.T) {
	test.NewTempApp(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	loop := newUILoop(t)
	root := t.TempDir()
	dir := t.TempDir()
	program, ran := filepath.Join(dir, "program"), filepath.Join(dir, "it-ran")
	os.WriteFile(program, []byte("#!/bin/sh\ntouch "+ran+"\nexit 3\n"), 0o755)
	spec := filepath.Join(dir, "sent.yaml")
	os.WriteFile(spec, []byte(`name: sent
output: run
engine: "torch?python=`+program+`"
datasets: [{id: gmm, train_samples: 200, test_samples: 40}]
model: {arch: mlp, epochs: 1}
methods: [gradient]
protocols: [{name: deletion, params: {samples: 10}}]
`), 0o644)
	var wb *Workbench
	var w fyne.Window
	loop.run(func() {
		w = test.NewTempWindow(t, nil)
		wb = NewWorkbench(Config{Kernel: gemm.Gonum{}, Root: root, Do: loop.do, Worker: testWorker, Window: w})
		w.SetContent(wb.Content())
		w.Resize(fyne.NewSize(1280, 800))
		wb.State.OpenData("gmm")
	})
	t.Cleanup(wb.State.Wait)
	loop.waitFor(t, "gmm to load", func() bool { return wb.State.Data != nil })
	loop.run(func() {
		wb.Evaluate.OpenSpec(spec)
		wb.Evaluate.Launch()
	})
	loop.waitFor(t, "the consent dialog", func() bool { return button(w, "Allow and launch") != nil })
	loop.run(func() {
		if text := overlayText(w); !strings.Contains(text, "runs the program "+program) {
			t.Errorf("the dialog says %q, not the program in full", text)
		}
		if wb.Evaluate.Running() {
			t.Error("the campaign runs before the user allowed it")
		}
		test.Tap(button(w, "Cancel"))
	})
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the program ran")
	}
	loop.run(func() { wb.Evaluate.Launch() })
	loop.waitFor(t, "the consent dialog again", func() bool { return button(w, "Allow and launch") != nil })
	loop.run(func() { test.Tap(button(w, "Allow and launch")) })
	loop.waitFor(t, "the campaign to end", func() bool { return !wb.Evaluate.Running() })
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("allowed, the program did not run: %v", err)
	}
}
