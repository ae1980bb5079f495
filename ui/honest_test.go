package ui

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/campaign"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/core/store"
	"faithlab/core/train"
)

// makeRun writes a campaign of two methods under Deletion on gmm into the
// workbench folder root — its spec in campaigns/NAME, its run folder in
// runs/NAME — with its first done tasks recorded (no figures: their
// results hold no curves), and returns the spec's path and the run folder.
func makeRun(t *testing.T, root, name string, done int) (specPath, dir string) {
	t.Helper()
	dir = filepath.Join(root, "runs", name)
	specPath = filepath.Join(root, "campaigns", name, "campaign.yaml")
	if err := os.MkdirAll(filepath.Dir(specPath), 0o755); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("name: %s\noutput: %s\ndatasets: [{id: gmm, train_samples: 300, test_samples: 40}]\nmodel: {arch: mlp, epochs: 1}\nmethods: [gradient, random]\nprotocols: [{name: deletion, params: {samples: 20}}]\n", name, dir)
	if err := os.WriteFile(specPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := campaign.Load(specPath)
	if err != nil {
		t.Fatal(err)
	}
	run, err := store.Open(dir, c.Raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range c.Tasks(job.Shard{})[:done] {
		if err := run.Append(store.Record{Task: task.Key, Label: task.Label, Result: &protocol.Result{Protocol: "Deletion"}}); err != nil {
			t.Fatal(err)
		}
	}
	return specPath, dir
}

// labelTexts is the text of every label under o.
func labelTexts(o fyne.CanvasObject) string {
	var b strings.Builder
	find(o, func(o fyne.CanvasObject) bool {
		if l, ok := o.(*widget.Label); ok {
			b.WriteString(l.Text + "\n")
		}
		return false
	})
	return b.String()
}

// Results opened on a run with no figures (a campaign still running its
// first tasks) shows no figure of the run shown before, but says why there
// is none; while the run is read, it says so.
func TestResultsShowNoFigureOfAnotherRun(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	_, a := makeRun(t, root, "a", 1)
	_, b := makeRun(t, root, "b", 0)
	r := wb.Results
	loop.run(func() { r.Open(a, false) })
	loop.waitFor(t, "run a", func() bool { return r.Shown() == a })
	loop.run(func() {
		// As if one of a's figures were shown.
		r.figure.Image = image.NewRGBA(image.Rect(0, 0, 40, 20))
		r.figNone.Hide()
		r.Open(b, false)
		if !strings.HasPrefix(r.state.Text, "Reading run "+b) || r.figure.Image != nil {
			t.Errorf("while b is read: %q, figure %v", r.state.Text, r.figure.Image != nil)
		}
	})
	loop.waitFor(t, "run b", func() bool { return r.Shown() == b })
	wb.State.Wait()
	loop.run(func() {
		if r.figure.Image != nil || !r.figNone.Visible() || !strings.HasPrefix(r.figNone.Text, "No figures yet") {
			t.Errorf("run b without figures shows a figure: %v; says %q (shown %v)", r.figure.Image != nil, r.figNone.Text, r.figNone.Visible())
		}
		if r.runs.Selected != b {
			t.Errorf("the run picker says %q", r.runs.Selected)
		}
	})
}

// The Model screen never shows a model's confusion matrix under another
// model's name: a model whose matrix must be computed shows none, and
// says it is being computed, from the moment it is open.
func TestModelScreenClearsAnotherModelsMatrix(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	mk := func(recorded [][]int) *model.Model {
		m, err := model.New("mlp", wb.State.Data.Train, gemm.Gonum{}, 1)
		if err != nil {
			t.Error(err) // not t.Fatal: it would end the UI loop's goroutine, and the test would hang
		}
		if recorded != nil {
			m.Test = &train.Evaluation{Accuracy: 0.5, Confusion: recorded}
			m.Source = &model.Source{Ref: wb.State.Data.Ref}
		}
		return m
	}
	var first, second *model.Model
	loop.run(func() { first, second = mk([][]int{{7, 1}, {2, 9}}), mk(nil) })
	loop.run(func() {
		wb.State.SetModel(first, "first.flm")
		if got := wb.Model.matrix; len(got) != 2 || got[0][0] != 7 {
			t.Errorf("the first model's recorded matrix: %v", got)
			return // not t.Fatal: it would end the UI loop's goroutine, and the test would hang
		}
		wb.State.SetModel(second, "second.flm")
		if wb.Model.matrix != nil {
			t.Errorf("second.flm is named with first.flm's matrix %v", wb.Model.matrix)
		}
		if !strings.HasPrefix(wb.Model.matrixOf.Text, "Computing the confusion matrix of second.flm") {
			t.Errorf("the matrix's caption while it is computed: %q", wb.Model.matrixOf.Text)
		}
	})
	loop.waitFor(t, "the second model's matrix", func() bool { return wb.Model.matrix != nil })
	loop.run(func() {
		if strings.HasPrefix(wb.Model.matrixOf.Text, "Computing") {
			t.Errorf("the computed matrix's caption: %q", wb.Model.matrixOf.Text)
		}
	})
}

// A campaign that finishes while the user looks at another run in Results
// leaves that run in Results (the picker does not switch by itself); the
// status bar offers the finished one, which opens on a tap.
func TestFinishedCampaignLeavesTheRunPickedInResults(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	_, picked := makeRun(t, root, "picked", 1)
	_, finished := makeRun(t, root, "finished", 2)
	loop.run(func() {
		wb.Tabs.SelectIndex(TabResults)
		wb.Results.Open(picked, false) // the user opens a run
	})
	loop.waitFor(t, "the picked run", func() bool { return wb.Results.Shown() == picked })
	loop.run(func() { wb.Evaluate.onRun(finished, true) })
	wb.State.Wait()
	loop.run(func() {
		if got := wb.Results.Shown(); got != picked || samePlace(wb.Results.runs.Selected) != samePlace(picked) {
			t.Errorf("Results switched by itself to %s (picker %s)", got, wb.Results.runs.Selected)
		}
		if o := wb.Status().Offered(); o != "Open results" {
			t.Errorf("status offers %q", o)
		}
		wb.Status().TapOffer()
	})
	loop.waitFor(t, "the finished run, asked for", func() bool { return wb.Results.Shown() == finished })
}

// A second copy of the app does not call a campaign that another process
// runs "interrupted": the run folder's lock says it runs, and no Resume is
// offered (it would be refused).
func TestSecondWindowSaysACampaignRunsElsewhere(t *testing.T) {
	app := test.NewTempApp(t)
	root := t.TempDir()
	spec, dir := makeRun(t, root, "elsewhere", 1)
	c, err := campaign.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	run, err := store.Open(dir, c.Raw)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := run.Lock() // the other process
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	app.Preferences().SetStringList(prefRecentRuns, []string{spec})
	loop := newUILoop(t)
	var wb *Workbench
	loop.run(func() {
		wb = NewWorkbench(Config{Kernel: gemm.Gonum{}, Root: root, Prefs: app.Preferences(), Do: loop.do, Worker: testWorker})
		test.NewTempWindow(t, wb.Content()).Resize(fyne.NewSize(1280, 800))
	})
	t.Cleanup(wb.State.Wait)
	loop.run(func() {
		said := labelTexts(wb.Evaluate.resume)
		if strings.Contains(said, "interrupted") || !strings.Contains(said, fmt.Sprintf("running now in process %d", os.Getpid())) {
			t.Errorf("Evaluate says %q of a campaign another process runs", said)
		}
		if b := find(wb.Evaluate.resume, func(o fyne.CanvasObject) bool { b, ok := o.(*widget.Button); return ok && b.Text == "Resume" }); b != nil || wb.Evaluate.launch.Text == "Resume" {
			t.Error("Resume offered for a campaign another process runs")
		}
	})
	unlock()
}

// A queued task can be cancelled too: its button is live, and a tap says
// it stops as it comes up.
func TestQueuedTaskCanBeCancelled(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		smallCampaign(wb.Evaluate, "queue")
		wb.Evaluate.methods.Set("gradxinput", nil)
		wb.Evaluate.Launch()
	})
	loop.waitFor(t, "the tasks listed", func() bool { return wb.Evaluate.child != nil && len(wb.Evaluate.rows) == 3 })
	loop.run(func() {
		e := wb.Evaluate
		last := len(e.rows) - 1
		if e.rows[last].state != "to run" {
			t.Skipf("the last task is %s already", e.rows[last].state)
		}
		row := e.newRow()
		e.updateRow(last, row)
		cancel := row.(*fyne.Container).Objects[1].(*widget.Button)
		if cancel.Disabled() {
			t.Error("a queued task's cancel button is greyed")
			return // not t.Fatal: it would end the UI loop's goroutine, and the test would hang
		}
		test.Tap(cancel)
		if e.rows[last].state != "cancelling" {
			t.Errorf("a cancelled queued task is %q", e.rows[last].state)
		}
	})
	loop.waitFor(t, "the campaign to end", func() bool { return !wb.Evaluate.Running() })
	wb.State.Wait()
	loop.run(func() {
		e := wb.Evaluate
		if got := e.rows[len(e.rows)-1].state; got != string(job.StateCancelled) || e.count("done") != 2 {
			t.Errorf("the cancelled queued task ended %q, %d done", got, e.count("done"))
		}
		if e.launch.Text != "Resume" || !strings.Contains(wb.Status().Text(), "Resume runs them") {
			t.Errorf("button %q, status %q", e.launch.Text, wb.Status().Text())
		}
	})
}

