package main

import (
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"

	"faithlab/ui"
)

// tour goes through every screen as a user would — after a small real
// campaign — and writes a PNG of each screen and state into dir.
func tour(w fyne.Window, wb *ui.Workbench, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := 0
	shot := func(name string) error {
		n++
		time.Sleep(700 * time.Millisecond) // let the window redraw
		return capture(w, filepath.Join(dir, fmt.Sprintf("%02d-%s.png", n, name)))
	}
	on := func(fn func()) { fyne.DoAndWait(fn) }
	settle := func() {
		wb.State.Wait()
		time.Sleep(300 * time.Millisecond)
		wb.State.Wait()
	}
	tab := func(i int) { on(func() { wb.Tabs.SelectIndex(i) }) }
	// figure shows one of the run's figures on Results; one the run lacks
	// fails the tour (a screenshot of the figure shown before would pass
	// for it).
	var failed error
	figure := func(name string) {
		on(func() {
			if err := wb.Results.ShowFigure(name); err != nil && failed == nil {
				failed = err
			}
		})
	}
	// closeTop closes the dialog on top, as Escape does.
	closeTop := func() {
		if o := w.Canvas().Overlays().Top(); o != nil {
			o.Hide()
			w.Canvas().Overlays().Remove(o)
		}
	}
	settle()
	shipped := ""
	on(func() { shipped = wb.State.ModelPath })
	var timings []string
	// Opening Fashion-MNIST again: how long until the grid is usable.
	var old *ui.Loaded
	on(func() { old = wb.State.Data; wb.State.OpenData("fashion-mnist") })
	t0 := time.Now()
	for {
		var ok bool
		on(func() { ok = wb.State.Data != old && wb.Data.Shown() == wb.State.Data.Test.Len() })
		if ok {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	timings = append(timings, fmt.Sprintf("open fashion-mnist: a usable grid of its 10 000 test images after %.2f s", time.Since(t0).Seconds()))
	settle()
	timings = append(timings, "idle: "+scrollWhileBusy(wb))
	steps := []struct {
		name string
		do   func()
	}{
		{"library", func() { tab(ui.TabLibrary) }},
		{"library-reproduce", func() {
			var r *ui.Reproduce
			on(func() { r = wb.Library.RunReproduction("goar-synthetic", "smoke") })
			for running := true; running; time.Sleep(100 * time.Millisecond) {
				on(func() { running = r.Running() })
			}
		}},
		{"data-grid", func() { on(wb.Library.CloseReproduce); tab(ui.TabData) }},
		{"data-misclassified", func() { on(func() { wb.Data.SetFilter("Shirt", "misclassified") }) }},
		{"model", func() { on(func() { wb.Data.SetFilter("all classes", "all samples") }); tab(ui.TabModel) }},
		{"model-training", func() {
			on(func() { wb.Model.Configure("goar-cnn", 2, 7); wb.Model.Start() })
			time.Sleep(8 * time.Second)
		}},
		{"model-trained", func() {
			settle()
			for wb.Model.Training() {
				time.Sleep(200 * time.Millisecond)
			}
			settle()
		}},
		{"explain", func() {
			on(func() { wb.State.OpenModel(shipped) })
			settle()
			tab(ui.TabExplain)
			on(func() {
				wb.Explain.Select("gradient", "ig", "smoothgrad", "gradcam", "trace-greedy")
				wb.Explain.Compute()
			})
			settle()
		}},
		{"inspect", func() { on(func() { wb.State.Inspect("test", 0) }); settle() }},
		{"inspect-70-percent", func() { on(func() { wb.Inspect.Step(1); wb.Inspect.SetRate(0.7) }); settle() }},
		{"inspect-goar-fud", func() { on(func() { wb.Inspect.SetRate(0.5); wb.Inspect.ShowManifold(true) }); settle() }},
		{"evaluate", func() {
			tab(ui.TabEvaluate)
			on(func() { wb.Evaluate.Quick("tour", 3000, 500, 2); wb.Evaluate.Size() })
			settle()
		}},
		{"evaluate-running", func() {
			on(func() { wb.Evaluate.Launch() })
			time.Sleep(3 * time.Second)
			timings = append(timings, "while a campaign runs: "+scrollWhileBusy(wb))
			tab(ui.TabEvaluate)
			time.Sleep(time.Second)
		}},
		{"evaluate-stopped", func() {
			on(func() { wb.Evaluate.Cancel() })
			for wb.Evaluate.Running() {
				time.Sleep(200 * time.Millisecond)
			}
			settle()
			tab(ui.TabEvaluate)
		}},
		{"results", func() {
			on(func() { wb.Evaluate.Launch() }) // resumes
			time.Sleep(time.Second)
			for wb.Evaluate.Running() {
				time.Sleep(500 * time.Millisecond)
			}
			settle()
			tab(ui.TabResults)
		}},
		// "results" shows the run's answer, the tab a run opens on.
		{"results-sorted", func() { on(func() { wb.Results.ShowTable(); wb.Results.SortBy(4) }) }}, // by value
		{"results-fud-trajectory", func() { figure("fud_ig_trajectory") }},
		{"results-diagnostics", func() { on(func() { wb.Results.ShowDiagnostics() }) }},
		{"results-report-card", func() { on(func() { wb.Results.ShowReportCard() }) }},
		{"results-thumbnails", func() { on(wb.Results.BrowseFigures); settle() }},
		{"results-export-dialog", func() { on(closeTop); on(wb.Results.AskExportCSV) }},
		// Deletion ranks the methods in this small run; ROAR's retraining
		// on 3000 samples learns too little to rank them (Diagnostics).
		{"results-critical-difference", func() { on(closeTop); figure("deletion_critical_difference") }},
		{"results-rank-probability", func() { figure("rank_probability") }},
		{"results-agreement", func() { figure("protocol_agreement") }},
		{"settings", func() {
			tab(ui.TabSettings)
			on(func() { wb.Settings.CheckEngine("torch") }) // starts a PyTorch worker and says what it runs on
			settle()
		}},
		{"inspect-light", func() {
			on(func() { wb.Settings.CheckEngine("native"); wb.Settings.SetTheme("light") })
			settle()
			tab(ui.TabInspect)
		}},
		{"evaluate-light", func() { tab(ui.TabEvaluate) }},
		{"results-diagnostics-light", func() { tab(ui.TabResults); on(func() { wb.Results.ShowDiagnostics() }) }},
		{"results-report-card-light", func() { on(func() { wb.Results.ShowReportCard() }) }},
		{"results-which-method-light", func() { on(func() { wb.Results.ShowTrust() }) }},
		{"results-thumbnails-light", func() { on(wb.Results.BrowseFigures); settle() }},
		{"results-export-dialog-light", func() { on(closeTop); on(wb.Results.AskExportCSV) }},
		// Every other screen in the light theme too.
		{"results-light", func() { on(closeTop); on(func() { wb.Results.ShowTable() }) }},
		{"library-light", func() { tab(ui.TabLibrary) }},
		{"data-light", func() { tab(ui.TabData) }},
		{"model-light", func() { tab(ui.TabModel) }},
		{"explain-light", func() { tab(ui.TabExplain) }},
		{"settings-light", func() { tab(ui.TabSettings) }},
		{"data-tabular", func() {
			on(closeTop)
			on(func() { wb.Settings.SetTheme("dark"); wb.State.OpenData("breast-cancer") })
			settle()
			tab(ui.TabData)
		}},
		{"error", func() { on(func() { wb.State.OpenData("/no/such/dataset.csv") }); settle() }},
	}
	for _, s := range steps {
		s.do()
		if failed != nil {
			return fmt.Errorf("screenshot %s: %w", s.name, failed)
		}
		if err := shot(s.name); err != nil {
			return err
		}
	}
	on(func() {
		for _, t := range wb.Tabs.Items {
			sz := t.Content.MinSize()
			timings = append(timings, fmt.Sprintf("%s needs at least %.0f×%.0f", t.Text, sz.Width, sz.Height))
		}
	})
	text := strings.Join(timings, "\n") + "\n"
	fmt.Fprint(os.Stderr, text)
	return os.WriteFile(filepath.Join(dir, "timings.txt"), []byte(text), 0o644)
}

// scrollWhileBusy scrolls the Fashion-MNIST training grid as a mouse
// wheel does — 300 steps of 40 px at 60 a second — and then jumps through
// all 60 000 thumbnails in 120 steps, measuring each step's round trip
// through the UI goroutine (scroll, draw the cells that come into view):
// how long the grid takes to follow the user.
func scrollWhileBusy(wb *ui.Workbench) string {
	fyne.DoAndWait(func() {
		wb.Tabs.SelectIndex(ui.TabData)
		wb.Data.SetSplit("train")
	})
	measure := func(steps int, step func(i int)) (mean, worst float64) {
		var total, w time.Duration
		for i := range steps {
			t0 := time.Now()
			fyne.DoAndWait(func() { step(i) })
			d := time.Since(t0)
			total, w = total+d, max(w, d)
			time.Sleep(16 * time.Millisecond)
		}
		return float64(total.Microseconds()) / float64(steps) / 1000, float64(w.Microseconds()) / 1000
	}
	wm, ww := measure(300, func(i int) { wb.Data.ScrollToOffset(float32(40 * i)) })
	jm, jw := measure(120, func(i int) { wb.Data.ScrollTo(i * 500) })
	fyne.DoAndWait(func() { wb.Data.SetSplit("test") })
	return fmt.Sprintf("wheel scrolling (300 steps of 40 px) mean %.1f ms, worst %.1f ms per step; jumps through all 60 000 thumbnails (120 steps) mean %.1f ms, worst %.1f ms",
		wm, ww, jm, jw)
}

// capture saves what the screen shows: the X display's root window when
// there is one (xwd, as a user's screenshot would), else Fyne's own capture.
func capture(w fyne.Window, path string) error {
	if os.Getenv("DISPLAY") != "" {
		if _, err := exec.LookPath("xwd"); err == nil {
			cmd := exec.Command("sh", "-c", `xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng > "$0"`, path)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("xwd: %v: %s", err, out)
			}
			return nil
		}
	}
	var err error
	fyne.DoAndWait(func() {
		img := w.Canvas().Capture()
		f, e := os.Create(path)
		if e != nil {
			err = e
			return
		}
		defer f.Close()
		err = png.Encode(f, img)
	})
	return err
}

// writeLandmarks writes the workbench's landmarks (ui.Workbench.Landmarks)
// to path every quarter of a second, a line each — NAME, X, Y, W, H (the
// window's pixels) and TEXT, tab-separated — replacing the file whole, so
// that a reader never sees half of one: what scripts/tour clicks and
// checks, under FAITHLAB_TOUR_MAP.
func writeLandmarks(path string, wb *ui.Workbench) {
	for range time.Tick(250 * time.Millisecond) {
		var marks []ui.Landmark
		fyne.DoAndWait(func() { marks = wb.Landmarks() })
		var b strings.Builder
		for _, m := range marks {
			fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%d\t%s\n", m.Name, m.X, m.Y, m.W, m.H, strings.ReplaceAll(m.Text, "\t", " "))
		}
		tmp := path + ".tmp"
		err := os.WriteFile(tmp, []byte(b.String()), 0o644)
		if err == nil {
			err = os.Rename(tmp, path)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "landmarks:", err)
		}
	}
}

