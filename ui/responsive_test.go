package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
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