// A campaign stopped before any task finished keeps nothing: the button
// and the status bar say the same word (Launch), from one look at the run.
func TestStoppedBeforeAnyTaskSaysLaunchOnBoth(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		wb.Tabs.SelectIndex(TabEvaluate)
		e := wb.Evaluate
		e.Quick("early", 3000, 300, 20) // ROAR's retraining: the first task takes a while
		e.methods.Clear()
		e.methods.Set("gradient", nil)
		e.protocols.Clear()
		e.protocols.Set("roar", map[string]any{"rates": []float64{0.1, 0.3, 0.5, 0.7, 0.9}})
		e.Launch()
	})
	loop.waitFor(t, "the first task to start", func() bool { return wb.Evaluate.count("running") > 0 })
	loop.run(func() { wb.Evaluate.Cancel() })
	loop.waitFor(t, "the stop", func() bool { return !wb.Evaluate.Running() })
	wb.State.Wait()
	loop.run(func() {
		e := wb.Evaluate
		if e.count("done") != 0 {
			t.Skip("a task finished before the cancel")
		}
		st := wb.Status().Text()
		if e.launch.Text != "Launch" || !strings.Contains(st, "Launch starts it again") || strings.Contains(st, "Resume") {
			t.Errorf("button %q, status %q", e.launch.Text, st)
		}
	})
}

