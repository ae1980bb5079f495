package ui

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/attr/trace"
	"faithlab/core/campaign"
)

// An enlarged picture says the pixel under the pointer and what it holds,
// at any zoom.
func TestEnlargedMapReadsThePixelUnderThePointer(t *testing.T) {
	test.NewTempApp(t)
	m := []float32{0, 1, 2, 3, 4, 5, 6, -7} // 2 rows of 4
	value := func(x, y int) string { return fmt.Sprintf("%+.4g", m[y*4+x]) }
	var read string
	v := newPixelView(heatmap(m, 2, 4, 7), value, func(s string) { read = s })
	for _, zoom := range []float32{10, 25} {
		v.SetZoom(zoom)
		v.Resize(v.MinSize())
		if got := v.MinSize(); got != fyne.NewSize(4*zoom, 2*zoom) {
			t.Fatalf("at zoom %g: %v", zoom, got)
		}
		v.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(3.5*zoom, 1.5*zoom)}})
		if read != "x 3, y 1: -7" {
			t.Errorf("at zoom %g the pointer over the last pixel reads %q", zoom, read)
		}
		if got := v.Readout(fyne.NewPos(0.2*zoom, 0.9*zoom)); got != "x 0, y 0: +0" {
			t.Errorf("at zoom %g: %q over the first pixel", zoom, got)
		}
		if got := v.Readout(fyne.NewPos(4.5*zoom, 0)); got != "" {
			t.Errorf("outside the picture: %q", got)
		}
	}
	w := test.NewTempWindow(t, widget.NewLabel(""))
	w.Resize(fyne.NewSize(1280, 800))
	for _, pic := range []struct{ rows, cols int }{{2, 4}, {28, 28}, {4, 2}} {
		showEnlarged(w, "gradient on #0", heatmap(make([]float32, pic.rows*pic.cols), pic.rows, pic.cols, 7), nil)
		top := w.Canvas().Overlays().Top()
		if top == nil {
			t.Fatal("no enlarged picture shown")
		}
		// At the smallest zoom the picture lies whole in its scroller.
		v := find(top, func(o fyne.CanvasObject) bool { _, ok := o.(*pixelView); return ok }).(*pixelView)
		area := find(top, func(o fyne.CanvasObject) bool { _, ok := o.(*container.Scroll); return ok })
		if got, room := v.MinSize(), area.Size(); got.Width > room.Width+0.5 || got.Height > room.Height+0.5 || max(got.Width/room.Width, got.Height/room.Height) < 0.95 {
			t.Errorf("a %d×%d picture enlarged to %v in a scroller of %v: not whole, or not as large as it fits", pic.cols, pic.rows, got, room)
		}
		top.Hide()
		w.Canvas().Overlays().Remove(top)
	}
}

// A TRACE trajectory says what it optimises in the deletion test's terms
// (not "objective 40.6456"), and its playback opens at its start, the
// whole sample, on Explain and on Inspect alike.
func TestTraceSaysItsObjectiveAndPlaysFromTheStart(t *testing.T) {
	tr := trace.Result{Trajectory: make([]int, 49), Value: 40.6456, Iterations: 49, Seconds: 0.18}
	for _, c := range []struct {
		settings map[string]any
		value    float64
		want     []string
	}{
		{map[string]any{"objective": "le", "algorithm": "greedy"}, 40.6456, []string{"TRACE-Le maximises LeRF", "mean p(target) 0.813", "least important patches go first (higher is better)", "greedily in 0.18 s"}},
		{map[string]any{"objective": "mo", "algorithm": "greedy", "logit": true}, -3, []string{"TRACE-Mo minimises MoRF", "mean logit of the target 0.060", "(lower is better)"}},
		{map[string]any{"objective": "lemo", "algorithm": "sa"}, 25, []string{"LeRF − MoRF", "0.500 higher", "49 annealing iterations"}},
	} {
		tr.Value = c.value
		got := traceObjective(c.settings, tr)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: %q lacks %q", c.settings, got, w)
			}
		}
	}

	test.NewTempApp(t)
	s := newState(Config{Root: t.TempDir()})
	ex := campaign.Explained{Settings: map[string]any{"grid": 7, "objective": "le", "algorithm": "greedy"}, Trace: []trace.Result{tr}}
	v := newInspect(s)
	v.explained = &ex
	v.setupTrace()
	e := newExplain(s)
	e.traceStep.Max = 49
	e.traceStep.SetValue(30) // a trajectory shown before, played halfway
	e.results = []campaign.Explained{ex}
	e.setupTrace()
	if v.traceStep.Value != 0 || e.traceStep.Value != 0 {
		t.Errorf("TRACE's playback opens at step %g on Inspect, %g on Explain; want 0, the whole sample", v.traceStep.Value, e.traceStep.Value)
	}
}

