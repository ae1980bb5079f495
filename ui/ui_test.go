package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"faithlab/core/engine/gemm"
	"faithlab/core/model"
)

// waitFor polls cond on the UI goroutine until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var ok bool
		fyne.DoAndWait(func() { ok = cond() })
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestBrowseTrainAndSave(t *testing.T) {
	test.NewTempApp(t)
	dir := t.TempDir()
	wb := NewWorkbench(gemm.Gonum{}, dir)
	w := test.NewTempWindow(t, wb.Content())
	w.Resize(fyne.NewSize(900, 600))

	wb.Browser.Open("gmm")
	wb.Browser.Wait()
	waitFor(t, "gmm to load", func() bool { return strings.Contains(wb.Browser.counts.Text, "total") })
	cur := wb.Browser.Current().Train
	c := cur.ClassCounts()
	if c[0]+c[1] != 4800 {
		t.Fatalf("class counts %v do not add up to 4800", c)
	}
	want := fmt.Sprintf("minus        %6d\nplus         %6d\ntotal          4800", c[0], c[1])
	if got := wb.Browser.counts.Text; got != want {
		t.Errorf("class counts %q, want %q", got, want)
	}
	if n := wb.Browser.grid.Length(); n != 4800 {
		t.Errorf("grid shows %d thumbnails, want 4800", n)
	}
	fyne.DoAndWait(func() { wb.Browser.split.SetSelected("test") })
	if n := wb.Browser.grid.Length(); n != 1200 {
		t.Errorf("test split shows %d thumbnails, want 1200", n)
	}

	fyne.DoAndWait(func() {
		wb.Trainer.arch.SetSelected("mlp")
		wb.Trainer.epochs.SetText("3")
		test.Tap(wb.Trainer.start)
	})
	wb.Trainer.Wait()
	waitFor(t, "the result", func() bool { return wb.Trainer.result.Text != "" })
	if got := wb.Trainer.result.Text; !strings.Contains(got, "saved") {
		t.Fatalf("result %q: want a saved model", got)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "mlp-gmm-*.flm"))
	if len(files) != 1 {
		t.Fatalf("saved models %v, want one", files)
	}
	m, err := model.Load(files[0], gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Training == nil || len(m.Training.History) != 3 {
		t.Errorf("saved training record %+v: want 3 epochs", m.Training)
	}
	var hist string
	fyne.DoAndWait(func() { hist = wb.Trainer.history.Text })
	if strings.Count(hist, "\n") != 4 {
		t.Errorf("history %q: want a header and 3 epoch rows", hist)
	}
}

func TestCancelSavesNothing(t *testing.T) {
	test.NewTempApp(t)
	dir := t.TempDir()
	wb := NewWorkbench(gemm.Gonum{}, dir)
	test.NewTempWindow(t, wb.Content())
	wb.Browser.Open("gmm")
	wb.Browser.Wait()
	waitFor(t, "gmm to load", func() bool { return wb.Trainer.ds != nil })
	fyne.DoAndWait(func() {
		wb.Trainer.arch.SetSelected("mlp")
		wb.Trainer.epochs.SetText("100000")
		wb.Trainer.patience.SetText("0")
		test.Tap(wb.Trainer.start)
	})
	waitFor(t, "training to start", func() bool { return strings.HasPrefix(wb.Trainer.readout.Text, "epoch") })
	fyne.DoAndWait(func() { test.Tap(wb.Trainer.stop) })
	wb.Trainer.Wait()
	waitFor(t, "the result", func() bool { return wb.Trainer.result.Text != "" })
	if got := wb.Trainer.result.Text; !strings.HasPrefix(got, "cancelled") {
		t.Errorf("result %q: want cancelled", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("cancelled training left %d files", len(entries))
	}
}