// A running task says its time left: the mean time of its protocol's
// tasks finished in this run less its own so far; finishing once that has
// run out.
func TestRunningTaskSaysItsTimeLeft(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		e := wb.Evaluate
		now := time.Now()
		e.rows = []taskRow{{key: "a", label: "gmm · gradient · ROAR"}, {key: "b", label: "gmm · random · ROAR"}, {key: "c", label: "gmm · random · Deletion"}}
		e.byKey = map[string]int{"a": 0, "b": 1, "c": 2}
		e.took = map[string][]time.Duration{}
		e.apply(map[string]job.Event{"a": {Kind: job.Started, Key: "a", Time: now.Add(-30 * time.Second)}}, 0, 3, 0)
		e.apply(map[string]job.Event{"a": {Kind: job.Finished, Key: "a", Time: now.Add(-10 * time.Second)}}, 1, 3, 0)
		e.apply(map[string]job.Event{"b": {Kind: job.Started, Key: "b", Time: now.Add(-5 * time.Second)}}, 1, 3, 0)
		if got := e.taskLeft(e.rows[1], now); got != "about 15s left" {
			t.Errorf("b: %q, want about 15s left (a took 20s, b ran 5s)", got)
		}
		if got := e.taskLeft(e.rows[1], now.Add(time.Minute)); got != "finishing" {
			t.Errorf("b past its time: %q", got)
		}
		row := e.newRow()
		e.updateRow(1, row)
		if txt := labelTexts(row); !strings.Contains(txt, "running · starting · about 1") {
			t.Errorf("b's row says %q", txt)
		}
		e.rows, e.byKey = nil, map[string]int{}
	})
}

// On start the app does no work the user did not ask for: the campaign is
// sized, and a sample's features removed, when their screens are opened.
func TestNoWorkBeforeTheScreenIsShown(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	wb.State.Wait()
	loop.run(func() {
		if wb.Evaluate.size.Text != "" || wb.Evaluate.sized == nil || len(wb.Evaluate.sized) > 0 {
			t.Errorf("Evaluate was sized before it was shown: %q", wb.Evaluate.size.Text)
		}
		if wb.Inspect.explained != nil || wb.Inspect.mapKey != "" {
			t.Error("Inspect computed a map before it was shown")
		}
		wb.Tabs.SelectIndex(TabEvaluate)
	})
	loop.waitFor(t, "the size once shown", func() bool { return strings.Contains(wb.Evaluate.size.Text, "tasks") })
	loop.run(func() { wb.Tabs.SelectIndex(TabInspect) })
	loop.waitFor(t, "the removals once shown", func() bool { return wb.Inspect.explained != nil && len(wb.Inspect.panels.Objects) > 0 })
}

