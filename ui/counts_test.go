package ui

import (
	"context"
	"strings"
	"testing"

	"faithlab/core/campaign"
	"faithlab/core/engine/gemm"
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
