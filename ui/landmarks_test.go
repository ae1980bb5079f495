package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// landmarkOf finds a landmark by name.
func landmarkOf(ls []Landmark, name string) (Landmark, bool) {
	for _, l := range ls {
		if l.Name == name {
			return l, true
		}
	}
	return Landmark{}, false
}

// Landmarks say where the named widgets are on the screen shown, and only
// there: a tap at a landmark's centre reaches its widget (a radio group's
// option too), and a screen not shown lists none of its widgets.
func TestLandmarksAreWhereTheWidgetsAre(t *testing.T) {
	if raceEnabled {
		t.Skip("layout only: the first pass runs it (raceEnabled)")
	}
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		c := fyne.CurrentApp().Driver().CanvasForObject(wb.Content())
		wb.Tabs.SelectIndex(TabSettings)
		ls := wb.Landmarks()
		if _, ok := landmarkOf(ls, "model.train"); ok {
			t.Error("the Model screen's Train listed on Settings")
		}
		if s, _ := landmarkOf(ls, "@screen"); s.Text != "Settings" {
			t.Errorf("@screen %q", s.Text)
		}
		for _, theme := range []string{"light", "dark"} {
			l, ok := landmarkOf(ls, "settings.theme."+theme)
			if !ok {
				t.Errorf("no settings.theme.%s in %v", theme, ls)
				return // not t.Fatal: it would end the UI loop's goroutine, and the test would hang
			}
			test.TapCanvas(c, fyne.NewPos(float32(l.X+l.W/2), float32(l.Y+l.H/2)))
			if got := wb.Settings.theme.Selected; got != theme {
				t.Errorf("a tap at settings.theme.%s chose %q", theme, got)
			}
		}
		wb.Tabs.SelectIndex(TabModel)
		l, ok := landmarkOf(wb.Landmarks(), "model.train")
		if !ok {
			t.Error("no model.train on the Model screen")
			return // not t.Fatal: it would end the UI loop's goroutine, and the test would hang
		}
		test.TapCanvas(c, fyne.NewPos(float32(l.X+l.W/2), float32(l.Y+l.H/2)))
		if !wb.Model.Training() {
			t.Error("a tap at model.train did not start a training")
		}
		wb.Model.Cancel()
	})
	loop.waitFor(t, "the training to stop", func() bool { return !wb.Model.Training() })
}
