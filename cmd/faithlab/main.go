// Command faithlab is Faithlab's desktop workbench. It only wires: the
// screens live in package ui, the engine in core.
package main

import (
	"flag"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"faithlab/core/engine/gemm"
	"faithlab/resources"
	"faithlab/ui"
)

func main() {
	dataset := flag.String("dataset", "fashion-mnist", "dataset to open (id or path)")
	shots := flag.String("screenshots", "", "write one PNG per screen into this folder and quit")
	flag.Parse()

	a := app.NewWithID("org.faithlab.workbench")
	a.SetIcon(resources.Icon())
	w := a.NewWindow("Faithlab")
	kern, err := gemm.Best()
	if err != nil {
		fmt.Fprintf(os.Stderr, "note: %v; using %s\n", err, kern.Name())
	}
	modelDir := filepath.Join(a.Storage().RootURI().Path(), "models")
	wb := ui.NewWorkbench(ui.Config{Kernel: kern, ModelDir: modelDir})
	w.SetContent(wb.Content())
	w.Resize(fyne.NewSize(1200, 800))
	wb.Browser.Open(*dataset)
	if *shots != "" {
		go func() {
			if err := screenshots(w, wb, *shots); err != nil {
				fmt.Fprintln(os.Stderr, "screenshots:", err)
			}
			fyne.Do(a.Quit)
		}()
	}
	w.ShowAndRun()
}

// screenshots captures every screen: the dataset browser, and the trainer
// while it trains one epoch and when it has finished.
func screenshots(w fyne.Window, wb *ui.Workbench, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	wb.Browser.Wait()
	time.Sleep(3 * time.Second)
	if err := capture(w, filepath.Join(dir, "1-datasets.png")); err != nil {
		return err
	}
	fyne.DoAndWait(func() {
		wb.Tabs.SelectIndex(1)
		wb.Trainer.Configure("goar-cnn", 1, 0)
		wb.Trainer.Start()
	})
	time.Sleep(4 * time.Second)
	if err := capture(w, filepath.Join(dir, "2-train-running.png")); err != nil {
		return err
	}
	wb.Trainer.Wait()
	time.Sleep(time.Second)
	return capture(w, filepath.Join(dir, "3-train-done.png"))
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
