package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
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