// watchInputs appends a line to path for each input the screens answer
// (ui.Workbench.WatchInput) — WHAT, then when the UI goroutine had made the
// change and when the window had drawn it, in Unix seconds, tab-separated
// — for scripts/tour to set beside the times it sent its input at.
//
// The drawn time: the driver (Fyne's GLFW loop) handles the window's
// events — keys, clicks, the wheel — on the UI goroutine inside a tick
// that then draws the window when anything in it changed, and runs what
// fyne.Do queued only once that tick is over; so a function queued while
// the change is made runs after the frame that shows it was drawn and
// handed to the display.
func watchInputs(path string, wb *ui.Workbench) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "inputs:", err)
		return
	}
	lines := make(chan string, 256)
	go func() { // the writes stay off the UI goroutine
		for l := range lines {
			if _, err := f.WriteString(l); err != nil {
				fmt.Fprintln(os.Stderr, "inputs:", err)
			}
		}
	}()
	unix := func(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
	wb.WatchInput(func(what string) {
		made := time.Now()
		fyne.Do(func() {
			line := fmt.Sprintf("%s\t%.6f\t%.6f\n", strings.ReplaceAll(what, "\t", " "), unix(made), unix(time.Now()))
			select {
			case lines <- line:
			default:
				fmt.Fprintln(os.Stderr, "inputs: a line dropped:", line)
			}
		})
	})
}
