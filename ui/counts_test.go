package ui

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/campaign"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
)

// finishedCampaign saves the form's campaign under name and runs it to
// its end outside the workbench (as the CLI would), returning the run
// folder.
func finishedCampaign(t *testing.T, wb *Workbench, loop uiLoop, root, name string) string {
	t.Helper()
	var path string
	loop.run(func() {
		wb.Evaluate.name.SetText(name)
		if _, err := wb.Evaluate.save(); err != nil {
			t.Fatal(err)
		}
		path = wb.Evaluate.specPath
	})
	c, err := campaign.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), campaign.Options{Kernel: gemm.Gonum{}, Trust: campaign.Trust{Folders: []string{root}}}); err != nil {
		t.Fatal(err)
	}
	return c.Spec.Output
}

// A finished campaign whose protocol has no parameters set (Deletion at
// its defaults, as the fresh form has it) reads finished in the form's
// note and in its size alike: the estimate counts every finished task as
// done, none "to run (2 done already)".
func TestFinishedCampaignIsCountedFinishedByTheFormAndTheEstimate(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		e := wb.Evaluate
		wb.Tabs.SelectIndex(TabEvaluate)
		// The fresh form's protocols: Deletion with no parameter set.
		e.trainCap.SetText("300")
		e.testCap.SetText("40")
		e.methods.Clear()
		e.methods.Set("gradient", nil)
		e.methods.Set("random", nil)
	})
	finishedCampaign(t, wb, loop, root, "counted")
	loop.run(func() { wb.Evaluate.name.SetText(""); wb.Evaluate.name.SetText("counted") })
	wb.State.Wait()
	loop.waitFor(t, "the size", func() bool {
		return strings.Contains(wb.Evaluate.size.Text, "map set") || strings.Contains(wb.Evaluate.size.Text, "no task")
	})
	loop.run(func() {
		text := wb.Evaluate.size.Text
		if !strings.Contains(text, "4 tasks done, all of the campaign") {
			t.Errorf("the form's note: %q", text)
		}
		if strings.Contains(text, "tasks to run (") || !strings.Contains(text, "no task to run (4 tasks done already)") {
			t.Errorf("the estimate counts finished tasks to run: %q", text)
		}
		if wb.Evaluate.launch.Text != "Launch" {
			t.Errorf("launch button %q on a finished campaign", wb.Evaluate.launch.Text)
		}
	})
}

// The task list shows the form's campaign in the states its run folder
// holds, the CLI's words: on Resume its finished tasks read done from the
// start (they read "to run" until the worker skipped them); another
// campaign on the form lists its own tasks, not the last one's.
func TestTaskListShowsTheFormsCampaignInItsStates(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	stoppedCampaign(t, wb, loop, root)
	loop.run(func() { wb.Evaluate.name.SetText(""); wb.Evaluate.name.SetText("half") })
	loop.waitFor(t, "Resume", func() bool { return wb.Evaluate.launch.Text == "Resume" })
	wb.State.Wait()
	r, err := campaign.Open(filepath.Join(root, "runs", "half"))
	if err != nil {
		t.Fatal(err)
	}
	st := r.Status()
	check := func(when string) {
		t.Helper()
		e := wb.Evaluate
		if len(e.rows) != len(st.Done)+len(st.Failed)+len(st.Missing) {
			t.Errorf("%s: %d rows for %s", when, len(e.rows), st.Words())
			return
		}
		for _, row := range e.rows {
			if want := string(st.State(row.key)); row.state != want {
				t.Errorf("%s: task %s reads %q, the run folder %q", when, row.label, row.state, want)
			}
		}
	}
	loop.run(func() {
		check("before the launch")
		wb.Evaluate.Launch()
		check("as the resume starts") // the same turn: no event from the worker yet
	})
	loop.waitFor(t, "the campaign to end", func() bool { return !wb.Evaluate.Running() })
	wb.State.Wait()
	loop.run(func() {
		wb.Tabs.SelectIndex(TabEvaluate)
		wb.Evaluate.name.SetText("another")
	})
	loop.waitFor(t, "another campaign's tasks", func() bool {
		for _, row := range wb.Evaluate.rows {
			if row.state != string(job.StateToRun) {
				return false
			}
		}
		return len(wb.Evaluate.rows) > 0
	})
}

