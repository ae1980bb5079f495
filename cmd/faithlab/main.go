// Command faithlab is Faithlab's desktop workbench. It only wires: the
// screens live in package ui, the engine in core.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"faithlab/core/campaign"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	_ "faithlab/internal/clocale" // before Fyne's init: no locale error under LANG=C.UTF-8
	"faithlab/internal/display"
	"faithlab/resources"
	"faithlab/ui"
)

func main() {
	dataset := flag.String("dataset", "fashion-mnist", "dataset to open (id or path)")
	modelPath := flag.String("model", "", "model file to open (default: the last one trained here, else the shipped Fashion-MNIST goar-cnn)")
	root := flag.String("root", "", "the workbench's folder for models, runs and specs (default: the app's storage folder)")
	shots := flag.String("screenshots", "", "tour every screen, write one PNG per screen and state into this folder, and quit")
	worker := flag.String("campaign-worker", "", "run the campaign of this spec for a workbench (events on standard output) instead of opening a window")
	trusted := flag.String("campaign-trust", "", "with -campaign-worker: what the workbench's user allowed the campaign (JSON of campaign.Trust)")
	estimate := flag.Float64("campaign-estimate", 0, "with -campaign-worker: the seconds the estimate shown before the launch said, kept beside the run's wall time")
	speeds := flag.Bool("campaign-speeds", false, "measure the speeds of the campaign whose spec is on standard input for a workbench's estimate (JSON on standard output) instead of opening a window")
	flag.Parse()
	if *speeds {
		kern, _ := gemm.Best()
		if err := campaign.ServeSpeeds(context.Background(), kern, os.Stdin, os.Stdout, true); err != nil {
			fmt.Fprintln(os.Stderr, "faithlab: -campaign-speeds:", err)
			os.Exit(1)
		}
		return
	}
	if *worker != "" {
		kern, _ := gemm.Best()
		var trust campaign.Trust
		if *trusted != "" {
			if err := json.Unmarshal([]byte(*trusted), &trust); err != nil {
				fmt.Fprintln(os.Stderr, "faithlab: -campaign-trust:", err)
				os.Exit(2)
			}
		}
		if err := campaign.Serve(context.Background(), *worker, campaign.Options{Kernel: kern, Trust: trust, Estimate: *estimate}, os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		return
	}

	// GLFW panics when it cannot open the display: say so in one line.
	if err := display.Check(); err != nil {
		fmt.Fprintf(os.Stderr, "faithlab: %v; run it in a desktop session, or use faithlab-cli\n", err)
		os.Exit(1)
	}
	a := app.NewWithID("org.faithlab.workbench")
	a.SetIcon(fyne.NewStaticResource("icon.png", resources.IconPNG()))
	w, err := newWindow(a, "Faithlab")
	if err != nil {
		fmt.Fprintf(os.Stderr, "faithlab: cannot open a window on display %q (%v); run it in a desktop session, or use faithlab-cli\n", os.Getenv("DISPLAY"), err)
		os.Exit(1)
	}
	kern, err := gemm.Best()
	if err != nil {
		fmt.Fprintf(os.Stderr, "note: %v; using %s\n", err, kern.Name())
	}
	if *root == "" {
		*root = a.Storage().RootURI().Path()
	}
	prefs := a.Preferences()
	if *shots != "" {
		prefs = nil // a tour leaves nothing behind in the user's settings
	}
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	wb := ui.NewWorkbench(ui.Config{Kernel: kern, Root: *root, Prefs: prefs, Window: w,
		Worker: func(spec string, trust campaign.Trust, estimate float64) *exec.Cmd {
			b, _ := json.Marshal(trust)
			return exec.Command(self, "-campaign-worker", spec, "-campaign-trust", string(b), "-campaign-estimate", strconv.FormatFloat(estimate, 'f', -1, 64))
		},
		Speeds: func() *exec.Cmd { return exec.Command(self, "-campaign-speeds") }})
	wb.Install(w)
	// The model under explanation: the one named, else the one chosen
	// last, said on the status bar.
	wb.OpenFirstModel(*modelPath, func() func(model.Header) bool { return model.FitsDataset(*dataset) }, resources.ModelName, resources.Model())
	wb.State.OpenData(*dataset)
	if path := os.Getenv("FAITHLAB_TOUR_MAP"); path != "" {
		go writeLandmarks(path, wb)     // scripts/tour finds what it clicks here
		watchInputs(path+".inputs", wb) // and times its input here
	}
	if *shots != "" {
		go func() {
			if err := tour(w, wb, *shots); err != nil {
				fmt.Fprintln(os.Stderr, "screenshots:", err)
			}
			fyne.Do(a.Quit)
		}()
	}
	w.ShowAndRun()
}

// newWindow opens the app's window, turning the panic GLFW raises when the
// display refuses it (a server that listens but lets another user in
// alone) into an error.
func newWindow(a fyne.App, title string) (w fyne.Window, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return a.NewWindow(title), nil
}
