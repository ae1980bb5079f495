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

// uiLoop stands in for the app's main thread: one goroutine runs every UI
// function in order, so widgets are only ever touched from it, as under the
// real driver. (Fyne's test driver runs fyne.Do on the caller's goroutine.)
type uiLoop chan func()

func newUILoop(t *testing.T) uiLoop {
	l := make(uiLoop, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for fn := range l {
			fn()
		}
	}()
	t.Cleanup(func() { close(l); <-done })
	return l
}

// do queues fn (the workbench's dispatcher, as fyne.Do).
func (l uiLoop) do(fn func()) { l <- fn }

// run runs fn on the loop and waits for it.
func (l uiLoop) run(fn func()) {
	done := make(chan struct{})
	l <- func() { fn(); close(done) }
	<-done
}

// waitFor polls cond on the loop until it holds or a deadline passes.
func (l uiLoop) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var ok bool
		l.run(func() { ok = cond() })
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func newTestWorkbench(t *testing.T) (*Workbench, uiLoop, string) {
	test.NewTempApp(t)
	loop := newUILoop(t)
	dir := t.TempDir()
	var wb *Workbench
	loop.run(func() {
		wb = NewWorkbench(Config{Kernel: gemm.Gonum{}, ModelDir: dir, Do: loop.do})
		w := test.NewTempWindow(t, wb.Content())
		w.Resize(fyne.NewSize(900, 600))
		wb.Browser.Open("gmm")
	})
	loop.waitFor(t, "gmm to load", func() bool { return wb.Trainer.ds != nil })
	return wb, loop, dir
}

func TestBrowseTrainAndSave(t *testing.T) {
	wb, loop, dir := newTestWorkbench(t)
	loop.run(func() {
		c := wb.Browser.Current().Train.ClassCounts()
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
		wb.Browser.split.SetSelected("test")
		if n := wb.Browser.grid.Length(); n != 1200 {
			t.Errorf("test split shows %d thumbnails, want 1200", n)
		}
		wb.Trainer.arch.SetSelected("mlp")
		wb.Trainer.epochs.SetText("3")
		test.Tap(wb.Trainer.start)
	})
	loop.waitFor(t, "the result", func() bool { return wb.Trainer.result.Text != "" })
	wb.Trainer.Wait()
	var result, hist string
	loop.run(func() { result, hist = wb.Trainer.result.Text, wb.Trainer.history.Text })
	if !strings.Contains(result, "saved") {
		t.Fatalf("result %q: want a saved model", result)
	}
	if strings.Count(hist, "\n") != 4 {
		t.Errorf("history %q: want a header and 3 epoch rows", hist)
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
}

func TestCancelSavesNothing(t *testing.T) {
	wb, loop, dir := newTestWorkbench(t)
	loop.run(func() {
		wb.Trainer.arch.SetSelected("mlp")
		wb.Trainer.epochs.SetText("100000")
		wb.Trainer.patience.SetText("0")
		test.Tap(wb.Trainer.start)
	})
	loop.waitFor(t, "training to start", func() bool { return strings.HasPrefix(wb.Trainer.readout.Text, "epoch") })
	loop.run(func() { test.Tap(wb.Trainer.stop) })
	loop.waitFor(t, "the result", func() bool { return wb.Trainer.result.Text != "" })
	wb.Trainer.Wait()
	loop.run(func() {
		if got := wb.Trainer.result.Text; !strings.HasPrefix(got, "cancelled") {
			t.Errorf("result %q: want cancelled", got)
		}
		if wb.Trainer.start.Disabled() || !wb.Trainer.stop.Disabled() {
			t.Error("after cancelling, Train should be enabled and Cancel disabled")
		}
	})
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("cancelled training left %d files", len(entries))
	}
}

func TestOpenPathAndBadPath(t *testing.T) {
	wb, loop, _ := newTestWorkbench(t)
	loop.run(func() {
		wb.Browser.path.SetText(filepath.Join("..", "testdata", "cifar"))
		wb.Browser.path.OnSubmitted(wb.Browser.path.Text)
	})
	loop.waitFor(t, "the CIFAR fixture", func() bool {
		return strings.HasPrefix(wb.Browser.status.Text, filepath.Join("..", "testdata", "cifar")+":")
	})
	loop.run(func() {
		if n := wb.Browser.grid.Length(); n != 4 {
			t.Errorf("grid shows %d thumbnails, want the fixture's 4", n)
		}
		if !strings.Contains(wb.Browser.counts.Text, "airplane") {
			t.Errorf("class counts %q lack the fixture's class names", wb.Browser.counts.Text)
		}
		wb.Browser.path.SetText("/no/such/dataset")
		wb.Browser.path.OnSubmitted(wb.Browser.path.Text)
	})
	loop.waitFor(t, "the error", func() bool { return strings.HasPrefix(wb.Browser.status.Text, "error:") })
}

func TestBadFormInput(t *testing.T) {
	wb, loop, dir := newTestWorkbench(t)
	loop.run(func() {
		wb.Trainer.epochs.SetText("many")
		test.Tap(wb.Trainer.start)
		if got := wb.Trainer.result.Text; !strings.Contains(got, "positive integer") {
			t.Errorf("result %q: want a message about the epochs", got)
		}
		wb.Trainer.epochs.SetText("1")
		wb.Trainer.arch.SetSelected("goar-cnn") // needs images, gmm is tabular
		test.Tap(wb.Trainer.start)
		if got := wb.Trainer.result.Text; !strings.HasPrefix(got, "error:") {
			t.Errorf("result %q: want the architecture's error", got)
		}
	})
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed starts left %d files", len(entries))
	}
}
