package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/job"
)

// Switching between two screens leaves the others alone: Fyne's AppTabs
// refreshed every screen's whole content at each switch — Evaluate's
// task list drew its rows again for screens it is not on —, 50–150 ms of
// the UI goroutine per switch here, several times that while a campaign
// took the cores. A screen's own changes are still drawn.
func TestSwitchingScreensLeavesTheOthersAlone(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		e := wb.Evaluate
		wb.Tabs.SelectIndex(TabEvaluate)
		e.showRows([]taskRow{{key: "a", label: "gmm seed 1 · gradient · deletion", state: "to run"},
			{key: "b", label: "gmm seed 1 · random · deletion", state: "to run"}})
		drawn := map[string]int{}
		update := e.list.UpdateItem
		e.list.UpdateItem = func(id widget.ListItemID, o fyne.CanvasObject) {
			drawn[e.rows[id].key]++
			update(id, o)
		}
		wb.Tabs.SelectIndex(TabData)
		clear(drawn)
		for _, tab := range []int{TabModel, TabData, TabInspect, TabLibrary} {
			wb.Tabs.SelectIndex(tab)
		}
		if len(drawn) > 0 {
			t.Errorf("four switches between other screens drew Evaluate's task rows again: %v", drawn)
		}
		e.rows[1].state = "done"
		e.list.Refresh()
		if drawn["b"] == 0 {
			t.Error("a change of the task list was not drawn")
		}
	})
}

// A campaign's progress is not drawn while Evaluate is hidden — each
// redraw of its task list drew the whole window again, the screen the
// user works on, several times a second — and is shown as soon as the
// user opens Evaluate.
func TestProgressWaitsForEvaluateToBeShown(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		e := wb.Evaluate
		wb.Tabs.SelectIndex(TabEvaluate)
		e.showRows([]taskRow{{key: "a", label: "gmm seed 1 · gradient · deletion", state: "to run"},
			{key: "b", label: "gmm seed 1 · random · deletion", state: "to run"}})
		wb.Tabs.SelectIndex(TabInspect)
		drawn := 0
		update := e.list.UpdateItem
		e.list.UpdateItem = func(id widget.ListItemID, o fyne.CanvasObject) {
			drawn++
			update(id, o)
		}
		e.apply(map[string]job.Event{"a": {Kind: job.Started, Key: "a"}}, 0, 2, time.Minute)
		for step := 1; step <= 5; step++ {
			e.apply(map[string]job.Event{"a": {Kind: job.Progress, Key: "a", Stage: "deleting", Step: step, Steps: 10}}, 0, 2, time.Minute)
		}
		if drawn > 0 || e.eta.Text != "" {
			t.Errorf("a hidden Evaluate drew the progress: %d rows drawn, %q", drawn, e.eta.Text)
		}
		wb.Tabs.SelectIndex(TabEvaluate)
		if drawn == 0 || e.rows[0].frac != 0.5 || !strings.HasPrefix(e.eta.Text, "0/2 · about") {
			t.Errorf("opening Evaluate shows %d rows drawn, the time left %q", drawn, e.eta.Text)
		}
	})
}

// hintsIn lists the help texts (hint) shown under o, with a text.
func hintsIn(o fyne.CanvasObject) []*hint {
	var out []*hint
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if !o.Visible() {
			return
		}
		switch v := o.(type) {
		case *hint:
			if v.Text != "" {
				out = append(out, v)
			}
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(v).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	return out
}

// The wheel scrolls Evaluate's form with the pointer resting on a
// method's help, its whole text shown: the tooltip, a pop-up, took every
// event of the window, and the wheel moved nothing.
func TestWheelScrollsEvaluateUnderAMethodsHelp(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		wb.Tabs.SelectIndex(TabEvaluate)
		e := wb.Evaluate
		hs := hintsIn(e.methods.content)
		if len(hs) == 0 {
			t.Error("no method's help on Evaluate")
			return // not t.Fatal: it would end the UI loop's goroutine
		}
		h, d := hs[0], fyne.CurrentApp().Driver()
		c := d.CanvasForObject(e.form)
		e.form.ScrollToTop()
		at := d.AbsolutePositionForObject(h).AddXY(10, h.Size().Height/2)
		if at.Y > 600 {
			e.form.Offset.Y = at.Y - 300
			e.form.Refresh()
			at = d.AbsolutePositionForObject(h).AddXY(10, h.Size().Height/2)
		}
		test.MoveMouse(c, at)
		if h.Tip() != h.Text {
			t.Errorf("the pointer on a method's help shows %q", h.Tip())
			return
		}
		before := e.form.Offset.Y
		test.Scroll(c, at, 0, -60)
		if e.form.Offset.Y <= before {
			t.Errorf("the wheel under a method's whole help moved the form from %g to %g", before, e.form.Offset.Y)
		}
		if h.Tip() != "" {
			t.Error("the help stays shown where the form moved it away")
		}
	})
}

// The Library's lists take the wheel and clicks with the pointer resting
// on a row's description, its whole text shown: the tooltip, a pop-up,
// took them, and the first click only closed it.
func TestLibraryRowsTakeTheWheelAndClicksUnderTheirHelp(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	l := wb.Library
	loop.run(func() {
		fyne.CurrentApp().Driver().AllWindows()[0].Resize(fyne.NewSize(1280, 560)) // a list longer than its room
		wb.Tabs.SelectIndex(TabLibrary)
	})
	loop.waitFor(t, "the datasets described", func() bool { return len(hintsIn(l.dsList)) >= 3 })
	loop.run(func() {
		d := fyne.CurrentApp().Driver()
		c := d.CanvasForObject(l.dsList)
		pointAt := func() (*hint, fyne.Position) {
			h := hintsIn(l.dsList)[1]
			return h, d.AbsolutePositionForObject(h).AddXY(10, h.Size().Height/2)
		}
		h, at := pointAt()
		test.MoveMouse(c, at)
		if h.Tip() != h.Text {
			t.Errorf("the pointer on a dataset's description shows %q", h.Tip())
			return
		}
		test.Scroll(c, at, 0, -60)
		if off := l.dsList.GetScrollOffset(); off <= 0 {
			t.Errorf("the wheel under a dataset's whole description moved the list to %g", off)
		}
		h, at = pointAt()
		test.MoveMouse(c, fyne.NewPos(1, 1))
		test.MoveMouse(c, at)
		if h.Tip() == "" {
			t.Error("the description under the pointer after the wheel shows nothing")
			return
		}
		test.TapCanvas(c, at)
		if l.selDS == "" {
			t.Error("a click on a dataset's description, its whole text shown, picked no dataset")
		}
	})
}