// The workbench's estimate is the CLI's: its speeds are measured in a
// worker process, where the campaign runs (beside the window's threads
// they came out at half or less), and the form's campaign gives the text
// `run --estimate` prints for the saved spec from the same speeds; the
// run keeps the estimate beside its wall time.
func TestEstimateIsTheCLIsFromSpeedsMeasuredInAWorker(t *testing.T) {
	wb, loop, root := newTestWorkbench(t)
	trainMLP(t, wb, loop, 1)
	loop.run(func() {
		wb.Tabs.SelectIndex(TabEvaluate)
		smallCampaign(wb.Evaluate, "timed")
	})
	wb.State.Wait()
	loop.waitFor(t, "the size", func() bool { return strings.Contains(wb.Evaluate.size.Text, "About ") })
	var form *campaign.Campaign
	var shown string
	var seconds float64
	loop.run(func() {
		e := wb.Evaluate
		s, err := e.build()
		if err != nil {
			t.Fatal(err)
		}
		form, shown, seconds = &campaign.Campaign{Spec: s}, e.sizeText, e.sizeShown.size.Seconds
		if _, err := e.save(); err != nil {
			t.Fatal(err)
		}
	})
	m, ok := wb.Evaluate.speeds.Measured(form)
	if !ok || m.PID == os.Getpid() || m.PID == 0 {
		t.Errorf("the speeds were measured in process %d, the window's is %d", m.PID, os.Getpid())
	}
	saved, err := campaign.Load(filepath.Join(root, "campaigns", "timed", "campaign.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	z, err := wb.Evaluate.speeds.Estimate(context.Background(), saved, gemm.Gonum{}) // what `run --estimate` does, from these speeds
	if err != nil {
		t.Fatal(err)
	}
	if z.String() != shown {
		t.Errorf("the CLI's estimate of the saved spec:\n%s\nthe form's:\n%s", z, shown)
	}
	loop.run(func() { wb.Evaluate.Launch() })
	loop.waitFor(t, "the campaign to end", func() bool { return !wb.Evaluate.Running() })
	wb.State.Wait()
	r, err := campaign.Open(saved.Spec.Output)
	if err != nil {
		t.Fatal(err)
	}
	if ls := r.Manifest.Launches; len(ls) != 1 || ls[0].Estimate != seconds || seconds <= 0 || ls[0].Wall <= 0 {
		t.Errorf("launches recorded %+v, the estimate shown %.1f s", ls, seconds)
	} else {
		t.Logf("estimate %.1f s, wall %.1f s", ls[0].Estimate, ls[0].Wall)
	}
}

// Work in the background shows as a still icon and the seconds it has
// run, redrawn once a second: a spinner's sixty frames a second, each a
// redraw of the whole window, took most of a two-core machine under a
// software renderer — beside the estimate's speed measurement and the
// campaign itself.
func TestStatusBarSaysHowLongWorkRunsWithoutAnimating(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	release := make(chan struct{})
	loop.run(func() {
		wb.State.Go("sizing the campaign", func(context.Context) error { <-release; return nil }, nil)
	})
	loop.waitWithin(t, 5*time.Second, "the seconds", func() bool {
		return strings.HasPrefix(wb.State.status.Working(), "sizing the campaign… ") && strings.HasSuffix(wb.State.status.Working(), " s")
	})
	loop.run(func() {
		if _, still := any(wb.State.status.activity).(*widget.Icon); !still || !wb.State.status.activity.Visible() {
			t.Errorf("the indicator: %T, shown %v", wb.State.status.activity, wb.State.status.activity.Visible())
		}
	})
	close(release)
	wb.State.Wait()
	loop.run(func() {
		if w := wb.State.status.Working(); w != "" || wb.State.status.activity.Visible() {
			t.Errorf("after the work: %q", w)
		}
	})
}

// tappables are the objects under o that take a tap, in drawing order.
func tappables(o fyne.CanvasObject) []fyne.Tappable {
	var out []fyne.Tappable
	if t, ok := o.(fyne.Tappable); ok {
		out = append(out, t)
	}
	if w, ok := o.(fyne.Widget); ok {
		for _, c := range test.WidgetRenderer(w).Objects() {
			out = append(out, tappables(c)...)
		}
	} else if c, ok := o.(*fyne.Container); ok {
		for _, c := range c.Objects {
			out = append(out, tappables(c)...)
		}
	}
	return out
}

// "Reproduce a paper…" keeps its size when the size chosen is clicked
// again, and offers the paper chosen last first, after a restart too.
func TestReproduceKeepsItsSizeAndTheLastPaper(t *testing.T) {
	a := test.NewTempApp(t)
	loop := newUILoop(t)
	open := func() *Reproduce {
		var r *Reproduce
		loop.run(func() {
			wb := NewWorkbench(Config{Kernel: gemm.Gonum{}, Root: t.TempDir(), Prefs: a.Preferences(), Do: loop.do, Worker: testWorker})
			t.Cleanup(wb.State.Wait) // before the loop closes: background work reports to it
			wb.Library.showReproduce()
			r = wb.Library.repro
		})
		return r
	}
	r := open()
	loop.run(func() {
		if len(r.pick.Options) < 2 {
			t.Fatalf("papers %v", r.pick.Options)
		}
		items := tappables(r.size)
		i := slices.Index(r.size.Options, r.size.Selected)
		if len(items) != len(r.size.Options) || i < 0 {
			t.Fatalf("%d sizes to tap, %v chosen of %v", len(items), r.size.Selected, r.size.Options)
		}
		items[i].Tapped(&fyne.PointEvent{})
		if r.size.Selected != r.size.Options[i] {
			t.Errorf("a click on the size chosen left %q", r.size.Selected)
		}
		r.pick.SetSelected(r.pick.Options[1])
	})
	last := r.pick.Options[1]
	r = open() // the app started again
	loop.run(func() {
		if r.pick.Selected != last {
			t.Errorf("after a restart the paper offered is %q, chosen last %q", r.pick.Selected, last)
		}
	})
}