// The buttons users aim at stay where they are when the text above them
// changes length: Compute maps under a longer model name, Run under
// another paper's description.
func TestButtonsStayWhenTheTextAboveChanges(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	d := func() fyne.Driver { return fyne.CurrentApp().Driver() }
	loop.run(func() {
		wb.Tabs.SelectIndex(TabExplain)
		e := wb.Explain
		before := d().AbsolutePositionForObject(e.compute)
		e.which.SetText("Model: " + strings.Repeat("a very long model name, ", 12))
		e.content.Refresh()
		if after := d().AbsolutePositionForObject(e.compute); after != before {
			t.Errorf("Compute maps moved from %v to %v under a longer model name", before, after)
		}
	})
	test.NewTempApp(t)
	loop.run(func() {
		r := newReproduce(wb.State)
		w := test.NewTempWindow(t, r.Content())
		w.Resize(fyne.NewSize(900, 700))
		var moved []string
		before := d().AbsolutePositionForObject(r.run)
		for _, name := range r.pick.Options {
			r.pick.SetSelected(name)
			r.content.Refresh()
			if at := d().AbsolutePositionForObject(r.run); at != before {
				moved = append(moved, fmt.Sprintf("%s: %v", name, at))
			}
		}
		if len(moved) > 0 {
			t.Errorf("Run at %v moved with the paper picked: %v", before, moved)
		}
	})
}

// The mouse wheel scrolls Explain's side panel with the pointer over one
// of its entries (Evaluate's form: TestWheelScrollsTheFormOverAnEntry).
func TestWheelScrollsExplainOverAnEntry(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		wb.Tabs.SelectIndex(TabExplain)
		e := wb.Explain
		e.methods.SetSelected(e.methods.Options) // every method's form: a panel taller than the window
		c := fyne.CurrentApp().Driver().CanvasForObject(e.offset)
		e.form.ScrollToTop()
		at := fyne.CurrentApp().Driver().AbsolutePositionForObject(e.post).AddXY(20, e.post.Size().Height/2)
		if at.Y > 780 {
			e.form.Offset.Y = at.Y - 400
			e.form.Refresh()
			at = fyne.CurrentApp().Driver().AbsolutePositionForObject(e.post).AddXY(20, e.post.Size().Height/2)
		}
		before := e.form.Offset.Y
		if before == 0 {
			t.Error("the panel is at its top: the wheel up cannot move it")
			return // not t.Fatal: it would end the UI loop's goroutine, and the test would hang
		}
		test.Scroll(c, at, 0, 60)
		if e.form.Offset.Y >= before {
			t.Errorf("the wheel over an entry moved the panel from %g to %g", before, e.form.Offset.Y)
		}
	})
}

// Near-identical forms share one measurement of this machine's speeds:
// other sample caps size the campaign again with the speeds measured for
// the first (measured again, the estimate jumped with the machine's load).
func TestEstimateReusesTheMeasuredSpeeds(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		wb.Tabs.SelectIndex(TabEvaluate)
		smallCampaign(wb.Evaluate, "speeds")
	})
	loop.waitFor(t, "the estimate", func() bool { return strings.Contains(wb.Evaluate.size.Text, "About ") })
	wb.State.Wait()
	var first string
	loop.run(func() {
		e := wb.Evaluate
		first = e.size.Text
		e.testCap.SetText("60")
		e.protocols.Set("road", nil) // on every test input: the size names 60
		s, err := e.build()
		if err != nil {
			t.Error(err)
			return // not t.Fatal: it would end the UI loop's goroutine, and the test would hang
		}
		if !e.speeds.Known(&campaign.Campaign{Spec: s}) {
			t.Error("another test cap measures the speeds again")
		}
	})
	loop.waitFor(t, "the second estimate", func() bool {
		return wb.Evaluate.size.Text != first && strings.Contains(wb.Evaluate.size.Text, "ROAD ±") && strings.Contains(wb.Evaluate.size.Text, "(60 inputs)")
	})
}

// Inspect never shows one model's panels under another's name: a model
// opened while it shows a sample clears them at once and says the new
// ones are being computed.
func TestInspectClearsAnotherModelsPanels(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() { wb.State.Inspect("test", 2) })
	loop.waitFor(t, "the sample's panels", func() bool { return len(wb.Inspect.panels.Objects) > 0 })
	loop.run(func() {
		other, err := model.New("mlp", wb.State.Data.Train, gemm.Gonum{}, 7)
		if err != nil {
			t.Error(err)
			return // not t.Fatal: it would end the UI loop's goroutine, and the test would hang
		}
		wb.State.SetModel(other, "")
		if n := len(wb.Inspect.panels.Objects); n != 0 {
			t.Errorf("%d panels of the model before under the new one's name", n)
		}
		if c := wb.Inspect.caption.Text; !strings.HasPrefix(c, "Computing the gradient map of sample 2 under mlp (not saved)") {
			t.Errorf("caption while the new panels come: %q", c)
		}
	})
	loop.waitFor(t, "the new model's panels", func() bool { return len(wb.Inspect.panels.Objects) > 0 })
}