// Every line under MPRT's maps fits its 150-pixel panel ("the original
// map · SSIM …" was cut).
func TestCascadeCaptionsFitTheirPanels(t *testing.T) {
	test.NewTempApp(t)
	fyne.CurrentApp().Settings().SetTheme(theme.DefaultTheme()) // the app's fonts
	defer fyne.CurrentApp().Settings().SetTheme(test.Theme())
	for _, st := range []campaign.CascadeStep{
		{Spearman: 1, SSIM: 1, HOG: 1},
		{Random: "f3–c1", Spearman: -0.32, SSIM: -0.03, HOG: 0.09},
		{Random: "f4", Spearman: 0.5, SSIM: math.NaN(), HOG: math.NaN()},
	} {
		for _, line := range strings.Split(cascadeCaption(st), "\n") {
			room := 150 - 2*theme.InnerPadding()
			if w := fyne.MeasureText(line, theme.CaptionTextSize(), fyne.TextStyle{}).Width; w > room {
				t.Errorf("%q is %g wide, panel's room %g", line, w, room)
			}
		}
	}
}

// Inspect's enlarged panels read a sample's channels and a map's value at
// the pixel under the pointer.
func TestPixelReadouts(t *testing.T) {
	// 2 channels of 2×3: channel k, row y, column x holds 100k + 10y + x.
	x := []float32{0, 1, 2, 10, 11, 12, 100, 101, 102, 110, 111, 112}
	if got := pixelValues(x, []int{2, 2, 3})(2, 1); got != "12, 112" {
		t.Errorf("pixel (2, 1): %q", got)
	}
	if got := pixelValues(x, []int{2, 2, 3})(3, 0); got != "" {
		t.Errorf("outside: %q", got)
	}
	if got := pixelValues([]float32{0.5, -2, 7}, []int{3, 1, 1})(1, 0); got != "-2" {
		t.Errorf("tabular feature 1: %q", got)
	}
	if got := mapValue([]float32{0, 0.25, -1, 3}, 2)(0, 1); got != "-1" {
		t.Errorf("map (0, 1): %q", got)
	}
}

// A model that does not take the open dataset's samples leaves no panels
// on Inspect: not the last dataset's sample beside this one's number, but
// a plain word of why and what to do.
func TestInspectClearsAndSaysSoWhenTheModelDoesNotFitTheData(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() { wb.State.Inspect("test", 0) })
	loop.waitFor(t, "gmm's sample 0", func() bool { return len(wb.Inspect.panels.Objects) == 8 })
	loop.run(func() { wb.State.OpenData("fashion-mnist") })
	loop.waitFor(t, "Fashion-MNIST", func() bool { return wb.State.Data.Ref == "fashion-mnist" })
	loop.run(func() { wb.State.Inspect("test", 5) })
	loop.run(func() {
		if n := len(wb.Inspect.panels.Objects); n != 0 {
			t.Errorf("%d panels of another dataset's sample stay", n)
		}
		got := wb.Inspect.caption.Text
		for _, want := range []string{"The open model (mlp, 20 inputs)", "does not take fashion-mnist's 1×28×28 images", "open or train a model"} {
			if !strings.Contains(got, want) {
				t.Errorf("caption %q lacks %q", got, want)
			}
		}
	})
}
